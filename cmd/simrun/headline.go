package main

import (
	"fmt"
	"io"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/sim"
)

func runHeadline(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("headline", "The headline experiment: the 128-expert top-8 q4_0 perf shape of test-backend-ops (m=768,\n"+
		"k=2048), every calibration row (n = 8..512 on the M1 Pro, simdgroup path; 32..512 on the M5, tensor\n"+
		"path), upstream vs halftile, predicted next to the measured values embedded from the calibration sets;\n"+
		"n < 32 runs mul_mv_id, as llama.cpp does.", stderr)
	var sf simFlags
	var tf tableFlags
	sf.register(fs)
	tf.register(fs)
	if code, ok := parseFlagsOnly(fs, args, "headline", stderr); !ok {
		return code
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "headline", err)
	}
	rep, err := accuracy.ValidateCalibration(sim.NewSimulator(), opt)
	if err != nil {
		return fail(stderr, "headline", err)
	}
	fmt.Fprintln(stdout, "MUL_MAT_ID q4_0 x f32, 128 experts, top-8, m=768, k=2048: measured (calibration sets) vs predicted")
	fmt.Fprintln(stdout)
	if err := rep.WriteComparison(stdout, tf.width()); err != nil {
		return fail(stderr, "headline", err)
	}
	sf.writeRates(stderr)
	return exitOK
}

func okOr(stderr io.Writer, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return exitBadUsed
	}
	return exitOK
}
