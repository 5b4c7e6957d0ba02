package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchRun: a preset, a GGUF file and every output format.
func TestBenchRun(t *testing.T) {
	out, _ := simrunOK(t, "bench", "--chip", "M1 Pro", "--preset", "llama2-7b", "--type", "f16", "-p", "64", "-n", "2", "-pg", "32,2", "-fa", "0,1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// header, separator, 2 flash-attention settings × 3 tests, blank, build line
	if len(lines) != 10 || !strings.Contains(lines[2], "| llama 7B F16") || !strings.Contains(lines[2], "|   0 |      512 |            pp64 |") ||
		!strings.Contains(lines[7], "|   1 |      512 |        pp32+tg2 |") || !strings.HasPrefix(lines[9], "build: metalsim estimate (M1 Pro 16-core GPU, variant upstream") {
		t.Fatalf("markdown:\n%s", out)
	}
	out, _ = simrunOK(t, "bench", "--chip", "M5", "-m", "../../models/testdata/tiny-qwen3moe-model.gguf", "-p", "32", "-n", "2", "-o", "json", "--variant", "halftile")
	var tests []struct {
		ModelType string  `json:"model_type"`
		Variant   string  `json:"variant"`
		AvgTS     float64 `json:"avg_ts"`
		Breakdown []struct {
			Op    string  `json:"op"`
			Share float64 `json:"share"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal([]byte(out), &tests); err != nil || len(tests) != 2 || tests[0].ModelType != "qwen3moe Q8_0" || tests[0].Variant != "halftile" ||
		!(tests[0].AvgTS > 0) || len(tests[0].Breakdown) == 0 {
		t.Fatalf("json %v: %s", err, out)
	}
	for _, f := range []string{"csv", "jsonl"} {
		if code, out, errb := simrun("bench", "--chip", "M5", "--preset", "qwen3-30b", "-p", "32", "-n", "0", "-o", f); code != exitOK || !strings.Contains(out, "qwen3moe 30B.A3B Q8_0") {
			t.Errorf("-o %s: exit %d %s\n%s", f, code, errb, out)
		}
	}
}

func TestBenchList(t *testing.T) {
	out, _ := simrunOK(t, "bench", "--list")
	for _, w := range []string{"llama2-7b", "gemma3-4b", "qwen3-coder-30b", "gpt-oss-120b", "deepseek-v2-lite", "11008", "intermediate_size (HF-L2)",
		"GLM-4.5-Air", "refused: GLM-4.5-Air: not modelled", "MAXTEXT-DS2:", "Q4_K_M"} {
		if !strings.Contains(out, w) {
			t.Errorf("--list lacks %q", w)
		}
	}
	if code, _, errb := simrun("bench", "--list", "--chip", "M5"); code != exitBadUsed || !strings.Contains(errb, "--list: give it alone") {
		t.Errorf("--list with a flag: exit %d %s", code, errb)
	}
}

// TestBenchBadInput: every refusal is exit 2 with an error naming the field,
// before anything runs.
func TestBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	noKeys := filepath.Join(dir, "no-keys.gguf")
	data, err := os.ReadFile("../../models/testdata/tiny-moe.gguf") // a MoE layer's header: no attention keys
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noKeys, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--chip", "M5", "--preset", "llama-9"}, `unknown model preset "llama-9"`},
		{[]string{"--chip", "M5", "--preset", "glm-4.5-air"}, "GLM-4.5-Air: not modelled: architecture glm4moe"},
		{[]string{"--chip", "M5", "--preset", "qwen3-next"}, "not modelled: hybrid model"},
		{[]string{"--chip", "M5", "-m", noKeys}, "no qwen3moe.attention.head_count key"},
		{[]string{"--chip", "M5", "-m", filepath.Join(dir, "missing.gguf")}, "missing.gguf"},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-b", "256"}, "-ub = 512: must be at most -b (256)"},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-p", "5000"}, "test pp5000: 5000 tokens: longer than llama2-7b's context of 4096"},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-pg", "4000,128"}, "test pp4000+tg128: 4128 tokens: longer than llama2-7b's context of 4096"},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-fa", "2"}, `-fa "2": 2: must be in [0, 1]`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-p", "a"}, `-p "a": item "a" is not an integer`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-pg", "512"}, `-pg "512": want P,N`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-o", "sql"}, `-o "sql": allowed md, csv, json, jsonl`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "--type", "q4_x"}, `unknown file type "q4_x"`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "--type", "tq1_0"}, "type tq1_0 (224 tensors"},
		{[]string{"--chip", "M5", "-m", "../../models/testdata/tiny-qwen3moe-model.gguf", "--type", "q8_0"}, "--type: applies to --preset"},
		{[]string{"--chip", "M5"}, "--preset or -m: name the model"},
		{[]string{"--preset", "llama2-7b"}, "--chip: name the chip"},
		{[]string{"--chip", "M9", "--preset", "llama2-7b"}, `unknown chip "M9"`},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "-p", "0", "-n", "0"}, "no test left"},
		{[]string{"--chip", "M5", "--preset", "llama2-7b", "stray"}, `unexpected argument "stray"`},
		{[]string{"--doc"}, "--doc: only with --validate"},
		{[]string{"--validate", filepath.Join(dir, "none.tsv")}, "none.tsv"},
		{[]string{"--fit", "x.tsv", "--chip", "M5"}, "--chip: not used by --fit or --validate"},
	} {
		requireBadUse(t, append([]string{"bench"}, tc.args...), tc.want)
	}
}
