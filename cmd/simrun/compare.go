package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
	"github.com/metalsim/metalsim/trace/plots"
)

const compareUsage = `Compare two kernel variants A and B (built-in names or .toml spec files) side by side over chips,
shapes (the problem flags, or --shapes) or a model's MoE layer (--preset, --gguf), and a list of n:
predicted µs of each, the delta B - A (µs and %; negative: B is faster), skipped half-tiles, MMAs
executed (8x8x8 on the simdgroup path, 16x16x16 on the tensor path), occupancy (threadgroups per
core and what limits it), the limiter and the kernel of each. Both variants see the same routing
draws. Every point runs the kernel llama.cpp dispatches for it (--op, n; --kernel forces one): where
that kernel takes none of a variant's knobs (the mat-vec kernels below 32 tokens of a mul_mat_id),
both sides time the same and a note says so. --kernel A,B forces a kernel per side ("auto,mul_mm":
llama.cpp's choice against mul_mm at every n).
With --preset or --gguf the model sets --experts, --used, --m, --k and --b (giving them is an
error); --type then overrides the weight type (a GGUF's own expert types by default).
--plot draws time and delta against n (PNG or SVG, by the file's extension); --measured FILE
(repeatable) adds the measured times of calibration TSVs or test-backend-ops logs as hollow markers.

usage: simrun compare [flags] A B`

func runCompare(c *call) func() int {
	chipFlag := c.fs.String("chip", "M1 Pro 16-core GPU", "chips: comma-separated names or aliases (simrun chips), or chip .json files")
	pathFlag := c.fs.String("path", "", "kernel path: simdgroup or tensor (default: a spec file's path, else each chip's)")
	nFlag := c.fs.String("n", "32,64,128,256,512", "tokens: comma-separated list")
	shapes := c.fs.String("shapes", "", "comma-separated MxK shapes (e.g. 768x2048,2048x768) instead of --m and --k")
	preset := c.fs.String("preset", "", "compare a model's MoE layer (gate, up, down, layer total): a preset (simrun model --list)")
	ggufFile := c.fs.String("gguf", "", "compare the MoE layer of the model in this GGUF file (header only)")
	routingFlag := c.fs.String("routing", "uniform", "routing: uniform, zipf:S, hot:H:F or file:PATH")
	format := c.fs.String("format", "text", "output: text, csv or json")
	plotFile := c.fs.String("plot", "", "also draw time and delta vs n to this .png or .svg file")
	var measuredFiles listFlag
	c.fs.Var(&measuredFiles, "measured", "with --plot: draw the measured times of this calibration TSV or test-backend-ops log beside the predicted ones (repeatable)")
	return func() int {
		if len(c.args) != 2 {
			return c.fail(fmt.Errorf("want two variants A B, got %d arguments (usage: simrun compare [flags] A B)", len(c.args)))
		}
		set := flagsGiven(c.fs)
		opt, err := c.sim.options()
		if err != nil {
			return c.fail(err)
		}
		if err := checkChoice("--format", *format, "text", "csv", "json"); err != nil {
			return c.fail(err)
		}
		if err := checkPlotFile(*plotFile); err != nil {
			return c.fail(err)
		}
		var measuredCases []accuracy.Case
		measuredNames := strings.Join(measuredFiles, ", ")
		if len(measuredFiles) > 0 {
			if *plotFile == "" {
				return c.fail(fmt.Errorf("--measured %s: the measured points are drawn on the --plot picture; give --plot FILE.png too", measuredNames))
			}
			rows, _, err := readMeasurements(measuredFiles, c.stderr)
			if err != nil {
				return c.fail(fmt.Errorf("--measured: %w", err))
			}
			if measuredCases, err = accuracy.Match(rows, accuracy.MatchOptions{}); err != nil {
				return c.fail(fmt.Errorf("--measured: %w", err))
			}
		}
		sh, err := c.shape.shape()
		if err != nil {
			return c.fail(err)
		}
		comp, model, err := study.ParseComparison(study.CompareInputs{Variants: [2]string{c.args[0], c.args[1]}, Chips: *chipFlag, Ns: *nFlag, Path: *pathFlag,
			Routing: *routingFlag, Op: c.shape.op, Kernels: c.shape.kernel, Shape: sh, Shapes: *shapes, Preset: *preset, GGUF: *ggufFile,
			Given: func(f string) bool { return set[f] }, Labels: flagLabels}, opt)
		if err != nil {
			return c.fail(err)
		}
		opt = comp.Options
		variants := comp.Variants
		sides := comp.SideNames()
		rows, err := comp.Run()
		if err != nil {
			return c.fail(err)
		}
		switch *format {
		case "json":
			warnUnverified(c, study.Unverified(model))
			err = study.WriteCompareJSON(c.stdout, rows)
		case "csv":
			warnUnverified(c, study.Unverified(model))
			err = study.WriteCompareCSV(c.stdout, rows)
		default:
			err = trace.WriteCompareText(c.stdout, rows, sides[0], sides[1], model, opt)
		}
		if err == nil && *plotFile != "" {
			measured := plots.MeasuredPoints(rows, measuredCases)
			if len(measuredFiles) > 0 && len(measured) == 0 {
				return c.fail(fmt.Errorf("--measured %s: none of its mul_mm_id rows is a point of the comparison (its chips, path, variants %s and %s, shapes and n); nothing to overlay",
					measuredNames, variants[0].Arg, variants[1].Arg))
			}
			if err = writePlot(*plotFile, func(w io.Writer, format string) error {
				return plots.WriteCompare(w, format, rows, sides[0], sides[1], measured)
			}); err == nil && *format == "text" {
				fmt.Fprintf(c.stdout, "\nplot: %s", *plotFile)
				if len(measuredFiles) > 0 {
					fmt.Fprintf(c.stdout, " (%d measured points of %s)", len(measured), measuredNames)
				}
				fmt.Fprintln(c.stdout)
			}
		}
		if err != nil {
			return c.fail(err)
		}
		c.sim.writeRates(c.stderr)
		return exitOK
	}
}
