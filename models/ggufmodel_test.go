package models

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// tinyModel writes the header of a whole small model: a qwen3moe-style
// layout (Q/K norms, experts) or, with experts = 0, a llama-style dense one;
// arch and extra keys vary the rest, and drop removes keys and tensors by name
// (before extra is added).
func tinyModel(arch string, layers, experts int, extra []ggufKV, drop ...string) []byte {
	return tinyModelTyped(arch, layers, experts, 12, extra, drop...)
}

// tinyModelTyped is tinyModel with the gate and up experts of ggml type
// expType.
func tinyModelTyped(arch string, layers, experts int, expType uint32, extra []ggufKV, drop ...string) []byte {
	const E, H, Hkv, D, F, Fe, V = 64, 4, 2, 32, 96, 32, 256
	kvs := []ggufKV{
		{"general.architecture", gString, arch},
		{"general.name", gString, "tiny-" + arch},
		{"general.file_type", gU32, uint32(7)},
		{arch + ".block_count", gU32, uint32(layers)},
		{arch + ".embedding_length", gU32, uint32(E)},
		{arch + ".attention.head_count", gU32, uint32(H)},
		{arch + ".attention.head_count_kv", gU32, uint32(Hkv)},
		{arch + ".attention.key_length", gU32, uint32(D)},
		{arch + ".feed_forward_length", gU32, uint32(F)},
		{arch + ".context_length", gU32, uint32(4096)},
	}
	if experts > 0 {
		kvs = append(kvs, ggufKV{arch + ".expert_count", gU32, uint32(experts)}, ggufKV{arch + ".expert_used_count", gU32, uint32(2)},
			ggufKV{arch + ".expert_feed_forward_length", gU32, uint32(Fe)})
	}
	ts := []ggufTensor{
		{"token_embd.weight", []uint64{E, V}, 8},
		{"output_norm.weight", []uint64{E}, 0},
		{"output.weight", []uint64{E, V}, 8},
	}
	for il := 0; il < layers; il++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", il, s) }
		ts = append(ts,
			ggufTensor{b("attn_norm.weight"), []uint64{E}, 0},
			ggufTensor{b("attn_q.weight"), []uint64{E, H * D}, 8},
			ggufTensor{b("attn_k.weight"), []uint64{E, Hkv * D}, 8},
			ggufTensor{b("attn_v.weight"), []uint64{E, Hkv * D}, 8},
			ggufTensor{b("attn_output.weight"), []uint64{H * D, E}, 8},
			ggufTensor{b("ffn_norm.weight"), []uint64{E}, 0})
		if experts > 0 {
			ts = append(ts,
				ggufTensor{b("attn_q_norm.weight"), []uint64{D}, 0},
				ggufTensor{b("attn_k_norm.weight"), []uint64{D}, 0},
				ggufTensor{b("ffn_gate_inp.weight"), []uint64{E, uint64(experts)}, 0},
				ggufTensor{b("ffn_gate_exps.weight"), []uint64{E, Fe, uint64(experts)}, expType},
				ggufTensor{b("ffn_up_exps.weight"), []uint64{E, Fe, uint64(experts)}, expType},
				ggufTensor{b("ffn_down_exps.weight"), []uint64{Fe, E, uint64(experts)}, 2})
		} else {
			ts = append(ts,
				ggufTensor{b("ffn_gate.weight"), []uint64{E, F}, 2},
				ggufTensor{b("ffn_up.weight"), []uint64{E, F}, 2},
				ggufTensor{b("ffn_down.weight"), []uint64{F, E}, 8})
		}
	}
	keep := func(name string) bool {
		for _, d := range drop {
			if name == d {
				return false
			}
		}
		return true
	}
	var kk []ggufKV
	for _, kv := range kvs {
		if keep(kv.key) {
			kk = append(kk, kv)
		}
	}
	kk = append(kk, extra...)
	var tt []ggufTensor
	for _, t := range ts {
		if keep(t.name) {
			tt = append(tt, t)
		}
	}
	return ggufFile(kk, tt)
}

func TestReadGGUFModel(t *testing.T) {
	mf, err := ReadGGUFModel(writeTemp(t, "moe.gguf", tinyModel("qwen3moe", 2, 4, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c := mf.Config
	if c.Name != "tiny-qwen3moe" || c.Layers.Value != 2 || c.Embd.Value != 64 || c.Heads.Value != 4 || c.HeadsKV.Value != 2 || c.HeadDim.Value != 32 ||
		c.Experts.Value != 4 || c.ExpertsUsed.Value != 2 || c.ExpertFFN.Value != 32 || c.Vocab.Value != 256 || c.QKNorm.Value != 1 ||
		c.NormTopK.Value != 1 || c.Tied.Value != 0 || c.Context.Value != 4096 || mf.FileType != "Q8_0" {
		t.Fatalf("config %+v, file type %q", c, mf.FileType)
	}
	if len(mf.Tensors) != 3+2*12 || mf.Tensors[3].Name != "blk.0.attn_norm.weight" || mf.Tensors[12].Type != "q4_K" {
		t.Fatalf("tensors %+v", mf.Tensors)
	}
	for _, f := range c.Fields() {
		if f.Source != "gguf" && f.Source != "LCPP" {
			t.Errorf("%s: source %q", f.Role, f.Source)
		}
	}
	// dense, tied, no head_count_kv: one KV head per head
	mf, err = ReadGGUFModel(writeTemp(t, "dense.gguf", tinyModel("llama", 1, 0, nil, "output.weight", "llama.attention.head_count_kv")))
	if err != nil {
		t.Fatal(err)
	}
	if c := mf.Config; c.FFN.Value != 96 || c.Tied.Value != 1 || c.HeadsKV.Value != 4 || c.MoE() {
		t.Fatalf("dense config %+v", c)
	}
}

func TestReadGGUFModelErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"no layers", tinyModel("llama", 1, 0, nil, "llama.block_count"), "no llama.block_count key (the number of layers)"},
		{"no heads", tinyModel("llama", 1, 0, nil, "llama.attention.head_count"), "no llama.attention.head_count key"},
		{"no dense FFN width", tinyModel("llama", 1, 0, nil, "llama.feed_forward_length"), "no llama.feed_forward_length key"},
		{"no experts used", tinyModel("qwen3moe", 1, 4, nil, "qwen3moe.expert_used_count"), "no qwen3moe.expert_used_count key"},
		{"not modelled", tinyModel("mamba", 1, 0, nil), `architecture "mamba": not modelled`},
		{"no window", tinyModel("gemma3", 1, 0, nil), "no gemma3.attention.sliding_window key"},
		{"no MLA", tinyModel("deepseek2", 1, 0, nil), "no deepseek2.attention.kv_lora_rank key"},
		{"MHA deepseek2", tinyModel("deepseek2", 1, 0, []ggufKV{{"deepseek2.attention.kv_lora_rank", gU32, uint32(32)},
			{"deepseek2.rope.dimension_count", gU32, uint32(8)}}), "deepseek2.attention.key_length_mla key (the MLA form"},
		{"no embedding", tinyModel("llama", 1, 0, nil, "token_embd.weight"), "no token_embd.weight of shape [64, vocabulary]"},
		{"heads out of range", tinyModel("llama", 1, 0, []ggufKV{{"llama.attention.head_count_kv", gU32, uint32(8)}}, "llama.attention.head_count_kv"), "head_count_kv = 8: must be in [1, 4]"},
		{"bad kv type", tinyModel("qwen3moe", 1, 4, []ggufKV{{"qwen3moe.expert_weights_norm", gU32, uint32(1)}}), "expert_weights_norm: a "},
	} {
		mf, err := ReadGGUFModel(writeTemp(t, "t.gguf", tc.data))
		if err == nil || mf != nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.gguf") {
			t.Errorf("%s: %v, want an error naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadGGUFModel(writeTemp(t, "m.gguf", tinyModel("mamba", 1, 0, nil))); !errors.Is(err, ErrNotModelled) {
		t.Errorf("not modelled: %v does not wrap ErrNotModelled", err)
	}
}

// FuzzReadGGUFModel: any bytes give a model the graph can be built for, or
// an error; never a panic or a hang.
func FuzzReadGGUFModel(f *testing.F) {
	good := tinyModel("qwen3moe", 2, 4, nil)
	f.Add(good)
	f.Add(tinyModel("llama", 1, 0, nil, "output.weight"))
	f.Add(tinyModel("gemma3", 1, 0, []ggufKV{{"gemma3.attention.sliding_window", gU32, uint32(8)}}))
	f.Add(good[:len(good)/3])
	flipped := bytes.Clone(good)
	flipped[len(flipped)/4] ^= 0x5a
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		mf, err := ReadGGUFModel(writeTemp(t, "f.gguf", data))
		if err != nil {
			return
		}
		if err := mf.Config.Check(); err != nil {
			t.Fatalf("accepted a model that fails its own check: %v", err)
		}
		if _, err := mf.Config.Tensors(); err != nil {
			t.Fatalf("accepted a model whose tensors cannot be listed: %v", err)
		}
	})
}
