package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/models"
)

func TestModelList(t *testing.T) {
	out, _ := simrunOK(t, "model", "--list")
	for _, p := range models.Presets() {
		if !strings.Contains(out, p.Name) || !strings.Contains(out, p.Source) {
			t.Errorf("--list lacks %s or its source", p.Name)
		}
		for _, f := range p.Fields() {
			if f.Key == "" || f.Source == "" || !strings.HasPrefix(p.Source, "https://") || !strings.Contains(out, fmt.Sprintf("%d (%s, %s)", f.Value, f.Key, f.Source)) {
				t.Errorf("%s %s: no config field or source", p.Name, f.Role)
			}
		}
	}
	for _, w := range []string{"moe_intermediate_size", "num_experts_per_tok", "unverified"} {
		if !strings.Contains(out, w) {
			t.Errorf("--list lacks %q", w)
		}
	}
}

func TestModelPreset(t *testing.T) {
	out, _ := simrunOK(t, "model", "--preset", "Qwen3-30B-A3B", "--n", "32,64", "--draws", "1", "--variant", "halftile")
	for _, w := range []string{"model Qwen3-30B-A3B: 128 experts, top-8, hidden 2048, expert FFN 768",
		"variant halftile", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "layer"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "unverified") {
		t.Error("Qwen3-30B-A3B has no unverified number")
	}
	// a preset with an unverified number says so in every run
	out, _ = simrunOK(t, "model", "--preset", "deepseek-v2-lite", "--n", "32", "--draws", "1")
	if !strings.Contains(out, "unverified: norm_topk_prob = 0") {
		t.Fatalf("unverified preset:\n%s", out)
	}
	// gate/up broadcast (b = 1, m = FFN, k = hidden), down per slot (b = 0)
	out, _ = simrunOK(t, "model", "--preset", "mixtral", "--n", "32", "--draws", "1", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	for i, want := range [][]string{{"gate", "14336", "4096", "1"}, {"up", "14336", "4096", "1"}, {"down", "4096", "14336", "0"}} {
		r := recs[i+1]
		if r[1] != want[0] || r[4] != want[1] || r[5] != want[2] || r[6] != want[3] {
			t.Errorf("row %v, want matmul, m, k, b = %v", r, want)
		}
	}
	if recs[4][1] != "layer" {
		t.Errorf("last row %v, want the layer total", recs[4])
	}
}

func TestModelGGUF(t *testing.T) {
	code, out, errb := simrun("model", "--gguf", tinyGGUF, "--n", "32", "--draws", "1", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		Model string `json:"model"`
		Rows  []struct {
			Matmul, Type string
			Us           float64
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "tiny-moe" || len(doc.Rows) != 4 || doc.Rows[0].Type != "q4_0" || doc.Rows[2].Type != "q8_0" ||
		doc.Rows[3].Us != doc.Rows[0].Us+doc.Rows[1].Us+doc.Rows[2].Us {
		t.Fatalf("doc %+v", doc)
	}
	// --type overrides the file's types
	code, out, _ = simrun("model", "--gguf", tinyGGUF, "--n", "32", "--draws", "1", "--type", "f16")
	if code != exitOK || !strings.Contains(out, "every expert tensor simulated as f16 (--type); the file declares gate q4_0, up q4_0, down q8_0") {
		t.Fatalf("--type override: exit %d\n%s", code, out)
	}
	// K-quant experts are simulated as the file declares them
	k := "../../models/testdata/tiny-moe-q4k.gguf"
	if code, out, errb = simrun("model", "--gguf", k, "--n", "32", "--draws", "1"); code != exitOK || !strings.Contains(out, "q4_K") {
		t.Fatalf("q4_K: exit %d %q\n%s", code, errb, out)
	}
	// a type without a Metal matmul kernel: the error names the tensor and
	// the type and suggests --type
	tq := "../../models/testdata/tiny-moe-tq1.gguf"
	code, _, errb = simrun("model", "--gguf", tq, "--n", "32", "--draws", "1")
	if code != exitBadUsed || !strings.Contains(errb, "blk.0.ffn_gate_exps.weight: type tq1_0") || !strings.Contains(errb, "pass --type") {
		t.Fatalf("tq1_0: exit %d %q", code, errb)
	}
	if code, _, errb = simrun("model", "--gguf", tq, "--n", "32", "--draws", "1", "--type", "q8_0"); code != exitOK {
		t.Fatalf("tq1_0 with --type: %s", errb)
	}
}

func TestModelErrors(t *testing.T) {
	dir := t.TempDir()
	notGGUF := sweepWriteFile(t, dir, "x.gguf", strings.Repeat("not a gguf file ", 4))
	ids := sweepWriteFile(t, dir, "ids.csv", "0\n")
	ids2 := sweepWriteFile(t, dir, "ids2.csv", "0,1\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--preset or --gguf: name the model"},
		{[]string{"--preset", "mixtral", "--gguf", tinyGGUF}, "--preset and --gguf: give one model"},
		{[]string{"--preset", "gpt-5"}, `--preset: unknown model preset "gpt-5"`},
		{[]string{"--gguf", filepath.Join(dir, "none.gguf")}, "none.gguf: no such file or directory"},
		{[]string{"--gguf", notGGUF}, "--gguf: gguf " + notGGUF + ": invalid GGUF format"},
		{[]string{"--list", "--preset", "mixtral"}, "--list: give it alone"},
		{[]string{"--preset", "mixtral", "--chip", "M1 Pro,M5"}, "give one chip"},
		{[]string{"--preset", "mixtral", "--variant", "nope"}, `--variant: unknown variant "nope"`},
		{[]string{"--preset", "mixtral", "--format", "yaml"}, `--format "yaml"`},
		{[]string{"--preset", "mixtral", "--type", "q9"}, `--type: unknown weight type "q9"`},
		{[]string{"--preset", "mixtral", "--routing", "hot:8:0.5"}, "hot experts H = 8: must be in [1, n_mats-1 = 7]"},
		{[]string{"--preset", "gpt-oss", "--type", "iq2_xs"}, "gpt-oss-20b gate: problem: k = 2880: must be a positive multiple of the iq2_xs block size 256"},
		{[]string{"--gguf", tinyGGUF, "--routing", "file:" + ids}, "ids file " + ids + ":1: token 0: 1 ids, want n_used = 2"},
		{[]string{"--preset", "mixtral", "--routing", "file:" + ids2, "--n", "32"}, "--n 32: --routing file:" + ids2 + " holds 1 tokens"},
		{[]string{"--preset", "mixtral", "stray"}, `unexpected argument "stray"`},
	} {
		requireBadUse(t, append([]string{"model", "--draws", "1"}, tc.args...), tc.want)
	}
	code, _, errb := simrun("model", "-h")
	if code != exitOK {
		t.Fatal("model -h failed")
	}
	for _, w := range []string{"-preset", "-gguf", "-list", "-n string", "-chip", "-variant", "-routing", "-type", "-type-b", "-format", "-draws", "-seed", "-engine", "-path"} {
		if !strings.Contains(errb, w) {
			t.Errorf("model -h lacks %q", w)
		}
	}
}

// TestUnverifiedOnEveryFormat: a preset's unverified numbers are said in every
// output format: in the text and model's JSON themselves, on stderr for CSV
// and compare's JSON.
func TestUnverifiedOnEveryFormat(t *testing.T) {
	for _, args := range [][]string{
		{"model", "--preset", "deepseek-v2-lite", "--n", "32", "--draws", "1", "--format", "csv"},
		{"compare", "--preset", "deepseek-v2-lite", "--n", "32", "--draws", "1", "--format", "csv", "upstream", "halftile"},
		{"compare", "--preset", "deepseek-v2-lite", "--n", "32", "--draws", "1", "--format", "json", "upstream", "halftile"},
	} {
		code, _, errb := simrun(args...)
		if code != exitOK || !strings.Contains(errb, "unverified: norm_topk_prob") {
			t.Errorf("simrun %s: exit %d, stderr %q; want the unverified numbers named", strings.Join(args, " "), code, errb)
		}
	}
}
