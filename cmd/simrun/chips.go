package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/metalsim/metalsim/sim"
)

func runChips(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("chips", "List the embedded chips, or print one chip file (--show NAME, or --chip-file FILE to check a file).", stderr)
	show := fs.String("show", "", "print this chip's file (name, alias or a chip .json), with calibrated values resolved")
	file := fs.String("chip-file", "", "load and print a chip file (checks it)")
	if code, ok := parseFlagsOnly(fs, args, "chips", stderr); !ok {
		return code
	}
	if *show != "" || *file != "" {
		if *show != "" && *file != "" {
			return fail(stderr, "chips", fmt.Errorf("--show %q and --chip-file %s: give one", *show, *file))
		}
		var c *sim.Chip
		var err error
		if *file != "" {
			if c, err = sim.LoadChipFile(*file); err != nil {
				err = fmt.Errorf("--chip-file: %w", err)
			}
		} else if c, err = chipByNameOrFile(*show); err != nil {
			err = fmt.Errorf("--show: %w", err)
		}
		if err != nil {
			return fail(stderr, "chips", err)
		}
		b, err := c.MarshalIndent()
		if err != nil {
			return fail(stderr, "chips", err)
		}
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	chips, err := sim.Chips()
	if err != nil {
		return fail(stderr, "chips", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "chip\tfamily\tcores\tclock MHz\tFP32 / FP16 lanes\tFP32 / FP16 TFLOPS\ttensor TFLOPS\tDRAM GB/s\tdefault path\tcalibration")
	for _, c := range chips {
		cal := "own measurements"
		if c.CalibrationFrom != "" {
			cal = "from " + c.CalibrationFrom
		} else if p, _ := c.Param("sg_launch_clk"); p.Source != "calibrated" {
			cal = "none"
		}
		l32, l16 := c.Lanes()
		tflops := func(flopsPerClock float64) float64 { return c.Cores.Value * flopsPerClock * c.ClockMHz.Value / 1e6 }
		tensor := "–"
		if f := c.TensorFlopsPerClock(); f > 0 {
			tensor = fmt.Sprintf("%.1f", tflops(f))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.0f / %.0f\t%.2f / %.2f\t%s\t%.0f\t%s\t%s\n", c.Name, c.Family, c.Cores.Value, c.ClockMHz.Value,
			l32, l16, tflops(2*l32), tflops(2*l16), tensor, c.DRAMBandwidthGBs.Value, sim.DefaultPath(c), cal)
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, "chips", err)
	}
	return exitOK
}
