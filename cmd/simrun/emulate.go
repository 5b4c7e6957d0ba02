package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

const emulateUsage = `Run one matmul for values on random, seeded operands (uniform top-k routing for a mul_mat_id):
the kernel llama.cpp dispatches for --op and --n (mul_mm_id or mul_mv_id; mul_mm, mul_mv or mul_mv_ext),
or --kernel; print the counters and the error against float64 references.`

func runEmulate(c *call) func() int {
	seed := c.fs.Uint64("seed", 1, "seed of the operands and the routing")
	maxMACs := c.fs.Float64("max-macs", trace.DefaultMaxEmulateMACs, "bound on the multiply-accumulates the emulation executes, padding included (README, \"Bounded work\"); a run past it exits 2 with its estimate")
	workers := c.fs.Int("workers", 0, "emulation goroutines (0: GOMAXPROCS); the output is the same for any value")
	pf := &c.problem
	for _, d := range []struct {
		name string
		v    *int
		def  int
	}{{"n", &pf.n, 64}, {"m", &pf.m, 128}, {"k", &pf.k, 256}, {"experts", &pf.experts, 16}, {"used", &pf.used, 4}} {
		*d.v, c.fs.Lookup(d.name).DefValue = d.def, strconv.Itoa(d.def) // emulate's smaller defaults, not given flags
	}
	return func() int {
		pt, err := pf.point(&c.kernel, nil, sim.Options{})
		if err != nil {
			return c.fail(err)
		}
		w := pt.Workload
		kern, k, err := pt.Kernels()
		if err != nil {
			return c.fail(err)
		}
		if *workers < 0 {
			return c.fail(fmt.Errorf("--workers = %d: must be >= 0", *workers))
		}
		if *seed == 0 { // as simulate and trace: the same seed draws the same routing there
			return c.fail(errors.New("--seed = 0: must be positive"))
		}
		if err := trace.CheckEmulateMemory(w); err != nil {
			return c.fail(fmt.Errorf("--experts, --m, --k, --n: %w", err))
		}
		if !(*maxMACs >= 1 && *maxMACs <= 1e18) {
			return c.fail(fmt.Errorf("--max-macs = %g: must be in [1, 1e18]", *maxMACs))
		}
		if err := trace.CheckEmulateMACs(w, kern, k, *maxMACs); err != nil {
			return c.fail(flagError(err)) // the plan checks k against the tile
		}
		start := time.Now()
		em, err := trace.Emulate(w, kern, k, *seed, *workers)
		if err != nil {
			return c.fail(flagError(err)) // the plan checks k against the tile
		}
		wall := time.Since(start)
		macs, err := trace.WriteEmulation(c.stdout, em)
		if err != nil {
			return c.fail(err)
		}
		// wall-clock figures go to stderr, so stdout is the same from run to run
		fmt.Fprintf(c.stderr, "emulation: %v wall, %.3g MAC/s\n", wall.Round(time.Millisecond), macs/wall.Seconds())
		notes := study.Notes(w, kern, k)
		if kern == tile.KernelMulMMID {
			notes = append(notes, study.BeyondEveryChip(w.MoE, k)...)
		}
		if err := trace.WriteNotes(c.stdout, "", notes); err != nil {
			return c.fail(err)
		}
		if outsideBound(em.Error.Worst) {
			// emulate is a correctness check: values outside the bound fail it
			fmt.Fprintf(c.stderr, "simrun emulate: FAIL: dst is %.3g x the float32 accumulation bound away from the reference\n", em.Error.Worst)
			return exitFailed
		}
		return exitOK
	}
}

// outsideBound reports whether emulate's worst error ratio fails the check:
// above the bound, infinite (a nonzero value where every product is zero) or
// NaN (which compares false with everything, so "> 1" would pass it).
func outsideBound(worst float64) bool { return !(worst <= 1) }
