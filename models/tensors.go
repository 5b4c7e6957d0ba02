package models

import "fmt"

// Tensor is one weight tensor of a model as a GGUF file holds it.
type Tensor struct {
	Name string `json:"name"` // GGUF name, e.g. blk.3.attn_q.weight
	// Dims are ne0, ne1, ... (ne0 is the row length, a matmul's k).
	Dims []int  `json:"dims"`
	Type string `json:"type"` // ggml type name (f32, q4_K, mxfp4, ...)
}

// Elements returns the tensor's element count.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d)
	}
	return n
}

// Bytes returns the tensor's size in its type (0 for an unknown type).
func (t Tensor) Bytes() int64 {
	ti, err := LookupType(t.Type)
	if err != nil {
		return 0
	}
	return ti.Bytes(t.Elements())
}

// sourceFloat marks a tensor whose type the file type decides (Quantize);
// "f32" tensors stay f32: convert_hf_to_gguf writes 1-d tensors, norms, biases
// and the MoE router as f32, whatever the output type.
const sourceFloat = "f16"

// Tensors returns the weight tensors llama.cpp's loader expects for the model
// (the names and shapes convert_hf_to_gguf writes, docs/llama-graph.md §2),
// in GGUF order: the tensors without a block first, then block by block. Types
// are the converted file's before quantization: f32 for 1-d tensors, norms,
// biases and routers, f16 for the rest.
func (c *Config) Tensors() ([]Tensor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	E, H, Hkv, V := c.Embd.Value, c.Heads.Value, c.HeadsKV.Value, c.Vocab.Value
	var out []Tensor
	add := func(name, typ string, dims ...int) { out = append(out, Tensor{Name: name, Dims: dims, Type: typ}) }
	add("token_embd.weight", sourceFloat, E, V)
	add("output_norm.weight", "f32", E)
	if c.Tied.Value == 0 {
		add("output.weight", sourceFloat, E, V)
	}
	for il := 0; il < c.Layers.Value; il++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", il, s) }
		add(b("attn_norm.weight"), "f32", E)
		if c.MLA() {
			L, Dr, Dn, Dv := c.KVLoRA.Value, c.RopeDim.Value, c.NopeDim.Value, c.VHeadDim.Value
			add(b("attn_q.weight"), sourceFloat, E, H*(Dn+Dr))
			add(b("attn_kv_a_mqa.weight"), sourceFloat, E, L+Dr)
			add(b("attn_kv_a_norm.weight"), "f32", L)
			add(b("attn_k_b.weight"), sourceFloat, Dn, L, H)
			add(b("attn_v_b.weight"), sourceFloat, L, Dv, H)
			add(b("attn_output.weight"), sourceFloat, H*Dv, E)
		} else {
			D := c.HeadDim.Value
			add(b("attn_q.weight"), sourceFloat, E, H*D)
			add(b("attn_k.weight"), sourceFloat, E, Hkv*D)
			add(b("attn_v.weight"), sourceFloat, E, Hkv*D)
			if c.AttnBias.Value != 0 {
				add(b("attn_q.bias"), "f32", H*D)
				add(b("attn_k.bias"), "f32", Hkv*D)
				add(b("attn_v.bias"), "f32", Hkv*D)
			}
			if c.QKNorm.Value != 0 {
				add(b("attn_q_norm.weight"), "f32", D)
				add(b("attn_k_norm.weight"), "f32", D)
			}
			add(b("attn_output.weight"), sourceFloat, H*D, E)
			if c.AttnOutBias.Value != 0 {
				add(b("attn_output.bias"), "f32", E)
			}
		}
		if c.Sinks.Value != 0 {
			add(b("attn_sinks.weight"), "f32", H)
		}
		if c.PostNorms.Value != 0 {
			add(b("post_attention_norm.weight"), "f32", E)
		}
		if c.Arch == "gpt-oss" {
			// its one norm before the FFN is named as a post-attention norm
			add(b("post_attention_norm.weight"), "f32", E)
		} else {
			add(b("ffn_norm.weight"), "f32", E)
		}
		if c.DenseFFN(il) {
			F := c.FFN.Value
			add(b("ffn_gate.weight"), sourceFloat, E, F)
			add(b("ffn_up.weight"), sourceFloat, E, F)
			add(b("ffn_down.weight"), sourceFloat, F, E)
		} else {
			X, Fe := c.Experts.Value, c.ExpertFFN.Value
			add(b("ffn_gate_inp.weight"), "f32", E, X)
			if c.RouterBias.Value != 0 {
				add(b("ffn_gate_inp.bias"), "f32", X)
			}
			add(b("ffn_gate_exps.weight"), sourceFloat, E, Fe, X)
			add(b("ffn_up_exps.weight"), sourceFloat, E, Fe, X)
			add(b("ffn_down_exps.weight"), sourceFloat, Fe, E, X)
			if c.ExpertBias.Value != 0 {
				add(b("ffn_gate_exps.bias"), "f32", Fe, X)
				add(b("ffn_up_exps.bias"), "f32", Fe, X)
				add(b("ffn_down_exps.bias"), "f32", E, X)
			}
			if S := c.SharedFFN.Value; S > 0 {
				add(b("ffn_gate_shexp.weight"), sourceFloat, E, S)
				add(b("ffn_up_shexp.weight"), sourceFloat, E, S)
				add(b("ffn_down_shexp.weight"), sourceFloat, S, E)
			}
		}
		if c.PostNorms.Value != 0 {
			add(b("post_ffw_norm.weight"), "f32", E)
		}
	}
	return out, nil
}
