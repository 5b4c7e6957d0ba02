package study

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/tile"
)

func TestLists(t *testing.T) {
	items, err := SplitList("--x", " a, b ,c")
	if err != nil || !slices.Equal(items, []string{"a", "b", "c"}) {
		t.Fatalf("SplitList: %q %v", items, err)
	}
	if items, err := SplitList("--x", "  "); err != nil || items != nil {
		t.Fatalf("an empty list: %q %v", items, err)
	}
	ns, err := ParseNs("--n", "32, 64,1")
	if err != nil || !slices.Equal(ns, []int{32, 64, 1}) {
		t.Fatalf("ParseNs: %v %v", ns, err)
	}
	fs, err := ParseFloats("--skew", "0.5,1e-3,-2")
	if err != nil || !slices.Equal(fs, []float64{0.5, 1e-3, -2}) {
		t.Fatalf("ParseFloats: %v %v", fs, err)
	}
	if fs, err := ParseFloats("--skew", ""); err != nil || fs != nil {
		t.Fatalf("no skews: %v %v", fs, err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(SplitList("--n", "32,,64")), `--n "32,,64": item 2 is empty (a comma too many?)`},
		{second(SplitList("--n", "32,")), `--n "32,": item 2 is empty`},
		{second(SplitList("--n", "32,32")), `--n "32,32": "32" is given twice`},
		{second(ParseNs("--n", "")), `--n "": want a comma-separated list of token counts`},
		{second(ParseNs("--n", "0")), `--n: "0": must be an integer in [1, 16777216]`},
		{second(ParseNs("--n", "16777217")), `--n: "16777217": must be an integer in [1, 16777216]`},
		{second(ParseNs("--n", "32,abc")), `--n: "abc"`},
		{second(ParseFloats("--skew", "1,NaN")), `--skew: "NaN": not a number`},
		{second(ParseFloats("--skew", "Inf")), `--skew: "Inf": not a number`},
		{second(ParseFloats("--skew", "a")), `--skew: "a": not a number`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// FuzzParseNs: any list either fails, naming the flag, or gives distinct
// token counts in [1, tile.MaxTokens], one per item, in order.
func FuzzParseNs(f *testing.F) {
	fuzzList(f, "--n", ParseNs, true, func(n int) error {
		if n < 1 || n > tile.MaxTokens {
			return fmt.Errorf("n = %d out of range", n)
		}
		return nil
	})
}

// FuzzParseFloats: any list either fails, naming the flag, or gives one
// finite number per item, in order.
func FuzzParseFloats(f *testing.F) {
	fuzzList(f, "--skew", ParseFloats, false, func(v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%g is not a finite number", v)
		}
		return nil
	})
}

func TestLoadChips(t *testing.T) {
	chips, err := LoadChips("--chip", "M1 Pro, M5")
	if err != nil || len(chips) != 2 || chips[0].Name != "M1 Pro 16-core GPU" || chips[1].Name != "M5 10-core GPU" {
		t.Fatalf("%v %v", chips, err)
	}
	for _, tc := range []struct{ s, want string }{
		{"", `--chip "": want one or more chips`},
		{"M1 Pro,,M5", `--chip "M1 Pro,,M5": item 2 is empty`},
		{"M7", `--chip: unknown chip "M7"`},
		{"M7", "; or give a chip .json file)"},
		{"none.json", "--chip: "},
	} {
		if _, err := LoadChips("--chip", tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes("--shapes", "768x2048, 2048X768")
	if err != nil || !slices.Equal(got, []MK{{768, 2048}, {2048, 768}}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, tc := range []struct{ s, want string }{
		{"", `--shapes "": want a comma-separated list of MxK`},
		{"768", `--shapes: "768": want MxK, e.g. 768x2048`},
		{"axb", `--shapes: "axb": want MxK`},
		{"1x2,1x2", `"1x2" is given twice`},
	} {
		if _, err := ParseShapes("--shapes", tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// FuzzLoadChips: any list of chip names (not files: FuzzParseChip in sim
// covers chip files) either fails, naming the flag, or gives one known chip
// per item.
func FuzzLoadChips(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(strings.ToLower(s), ".json") {
			return
		}
		chips, err := LoadChips("--chip", s)
		if !acceptedList(t, "--chip", s, len(chips), err, true) {
			return
		}
		for _, c := range chips {
			if _, err := LoadChip(c.Name); err != nil {
				t.Fatalf("%q: chip %q does not load by its name: %v", s, c.Name, err)
			}
		}
	})
}

// FuzzParseShapes: any list either fails, naming the flag, or gives one
// shape per item.
func FuzzParseShapes(f *testing.F) {
	fuzzList(f, "--shapes", ParseShapes, true, func(MK) error { return nil })
}

// failed reports whether a parser refused input s, failing the test when its
// error does not start with the label it was given.
func failed(t *testing.T, s string, err error, label string) bool {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), label) {
		t.Fatalf("%q: error %q does not name the flag %s", s, err, label)
	}
	return err != nil
}

// fuzzList fuzzes the list parser parse, given label as its flag: every
// input either fails, naming the flag, or gives one value per item (and, with
// nonEmpty, at least one), each of which check accepts (its error says what
// is wrong with the value).
func fuzzList[T any](f *testing.F, label string, parse func(label, s string) ([]T, error), nonEmpty bool, check func(T) error) {
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := parse(label, s)
		if !acceptedList(t, label, s, len(vs), err, nonEmpty) {
			return
		}
		for _, v := range vs {
			if err := check(v); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}

// acceptedList reports whether a list parser accepted input s (n values, or
// err), failing the test when its error does not start with the flag label
// it was given, or when it gave other than one value per item of s (and, with
// nonEmpty, none).
func acceptedList(t *testing.T, label, s string, n int, err error, nonEmpty bool) bool {
	t.Helper()
	if failed(t, s, err, label) {
		return false
	}
	if items, _ := SplitList(label, s); n != len(items) || nonEmpty && n == 0 {
		t.Fatalf("%q: %d values from %d items", s, n, len(items))
	}
	return true
}

// TestParseKernels: an op and its kernels, one for both sides of a
// comparison or one each; a kernel of the other op or an unknown name is an
// error naming the input.
func TestParseKernels(t *testing.T) {
	if op, k, err := ParseKernelChoice("--op", "mul_mat", "--kernel", "mul_mv_ext"); err != nil || op != tile.OpMulMat || k != tile.KernelMulMVExt {
		t.Errorf("mul_mat, mul_mv_ext: %v %v %v", op, k, err)
	}
	if ks, err := ParseKernelPair("--op", "mul_mat_id", "--kernel", "auto"); err != nil || ks != [2]tile.MetalKernel{tile.KernelAuto, tile.KernelAuto} {
		t.Errorf("auto: %v %v", ks, err)
	}
	if ks, err := ParseKernelPair("--op", "mul_mat", "--kernel", "auto, mul_mm"); err != nil || ks != [2]tile.MetalKernel{tile.KernelAuto, tile.KernelMulMM} {
		t.Errorf("auto, mul_mm: %v %v", ks, err)
	}
	for _, tc := range []struct{ op, kernels, want string }{
		{"mul_mat_id", "mul_mm", "--kernel mul_mm: computes mul_mat, not --op mul_mat_id"},
		{"dense", "auto", `--op: unknown op "dense"`},
		{"mul_mat", "auto,mul_mx", `--kernel: unknown kernel "mul_mx"`},
		{"mul_mat", "auto,mul_mm,mul_mv", "want one kernel for both sides or A,B"},
		{"mul_mat", "", "want one kernel for both sides or A,B"},
	} {
		if _, err := ParseKernelPair("--op", tc.op, "--kernel", tc.kernels); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, %q: %v, want %q", tc.op, tc.kernels, err, tc.want)
		}
	}
}
