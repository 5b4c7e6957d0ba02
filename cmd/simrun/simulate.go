package main

import (
	"fmt"
	"io"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

func runSimulate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("simulate", "Predict the time of one matmul on a chip: a MUL_MAT_ID (--op mul_mat_id) or a MUL_MAT (--op mul_mat),\n"+
		"run as the kernel llama.cpp dispatches for it (map0 + mul_mm_id or mul_mv_id; mul_mm, mul_mv or\n"+
		"mul_mv_ext) or as --kernel; with occupancy, utilisation, the limiter and the counters. --format csv\n"+
		"and json print the point as one row of simrun sweep's columns (docs/sweep.md).", stderr)
	var df dispatchFlags
	var sf simFlags
	df.register(fs)
	sf.register(fs)
	format := fs.String("format", "text", "output: text, csv or json")
	if code, ok := parseFlagsOnly(fs, args, "simulate", stderr); !ok {
		return code
	}
	if err := checkChoice("--format", *format, "text", "csv", "json"); err != nil {
		return fail(stderr, "simulate", err)
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	pt, err := df.point(opt)
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	sm := sim.NewSimulator()
	stop := trace.StartProgress(stderr, sm) // a line on a terminal while a long run lasts
	o, err := pt.Run(sm)
	stop()
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	if *format != "text" {
		err = study.WritePoint(stdout, *format == "json", pt.Row(o))
	} else if err = trace.WriteResult(stdout, o.Result); err == nil {
		for _, n := range o.Notes {
			fmt.Fprintf(stdout, "  note              %s\n", n)
		}
	}
	if err != nil {
		return fail(stderr, "simulate", err)
	}
	sf.writeRates(stderr)
	return exitOK
}
