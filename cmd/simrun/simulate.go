package main

import (
	"fmt"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

const simulateUsage = `Predict the time of one matmul on a chip: a MUL_MAT_ID (--op mul_mat_id) or a MUL_MAT (--op mul_mat),
run as the kernel llama.cpp dispatches for it (map0 + mul_mm_id or mul_mv_id; mul_mm, mul_mv or
mul_mv_ext) or as --kernel; with occupancy, utilisation, the limiter and the counters. --format csv
and json print the point as one row of simrun sweep's columns (docs/sweep.md).`

func runSimulate(c *call) func() int {
	format := c.fs.String("format", "text", "output: text, csv or json")
	return func() int {
		if err := checkChoice("--format", *format, "text", "csv", "json"); err != nil {
			return c.fail(err)
		}
		opt, err := c.sim.options()
		if err != nil {
			return c.fail(err)
		}
		pt, err := c.point(opt)
		if err != nil {
			return c.fail(err)
		}
		sm := sim.NewSimulator()
		stop := trace.StartProgress(c.stderr, sm) // a line on a terminal while a long run lasts
		o, err := pt.Run(sm)
		stop()
		if err != nil {
			return c.fail(err)
		}
		if *format != "text" {
			err = study.WritePoint(c.stdout, *format == "json", pt.Row(o))
		} else if err = trace.WriteResult(c.stdout, o.Result); err == nil {
			for _, n := range o.Notes {
				fmt.Fprintf(c.stdout, "  note              %s\n", n)
			}
		}
		if err != nil {
			return c.fail(err)
		}
		c.sim.writeRates(c.stderr)
		return exitOK
	}
}
