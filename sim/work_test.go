package sim_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestEstimateBoundsTheRun: the estimate counts every threadgroup the run
// dispatches (and map0's one), and on the detailed engine at least the
// instructions it issues and at most twice as many (tolerance: the estimate
// takes every active tile as full and bounds the active tiles without the
// routing, which the calibration shapes fill to about 70 %). On the fast
// engine it counts map0's instructions and no more: the core-mix
// measurements, simulated instruction by instruction too, come on top of it
// (Work's comment says why they are not estimated).
func TestEstimateBoundsTheRun(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.HalfTile()}
	for _, p := range []tile.Problem{
		{Experts: 16, Used: 4, M: 256, K: 256, Tokens: 64, TypeA: dequant.Q4_0},
		tile.HeadlineProblem(128),
		{Experts: 8, Used: 2, M: 96, K: 512, Tokens: 8, TypeA: dequant.IQ2_XS}, // mul_mv_id
	} {
		for _, kind := range []sim.Engine{sim.Fast, sim.Detailed} {
			opt := sim.Options{Engine: kind, Draws: 2}
			w, err := sim.NewSimulator().Estimate(tile.MoEWorkload(p), k, tile.KernelAuto, chip, opt)
			if err != nil {
				t.Fatal(err)
			}
			r, err := sim.NewSimulator().RunWorkload(tile.MoEWorkload(p), k, tile.KernelAuto, chip, opt)
			if err != nil {
				t.Fatal(err)
			}
			launched := float64(2 * r.Counters.Launched)
			if r.KernelName == "mul_mm_id" {
				launched++ // map0
			}
			if w.Threadgroups != launched {
				t.Errorf("%s %v: %g threadgroups estimated, %g dispatched", p, kind, w.Threadgroups, launched)
			}
			got := float64(r.Sim.Instructions)
			if kind == sim.Detailed && (w.Instructions < got || w.Instructions > 2*got) {
				t.Errorf("%s %v: %.4g instructions estimated, %.4g issued", p, kind, w.Instructions, got)
			}
			if kind == sim.Fast {
				map0 := 0.0
				if r.KernelName == "mul_mm_id" {
					m0, err := tile.Map0Program(p)
					if err != nil {
						t.Fatal(err)
					}
					map0 = float64(m0.Counts().Instructions)
				}
				if w.Instructions != map0 || got <= map0 {
					t.Errorf("%s %v: %.4g instructions estimated, map0's %.4g, %.4g issued with the mix measurements", p, kind, w.Instructions, map0, got)
				}
			}
		}
	}
}

// TestWorkBoundRefusesBeforeRunning: a run past its bound fails at once with
// a *sim.WorkError holding the estimate, whatever the engine or kernel; the
// shapes that ran for days (n = 2^24, and a row of 1024 experts with m = k =
// 2^20 and n = 2^24) are past the default bound, and their estimates take
// no time.
func TestWorkBoundRefusesBeforeRunning(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.Upstream()}
	for _, tc := range []struct {
		w   tile.Workload
		opt sim.Options
	}{
		{tile.MoEWorkload(tile.HeadlineProblem(1 << 24)), sim.Options{}},
		{tile.MoEWorkload(tile.Problem{Experts: 1024, Used: 8, M: 1 << 20, K: 1 << 20, Tokens: 1 << 24, TypeA: dequant.Q4_0}), sim.Options{}},
		{tile.MoEWorkload(tile.Problem{Experts: 16, Used: 4, M: 256, K: 256, Tokens: 64, TypeA: dequant.Q4_0}), sim.Options{MaxWork: 1000}},
		{tile.MoEWorkload(tile.Problem{Experts: 16, Used: 4, M: 256, K: 256, Tokens: 8, TypeA: dequant.Q4_0}), sim.Options{MaxWork: 10}},
		{tile.DenseWorkload(tile.DenseProblem{M: 1 << 20, N: 1 << 24, K: 1 << 20, TypeA: dequant.Q4_0}), sim.Options{Engine: sim.Detailed}},
	} {
		start := time.Now()
		_, err := sim.NewSimulator().RunWorkload(tc.w, k, tile.KernelAuto, chip, tc.opt)
		var we *sim.WorkError
		if !errors.As(err, &we) || !(we.Work.Units() > we.Max) {
			t.Errorf("%s: %v, want a work error", tc.w, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refused after %v", tc.w, d)
		}
	}
}

// TestMap0MemoryDoesNotGrowWithTokens: map0's program is a loop over its
// token chunks, and the engine keeps nothing per chunk (no body-iteration
// marks outside mix measurements, no weight-line pattern for a program that
// reads no weights), so timing it for four million tokens allocates no more
// than for four thousand.
func TestMap0MemoryDoesNotGrowWithTokens(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	alloc := func(n int) uint64 {
		p := tile.Problem{Experts: 1, Used: 1, M: 64, K: 64, Tokens: n, TypeA: dequant.Q4_0} // a chunk per token
		prog, err := tile.Map0Program(p)
		if err != nil {
			t.Fatal(err)
		}
		g := &sim.Grid{Kernel: prog, Shape: []*isa.Program{prog}, Launched: 1, ActReuse: 1,
			TG: func(int) (*isa.Program, bool) { return prog, false }}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := sim.NewSimulator().RunGrid(g, chip, sim.Detailed); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, big := alloc(4096), alloc(1<<22)
	// tolerance: 1 MB for what a run allocates whatever its length (the
	// engine's queues and counters)
	if big > small+1<<20 {
		t.Errorf("map0 of 2^22 tokens allocates %d bytes, of 4096 tokens %d", big, small)
	}
}
