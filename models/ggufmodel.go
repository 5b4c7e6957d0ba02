package models

import (
	"fmt"
	"slices"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
)

// File is a whole model read from a GGUF file's header: its configuration
// (from the metadata keys and the tensor shapes) and every tensor with its
// own type.
type File struct {
	Path     string
	Config   *Config
	Tensors  []Tensor
	FileType string   // llama.cpp's description of general.file_type ("" when absent)
	Notes    []string // numbers taken from somewhere other than their key
}

// ggufSource is the source key of a number read from a GGUF file.
const ggufSource = "gguf"

// ReadGGUFModel reads a whole model from a GGUF file's header (the tensor
// data is not read, but the file must be whole). It needs ARCH.block_count,
// ARCH.embedding_length and ARCH.attention.head_count (ARCH =
// general.architecture); for MoE models ARCH.expert_count and
// ARCH.expert_used_count; for the sliding-window architectures (gemma3,
// gpt-oss) ARCH.attention.sliding_window; for deepseek2 the MLA keys. The
// vocabulary and the features (biases, norms, sinks, tied embeddings, shared
// experts) come from the tensors. A missing key, a value out of range or an
// architecture the graph does not model is an error naming it; malformed
// files give errors, never panics.
func ReadGGUFModel(path string) (*File, error) {
	return parseGGUF(path, func(path string, f *gguf.GGUFFile) (*File, error) {
		mf, err := fileFromGGUF(path, f)
		if err != nil {
			return nil, fmt.Errorf("gguf %s: %w", path, err)
		}
		return mf, nil
	})
}

// ggufKeys reads typed metadata values of one architecture.
type ggufKeys struct {
	kvs  gguf.GGUFMetadataKVs
	arch string
}

// int reads ARCH.name as an integer in [lo, hi] (an array: its first value);
// ok = false when absent.
func (k ggufKeys) int(name string, lo, hi int) (int, bool, error) {
	key := k.arch + "." + name
	kv, ok := k.kvs.Get(key)
	if !ok {
		return 0, false, nil
	}
	var v int64
	var err error
	if kv.ValueType == gguf.GGUFMetadataValueTypeArray {
		v, err = arrayInt(kv.ValueArray(), 0)
	} else {
		v, err = intValue(kv.ValueType, kv.Value)
	}
	if err != nil {
		return 0, true, fmt.Errorf("%s: %v", key, err)
	}
	if v < int64(lo) || v > int64(hi) {
		return 0, true, fmt.Errorf("%s = %d: must be in [%d, %d]", key, v, lo, hi)
	}
	return int(v), true, nil
}

// need reads a key the model cannot do without.
func (k ggufKeys) need(name string, lo, hi int, why string) (Field, error) {
	v, ok, err := k.int(name, lo, hi)
	if err != nil {
		return Field{}, err
	}
	if !ok {
		return Field{}, fmt.Errorf("no %s.%s key (%s)", k.arch, name, why)
	}
	return Field{Value: v, Key: k.arch + "." + name, Source: ggufSource}, nil
}

// opt reads a key that may be absent (a zero Field then).
func (k ggufKeys) opt(name string, lo, hi int) (Field, error) {
	v, ok, err := k.int(name, lo, hi)
	if err != nil || !ok {
		return Field{}, err
	}
	return Field{Value: v, Key: k.arch + "." + name, Source: ggufSource}, nil
}

// bool reads ARCH.name as a boolean; ok = false when absent.
func (k ggufKeys) bool(name string) (bool, bool, error) {
	key := k.arch + "." + name
	kv, ok := k.kvs.Get(key)
	if !ok {
		return false, false, nil
	}
	if kv.ValueType != gguf.GGUFMetadataValueTypeBool {
		return false, true, fmt.Errorf("%s: a %v, want a bool", key, kv.ValueType)
	}
	return kv.ValueBool(), true, nil
}

// tensorField is a feature the presence of a tensor marks (1 when the file
// has it).
func tensorField(tensors map[string]Tensor, name string) Field {
	if _, ok := tensors[name]; ok {
		return Field{Value: 1, Key: "tensor " + name, Source: ggufSource}
	}
	return Field{Key: "tensor " + name, Source: ggufSource}
}

func fileFromGGUF(path string, f *gguf.GGUFFile) (*File, error) {
	kvs := f.Header.MetadataKV
	archKV, ok := kvs.Get("general.architecture")
	if !ok {
		return nil, fmt.Errorf("no general.architecture key")
	}
	if archKV.ValueType != gguf.GGUFMetadataValueTypeString {
		return nil, fmt.Errorf("general.architecture: a %v, want a string", archKV.ValueType)
	}
	arch := archKV.ValueString()
	mf := &File{Path: path}
	c := &Config{Name: arch, Arch: arch, ConfigURL: path}
	mf.Config = c
	if kv, ok := kvs.Get("general.name"); ok && kv.ValueType == gguf.GGUFMetadataValueTypeString && kv.ValueString() != "" {
		c.Name = kv.ValueString()
	}
	if kv, ok := kvs.Get("general.size_label"); ok && kv.ValueType == gguf.GGUFMetadataValueTypeString {
		c.SizeName = kv.ValueString()
	}
	if kv, ok := kvs.Get("general.file_type"); ok {
		if id, err := intValue(kv.ValueType, kv.Value); err == nil {
			if ft, ok := fileTypeByID(int(id)); ok {
				mf.FileType = ft.Describe
			} else {
				mf.FileType = fmt.Sprintf("file type %d", id)
			}
		}
	}
	if !slices.Contains(ModelledArchs, arch) {
		return nil, fmt.Errorf("architecture %q: %w (modelled: %s)", arch, ErrNotModelled, strings.Join(ModelledArchs, ", "))
	}

	byName := map[string]Tensor{}
	for i := range f.TensorInfos {
		ti := &f.TensorInfos[i]
		typ, ok := typeByID(int(ti.Type))
		if !ok {
			return nil, fmt.Errorf("%s: tensor type %d: not a ggml type with a known size", ti.Name, ti.Type)
		}
		if ti.NDimensions < 1 || ti.NDimensions > 4 || len(ti.Dimensions) != int(ti.NDimensions) {
			return nil, fmt.Errorf("%s: %d dimensions: must be 1 to 4", ti.Name, ti.NDimensions)
		}
		t := Tensor{Name: ti.Name, Type: typ.Name}
		for _, d := range ti.Dimensions {
			if d < 1 || d > 1<<24 {
				return nil, fmt.Errorf("%s: dimension %d: must be in [1, %d]", ti.Name, d, 1<<24)
			}
			t.Dims = append(t.Dims, int(d))
		}
		if _, dup := byName[t.Name]; dup {
			return nil, fmt.Errorf("%s: tensor listed twice", t.Name)
		}
		byName[t.Name] = t
		mf.Tensors = append(mf.Tensors, t)
	}

	k := ggufKeys{kvs, arch}
	var err error
	if c.Layers, err = k.need("block_count", 1, 1024, "the number of layers"); err != nil {
		return nil, err
	}
	if c.Embd, err = k.need("embedding_length", 1, 1<<16, "the model width"); err != nil {
		return nil, err
	}
	if c.Heads, err = k.need("attention.head_count", 1, 1024, "the attention heads"); err != nil {
		return nil, err
	}
	if c.HeadsKV, err = k.opt("attention.head_count_kv", 1, c.Heads.Value); err != nil {
		return nil, err
	} else if c.HeadsKV.Value == 0 {
		c.HeadsKV = Field{Value: c.Heads.Value, Key: arch + ".attention.head_count", Source: ggufSource, Note: "no head_count_kv key: as llama.cpp, one KV head per head"}
	}
	if c.Context, err = k.opt("context_length", 1, 1<<24); err != nil {
		return nil, err
	}
	emb, ok := byName["token_embd.weight"]
	if !ok || len(emb.Dims) != 2 || emb.Dims[0] != c.Embd.Value {
		return nil, fmt.Errorf("no token_embd.weight of shape [%d, vocabulary] (the embedding_length %d)", c.Embd.Value, c.Embd.Value)
	}
	c.Vocab = Field{Value: emb.Dims[1], Key: "token_embd.weight ne1", Source: ggufSource}
	if _, ok := byName["output.weight"]; !ok {
		c.Tied = Field{Value: 1, Key: "no output.weight", Source: ggufSource}
	}

	if arch == "deepseek2" {
		if err := mlaFromGGUF(c, k); err != nil {
			return nil, err
		}
	} else {
		hd, ok, err := k.int("attention.key_length", 1, 1024)
		switch {
		case err != nil:
			return nil, err
		case ok:
			c.HeadDim = Field{Value: hd, Key: arch + ".attention.key_length", Source: ggufSource}
		default:
			c.HeadDim = Field{Value: c.Embd.Value / c.Heads.Value, Key: "embedding_length / head_count", Source: ggufSource, Note: "no key_length key: as llama.cpp, n_embd / n_head"}
		}
	}

	// experts
	if c.Experts, err = k.opt("expert_count", 0, 4096); err != nil {
		return nil, err
	}
	if c.MoE() {
		if c.ExpertsUsed, err = k.need("expert_used_count", 1, c.Experts.Value, "the experts per token of a MoE model"); err != nil {
			return nil, err
		}
		first := -1
		for il := 0; il < c.Layers.Value; il++ {
			if _, ok := byName[fmt.Sprintf("blk.%d.ffn_gate_exps.weight", il)]; ok {
				first = il
				break
			}
		}
		if first < 0 {
			return nil, fmt.Errorf("%s.expert_count = %d but no blk.N.ffn_gate_exps.weight tensor (fused expert tensors are not modelled)", arch, c.Experts.Value)
		}
		if c.DenseLead, err = k.opt("leading_dense_block_count", 0, c.Layers.Value); err != nil {
			return nil, err
		} else if c.DenseLead.Source == "" && first > 0 {
			c.DenseLead = Field{Value: first, Key: "first blk.N.ffn_gate_exps.weight", Source: ggufSource}
		}
		gate := byName[fmt.Sprintf("blk.%d.ffn_gate_exps.weight", first)]
		if len(gate.Dims) != 3 || gate.Dims[0] != c.Embd.Value || gate.Dims[2] != c.Experts.Value {
			return nil, fmt.Errorf("%s: shape %v, want [%d, expert FFN, %d] (embedding_length, expert_count)", gate.Name, gate.Dims, c.Embd.Value, c.Experts.Value)
		}
		if c.ExpertFFN, err = k.opt("expert_feed_forward_length", 1, 1<<20); err != nil {
			return nil, err
		} else if c.ExpertFFN.Value == 0 {
			c.ExpertFFN = Field{Value: gate.Dims[1], Key: gate.Name + " ne1", Source: ggufSource}
			mf.Notes = append(mf.Notes, fmt.Sprintf("%s.expert_feed_forward_length absent: expert FFN = %d taken from %s", arch, gate.Dims[1], gate.Name))
		}
		b := fmt.Sprintf("blk.%d.", first)
		if sh, ok := byName[b+"ffn_up_shexp.weight"]; ok && len(sh.Dims) == 2 {
			c.SharedFFN = Field{Value: sh.Dims[1], Key: sh.Name + " ne1", Source: ggufSource}
		}
		c.RouterBias = tensorField(byName, b+"ffn_gate_inp.bias")
		c.ExpertBias = tensorField(byName, b+"ffn_gate_exps.bias")
		if c.ExpertGroups, err = k.opt("expert_group_count", 0, 1024); err != nil {
			return nil, err
		}
		norm, ok, err := k.bool("expert_weights_norm")
		switch {
		case err != nil:
			return nil, err
		case ok:
			c.NormTopK = Field{Value: b2i(norm), Key: arch + ".expert_weights_norm", Source: ggufSource}
		default:
			// the graph code's own choice per architecture (docs/llama-graph.md §2.2)
			c.NormTopK = Field{Value: b2i(arch == "qwen3moe" || arch == "llama"), Key: "norm_w of " + arch, Source: "LCPP"}
		}
	}
	for il := 0; il < c.Layers.Value; il++ {
		if c.DenseFFN(il) {
			if c.FFN, err = k.need("feed_forward_length", 1, 1<<20, "the dense FFN width"); err != nil {
				return nil, err
			}
			break
		}
	}

	// sliding windows: the pattern is the architecture's (llama.cpp sets it
	// in code), the window the file's
	if period := map[string]int{"gemma3": 6, "gpt-oss": 2}[arch]; period > 0 {
		if c.SlidingWindow, err = k.need("attention.sliding_window", 1, 1<<24, "the window of the sliding-window layers"); err != nil {
			return nil, err
		}
		c.SWAPeriod = Field{Value: period, Key: "set_swa_pattern of " + arch, Source: "LCPP"}
	}
	c.AttnBias = tensorField(byName, "blk.0.attn_q.bias")
	c.AttnOutBias = tensorField(byName, "blk.0.attn_output.bias")
	c.QKNorm = tensorField(byName, "blk.0.attn_q_norm.weight")
	c.PostNorms = tensorField(byName, "blk.0.post_ffw_norm.weight")
	c.Sinks = tensorField(byName, "blk.0.attn_sinks.weight")
	if err := c.Check(); err != nil {
		return nil, err
	}
	return mf, nil
}

// mlaFromGGUF reads DeepSeek-2's multi-head latent attention keys; a file
// converted without them (the older MHA form) is not modelled.
func mlaFromGGUF(c *Config, k ggufKeys) error {
	var err error
	if c.QLoRA, err = k.opt("attention.q_lora_rank", 0, 1<<16); err != nil {
		return err
	}
	if c.KVLoRA, err = k.need("attention.kv_lora_rank", 1, 4096, "MLA's latent width"); err != nil {
		return err
	}
	if c.RopeDim, err = k.need("rope.dimension_count", 1, 1024, "MLA's rope head size"); err != nil {
		return err
	}
	kmla, err := k.need("attention.key_length_mla", c.RopeDim.Value+1, 2048, "the MLA form of the graph; files converted without it take llama.cpp's MHA branch, which is not modelled")
	if err != nil {
		return err
	}
	if c.VHeadDim, err = k.need("attention.value_length_mla", 1, 1024, "MLA's V head size"); err != nil {
		return err
	}
	c.NopeDim = Field{Value: kmla.Value - c.RopeDim.Value, Key: kmla.Key + " - rope.dimension_count", Source: ggufSource}
	c.HeadsKV = Field{Value: 1, Key: "MLA", Source: "LCPP", Note: "one latent row per token"}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
