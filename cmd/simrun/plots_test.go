package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// smallMeasured measures the small shape the plot tests compare and sweep,
// on the M1 Pro, both variants at n = 32.
const smallMeasured = measureTSVHead + measureTSVRow +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t64\t256\t32\thalftile\t80\n"

// smallShape are the problem flags of smallMeasured's rows.
var smallShape = []string{"--experts", "16", "--used", "4", "--m", "64", "--k", "256", "--draws", "1"}

// readSVG reads a picture a command wrote and checks that it holds texts.
func readSVG(t *testing.T, file string, texts ...string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		if !strings.Contains(string(b), ">"+s+"</text>") {
			t.Errorf("%s: no text %q", file, s)
		}
	}
	return string(b)
}

func TestValidatePlot(t *testing.T) {
	dir := t.TempDir()
	tsv := sweepWriteFile(t, dir, "m.tsv", smallMeasured)
	svg := filepath.Join(dir, "acc.svg")
	code, out, errb := simrun("validate", "--draws", "1", "--plot", svg, tsv)
	if code != exitOK || !strings.Contains(out, "plot: "+svg) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	readSVG(t, svg, "measured µs per op (log scale)", "predicted µs per op (log scale)", "measured Δ %", "M1 Pro 16-core GPU", "mul_mm_id")
	for _, tc := range []struct {
		plot, want string
	}{
		{filepath.Join(dir, "acc.pdf"), "must end in .png or .svg"},
		{filepath.Join(dir, "no", "acc.png"), "no such directory"},
	} {
		if code, _, errb := simrun("validate", "--draws", "1", "--plot", tc.plot, tsv); code != exitBadUsed || !strings.Contains(errb, tc.want) {
			t.Errorf("--plot %s: exit %d, %q; want exit 2 and %q", tc.plot, code, errb, tc.want)
		}
	}
}

func TestSweepPlot(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "lines.svg")
	args := append([]string{"sweep", "--n", "32,64", "--plot", lines}, smallShape...)
	if code, _, errb := simrun(args...); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	readSVG(t, lines, "n (tokens, log2 scale)", "predicted µs per MUL_MAT_ID", "M1 Pro 16-core GPU, upstream", "M1 Pro 16-core GPU, halftile")
	heat := filepath.Join(dir, "heat.svg")
	args = append([]string{"sweep", "--n", "32,64", "--routing", "zipf", "--skew", "0,1", "--plot", heat}, smallShape...)
	if code, _, errb := simrun(args...); code != exitOK {
		t.Fatalf("heatmap: exit %d: %s", code, errb)
	}
	readSVG(t, heat, "routing", "zipf:0", "zipf:1", "n (tokens)")
	args = append([]string{"sweep", "--n", "32,64", "--shard", "1/2", "--plot", lines}, smallShape...)
	if code, _, errb := simrun(args...); code != exitBadUsed || !strings.Contains(errb, "--plot with --shard 1/2") {
		t.Errorf("--plot of a shard: exit %d, %q", code, errb)
	}
}

func TestCompareMeasured(t *testing.T) {
	dir := t.TempDir()
	tsv := sweepWriteFile(t, dir, "m.tsv", smallMeasured)
	svg := filepath.Join(dir, "cmp.svg")
	args := append([]string{"compare", "--n", "32,64", "--plot", svg, "--measured", tsv, "upstream", "halftile"}, smallShape...)
	code, out, errb := simrun(args...)
	if code != exitOK || !strings.Contains(out, "(2 measured points of "+tsv+")") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	readSVG(t, svg, "measured (hollow): 2 points", "n (tokens, log2 scale)")
	args = append([]string{"compare", "--n", "32", "--measured", tsv, "upstream", "halftile"}, smallShape...)
	if code, _, errb := simrun(args...); code != exitBadUsed || !strings.Contains(errb, "give --plot FILE.png too") {
		t.Errorf("--measured without --plot: exit %d, %q", code, errb)
	}
	args = append([]string{"compare", "--n", "64", "--plot", svg, "--measured", tsv, "upstream", "halftile"}, smallShape...)
	if code, _, errb := simrun(args...); code != exitBadUsed || !strings.Contains(errb, "none of its mul_mm_id rows is a point of the comparison") {
		t.Errorf("--measured of other points: exit %d, %q", code, errb)
	}
}

// widest is the width of out's widest line, in characters.
func widest(out string) int {
	w := 0
	for _, l := range strings.Split(out, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// TestTablesFitATerminal: the headline (its pinned output) and validate fit
// 120 columns, saying what they left out; --wide prints every column.
func TestTablesFitATerminal(t *testing.T) {
	headline, err := os.ReadFile(filepath.Join("testdata", "pinned", "headline.out"))
	if err != nil {
		t.Fatal(err)
	}
	if w := widest(string(headline)); w > 120 {
		t.Errorf("the headline is %d characters wide", w)
	}
	tsv := sweepWriteFile(t, t.TempDir(), "m.tsv", smallMeasured)
	code, out, errb := simrun("validate", "--draws", "1", tsv)
	if code != exitOK || widest(out) > 120 {
		t.Fatalf("validate: exit %d, %d wide\n%s\n%s", code, widest(out), out, errb)
	}
	code, wide, errb := simrun("validate", "--draws", "1", "--wide", tsv)
	if code != exitOK || !strings.Contains(wide, "regs/thread") || strings.Contains(wide, "left out to fit") {
		t.Fatalf("validate --wide: exit %d\n%s\n%s", code, wide, errb)
	}
	if !strings.Contains(out, "regs/thread") && !strings.Contains(out, "left out to fit") {
		t.Errorf("validate left out columns without saying so:\n%s", out)
	}
}
