package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"

	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

func newBench(t testing.TB, chipName, preset, ftype string) *Bench {
	t.Helper()
	chip := chips.MustLookup(chipName)
	m, err := FromPreset(preset, ftype)
	if err != nil {
		t.Fatal(err)
	}
	par, err := DefaultParams()
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(m, chip, tile.Kernel{Variant: tile.Upstream(), Path: sim.DefaultPath(chip)}, par, nil, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEvals: the evaluations of docs/llama-graph.md §1.4 and §3.4: a prompt
// in -b calls of -ub ubatches with only each call's last token requesting
// output, at KV lengths padded to 256; generation token by token.
func TestEvals(t *testing.T) {
	b := newBench(t, "M1 Pro 16-core GPU", "llama2-7b", "F16")
	type ev struct{ T, Pos, S, O int }
	for _, c := range []struct {
		test  Test
		setup Setup
		want  []ev
	}{
		{Test{Prompt: 512}, Setup{2048, 512, true}, []ev{{512, 0, 512, 1}}},
		{Test{Prompt: 2048}, Setup{2048, 512, true}, []ev{{512, 0, 512, 0}, {512, 512, 1024, 0}, {512, 1024, 1536, 0}, {512, 1536, 2048, 1}}},
		{Test{Prompt: 3000}, Setup{2048, 1024, true}, []ev{{1024, 0, 1024, 0}, {1024, 1024, 2048, 1}, {952, 2048, 3072, 1}}},
		{Test{Prompt: 100}, Setup{64, 64, true}, []ev{{64, 0, 256, 1}, {36, 64, 256, 1}}},
		{Test{Gen: 3}, Setup{2048, 512, true}, []ev{{1, 0, 256, 1}, {1, 1, 256, 1}, {1, 2, 256, 1}}},
		// pp512+tg128: 640 cells padded to 768, which the generation sees
		{Test{Prompt: 512, Gen: 2}, Setup{2048, 512, true}, []ev{{512, 0, 512, 1}, {1, 512, 768, 1}, {1, 513, 768, 1}}},
	} {
		var got []ev
		for _, e := range b.evals(c.test, c.setup) {
			got = append(got, ev{e.T, e.Pos, e.S, e.O})
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %+v: %v, want %v", c.test.Name(), c.setup, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %+v: %v, want %v", c.test.Name(), c.setup, got, c.want)
				break
			}
		}
	}
	// the sliding-window cache: Gemma 3's window of 1024 plus the ubatch, padded
	g := newBench(t, "M1 Pro 16-core GPU", "gemma3-4b", "Q8_0")
	evs := g.evals(Test{Prompt: 4096}, Setup{4096, 512, true})
	if last := evs[len(evs)-1]; last.S != 4096 || last.SSWA != 1536 {
		t.Errorf("gemma3 pp4096: last ubatch S %d, SWA %d; want 4096, 1536", last.S, last.SSWA)
	}
}

// TestCheck: bad setups and tests are errors naming the field.
func TestCheck(t *testing.T) {
	b := newBench(t, "M1 Pro 16-core GPU", "llama2-7b", "F16")
	for _, c := range []struct {
		test  Test
		setup Setup
		want  string
	}{
		{Test{Prompt: 512}, Setup{256, 512, true}, "-ub = 512: must be at most -b (256)"},
		{Test{Prompt: 512}, Setup{0, 512, true}, "-b = 0: must be in [1, 65536]"},
		{Test{Prompt: 4000, Gen: 128}, Setup{2048, 512, true}, "test pp4000+tg128: 4128 tokens: longer than llama2-7b's context of 4096 (max_position_embeddings)"},
		{Test{}, Setup{2048, 512, true}, "needs prompt or generated tokens"},
	} {
		if err := b.Check(c.test, c.setup); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.test.Name(), c.setup, err, c.want)
		}
	}
	if err := b.Check(Test{Prompt: 4000, Gen: 96}, Setup{2048, 512, true}); err != nil {
		t.Errorf("a test of exactly the context: %v", err)
	}
}

// TestUntimedAndRefused: a model with a weight type metalsim cannot time,
// and one whose architecture is not modelled, are clear errors.
func TestUntimedAndRefused(t *testing.T) {
	chip, _ := chips.Lookup("M1 Pro 16-core GPU")
	par, _ := DefaultParams()
	// every type llama-quantize's K-quant mixes use is timed
	m, err := FromPreset("qwen3-30b-a3b", "Q4_K_M")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m, chip, tile.Kernel{Variant: tile.Upstream()}, par, nil, sim.Options{}); err != nil {
		t.Errorf("Q4_K_M: %v", err)
	}
	// tq1_0 has no Metal matmul kernel
	m, err = FromPreset("qwen3-30b-a3b", "TQ1_0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(m, chip, tile.Kernel{Variant: tile.Upstream()}, par, nil, sim.Options{})
	var u *UntimedError
	if !errors.Is(err, ErrUntimed) || !errors.As(err, &u) || u.Type != "tq1_0" || !strings.Contains(err.Error(), "no matmul kernel for tq1_0") {
		t.Errorf("TQ1_0: %v", err)
	}
	for _, name := range []string{"glm-4.5-air", "qwen3.5-35b", "deepseek-v3"} {
		if _, err := FromPreset(name, "Q8_0"); !errors.Is(err, models.ErrNotModelled) {
			t.Errorf("%s: %v, want not modelled", name, err)
		}
	}
}

// TestDeterministic: the same test gives the same bytes from a fresh bench
// and from one that has run other tests (its caches filled in another
// order).
func TestDeterministic(t *testing.T) {
	run := func(b *Bench, tests ...Test) []byte {
		rep := &Report{Model: b.Model, Chip: b.Chip.Name, Variant: b.Variant}
		for _, tt := range tests {
			res, err := b.Run(tt, Setup{2048, 512, true})
			if err != nil {
				t.Fatal(err)
			}
			rep.Results = append(rep.Results, res)
		}
		var buf bytes.Buffer
		if err := rep.Write(&buf, "json"); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := newBench(t, "M5 10-core GPU", "qwen3-30b-a3b", "Q8_0")
	first := run(a, Test{Prompt: 64}, Test{Gen: 8})
	b := newBench(t, "M5 10-core GPU", "qwen3-30b-a3b", "Q8_0")
	run(b, Test{Prompt: 32, Gen: 4})
	if second := run(b, Test{Prompt: 64}, Test{Gen: 8}); !bytes.Equal(first, second) {
		t.Errorf("outputs differ:\n%s\n%s", first, second)
	}
}

// TestBreakdownSums: the breakdown's lines add up to the test's time, and a
// test's rate is its tokens over that time.
func TestBreakdownSums(t *testing.T) {
	b := newBench(t, "M1 Pro 16-core GPU", "llama2-7b", "Q8_0")
	res, err := b.Run(Test{Prompt: 128, Gen: 4}, Setup{2048, 512, false})
	if err != nil {
		t.Fatal(err)
	}
	us, share := 0.0, 0.0
	for _, l := range res.Breakdown {
		us += l.Us
		share += l.Share
	}
	// float sums in another order: agree to 1e-9 relative
	if d := us/res.Us - 1; d > 1e-9 || d < -1e-9 || share < 1-1e-9 || share > 1+1e-9 {
		t.Errorf("breakdown sums to %.3f µs (share %.9f), test %.3f µs", us, share, res.Us)
	}
	if ts := 132 / (res.Us * 1e-6); ts != res.TS {
		t.Errorf("t/s %.6f, want %.6f", res.TS, ts)
	}
	if res.Breakdown[0].Op != "MUL_MAT" || res.Breakdown[0].Kernel != "mul_mm" {
		t.Errorf("largest cost %+v, want the dense mul_mm matmuls", res.Breakdown[0])
	}
}

func TestReportFormats(t *testing.T) {
	b := newBench(t, "M1 Pro 16-core GPU", "llama2-7b", "F16")
	rep := &Report{Model: b.Model, Chip: b.Chip.Name, Variant: b.Variant}
	for _, tt := range []Test{{Prompt: 64}, {Gen: 4}, {Prompt: 32, Gen: 2}} {
		res, err := b.Run(tt, Setup{2048, 512, true})
		if err != nil {
			t.Fatal(err)
		}
		rep.Results = append(rep.Results, res)
	}
	out := func(format string) string {
		var buf bytes.Buffer
		if err := rep.Write(&buf, format); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	md := strings.Split(out("md"), "\n")
	if md[0] != "| model                          |       size |     params | backend    |  fa | n_ubatch |            test |                  t/s |" ||
		md[1] != "| ------------------------------ | ---------: | ---------: | ---------- | --: | -------: | --------------: | -------------------: |" {
		t.Errorf("markdown header:\n%s\n%s", md[0], md[1])
	}
	if !strings.HasPrefix(md[2], "| llama 7B F16                   |  12.55 GiB |     6.74 B | Metal (metalsim: M1 Pro 16-core GPU) |   1 |      512 |            pp64 | ") ||
		!strings.Contains(md[3], "tg4") || !strings.Contains(md[4], "pp32+tg2") || !strings.HasSuffix(md[2], " ± 0.00 |") {
		t.Errorf("markdown rows:\n%s", strings.Join(md[2:5], "\n"))
	}
	// size: 6738149376 f16 weights and 266240 f32 norm elements
	csv := strings.Split(strings.TrimSpace(out("csv")), "\n")
	if len(csv) != 4 || !strings.HasPrefix(csv[0], "build_commit,build_number,gpu_info,backends,model_filename,model_type,model_size,model_n_params,n_batch,n_ubatch") ||
		!strings.HasSuffix(csv[0], "avg_ts,stddev_ts,chip,variant") || !strings.Contains(csv[1], `"llama 7B F16","13477363712","6738415616","2048","512"`) {
		t.Errorf("csv:\n%s", strings.Join(csv, "\n"))
	}
	var tests []map[string]any
	if err := json.Unmarshal([]byte(out("json")), &tests); err != nil || len(tests) != 3 {
		t.Fatalf("json: %v", err)
	}
	for _, k := range []string{"model_type", "model_size", "model_n_params", "n_batch", "n_ubatch", "flash_attn", "n_prompt", "n_gen", "avg_ts", "stddev_ts", "chip", "variant", "breakdown"} {
		if _, ok := tests[2][k]; !ok {
			t.Errorf("json lacks %s", k)
		}
	}
	if tests[2]["n_prompt"].(float64) != 32 || tests[2]["n_gen"].(float64) != 2 || tests[2]["flash_attn"].(float64) != 1 || tests[2]["chip"] != "M1 Pro 16-core GPU" {
		t.Errorf("json values %v", tests[2])
	}
	lines := strings.Split(strings.TrimSpace(out("jsonl")), "\n")
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["avg_ts"] != tests[i]["avg_ts"] {
			t.Errorf("jsonl line %d: %v (avg_ts %v, json %v)", i, err, m["avg_ts"], tests[i]["avg_ts"])
		}
	}
	if err := rep.Write(&bytes.Buffer{}, "sql"); err == nil || !strings.Contains(err.Error(), `-o "sql": allowed md, csv, json, jsonl`) {
		t.Errorf("bad format: %v", err)
	}
}

// TestGGUFModel: a model read from a GGUF header runs with its own types.
func TestGGUFModel(t *testing.T) {
	m, err := FromGGUF("../models/testdata/tiny-qwen3moe-model.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if m.Type() != "qwen3moe Q8_0" || m.Filename != "../models/testdata/tiny-qwen3moe-model.gguf" {
		t.Errorf("model %q from %q", m.Type(), m.Filename)
	}
	chip, _ := chips.Lookup("M5 10-core GPU")
	par, _ := DefaultParams()
	b, err := New(m, chip, tile.Kernel{Variant: tile.Upstream(), Path: tile.Tensor}, par, nil, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(Test{Prompt: 64, Gen: 2}, Setup{2048, 512, true})
	if err != nil || !(res.TS > 0) {
		t.Fatalf("%v %v", res, err)
	}
}

// BenchmarkQwen3MoE times pp512 + tg128 of the 48-layer Qwen3-30B-A3B on the
// M1 Pro from a fresh simulator, breakdown included (issue #19 asks for under
// 2 s; docs/bench.md has the figure).
func BenchmarkQwen3MoE(b *testing.B) {
	for b.Loop() {
		bn := newBench(b, "M1 Pro 16-core GPU", "qwen3-30b-a3b", "Q8_0")
		for _, tt := range []Test{{Prompt: 512}, {Gen: 128}} {
			if _, err := bn.Run(tt, Setup{2048, 512, true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
