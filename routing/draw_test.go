package routing

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

func routingProblem(experts, used, tokens int) tile.Problem {
	return tile.Problem{Experts: experts, Used: used, M: 64, K: 64, Tokens: tokens, TypeA: dequant.F16}
}

// checkDistinct fails unless every token uses distinct experts in range.
func checkDistinct(t *testing.T, p tile.Problem, ids []int32) {
	t.Helper()
	if len(ids) != p.Tokens*p.Used {
		t.Fatalf("%d ids, want %d", len(ids), p.Tokens*p.Used)
	}
	if _, err := tile.Map0(p, ids); err != nil {
		t.Fatal(err)
	}
}

func countOf(p tile.Problem, ids []int32) []int32 {
	tpe := make([]int32, p.Experts)
	for _, e := range ids {
		tpe[e]++
	}
	return tpe
}

func TestZipfZeroIsUniform(t *testing.T) {
	p := routingProblem(128, 8, 300)
	ids, err := ZipfIDs(p, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, UniformIDs(p, 7)) {
		t.Fatal("zipf s=0 differs from UniformRouting for the same seed")
	}
	c, err := ZipfCounts(p, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c, UniformCounts(p, 7)) {
		t.Fatal("zipf s=0 counts differ from UniformCounts")
	}
}

func TestZipfIDsAndCountsAgree(t *testing.T) {
	for _, tc := range []struct {
		experts, used int
		s             float64
	}{{128, 8, 1}, {32, 4, 0.5}, {8, 8, 2}, {256, 8, 8}, {16, 1, 1.2}, {64, 32, 3}} {
		p := routingProblem(tc.experts, tc.used, 500)
		ids, err := ZipfIDs(p, tc.s, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkDistinct(t, p, ids)
		c, err := ZipfCounts(p, tc.s, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, countOf(p, ids)) {
			t.Fatalf("%+v: counts differ from the ids' counts", tc)
		}
		again, _ := ZipfIDs(p, tc.s, 3)
		if !slices.Equal(ids, again) {
			t.Fatalf("%+v: not deterministic", tc)
		}
	}
}

// With used = 1 the Zipf draw is a plain weighted draw: check the frequencies.
func TestZipfFrequencies(t *testing.T) {
	const tokens = 200000
	p := routingProblem(16, 1, tokens)
	s := 1.0
	c, err := ZipfCounts(p, s, 11)
	if err != nil {
		t.Fatal(err)
	}
	h := 0.0
	for e := 1; e <= 16; e++ {
		h += math.Pow(float64(e), -s)
	}
	for e, n := range c {
		want := tokens * math.Pow(float64(e+1), -s) / h
		if sd := math.Sqrt(want); math.Abs(float64(n)-want) > 5*sd {
			t.Errorf("expert %d: %d tokens, want %.0f ± %.0f", e, n, want, 5*sd)
		}
	}
}

// Drawing without replacement from weights w: with two slots out of three
// experts, P(first = i, second = j) = w_i/W · w_j/(W - w_i). Check expert 2's
// share, which has a closed form.
func TestZipfWithoutReplacement(t *testing.T) {
	const tokens = 300000
	p := routingProblem(3, 2, tokens)
	s := 2.0
	w := []float64{1, math.Pow(2, -s), math.Pow(3, -s)}
	W := w[0] + w[1] + w[2]
	// P(expert 2 used) = P(first = 2) + Σ_{i≠2} P(first = i)·w2/(W - w_i)
	want := w[2] / W
	for i := 0; i < 2; i++ {
		want += w[i] / W * w[2] / (W - w[i])
	}
	c, err := ZipfCounts(p, s, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := float64(c[2]) / tokens
	if sd := math.Sqrt(want * (1 - want) / tokens); math.Abs(got-want) > 5*sd {
		t.Fatalf("expert 2 used by %.4f of tokens, want %.4f", got, want)
	}
	if c[0]+c[1]+c[2] != 2*tokens {
		t.Fatal("counts do not sum to n*n_used")
	}
}

func TestHotRouting(t *testing.T) {
	const tokens = 20000
	p := routingProblem(128, 8, tokens)
	ids, err := HotIDs(p, 16, 0.5, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkDistinct(t, p, ids)
	c, err := HotCounts(p, 16, 0.5, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c, countOf(p, ids)) {
		t.Fatal("counts differ from the ids' counts")
	}
	hot := 0
	for e := 0; e < 16; e++ {
		hot += int(c[e])
	}
	frac := float64(hot) / float64(tokens*8)
	// five binomial standard deviations over the tokens*8 slots: an upper
	// bound, since a token's slots are drawn without replacement (negatively
	// correlated), which only narrows the spread
	if sd := math.Sqrt(0.5 * 0.5 / float64(tokens*8)); math.Abs(frac-0.5) > 5*sd {
		t.Fatalf("hot share %.4f, want 0.5 ± %.4f", frac, 5*sd)
	}
	// a group smaller than n_used: tokens spill to the other group, still distinct
	ids, err = HotIDs(p, 2, 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkDistinct(t, p, ids)
	c = countOf(p, ids)
	if c[0] != tokens || c[1] != tokens {
		t.Fatalf("F = 1, H = 2: experts 0 and 1 should serve every token, got %d, %d", c[0], c[1])
	}
	ids, err = HotIDs(routingProblem(9, 8, 100), 1, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkDistinct(t, routingProblem(9, 8, 100), ids)
}

func TestRoutingValidation(t *testing.T) {
	p := routingProblem(128, 8, 10)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"zipf negative", second(ZipfCounts(p, -1, 1)), "zipf s = -1: must be in [0, 8]"},
		{"zipf NaN", second(ZipfCounts(p, math.NaN(), 1)), "zipf s = NaN"},
		{"zipf huge", second(ZipfIDs(p, 9, 1)), "must be in [0, 8]"},
		{"hot zero", second(HotCounts(p, 0, 0.5, 1)), "hot experts H = 0: must be in [1, n_mats-1 = 127]"},
		{"hot all", second(HotCounts(p, 128, 0.5, 1)), "hot experts H = 128"},
		{"hot fraction", second(HotIDs(p, 8, 1.5, 1)), "hot fraction F = 1.5: must be in [0, 1]"},
		{"used > experts", second(ZipfCounts(routingProblem(4, 8, 1), 1, 1)), "n_used = 8: must be in [1, n_mats = 4]"},
		{"no tokens", second(HotCounts(routingProblem(4, 2, 0), 1, 0.5, 1)), "n = 0"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, tc.err, tc.want)
		}
	}
}

func second(_ []int32, err error) error { return err }

// A million tokens: counts need O(experts) memory, never the ids.
func TestCountsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	p := routingProblem(128, 8, 1_000_000)
	for _, tc := range []struct {
		name  string
		count func() ([]int32, error)
	}{
		{"zipf", func() ([]int32, error) { return ZipfCounts(p, 1.5, 2) }},
		{"hot", func() ([]int32, error) { return HotCounts(p, 8, 0.3, 2) }},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, err := tc.count()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Errorf("%s: %d bytes allocated for a million tokens", tc.name, d)
		}
		var total int64
		for _, n := range c {
			total += int64(n)
		}
		if total != 8_000_000 {
			t.Fatalf("%s: counts sum to %d, want 8e6", tc.name, total)
		}
	}
}

func BenchmarkZipfCounts(b *testing.B) {
	p := routingProblem(128, 8, 100000)
	for b.Loop() {
		if _, err := ZipfCounts(p, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUniformCountsMatchRouting(t *testing.T) {
	p := tile.Problem{Experts: 16, Used: 4, M: 64, K: 32, Tokens: 200, TypeA: dequant.Q4_0}
	ids := UniformIDs(p, 9)
	rm, err := tile.Map0(p, ids) // also checks distinct experts per token
	if err != nil {
		t.Fatal(err)
	}
	tpe := UniformCounts(p, 9)
	for e := range tpe {
		if tpe[e] != rm.TPE[e] {
			t.Fatalf("counts %v differ from routing counts %v", tpe, rm.TPE)
		}
	}
}
