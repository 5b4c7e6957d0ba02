package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/study"
)

const tinyGGUF = "../../models/testdata/tiny-moe.gguf"

func compareArgs(extra ...string) []string {
	args := append([]string{"compare"}, sweepSmallShape...)
	return append(append(args, "--n", "32,64"), extra...)
}

func TestCompareText(t *testing.T) {
	// flags may follow the variants
	out, _ := simrunOK(t, append(compareArgs("upstream", "halftile"), "--chip", "M1 Pro,M5")...)
	for _, w := range []string{"A = upstream, B = halftile", "Δ µs", "half-tiles skipped A/B", "MMAs A/B", "occupancy A/B",
		"limiter A/B", "M1 Pro 16-core GPU", "M5 10-core GPU", "(8x8x8)", "(16x16x16)", "m=64,k=64"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "m=64,k=64"); n != 4 {
		t.Errorf("%d rows, want 2 chips x 2 n", n)
	}
}

func TestCompareCSVAndJSON(t *testing.T) {
	out, _ := simrunOK(t, "compare", "--experts", "16", "--used", "4", "--type", "f16", "--draws", "1", "--n", "32,64",
		"--format", "csv", "--shapes", "64x64,128x64", "upstream", "halftile")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][0] != "chip" || recs[1][1] != "m=64,k=64" || recs[2][1] != "m=128,k=64" || recs[3][2] != "64" {
		t.Fatalf("csv %v", recs)
	}
	for _, r := range recs[1:] {
		a, _ := strconv.ParseFloat(r[5], 64)
		b, _ := strconv.ParseFloat(r[8], 64)
		d, _ := strconv.ParseFloat(r[9], 64)
		// each of the three is rounded to the nanosecond (half of 0.001 µs
		// off at most), so the delta is B - A within 0.0015 µs
		if a <= 0 || b <= 0 || math.Abs(d-(b-a)) > 0.0015 {
			t.Fatalf("row %v: delta is not B - A", r)
		}
	}
	out, _ = simrunOK(t, compareArgs("--format", "json", "upstream", "tile64x8")...)
	var rows []study.CompareRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[0].B.Variant != "tile64x8" {
		t.Fatalf("json %v %v", rows, err)
	}
}

func TestCompareModelAndPlot(t *testing.T) {
	dir := t.TempDir()
	png, svg := filepath.Join(dir, "c.png"), filepath.Join(dir, "c.svg")
	out, _ := simrunOK(t, "compare", "--gguf", tinyGGUF, "--n", "32,64", "--draws", "1", "--plot", png, "upstream", "halftile")
	for _, w := range []string{"model tiny-moe", "gate", "up", "down", "layer", "plot: " + png} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if data, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("png: %v", err)
	}
	simrunOK(t, "compare", "--preset", "gpt-oss-20b", "--n", "32", "--draws", "1", "--plot", svg, "--format", "csv", "upstream", "halftile")
	if data, err := os.ReadFile(svg); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Fatalf("svg: %v", err)
	}
}

func TestCompareErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"upstream"}, "want two variants A B, got 1 arguments"},
		{[]string{"upstream", "halftile", "tile64x8"}, "want two variants A B, got 3"},
		{[]string{"upstream", "nope"}, `variant B: unknown variant "nope"`},
		{[]string{"nope.toml", "upstream"}, "variant A: variant spec nope.toml: no such file or directory"},
		{[]string{"--preset", "qwen3-30b", "--m", "64", "upstream", "halftile"}, "--m: the model sets it"},
		{[]string{"--preset", "qwen3-30b", "--gguf", tinyGGUF, "upstream", "halftile"}, "--preset and --gguf: give one model"},
		{[]string{"--preset", "llama", "upstream", "halftile"}, `--preset: unknown model preset "llama"`},
		{[]string{"--shapes", "64x", "upstream", "halftile"}, `--shapes: "64x": want MxK`},
		{[]string{"--shapes", "64x64", "--m", "64", "upstream", "halftile"}, "--shapes: give either --shapes or --m/--k"},
		{[]string{"--shapes", "64x48", "upstream", "halftile"}, "--shapes 64x48: --k: problem: k = 48"},
		{[]string{"--plot", "x.jpg", "upstream", "halftile"}, `--plot "x.jpg": the file must end in .png or .svg`},
		{[]string{"--format", "xml", "upstream", "halftile"}, `--format "xml"`},
		{[]string{"--routing", "zipf", "upstream", "halftile"}, `--routing "zipf": give its parameter`},
		{[]string{"--routing", "hot:99:0.5", "upstream", "halftile"}, "hot experts H = 99"},
		{[]string{"--n", "-4", "upstream", "halftile"}, `--n: "-4"`},
		{[]string{"--chip", "M9", "upstream", "halftile"}, `--chip: unknown chip "M9"`},
		{[]string{"--path", "x", "upstream", "halftile"}, "--path"},
		{[]string{"--seed", "0", "upstream", "halftile"}, "--seed = 0"},
		{[]string{"--chip", "M1 Pro", "upstream", "halftile-dual"}, "M1 Pro 16-core GPU: variant halftile-dual on the simdgroup path"},
	} {
		args := compareArgs(tc.args...)
		if strings.HasPrefix(tc.args[0], "--preset") || strings.HasPrefix(tc.args[0], "--shapes") {
			args = append([]string{"compare", "--draws", "1", "--n", "32"}, tc.args...)
		}
		requireBadUse(t, args, tc.want)
	}
	_, errb := simrunOK(t, "compare", "-h")
	for _, w := range []string{"-plot", "-preset", "-gguf", "-shapes", "-routing", "-chip", "-path", "-format", "-n string", "-draws", "-type"} {
		if !strings.Contains(errb, w) {
			t.Errorf("compare -h lacks %q", w)
		}
	}
}

// TestComparePlotOrder: the plot joins points in n order, so --n in any order
// draws the same picture.
func TestComparePlotOrder(t *testing.T) {
	dir := t.TempDir()
	var pics [2][]byte
	for i, ns := range []string{"32,128,64", "64,32,128"} {
		svg := filepath.Join(dir, fmt.Sprintf("c%d.svg", i))
		if code, _, errb := simrun("compare", "--n", ns, "--draws", "1", "--experts", "8", "--used", "2", "--m", "64", "--k", "256", "--plot", svg, "upstream", "halftile"); code != exitOK {
			t.Fatalf("compare --n %s: exit %d: %s", ns, code, errb)
		}
		pics[i] = []byte(readFile(t, svg))
	}
	if !bytes.Equal(pics[0], pics[1]) {
		t.Error("the plots of --n 32,128,64 and --n 64,32,128 differ")
	}
}

// TestCompareSmallBatches: below 32 tokens both sides of a mul_mat_id run
// mul_mv_id, as llama.cpp does, and time the same, the half-tile's note
// saying its knobs are left out; --kernel A,B forces a kernel per side, and
// a mul_mat comparison runs each n's dense kernel.
func TestCompareSmallBatches(t *testing.T) {
	small := []string{"compare", "--m", "64", "--k", "256", "--draws", "1", "--format", "csv"}
	moe := append(slices.Clone(small), "--experts", "16", "--used", "4")
	cells := func(base []string, args ...string) [][]string {
		t.Helper()
		out, _ := simrunOK(t, append(slices.Clone(base), args...)...)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) int {
			for i, c := range recs[0] {
				if c == name {
					return i
				}
			}
			t.Fatalf("no column %s", name)
			return 0
		}
		var out2 [][]string
		for _, r := range recs[1:] {
			out2 = append(out2, []string{r[col("a_kernel")], r[col("b_kernel")], r[col("delta_us")], r[col("b_note")], r[col("op")]})
		}
		return out2
	}
	rows := cells(moe, "--n", "8,32", "upstream", "halftile")
	if r := rows[0]; r[0] != "mul_mv_id" || r[1] != "mul_mv_id" || r[2] != "0.000" || !strings.Contains(r[3], "do not apply to mul_mv_id") || r[4] != "mul_mat_id" {
		t.Errorf("n = 8: %v", r)
	}
	if r := rows[1]; r[0] != "mul_mm_id" || r[1] != "mul_mm_id" || r[2] == "0.000" || r[3] != "" {
		t.Errorf("n = 32: %v", r)
	}
	rows = cells(moe, "--n", "8", "--kernel", "auto,mul_mm_id", "upstream", "halftile")
	if r := rows[0]; r[0] != "mul_mv_id" || r[1] != "mul_mm_id" || !strings.Contains(r[3], "kernel mul_mm_id is forced: llama.cpp runs mul_mv_id here (n < 32 tokens)") {
		t.Errorf("n = 8, B forced to mul_mm_id: %v", r)
	}
	for i, want := range [][2]string{{"mul_mv", "mul_mm"}, {"mul_mv_ext", "mul_mm"}, {"mul_mm", "mul_mm"}} {
		rows = cells(small, "--op", "mul_mat", "--n", []string{"1", "4", "16"}[i], "--kernel", "auto,mul_mm", "upstream", "tile64x8")
		if r := rows[0]; r[0] != want[0] || r[1] != want[1] || r[4] != "mul_mat" {
			t.Errorf("mul_mat, %s: kernels %s / %s, want %s / %s", []string{"n = 1", "n = 4", "n = 16"}[i], r[0], r[1], want[0], want[1])
		}
	}
	if code, _, errb := simrun(append(moe, "--kernel", "auto,mul_mm_id,mul_mv_id", "upstream", "halftile")...); code != exitBadUsed || !strings.Contains(errb, "want one kernel for both sides or A,B") {
		t.Errorf("three kernels: exit %d %s", code, errb)
	}
}
