package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

func runEmulate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("emulate", "Run one MUL_MAT_ID for values on random, seeded operands (uniform top-k routing) and print\n"+
		"the counters and the error against float64 references.", stderr)
	var pf problemFlags
	var kf kernelFlags
	pf.register(fs)
	kf.register(fs, "simdgroup")
	seed := fs.Uint64("seed", 1, "seed of the operands and the routing")
	workers := fs.Int("workers", 0, "emulation goroutines (0: GOMAXPROCS); the output is the same for any value")
	fs.Lookup("n").DefValue = "64"
	_ = fs.Set("n", "64")
	fs.Lookup("m").DefValue = "128"
	_ = fs.Set("m", "128")
	fs.Lookup("k").DefValue = "256"
	_ = fs.Set("k", "256")
	fs.Lookup("experts").DefValue = "16"
	_ = fs.Set("experts", "16")
	fs.Lookup("used").DefValue = "4"
	_ = fs.Set("used", "4")
	if code, ok := parseFlagsOnly(fs, args, "emulate", stderr); !ok {
		return code
	}
	p, err := pf.problem()
	if err != nil {
		return fail(stderr, "emulate", err)
	}
	k, err := kf.kernel(nil)
	if err != nil {
		return fail(stderr, "emulate", err)
	}
	if *workers < 0 {
		return fail(stderr, "emulate", fmt.Errorf("--workers = %d: must be >= 0", *workers))
	}
	if *seed == 0 { // as simulate and trace: the same seed draws the same routing there
		return fail(stderr, "emulate", errors.New("--seed = 0: must be positive"))
	}
	if err := checkEmulateMemory(p); err != nil {
		return fail(stderr, "emulate", err)
	}
	t := emulate.RandomTensors(p, *seed)
	start := time.Now()
	res, err := emulate.MulMatID(p, k, t, *workers)
	if err != nil {
		return fail(stderr, "emulate", flagError(err)) // the plan checks k against the tile
	}
	wall := time.Since(start)
	e := trace.CompareEmulation(p.K, res.Dst, golden.Reference(p, t))
	macs, err := trace.WriteEmulation(stdout, fmt.Sprintf("%s, %s path, variant %s, seed %d", p, k.Path, k.Name, *seed), res.Counters, e)
	if err != nil {
		return fail(stderr, "emulate", err)
	}
	// wall-clock figures go to stderr, so stdout is the same from run to run
	fmt.Fprintf(stderr, "emulation: %v wall, %.3g MAC/s\n", wall.Round(time.Millisecond), macs/wall.Seconds())
	if why := k.WrongB(k.Path); why != "" {
		fmt.Fprintf(stdout, "note: %s\n", why)
	}
	for _, why := range study.BeyondEveryChip(p, k) {
		fmt.Fprintf(stdout, "note: %s\n", why)
	}
	// what llama.cpp would run instead, as simulate says
	if p.UsesMulMV() {
		fmt.Fprintln(stdout, "note: llama.cpp runs kernel_mul_mv_id, not mul_mm_id, when n < 32 or k < 64 (kernel-facts 2.2); it keeps the activations in float32, so its values differ from these by the half staging")
	}
	if why := tile.Map0Missing(p.Used); why != "" {
		fmt.Fprintf(stdout, "note: %s\n", why)
	}
	if outsideBound(e.Worst) {
		// emulate is a correctness check: values outside the bound fail it
		fmt.Fprintf(stderr, "simrun emulate: FAIL: dst is %.3g x the float32 accumulation bound away from the reference\n", e.Worst)
		return exitFailed
	}
	return exitOK
}

// maxEmulateBytes bounds the memory emulate holds: every operand, the output
// and the references at once.
const maxEmulateBytes = 8 << 30

// checkEmulateMemory refuses a problem whose operands would not fit in
// maxEmulateBytes, instead of letting the allocation crash the process.
func checkEmulateMemory(p tile.Problem) error {
	rb, err := p.TypeA.RowBytes(p.K)
	if err != nil {
		return err
	}
	weights := float64(p.Experts) * float64(p.M) * float64(rb)
	// an activation is a float32 operand and two float64 copies in the
	// reference (golden.Reference: exact and half-rounded), 20 bytes in all
	acts := float64(p.Tokens) * float64(p.SrcRows()) * float64(p.K) * (4 + 8 + 8)
	slots := float64(p.Tokens) * float64(p.Used)
	outs := slots*float64(p.M)*(4+4+4+8) + slots*4 // dst, the two references and their bound; ids
	total := weights + acts + outs
	if total <= maxEmulateBytes {
		return nil
	}
	return fmt.Errorf("--experts, --m, --k, --n: %.3g GB in memory: weights %.3g GB (n_mats x m x k), activations %.3g GB (n x n_used x k, or n x k with --b, x 20 bytes: the operand and the reference's two float64 copies), "+
		"output and references %.3g GB (n x n_used x m); emulate holds them at once and allows at most %d GiB",
		total/1e9, weights/1e9, acts/1e9, outs/1e9, maxEmulateBytes>>30)
}

// outsideBound reports whether emulate's worst error ratio fails the check:
// above the bound, infinite (a nonzero value where every product is zero) or
// NaN (which compares false with everything, so "> 1" would pass it).
func outsideBound(worst float64) bool { return !(worst <= 1) }
