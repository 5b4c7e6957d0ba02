package engine

import (
	"slices"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// TestCompositionOrder: a core's composition, kept by insertMix and
// removeMix as threadgroups enter and leave their k-loops, is always the
// canonical order (rank, then id) that a sort of the same ids gives, also
// when a class met later ranks before the ones already in it.
func TestCompositionOrder(t *testing.T) {
	cc := &coreCache{info: []*classInfo{{rank: "m"}, {rank: "c"}, {rank: "x"}, {rank: "c"}}}
	v := newCacheView(cc)
	canonical := func(ids []int) []int {
		s := slices.Clone(ids)
		slices.SortStableFunc(s, func(a, b int) int {
			if ra, rb := cc.info[a].rank, cc.info[b].rank; ra != rb {
				if ra < rb {
					return -1
				}
				return 1
			}
			return a - b
		})
		return s
	}
	var ids []int
	for _, id := range []int{2, 0, 0, 3, 1, 2} {
		ids = v.insertMix(ids, id)
		if want := canonical(ids); !slices.Equal(ids, want) {
			t.Fatalf("after inserting %d: %v, want %v", id, ids, want)
		}
	}
	// a class created after the view numbered its order
	cc.info = append(cc.info, &classInfo{rank: "a"})
	ids = v.insertMix(ids, 4)
	if want := []int{4, 1, 3, 0, 0, 2, 2}; !slices.Equal(ids, want) {
		t.Fatalf("after inserting a new class: %v, want %v", ids, want)
	}
	for _, id := range []int{0, 2, 4} {
		ids = removeMix(ids, id)
	}
	if want := []int{1, 3, 0, 2}; !slices.Equal(ids, want) {
		t.Fatalf("after removing: %v, want %v", ids, want)
	}
}

// TestRefillRoundRobin: on a grid of identical threadgroups in lock-step,
// the slots that k-loop ends free within a cycle are refilled as one batch,
// whatever slot events fall at that time too, in rounds of one threadgroup
// per core: each round's cores ascend and are among the previous round's.
func TestRefillRoundRobin(t *testing.T) {
	// a mul_mv_ext grid (q4_0, m = 32000, k = 4096, n = 4) on the M3 Max:
	// threadgroups enter their k-loops at the times other cores' k-loops end
	chip := chips.MustLookup("M3 Max 40-core GPU")
	run, _, _ := vecGrid(t, chip, tile.DenseProblem{M: 32000, N: 4, K: 4096, TypeA: dequant.Q4_0}, tile.KernelMulMVExt)
	batches := map[float64]int{}
	multi := 0 // batches of several cores
	refilled = func(at float64, cores []int) {
		batches[at]++
		var prev []int
		for i := 0; i < len(cores); {
			j := i + 1
			for j < len(cores) && cores[j] > cores[j-1] {
				j++
			}
			round := cores[i:j]
			for _, c := range round {
				if prev != nil && !slices.Contains(prev, c) {
					t.Fatalf("refill at %.0f: %v: round %v has a core the round before (%v) did not", at, cores, round, prev)
				}
			}
			prev, i = round, j
		}
		if len(cores) > 1 && slices.Max(cores) != slices.Min(cores) {
			multi++
		}
	}
	defer func() { refilled = nil }()
	run()
	for at, n := range batches {
		if n > 1 {
			t.Errorf("%d refills at %.0f: the cores freed at one time are one batch", n, at)
		}
	}
	if multi == 0 {
		t.Fatalf("no refill of several cores in %d refills: the grid is not in lock-step", len(batches))
	}
}

// vecGrid builds the grid of a dense mat-vec kernel on chip as the timing
// engine does (full row blocks, the last one cut to the rows left) and
// returns a function that runs it on the fast engine, its threadgroups and
// the threadgroups a core holds.
func vecGrid(t *testing.T, chip *chips.Chip, p tile.DenseProblem, k tile.MetalKernel) (run func(), tgs, tgsPerCore int) {
	t.Helper()
	vb, err := tile.NewDenseVecBuilder(p, k)
	if err != nil {
		t.Fatal(err)
	}
	R := vb.Kernel.RowsPerTG()
	gx := (p.M + R - 1) / R
	full, edge := vb.Program(vb.Context(R, p.N)), vb.Program(vb.Context(p.M-(gx-1)*R, p.N))
	g := &Grid{Kernel: "mat-vec test", Shape: []*isa.Program{full}, Launched: gx, ActReuse: gx,
		TG: func(i int) (*isa.Program, bool) {
			if i == gx-1 {
				return edge, false
			}
			return full, false
		}}
	sh, err := NewCaches().share(g, chip)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		src := newGridSource(g, sh)
		runFast(src.view, src, int(chip.Cores.Value), sh.occ.TGsPerCore, sh.m.dramBPC/chip.Cores.Value)
	}, gx, sh.occ.TGsPerCore
}

// TestLastWaveSpreads: on a grid of identical threadgroups whose last wave
// is partial, every core runs its share of the grid, within one
// threadgroup. The cores run in lock-step, so they must read one
// measurement of a composition at a time (when the fine one is made, the
// cores on the coarse one go on at it) and the dispatcher must see their
// k-loop ends, a rounding apart, as one batch: otherwise one core frees its
// slots a little early and takes most of the last wave, which then runs at
// one core's rate, far slower than on the detailed engine.
func TestLastWaveSpreads(t *testing.T) {
	// 512 threadgroups: on 15-slot cores 32 over one full wave of 32
	// cores, 32 over two of 16, 62 over one of 30
	for _, name := range []string{"M1 Max 32-core GPU", "M2 Pro 16-core GPU", "M2 Max 30-core GPU"} {
		chip := chips.MustLookup(name)
		cores := int(chip.Cores.Value)
		run, tgs, slots := vecGrid(t, chip, tile.DenseProblem{M: 4096, N: 1, K: 11008, TypeA: dequant.Q4_0}, tile.KernelMulMV)
		if tgs <= cores*slots {
			t.Fatalf("%s: %d threadgroups fill at most one wave of %d x %d", name, tgs, cores, slots)
		}
		ran := make([]int, cores)
		for c := range ran {
			ran[c] = slots // the first wave
		}
		refilled = func(_ float64, cs []int) {
			for _, c := range cs {
				ran[c]++
			}
		}
		run()
		refilled = nil
		lo, hi := tgs/cores, (tgs+cores-1)/cores
		for c, n := range ran {
			if n < lo || n > hi {
				t.Errorf("%s: core %d ran %d threadgroups, want %d..%d (%d over %d cores)", name, c, n, lo, hi, tgs, cores)
			}
		}
	}
}
