package routing

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/metalsim/metalsim/tile"
)

// Routing generators besides uniform distinct top-k. Every generator draws, per
// token, Used DISTINCT experts (map0 needs them distinct), comes in two forms —
// ids for emulation, tokens per expert for timing in O(experts) memory — and is
// deterministic for a seed: the two forms of one generator see the same draws.
// Experts are ranked by index: expert 0 is the most popular.

// MaxZipfS bounds the Zipf exponent: at s = 8 the least popular of 4096 experts
// still has a normal float64 weight (4096^-8 = 2^-96).
const MaxZipfS = 8

// PCG stream constants, one per generator (the uniform one is in routing.go).
const (
	zipfStream = 0x7a6970662d726f75 // "zipf-rou"
	hotStream  = 0x686f742d726f7574 // "hot-rout"
)

// slotDrawer fills out with len(out) distinct experts of one token.
type slotDrawer interface {
	draw(out []int32)
}

// routeIDs draws every token's slots into one ids slice (ids[t*Used+s]).
func routeIDs(p tile.Problem, d slotDrawer) []int32 {
	ids := make([]int32, p.Tokens*p.Used)
	for t := 0; t < p.Tokens; t++ {
		d.draw(ids[t*p.Used : (t+1)*p.Used])
	}
	return ids
}

// routeCounts draws the same slots as routeIDs but keeps only tokens per expert.
func routeCounts(p tile.Problem, d slotDrawer) []int32 {
	tpe := make([]int32, p.Experts)
	slot := make([]int32, p.Used)
	for t := 0; t < p.Tokens; t++ {
		d.draw(slot)
		for _, e := range slot {
			tpe[e]++
		}
	}
	return tpe
}

// checkRoutingProblem validates the problem fields a routing depends on.
func checkRoutingProblem(p tile.Problem) error {
	switch {
	case p.Experts < 1 || p.Experts > tile.MaxExperts:
		return fmt.Errorf("routing: n_mats = %d: must be in [1, %d]", p.Experts, tile.MaxExperts)
	case p.Used < 1 || p.Used > p.Experts:
		return fmt.Errorf("routing: n_used = %d: must be in [1, n_mats = %d]", p.Used, p.Experts)
	case p.Tokens < 1 || p.Tokens > tile.MaxTokens:
		return fmt.Errorf("routing: n = %d: must be in [1, %d]", p.Tokens, tile.MaxTokens)
	}
	return nil
}

// uniformDrawer is UniformRouting's draw, so that Zipf with s = 0 gives the very
// same ids as UniformRouting for a seed.
type uniformDrawer struct {
	rng  *rand.Rand
	perm []int32
}

func newUniformDrawer(p tile.Problem, seed uint64) *uniformDrawer {
	return &uniformDrawer{rng: rand.New(rand.NewPCG(seed, 0x6d6f652d726f7574)), perm: make([]int32, p.Experts)}
}

func (u *uniformDrawer) draw(out []int32) { drawDistinct(u.rng, u.perm, out) }

// ValidateZipf checks a Zipf exponent.
func ValidateZipf(s float64) error {
	if math.IsNaN(s) || s < 0 || s > MaxZipfS {
		return fmt.Errorf("zipf s = %g: must be in [0, %d]", s, MaxZipfS)
	}
	return nil
}

// zipfDrawer samples without replacement from fixed weights: slot by slot, an
// expert is drawn from the weights of the experts the token does not use yet.
// The draw walks the segments between the already chosen experts over one
// prefix-sum array, so a slot costs O(Used + log Experts) and no state is
// modified (nothing to undo, no drift over a million tokens).
type zipfDrawer struct {
	rng    *rand.Rand
	w      []float64 // expert weights
	c      []float64 // c[i] = w[0] + ... + w[i]
	total  float64
	guide  []int32 // guide[j] = smallest i with c[i] > j·total/len(guide)
	scale  float64 // len(guide)/total
	chosen []int32 // the token's experts so far, ascending
}

func newZipfDrawer(p tile.Problem, s float64, seed uint64) *zipfDrawer {
	z := &zipfDrawer{
		rng:    rand.New(rand.NewPCG(seed, zipfStream)),
		w:      make([]float64, p.Experts),
		c:      make([]float64, p.Experts),
		chosen: make([]int32, 0, p.Used),
	}
	sum := 0.0
	for e := range z.w {
		z.w[e] = math.Pow(float64(e+1), -s)
		sum += z.w[e]
		z.c[e] = sum
	}
	z.total = sum
	z.guide = make([]int32, p.Experts)
	z.scale = float64(len(z.guide)) / sum
	i := 0
	for j := range z.guide {
		for i < len(z.c)-1 && z.c[i] <= float64(j)*sum/float64(len(z.guide)) {
			i++
		}
		z.guide[j] = int32(i)
	}
	return z
}

func (z *zipfDrawer) draw(out []int32) {
	z.chosen = z.chosen[:0]
	removed := 0.0
	for i := range out {
		e := z.pick(z.total - removed)
		out[i] = e
		j := len(z.chosen)
		z.chosen = append(z.chosen, e)
		for ; j > 0 && z.chosen[j-1] > e; j-- {
			z.chosen[j] = z.chosen[j-1]
		}
		z.chosen[j] = e
		removed += z.w[e]
	}
}

// pick draws one expert not in z.chosen with probability proportional to its
// weight; rest is the weight of the experts still free.
func (z *zipfDrawer) pick(rest float64) int32 {
	u := float64(z.rng.Float64() * rest) // explicit conversion: no fused multiply-add
	n := len(z.w)
	if rest > 0 {
		lo, d := 0, 0.0 // segment start; weight of the chosen experts before it
		for _, s := range z.chosen {
			if hi := int(s) - 1; hi >= lo && u+d < z.c[hi] {
				return z.search(lo, hi, u+d)
			}
			d += z.w[s]
			lo = int(s) + 1
		}
		if lo < n && u+d < z.c[n-1] {
			return z.search(lo, n-1, u+d)
		}
	}
	// Rounding pushed u past the last free expert (or nothing but negligible
	// weight is left): take the last free expert.
	e := int32(n - 1)
	for k := len(z.chosen) - 1; k >= 0 && z.chosen[k] == e; k-- {
		e--
	}
	return e
}

// search returns the smallest i in [lo, hi] with c[i] > t (c[hi] > t). A guide
// table (Chen and Asau's) gives the start, so the expected cost is O(1); the
// two scans make the result exact whatever the rounding of the guide index.
func (z *zipfDrawer) search(lo, hi int, t float64) int32 {
	j := min(max(int(t*z.scale), 0), len(z.guide)-1)
	i := min(max(lo, int(z.guide[j])), hi)
	for i > lo && z.c[i-1] > t {
		i--
	}
	for i < hi && z.c[i] <= t {
		i++
	}
	return int32(i)
}

// ZipfRouting draws, for every token, Used distinct experts without
// replacement, expert e weighing 1/(e+1)^s: popularity falls with rank as a
// Zipf law. s = 0 is uniform and returns exactly UniformRouting's ids.
func ZipfIDs(p tile.Problem, s float64, seed uint64) ([]int32, error) {
	d, err := zipfDrawerFor(p, s, seed)
	if err != nil {
		return nil, err
	}
	return routeIDs(p, d), nil
}

// ZipfCounts draws the same routing as ZipfRouting with the same seed but keeps
// only the tokens per expert, in O(experts) memory.
func ZipfCounts(p tile.Problem, s float64, seed uint64) ([]int32, error) {
	d, err := zipfDrawerFor(p, s, seed)
	if err != nil {
		return nil, err
	}
	return routeCounts(p, d), nil
}

func zipfDrawerFor(p tile.Problem, s float64, seed uint64) (slotDrawer, error) {
	if err := ValidateZipf(s); err != nil {
		return nil, err
	}
	if err := checkRoutingProblem(p); err != nil {
		return nil, err
	}
	if s == 0 {
		return newUniformDrawer(p, seed), nil
	}
	return newZipfDrawer(p, s, seed), nil
}

// ValidateHot checks hot-expert parameters against a problem: hot in
// [1, n_mats-1], fraction in [0, 1].
func ValidateHot(p tile.Problem, hot int, fraction float64) error {
	if hot < 1 || hot >= p.Experts {
		return fmt.Errorf("hot experts H = %d: must be in [1, n_mats-1 = %d]", hot, p.Experts-1)
	}
	if math.IsNaN(fraction) || fraction < 0 || fraction > 1 {
		return fmt.Errorf("hot fraction F = %g: must be in [0, 1]", fraction)
	}
	return nil
}

// hotDrawer sends each slot to the hot group (experts [0, hot)) with
// probability fraction, else to the cold group, uniformly among the group's
// experts the token does not use yet; a token that has used up a group takes
// the other.
type hotDrawer struct {
	rng                 *rand.Rand
	fraction            float64
	hot, cold           []int32 // identity permutations of each group
	hotSwaps, coldSwaps []int
}

func newHotDrawer(p tile.Problem, hot int, fraction float64, seed uint64) *hotDrawer {
	d := &hotDrawer{rng: rand.New(rand.NewPCG(seed, hotStream)), fraction: fraction,
		hot: make([]int32, hot), cold: make([]int32, p.Experts-hot)}
	for i := range d.hot {
		d.hot[i] = int32(i)
	}
	for i := range d.cold {
		d.cold[i] = int32(hot + i)
	}
	return d
}

func (d *hotDrawer) draw(out []int32) {
	d.hotSwaps, d.coldSwaps = d.hotSwaps[:0], d.coldSwaps[:0]
	for i := range out {
		useHot := d.rng.Float64() < d.fraction
		if len(d.hotSwaps) == len(d.hot) {
			useHot = false
		} else if len(d.coldSwaps) == len(d.cold) {
			useHot = true
		}
		if useHot {
			out[i] = takeDistinct(d.rng, d.hot, &d.hotSwaps)
		} else {
			out[i] = takeDistinct(d.rng, d.cold, &d.coldSwaps)
		}
	}
	undoSwaps(d.hot, d.hotSwaps)
	undoSwaps(d.cold, d.coldSwaps)
}

// takeDistinct is one step of a partial Fisher-Yates shuffle of perm: the
// len(*swaps)-th value drawn, recording the swap so it can be undone.
func takeDistinct(rng *rand.Rand, perm []int32, swaps *[]int) int32 {
	i := len(*swaps)
	j := i + rng.IntN(len(perm)-i)
	perm[i], perm[j] = perm[j], perm[i]
	*swaps = append(*swaps, j)
	return perm[i]
}

func undoSwaps(perm []int32, swaps []int) {
	for i := len(swaps) - 1; i >= 0; i-- {
		j := swaps[i]
		perm[i], perm[j] = perm[j], perm[i]
	}
}

// HotRouting draws, for every token, Used distinct experts of which a fraction
// goes to the first hot experts ("hot experts"): each slot picks the hot group
// with probability fraction, else the cold group, uniformly within the group
// among the experts the token does not use yet. The expected fraction of picks
// on hot experts is exactly fraction when hot >= n_used and n_mats-hot >=
// n_used; otherwise a token that has exhausted a group takes the other.
func HotIDs(p tile.Problem, hot int, fraction float64, seed uint64) ([]int32, error) {
	if err := checkHot(p, hot, fraction); err != nil {
		return nil, err
	}
	return routeIDs(p, newHotDrawer(p, hot, fraction, seed)), nil
}

// HotCounts draws the same routing as HotRouting with the same seed but keeps
// only the tokens per expert, in O(experts) memory.
func HotCounts(p tile.Problem, hot int, fraction float64, seed uint64) ([]int32, error) {
	if err := checkHot(p, hot, fraction); err != nil {
		return nil, err
	}
	return routeCounts(p, newHotDrawer(p, hot, fraction, seed)), nil
}

func checkHot(p tile.Problem, hot int, fraction float64) error {
	if err := checkRoutingProblem(p); err != nil {
		return err
	}
	return ValidateHot(p, hot, fraction)
}

// UniformRouting draws, for every token, Used distinct experts uniformly at random
// (test-backend-ops shuffles 0..n_mats-1 per token and takes the first n_used).
func UniformIDs(p tile.Problem, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f652d726f7574))
	ids := make([]int32, p.Tokens*p.Used)
	perm := make([]int32, p.Experts)
	for t := 0; t < p.Tokens; t++ {
		drawDistinct(rng, perm, ids[t*p.Used:(t+1)*p.Used])
	}
	return ids
}

// UniformCounts draws the same routing as UniformRouting with the same seed but
// keeps only the tokens per expert, in O(experts) memory: timing mode needs no ids.
func UniformCounts(p tile.Problem, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f652d726f7574))
	tpe := make([]int32, p.Experts)
	perm := make([]int32, p.Experts)
	slot := make([]int32, p.Used)
	for t := 0; t < p.Tokens; t++ {
		drawDistinct(rng, perm, slot)
		for _, e := range slot {
			tpe[e]++
		}
	}
	return tpe
}

// drawDistinct fills out with len(out) distinct values of [0, len(perm)) by a
// partial Fisher-Yates shuffle of perm, which must hold the identity permutation
// (a zeroed perm is initialised on first use); the swaps are undone afterwards so
// each draw costs O(len(out)), not O(len(perm)).
func drawDistinct(rng *rand.Rand, perm, out []int32) {
	n := len(perm)
	if n > 1 && perm[1] == 0 {
		for i := range perm {
			perm[i] = int32(i)
		}
	}
	var js [32]int
	swaps := js[:0]
	for i := range out {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
		out[i] = perm[i]
		swaps = append(swaps, j)
	}
	for i := len(swaps) - 1; i >= 0; i-- {
		j := swaps[i]
		perm[i], perm[j] = perm[j], perm[i]
	}
}
