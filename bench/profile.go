package bench

import (
	"cmp"
	"slices"
)

// Profile is what one test costs before the calibrated parameters apply:
// every distinct cost item with how many times it runs, and the graph
// evaluations.
type Profile struct {
	Evals int
	items map[item]int
	list  []counted // the items in a fixed order (sorted), once the profile is complete
}

// counted is an item with how many times it runs.
type counted struct {
	item
	n int
}

func newProfile() *Profile { return &Profile{items: map[item]int{}} }

func (p *Profile) add(it item) { p.items[it]++ }

// done fixes the items' order, so that sums of floats are the same from run
// to run.
func (p *Profile) done() {
	p.list = p.list[:0]
	for it, n := range p.items {
		p.list = append(p.list, counted{it, n})
	}
	slices.SortFunc(p.list, func(a, b counted) int {
		return cmp.Or(cmp.Compare(a.Op, b.Op), cmp.Compare(a.Kernel, b.Kernel), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.FixedUs, b.FixedUs), cmp.Compare(a.Bytes, b.Bytes), cmp.Compare(a.Dispatches, b.Dispatches))
	})
}

// itemUs is one run of an item with the parameters, at bw bytes per µs;
// mvScale multiplies the mat-vec kernels' time (1: as the kernel models
// give it).
func (it *item) us(par Params, bw, mvScale float64) float64 {
	t := it.FixedUs
	switch it.Kind {
	case KindMemory:
		t = it.Bytes / bw
	case KindAttn:
		t = max(t, it.Bytes/bw)
	case KindMatmul:
		if matVec(it.Kernel) {
			t *= mvScale
		}
	}
	return t + f(it.Dispatches)*par.DispatchUs.Value
}

// matVec reports whether a matmul kernel is a mat-vec one (mul_mv,
// mul_mv_ext, mul_mv_id), whose time is the weights' streaming.
func matVec(kernel string) bool {
	return kernel == "mul_mv" || kernel == "mul_mv_ext" || kernel == "mul_mv_id"
}

// total returns the test's time in µs (Time without the breakdown).
func (p *Profile) total(par Params, dramGBs, mvScale float64) float64 {
	bw := dramGBs * 1e3 * par.MemFraction.Value
	t := 0.0
	for i := range p.list {
		t += f(p.list[i].n) * p.list[i].us(par, bw, mvScale)
	}
	return t + f(p.Evals)*par.EvalUs.Value
}

// Line is one row of a test's breakdown: an op and kernel, how many times it
// ran, its time (kernel plus its dispatches' cost) and its share of the
// test's time.
type Line struct {
	Op     string  `json:"op"`
	Kernel string  `json:"kernel"`
	Count  int     `json:"count"`
	Us     float64 `json:"us"`
	Share  float64 `json:"share"`
}

// evalOp is the breakdown row of the per-evaluation cost.
const evalOp = "(evaluation)"

// Time returns the test's time in µs with the parameters on a chip of the
// given achievable DRAM bandwidth, and its breakdown by op and kernel
// (largest first, ties by name; shares sum to 1).
func (p *Profile) Time(par Params, dramGBs float64) (float64, []Line) {
	bw := dramGBs * 1e3 * par.MemFraction.Value // bytes per µs
	type key struct{ op, kernel string }
	lines := map[key]*Line{}
	total := 0.0
	for i := range p.list {
		it := &p.list[i]
		t := f(it.n) * it.us(par, bw, 1)
		k := key{it.Op, it.Kernel}
		l := lines[k]
		if l == nil {
			l = &Line{Op: it.Op, Kernel: it.Kernel}
			lines[k] = l
		}
		l.Count += it.n
		l.Us += t
		total += t
	}
	if ev := f(p.Evals) * par.EvalUs.Value; ev > 0 {
		lines[key{evalOp, ""}] = &Line{Op: evalOp, Count: p.Evals, Us: ev}
		total += ev
	}
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		if total > 0 {
			l.Share = l.Us / total
		}
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Line) int {
		if c := cmp.Compare(b.Us, a.Us); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Op, b.Op); c != 0 {
			return c
		}
		return cmp.Compare(a.Kernel, b.Kernel)
	})
	return total, out
}
