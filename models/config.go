package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Config is a whole model as llama.cpp's graph needs it: the published
// configuration numbers (each a Field with its config key and source, as in
// docs/model-configs.md) and the llama.cpp architecture whose graph runs it.
// Zero fields are absent from the model (no experts, no sliding window, ...).
type Config struct {
	Name    string   // preset name, e.g. "Qwen3-30B-A3B"
	Aliases []string // other names (lower case), e.g. "qwen3-30b-a3b"
	// Arch is llama.cpp's architecture name (general.architecture): llama,
	// qwen2, gemma3, qwen3moe, gpt-oss, deepseek2, ...
	Arch string
	// SizeName is llama.cpp's model type name ("7B", "30B.A3B") that
	// llama-bench prints in its model column.
	SizeName  string
	ConfigURL string // the published config.json
	// NotModelled says why the whole-model graph does not cover the model
	// ("" when it does): an architecture or feature docs/llama-graph.md does
	// not describe.
	NotModelled string
	// MoENote is what `simrun model` says about the model's MoE layer.
	MoENote string

	Layers  Field // num_hidden_layers (blocks)
	Embd    Field // hidden_size: n_embd
	Heads   Field // num_attention_heads
	HeadsKV Field // num_key_value_heads
	HeadDim Field // head size of Q and K (and V unless VHeadDim)
	FFN     Field // dense FFN width (intermediate_size)
	Vocab   Field // rows of token_embd and output
	Context Field // max_position_embeddings: longest context (0: not sourced, not checked)

	Experts       Field // routed experts per MoE layer
	ExpertsUsed   Field // routed experts per token
	ExpertFFN     Field // expert FFN width
	SharedFFN     Field // width of the one dense shared-expert FFN llama.cpp builds (0: none)
	DenseLead     Field // leading layers with a dense FFN instead of experts
	ExpertGroups  Field // expert groups of group-limited routing (DeepSeek-V3; > 1 is not modelled)
	SlidingWindow Field // sliding-window attention's window (0: none)
	SWAPeriod     Field // llama.cpp's SWA pattern: layer il is sliding when il % period < period-1

	QLoRA    Field // q_lora_rank: Q compression (MLA; not modelled)
	KVLoRA   Field // kv_lora_rank: MLA's compressed KV width
	RopeDim  Field // MLA qk_rope_head_dim
	NopeDim  Field // MLA qk_nope_head_dim
	VHeadDim Field // MLA v_head_dim

	// Features, 1 = present.
	AttnBias    Field // q, k, v projection biases
	AttnOutBias Field // attention output projection bias
	QKNorm      Field // RMS norms on Q and K per head
	PostNorms   Field // post-attention and post-FFN norms (Gemma)
	Sinks       Field // a learned attention-sink logit per head
	Tied        Field // the output matmul uses token_embd (no output.weight)
	RouterBias  Field // a bias on the MoE router's logits
	ExpertBias  Field // biases on the expert matmuls (ADD_ID)
	NormTopK    Field // the top-k expert weights are renormalised
}

// NamedField is a Field with its role in a model.
type NamedField struct {
	Role string
	Field
}

// Fields returns every present field with its role, in a fixed order.
func (c *Config) Fields() []NamedField {
	all := []NamedField{
		{"layers", c.Layers}, {"embedding", c.Embd}, {"heads", c.Heads}, {"KV heads", c.HeadsKV}, {"head size", c.HeadDim},
		{"FFN", c.FFN}, {"vocabulary", c.Vocab}, {"context", c.Context},
		{"experts", c.Experts}, {"experts used", c.ExpertsUsed}, {"expert FFN", c.ExpertFFN}, {"shared expert FFN", c.SharedFFN},
		{"dense leading layers", c.DenseLead}, {"expert groups", c.ExpertGroups},
		{"sliding window", c.SlidingWindow}, {"SWA period", c.SWAPeriod},
		{"Q LoRA rank", c.QLoRA}, {"KV LoRA rank", c.KVLoRA}, {"rope head size", c.RopeDim}, {"no-rope head size", c.NopeDim}, {"V head size", c.VHeadDim},
		{"QKV bias", c.AttnBias}, {"output bias", c.AttnOutBias}, {"Q/K norm", c.QKNorm}, {"post norms", c.PostNorms},
		{"attention sinks", c.Sinks}, {"tied embeddings", c.Tied}, {"router bias", c.RouterBias}, {"expert biases", c.ExpertBias},
		{"renormalised top-k", c.NormTopK},
	}
	var out []NamedField
	for _, f := range all {
		if f.Value != 0 || f.Source != "" {
			out = append(out, f)
		}
	}
	return out
}

// MoE reports whether the model has routed experts.
func (c *Config) MoE() bool { return c.Experts.Value > 1 }

// MLA reports whether attention is DeepSeek's multi-head latent attention.
func (c *Config) MLA() bool { return c.KVLoRA.Value > 0 }

// SWA reports whether layer il uses sliding-window attention.
func (c *Config) SWA(il int) bool {
	n := c.SWAPeriod.Value
	return c.SlidingWindow.Value > 0 && n > 0 && il%n < n-1
}

// DenseFFN reports whether layer il has a dense FFN (no experts).
func (c *Config) DenseFFN(il int) bool { return !c.MoE() || il < c.DenseLead.Value }

// KeyDim returns the head size of K (MLA: the cached latent plus the rope
// part, L + Dr).
func (c *Config) KeyDim() int {
	if c.MLA() {
		return c.KVLoRA.Value + c.RopeDim.Value
	}
	return c.HeadDim.Value
}

// ValueDim returns the head size of V as attention reads it (MLA: the
// latent, L).
func (c *Config) ValueDim() int {
	if c.MLA() {
		return c.KVLoRA.Value
	}
	return c.HeadDim.Value
}

// ModelledArchs are the llama.cpp architectures whose graph
// docs/llama-graph.md describes and the bench builds.
var ModelledArchs = []string{"llama", "qwen2", "gemma3", "qwen3moe", "gpt-oss", "deepseek2"}

// ErrNotModelled is wrapped by Check when a model's architecture or one of
// its features is outside the modelled graph.
var ErrNotModelled = errors.New("not modelled")

// Check reports whether the whole-model graph covers the model: a modelled
// architecture, none of the features it leaves out, and the numbers the graph
// needs in range. The error names the field and value.
func (c *Config) Check() error {
	if c.NotModelled != "" {
		return fmt.Errorf("%s: %w: %s", c.Name, ErrNotModelled, c.NotModelled)
	}
	if !slices.Contains(ModelledArchs, c.Arch) {
		return fmt.Errorf("%s: architecture %q: %w (modelled: %s)", c.Name, c.Arch, ErrNotModelled, strings.Join(ModelledArchs, ", "))
	}
	if c.QLoRA.Value > 0 {
		return fmt.Errorf("%s: q_lora_rank = %d: %w (Q compression; only DeepSeek-V2-Lite's direct wq is)", c.Name, c.QLoRA.Value, ErrNotModelled)
	}
	if c.ExpertGroups.Value > 1 {
		return fmt.Errorf("%s: n_group = %d: %w (group-limited routing)", c.Name, c.ExpertGroups.Value, ErrNotModelled)
	}
	type rng struct {
		name   string
		v      int
		lo, hi int
	}
	checks := []rng{
		{"layers", c.Layers.Value, 1, 1024}, {"embedding", c.Embd.Value, 1, 1 << 16}, {"heads", c.Heads.Value, 1, 1024},
		{"KV heads", c.HeadsKV.Value, 1, c.Heads.Value}, {"vocabulary", c.Vocab.Value, 1, 1 << 22}, {"context", c.Context.Value, 0, 1 << 24},
	}
	if c.MLA() {
		checks = append(checks, rng{"KV LoRA rank", c.KVLoRA.Value, 1, 4096}, rng{"rope head size", c.RopeDim.Value, 1, 1024},
			rng{"no-rope head size", c.NopeDim.Value, 1, 1024}, rng{"V head size", c.VHeadDim.Value, 1, 1024})
	} else {
		checks = append(checks, rng{"head size", c.HeadDim.Value, 1, 1024})
	}
	if c.MoE() {
		checks = append(checks, rng{"experts used", c.ExpertsUsed.Value, 1, c.Experts.Value}, rng{"expert FFN", c.ExpertFFN.Value, 1, 1 << 20},
			rng{"experts", c.Experts.Value, 2, 4096})
	}
	for il := 0; il < c.Layers.Value; il++ {
		if c.DenseFFN(il) {
			checks = append(checks, rng{"FFN", c.FFN.Value, 1, 1 << 20})
			break
		}
	}
	if c.SlidingWindow.Value > 0 {
		checks = append(checks, rng{"SWA period", c.SWAPeriod.Value, 1, c.Layers.Value})
	}
	for _, k := range checks {
		if k.v < k.lo || k.v > k.hi {
			return fmt.Errorf("%s: %s = %d: must be in [%d, %d]", c.Name, k.name, k.v, k.lo, k.hi)
		}
	}
	if !c.MLA() && c.Heads.Value%c.HeadsKV.Value != 0 {
		return fmt.Errorf("%s: heads = %d: must be a multiple of the KV heads (%d)", c.Name, c.Heads.Value, c.HeadsKV.Value)
	}
	return nil
}

// LookupConfig finds a model configuration by name or alias,
// case-insensitively.
func LookupConfig(name string) (*Config, error) {
	return lookupByName(name, Configs(), func(c *Config) (string, []string) { return c.Name, c.Aliases })
}

// lookupByName finds the item whose name (or one of whose lower-case aliases)
// is name, case-insensitively; names gives an item's name and aliases. The
// error lists the known names.
func lookupByName[T any](name string, items []T, names func(T) (string, []string)) (T, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	var known []string
	for _, it := range items {
		n, aliases := names(it)
		if strings.ToLower(n) == want || slices.Contains(aliases, want) {
			return it, nil
		}
		known = append(known, n)
	}
	var zero T
	return zero, fmt.Errorf("unknown model preset %q (known: %s)", name, strings.Join(known, ", "))
}
