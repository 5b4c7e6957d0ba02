package main

import (
	"fmt"
	"io"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

func runSimulate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("simulate", "Predict the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip, with occupancy, utilisation,\n"+
		"the limiter and the counters.", stderr)
	var pf problemFlags
	var kf kernelFlags
	var cf chipFlags
	var sf simFlags
	pf.register(fs)
	kf.register(fs, "")
	cf.register(fs, "M1 Pro 16-core GPU")
	sf.register(fs)
	if code, ok := parseFlagsOnly(fs, args, "simulate", stderr); !ok {
		return code
	}
	p, err := pf.problem()
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	chip, err := cf.chip()
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	k, err := kf.kernel(chip)
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	if err := sim.CheckMap0(p, chip, "--experts", "--used"); err != nil {
		return fail(stderr, "simulate", err)
	}
	sm := sim.NewSimulator()
	stop := startProgress(stderr, sm) // a line on a terminal while a long run lasts
	r, err := sm.Run(p, k, chip, opt)
	stop()
	if err != nil {
		return fail(stderr, "simulate", flagError(err)) // the plan checks k against the tile
	}
	if err := trace.WriteResult(stdout, r); err != nil {
		return fail(stderr, "simulate", err)
	}
	if why := k.WrongB(k.Path); why != "" {
		fmt.Fprintf(stdout, "  note              %s\n", why)
	}
	if why := tile.Map0Missing(p.Used); why != "" {
		fmt.Fprintf(stdout, "  note              %s\n", why)
	}
	if p.UsesMulMV() {
		// llama.cpp would not run mul_mm_id here (KF 2.2): say what it runs
		mv, err := sim.NewSimulator().RunMulMVID(p, chip, opt)
		if err != nil {
			return fail(stderr, "simulate", err)
		}
		fmt.Fprintf(stdout, "  note              llama.cpp runs kernel_mul_mv_id when n < 32 or k < 64: predicted %.1f µs per run (limiter %s); the variant does not apply to it (simrun validate times what llama.cpp runs)\n",
			mv.TotalUs, mv.Limit)
	}
	sf.writeRates(stderr)
	return exitOK
}
