// Package models describes mixture-of-experts models by what metalsim
// simulates of them: the expert matmuls of one MoE layer (kernel_mul_mm_id
// runs gate, up and down for every routed token). A Model comes from a preset
// (published config numbers, each with its config field and source) or from a
// GGUF file's header (ReadGGUF).
//
// GGUF files are read with github.com/gpustack/gguf-parser-go: GGUF's metadata
// and tensor-info layout is versioned (v1 counts are 32-bit, v2+ 64-bit),
// little- or big-endian, with typed and nested array values, shard files and
// alignment padding; a maintained, fuzz-hardened parser beats hand-written
// code for that. Only the header is read, never the tensor data.
package models

import (
	"fmt"
	"strings"
)

// Field is one published number of a model and where it comes from.
type Field struct {
	Value int
	Key   string // the config.json field that holds it
	// Unverified marks a number written from memory that could not be checked
	// against its source (no network access when it was written); commands
	// print it as "unverified".
	Unverified bool
}

// Preset is a MoE model's expert shape as published.
type Preset struct {
	Name    string
	Aliases []string
	Experts Field  // routed experts per MoE layer (n_mats)
	Used    Field  // routed experts per token (n_used)
	Hidden  Field  // model width: k of gate/up, m of down
	FFN     Field  // expert FFN width: m of gate/up, k of down
	Source  string // the config.json (or model card) the numbers come from
	Notes   string
}

// Presets returns the built-in presets in a fixed order. Every number names
// its config.json field; the sources are the models' config.json files on
// Hugging Face. They were written from memory of those files without network
// access: numbers not also confirmed elsewhere in this repository (the
// test-backend-ops perf cases in kernel-facts §10.2 use the Qwen3-30B-A3B and
// gpt-oss-20b shapes) and not held with confidence are marked Unverified.
func Presets() []Preset {
	return []Preset{
		{
			Name: "Qwen3-30B-A3B", Aliases: []string{"qwen3-30b", "qwen3moe"},
			Experts: Field{Value: 128, Key: "num_experts"},
			Used:    Field{Value: 8, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 2048, Key: "hidden_size"},
			FFN:     Field{Value: 768, Key: "moe_intermediate_size"},
			Source:  "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json",
			Notes:   "test-backend-ops perf has this shape (128/8, m=768, k=2048) as \"qwen3-30b-a3b\"",
		},
		{
			// The 256-expert top-8 A3B-class model: Qwen3-Next-80B-A3B has 512
			// experts and top-10 (below), so it is not one.
			Name: "Qwen3.5-35B-A3B", Aliases: []string{"qwen3.5-35b", "qwen35moe"},
			Experts: Field{Value: 256, Key: "num_experts", Unverified: true},
			Used:    Field{Value: 8, Key: "num_experts_per_tok", Unverified: true},
			Hidden:  Field{Value: 2048, Key: "hidden_size", Unverified: true},
			FFN:     Field{Value: 512, Key: "moe_intermediate_size", Unverified: true},
			Source:  "https://huggingface.co/Qwen/Qwen3.5-35B-A3B/blob/main/config.json (text_config)",
			Notes:   "plus one shared expert (shared_expert_intermediate_size), a dense MUL_MAT outside mul_mm_id",
		},
		{
			Name: "Qwen3-Next-80B-A3B", Aliases: []string{"qwen3-next", "qwen3next"},
			Experts: Field{Value: 512, Key: "num_experts"},
			Used:    Field{Value: 10, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 2048, Key: "hidden_size"},
			FFN:     Field{Value: 512, Key: "moe_intermediate_size"},
			Source:  "https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json",
			Notes:   "plus one shared expert (shared_expert_intermediate_size = 512), a dense MUL_MAT outside mul_mm_id",
		},
		{
			Name: "DeepSeek-V3", Aliases: []string{"deepseek-v3", "deepseek3", "deepseek-r1"},
			Experts: Field{Value: 256, Key: "n_routed_experts"},
			Used:    Field{Value: 8, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 7168, Key: "hidden_size"},
			FFN:     Field{Value: 2048, Key: "moe_intermediate_size"},
			Source:  "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json; arXiv:2412.19437",
			Notes:   "plus one shared expert (n_shared_experts = 1); the first 3 layers are dense (first_k_dense_replace); weights ship in FP8",
		},
		{
			Name: "GLM-4.5-Air", Aliases: []string{"glm-4.5-air", "glm4.5-air"},
			Experts: Field{Value: 128, Key: "n_routed_experts"},
			Used:    Field{Value: 8, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 4096, Key: "hidden_size"},
			FFN:     Field{Value: 1408, Key: "moe_intermediate_size"},
			Source:  "https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json",
			Notes:   "plus one shared expert (n_shared_experts = 1), a dense MUL_MAT outside mul_mm_id",
		},
		{
			Name: "gpt-oss-20b", Aliases: []string{"gpt-oss", "gptoss-20b"},
			Experts: Field{Value: 32, Key: "num_local_experts"},
			Used:    Field{Value: 4, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 2880, Key: "hidden_size"},
			FFN:     Field{Value: 2880, Key: "intermediate_size"},
			Source:  "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json",
			Notes:   "test-backend-ops perf has this shape (32/4, m=k=2880) as \"gpt-oss-20b\"; experts ship in MXFP4, which metalsim does not decode (use --type)",
		},
		{
			Name: "Mixtral-8x7B", Aliases: []string{"mixtral", "mixtral-8x7b-v0.1"},
			Experts: Field{Value: 8, Key: "num_local_experts"},
			Used:    Field{Value: 2, Key: "num_experts_per_tok"},
			Hidden:  Field{Value: 4096, Key: "hidden_size"},
			FFN:     Field{Value: 14336, Key: "intermediate_size"},
			Source:  "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json; arXiv:2401.04088",
		},
	}
}

// Fields returns the preset's four numbers with their roles, in a fixed order.
func (p Preset) Fields() []NamedField {
	return []NamedField{{"experts", p.Experts}, {"experts used", p.Used}, {"hidden", p.Hidden}, {"expert FFN", p.FFN}}
}

// NamedField is a Field with its role in the MoE layer.
type NamedField struct {
	Role string
	Field
}

// LookupPreset finds a preset by name or alias, case-insensitively.
func LookupPreset(name string) (Preset, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, p := range Presets() {
		if strings.ToLower(p.Name) == want {
			return p, nil
		}
		for _, a := range p.Aliases {
			if strings.ToLower(a) == want {
				return p, nil
			}
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("unknown model preset %q (known: %s)", name, strings.Join(names, ", "))
}

// Model returns the preset as a Model (no tensor types: the caller picks one).
func (p Preset) Model() *Model {
	m := &Model{Name: p.Name, Source: p.Source, Experts: p.Experts.Value, Used: p.Used.Value,
		Hidden: p.Hidden.Value, FFN: p.FFN.Value}
	for _, f := range p.Fields() {
		if f.Unverified {
			m.Unverified = append(m.Unverified, fmt.Sprintf("%s = %d", f.Key, f.Value))
		}
	}
	if p.Notes != "" {
		m.Notes = append(m.Notes, p.Notes)
	}
	return m
}
