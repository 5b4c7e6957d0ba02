package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
)

// TestConfigsSourced: every number of every configuration names its config
// key and a known source document, the modelled ones pass Check and build
// their tensors, the others are refused as not modelled.
func TestConfigsSourced(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Configs() {
		for _, n := range append([]string{strings.ToLower(c.Name)}, c.Aliases...) {
			if names[n] {
				t.Errorf("%s: name or alias %q used twice", c.Name, n)
			}
			names[n] = true
			if n != strings.ToLower(n) {
				t.Errorf("%s: alias %q must be lower case", c.Name, n)
			}
		}
		if !strings.HasPrefix(c.ConfigURL, "https://") || c.Arch == "" {
			t.Errorf("%s: config URL %q, arch %q", c.Name, c.ConfigURL, c.Arch)
		}
		for _, f := range c.Fields() {
			if f.Key == "" {
				t.Errorf("%s %s: no config key", c.Name, f.Role)
			}
			if _, ok := lookupSource(f.Source); !ok {
				t.Errorf("%s %s: source %q is not a key of Sources()", c.Name, f.Role, f.Source)
			}
		}
		err := c.Check()
		switch {
		case c.NotModelled != "" || c.QLoRA.Value > 0:
			if !errors.Is(err, ErrNotModelled) {
				t.Errorf("%s: Check = %v, want not modelled", c.Name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.Name, err)
		default:
			if _, err := c.Tensors(); err != nil {
				t.Errorf("%s: tensors: %v", c.Name, err)
			}
		}
	}
	for _, want := range []string{"llama2-7b", "qwen2.5-7b", "gemma3-4b", "qwen3-30b-a3b", "qwen3-coder-30b-a3b", "gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b", "deepseek-v2-lite"} {
		c, err := LookupConfig(strings.ToUpper(want))
		if err != nil || c.Check() != nil {
			t.Errorf("bench preset %s: %v", want, err)
		}
	}
	if _, err := LookupConfig("llama-9"); err == nil || !strings.Contains(err.Error(), "known: llama2-7b") {
		t.Errorf("unknown preset: %v", err)
	}
}

// TestPresetsFromConfigs: the MoE presets are the configurations' expert
// shapes; the shapes test-backend-ops uses (kernel-facts §10.2) are among them.
func TestPresetsFromConfigs(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		experts, used, e, ffn int
	}{{"qwen3-30b", 128, 8, 2048, 768}, {"gpt-oss", 32, 4, 2880, 2880}, {"mixtral", 8, 2, 4096, 14336}, {"deepseek-v2-lite", 64, 6, 2048, 1408}} {
		p, err := LookupPreset(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Experts.Value != tc.experts || p.Used.Value != tc.used || p.Hidden.Value != tc.e || p.FFN.Value != tc.ffn || p.Config == nil {
			t.Errorf("%s: %d/%d/%d/%d", tc.name, p.Experts.Value, p.Used.Value, p.Hidden.Value, p.FFN.Value)
		}
	}
	for _, p := range Presets() {
		if !p.Config.MoE() {
			t.Errorf("%s: a dense model among the MoE presets", p.Name)
		}
	}
	if _, err := LookupPreset("llama2-7b"); err == nil {
		t.Error("a dense model is not a MoE preset")
	}
}

// TestSWAPattern: llama.cpp's set_swa_pattern rule, as docs/llama-graph.md
// §2.2 gives it: Gemma 3's global layers are 5, 11, 17, 23, 29; gpt-oss
// alternates, even layers sliding.
func TestSWAPattern(t *testing.T) {
	g, _ := LookupConfig("gemma3-4b")
	var global []int
	for il := 0; il < g.Layers.Value; il++ {
		if !g.SWA(il) {
			global = append(global, il)
		}
	}
	if !slices.Equal(global, []int{5, 11, 17, 23, 29}) {
		t.Errorf("gemma3 global layers %v", global)
	}
	o, _ := LookupConfig("gpt-oss-20b")
	if !o.SWA(0) || o.SWA(1) || !o.SWA(22) || o.SWA(23) {
		t.Error("gpt-oss: even layers slide, odd ones do not")
	}
	l, _ := LookupConfig("llama2-7b")
	if l.SWA(0) {
		t.Error("llama2 has no sliding window")
	}
}

// TestTensorCounts: parameter counts by hand from the configurations.
func TestTensorCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  int64
		tensors int
	}{
		// 32 × (4·4096² + 3·4096·11008 + 2·4096) + 2·4096·32000 + 4096
		{"llama2-7b", 32*(4*4096*4096+3*4096*11008+2*4096) + 2*4096*32000 + 4096, 3 + 32*9},
		// tied: no output.weight; 34 × (q 2560·2048 + k, v 2560·1024 + o 2048·2560
		// + 3·2560·10240 + 4 norms of 2560 + 2 of 256) + token_embd + output norm
		{"gemma3-4b", 34*(2560*2048+2*2560*1024+2048*2560+3*2560*10240+4*2560+2*256) + 2560*262144 + 2560, 2 + 34*13},
		// 48 × (q 2048·4096, k, v 2048·512, o 4096·2048, router 2048·128,
		// 3 × 128 experts of 2048·768, norms 2·2048 + 2·128)
		{"qwen3-30b-a3b", 48*(2048*4096+2*2048*512+4096*2048+2048*128+3*128*2048*768+2*2048+2*128) + 2*2048*151936 + 2048, 3 + 48*12},
	} {
		c, _ := LookupConfig(tc.name)
		ts, err := c.Tensors()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, x := range ts {
			n += x.Elements()
		}
		if n != tc.params || len(ts) != tc.tensors {
			t.Errorf("%s: %d parameters in %d tensors, want %d in %d", tc.name, n, len(ts), tc.params, tc.tensors)
		}
	}
}

// quantized returns the types of a configuration's tensors for a file type.
func quantized(t *testing.T, c *Config, ftype string) map[string]string {
	t.Helper()
	ts, err := c.Tensors()
	if err != nil {
		t.Fatal(err)
	}
	ft, err := ParseFileType(ftype)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Quantize(ts, ft)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, x := range q {
		out[x.Name] = x.Type
	}
	return out
}

// moreBitsLayers lists the layers use_more_bits picks for n layers.
func moreBitsLayers(n int) []int {
	var out []int
	for i := 0; i < n; i++ {
		if useMoreBits(i, n) {
			out = append(out, i)
		}
	}
	return out
}

// TestQuantizeWorkedExamples checks the rules against docs/quantize-rules.md
// §7's examples, derived there by hand.
func TestQuantizeWorkedExamples(t *testing.T) {
	if got := moreBitsLayers(32); !slices.Equal(got, []int{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}) {
		t.Errorf("use_more_bits over 32 layers: %v", got)
	}
	if got := moreBitsLayers(48); len(got) != 24 || got[5] != 5 || got[6] != 8 || got[18] != 42 {
		t.Errorf("use_more_bits over 48 layers: %v", got)
	}
	// a dense 32-layer GQA model (LLaMA-3-8B-like: n_gqa 4, untied) as Q4_K_M
	l3 := &Config{Name: "llama3-like", Arch: "llama", Layers: f(32, "", ""), Embd: f(4096, "", ""), Heads: f(32, "", ""),
		HeadsKV: f(8, "", ""), HeadDim: f(128, "", ""), FFN: f(14336, "", ""), Vocab: f(128256, "", "")}
	q := quantized(t, l3, "q4_k_m")
	more := moreBitsLayers(32)
	for il := 0; il < 32; il++ {
		want := "q4_K"
		if slices.Contains(more, il) {
			want = "q6_K"
		}
		for _, n := range []string{"attn_v", "ffn_down"} {
			if got := q[fmt.Sprintf("blk.%d.%s.weight", il, n)]; got != want {
				t.Errorf("llama3-like Q4_K_M blk.%d.%s: %s, want %s", il, n, got, want)
			}
		}
		for _, n := range []string{"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"} {
			if got := q[fmt.Sprintf("blk.%d.%s.weight", il, n)]; got != "q4_K" {
				t.Errorf("blk.%d.%s: %s, want q4_K", il, n, got)
			}
		}
		if got := q[fmt.Sprintf("blk.%d.attn_norm.weight", il)]; got != "f32" {
			t.Errorf("norm: %s", got)
		}
	}
	if q["output.weight"] != "q6_K" || q["token_embd.weight"] != "q4_K" {
		t.Errorf("output %s, token_embd %s", q["output.weight"], q["token_embd.weight"])
	}
	// the 48-layer 128-expert MoE as Q4_K_M: ffn_down_exps by the parsed layer
	qw, _ := LookupConfig("qwen3-30b-a3b")
	q = quantized(t, qw, "Q4_K_M")
	more = moreBitsLayers(48)
	for il := 0; il < 48; il++ {
		want := "q4_K"
		if slices.Contains(more, il) {
			want = "q6_K"
		}
		if got := q[fmt.Sprintf("blk.%d.ffn_down_exps.weight", il)]; got != want {
			t.Errorf("qwen3 blk.%d.ffn_down_exps: %s, want %s", il, got, want)
		}
		if q[fmt.Sprintf("blk.%d.ffn_gate_exps.weight", il)] != "q4_K" || q[fmt.Sprintf("blk.%d.ffn_gate_inp.weight", il)] != "f32" {
			t.Errorf("qwen3 blk.%d: gate %s router %s", il, q[fmt.Sprintf("blk.%d.ffn_gate_exps.weight", il)], q[fmt.Sprintf("blk.%d.ffn_gate_inp.weight", il)])
		}
	}
	// Mixtral (n_expert 8) as Q4_K_M
	mx, _ := LookupConfig("mixtral-8x7b")
	q = quantized(t, mx, "Q4_K_M")
	if q["blk.7.attn_v.weight"] != "q8_0" || q["blk.7.attn_k.weight"] != "q8_0" || q["blk.7.attn_output.weight"] != "q5_K" ||
		q["blk.0.ffn_down_exps.weight"] != "q6_K" || q["blk.4.ffn_down_exps.weight"] != "q4_K" {
		t.Errorf("mixtral Q4_K_M: v %s k %s o %s down0 %s down4 %s", q["blk.7.attn_v.weight"], q["blk.7.attn_k.weight"],
			q["blk.7.attn_output.weight"], q["blk.0.ffn_down_exps.weight"], q["blk.4.ffn_down_exps.weight"])
	}
	// any MoE as MXFP4_MOE; gpt-oss's 2880-long rows take the K-quant fallbacks
	oss, _ := LookupConfig("gpt-oss-20b")
	q = quantized(t, oss, "MXFP4_MOE")
	if q["blk.3.ffn_up_exps.weight"] != "mxfp4" || q["blk.3.attn_q.weight"] != "q8_0" || q["output.weight"] != "q8_0" || q["blk.3.attn_sinks.weight"] != "f32" {
		t.Errorf("gpt-oss MXFP4_MOE: experts %s attn_q %s output %s sinks %s", q["blk.3.ffn_up_exps.weight"], q["blk.3.attn_q.weight"], q["output.weight"], q["blk.3.attn_sinks.weight"])
	}
	q = quantized(t, oss, "Q4_K_M")
	if q["blk.3.ffn_up_exps.weight"] != "q5_0" || q["blk.0.ffn_down_exps.weight"] != "q8_0" || q["blk.3.attn_output.weight"] != "q4_K" {
		t.Errorf("gpt-oss Q4_K_M fallbacks: up %s down %s attn_output (k = 4096) %s", q["blk.3.ffn_up_exps.weight"], q["blk.0.ffn_down_exps.weight"], q["blk.3.attn_output.weight"])
	}
	// Q4_0 keeps q6_K output and f16 keeps the norms
	l2, _ := LookupConfig("llama2-7b")
	q = quantized(t, l2, "Q4_0")
	if q["output.weight"] != "q6_K" || q["token_embd.weight"] != "q4_0" || q["blk.31.ffn_down.weight"] != "q4_0" {
		t.Errorf("llama2 Q4_0: output %s token_embd %s", q["output.weight"], q["token_embd.weight"])
	}
	q = quantized(t, l2, "F16")
	if q["output.weight"] != "f16" || q["blk.0.attn_norm.weight"] != "f32" {
		t.Errorf("llama2 F16: output %s norm %s", q["output.weight"], q["blk.0.attn_norm.weight"])
	}
	// tied embeddings follow the output rule
	g3, _ := LookupConfig("gemma3-4b")
	if q = quantized(t, g3, "Q4_0"); q["token_embd.weight"] != "q6_K" {
		t.Errorf("gemma3 Q4_0 tied token_embd: %s, want q6_K", q["token_embd.weight"])
	}
}

func TestFallbackError(t *testing.T) {
	_, err := fallback(Tensor{Name: "blk.0.x.weight", Dims: []int{100, 4}}, "q4_0")
	if err == nil || !strings.Contains(err.Error(), "blk.0.x.weight: row length 100") {
		t.Errorf("no fallback: %v", err)
	}
	if typ, err := fallback(Tensor{Name: "x", Dims: []int{48, 4}}, "q4_K"); err != nil || typ != "f16" {
		t.Errorf("row of 48: %s %v, want f16", typ, err)
	}
}

func TestParseFileType(t *testing.T) {
	for in, want := range map[string]string{"q4_k_m": "Q4_K_M", "Q4_K": "Q4_K_M", "mxfp4_moe": "MXFP4_MOE", " f16 ": "F16", "iq3_xxs": "IQ3_XXS"} {
		ft, err := ParseFileType(in)
		if err != nil || ft.Name != want {
			t.Errorf("%q: %v %v, want %s", in, ft.Name, err, want)
		}
	}
	if _, err := ParseFileType("q4_k_x"); err == nil || !strings.Contains(err.Error(), `"q4_k_x"`) || !strings.Contains(err.Error(), "Q4_K_M") {
		t.Errorf("bad file type: %v", err)
	}
	for _, ft := range FileTypes() {
		if _, err := LookupType(ft.Default); err != nil {
			t.Errorf("%s: default type %s: %v", ft.Name, ft.Default, err)
		}
	}
}

// TestTypeTable: the storage table agrees with dequant's layouts for every
// type dequant decodes (two tables of one fact must not drift apart).
func TestTypeTable(t *testing.T) {
	for _, dt := range dequant.Types() {
		l := dt.Layout()
		ti, err := LookupType(l.Name)
		if err != nil {
			t.Errorf("%s: %v", l.Name, err)
			continue
		}
		// dequant's f32/f16 "block" is the 16-element matrix the kernels address
		if ti.ID != l.GGMLTypeID || ti.BlockBytes*l.BlockWeights != l.BlockBytes*ti.BlockWeights {
			t.Errorf("%s: id %d, %d B per %d here; dequant id %d, %d B per %d", l.Name, ti.ID, ti.BlockBytes, ti.BlockWeights, l.GGMLTypeID, l.BlockBytes, l.BlockWeights)
		}
	}
	if q6, err := LookupType("Q6_K"); err != nil || q6.Bytes(256*4) != 4*210 {
		t.Errorf("q6_K: %+v %v", q6, err)
	}
}
