package main

import (
	"strings"
	"testing"
	"time"
)

// TestWorkBound: every command that simulates estimates its runs before any
// starts; past --max-work it exits 2 at once, with the estimate and the
// --max-work that accepts it, and prints no result. trace applies simulate's
// limits (map0's launch, the work of the dispatch or of its window),
// fit's evaluations are bounded, and so are emulate's multiply-accumulates
// (--max-macs).
func TestWorkBound(t *testing.T) {
	huge := sweepWriteFile(t, t.TempDir(), "huge.tsv", measureTSVHead+
		"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t1024\t8\t1048576\t1048576\t16777216\tupstream\t100\n")
	const past = "past the bound of 6e+08 units"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--n", "16777216"}, []string{"estimated work 2.12e+10 units", past, "--max-work 2.2e+10 accepts it"}},
		{[]string{"simulate", "--n", "512", "--max-work", "1000"}, []string{"past the bound of 1e+03 units", "--max-work 6.5e+05 accepts it"}},
		{[]string{"simulate", "--max-work", "0"}, []string{"--max-work = 0: must be in [1, 1e18]"}},
		{[]string{"validate", huge}, []string{"huge.tsv: line 2: estimated work", past, "--max-work"}},
		{[]string{"fit", "--param", "sg_launch_clk@M1 Pro 16-core GPU", "--max-evals", "1000000000"}, []string{"--max-evals = 1000000000: must be in [0, 1000]"}},
		{[]string{"sweep", "--n", "32,16777216"}, []string{"point 1 (M1 Pro 16-core GPU, upstream, n = 16777216) and its other routings: estimated work", past}},
		{[]string{"compare", "upstream", "halftile", "--n", "16777216"}, []string{past, "--max-work"}},
		{[]string{"model", "--preset", "qwen3-30b", "--n", "16777216"}, []string{past, "--max-work"}},
		{[]string{"trace", "--experts", "4096", "--used", "64", "--out", "-"}, []string{"--experts = 4096: must be in [1, 1024] on M1 Pro 16-core GPU"}},
		{[]string{"trace", "--full", "--n", "100000", "--out", "-"}, []string{"instructions issued one by one and recorded", past, "--max-work"}},
		{[]string{"emulate", "--experts", "128", "--used", "8", "--m", "4096", "--k", "4096", "--n", "4096"}, []string{"estimated 6.18e+11 multiply-accumulates", "past the bound of 2e+09", "--max-macs 6.2e+11 accepts it"}},
		{[]string{"emulate", "--n", "64", "--max-macs", "1e5"}, []string{"past the bound of 1e+05", "--max-macs"}},
		{[]string{"emulate", "--max-macs", "0"}, []string{"--max-macs = 0: must be in [1, 1e18]"}},
		{[]string{"trace", "--window", "0:1e8", "--sample", "1000", "--n", "100000", "--out", "-"}, []string{past}},
	} {
		start := time.Now()
		code, out, errb := simrun(tc.args...)
		ok := code == exitBadUsed && out == ""
		for _, w := range tc.want {
			ok = ok && strings.Contains(errb, w)
		}
		if !ok {
			t.Errorf("simrun %s: exit %d, %d bytes of output, stderr %q; want exit 2, no output and %q", strings.Join(tc.args, " "), code, len(out), errb, tc.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("simrun %s: refused after %v", strings.Join(tc.args, " "), d)
		}
	}
}
