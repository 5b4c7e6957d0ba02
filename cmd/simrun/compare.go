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

const compareSummary = `Compare two kernel variants A and B (built-in names or .toml spec files) side by side over chips,
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

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", compareSummary, stderr)
	var shape shapeFlags
	var sf simFlags
	shape.register(fs)
	sf.register(fs)
	chipFlag := fs.String("chip", "M1 Pro 16-core GPU", "chips: comma-separated names or aliases (simrun chips), or chip .json files")
	pathFlag := fs.String("path", "", "kernel path: simdgroup or tensor (default: a spec file's path, else each chip's)")
	nFlag := fs.String("n", "32,64,128,256,512", "tokens: comma-separated list")
	shapes := fs.String("shapes", "", "comma-separated MxK shapes (e.g. 768x2048,2048x768) instead of --m and --k")
	preset := fs.String("preset", "", "compare a model's MoE layer (gate, up, down, layer total): a preset (simrun model --list)")
	ggufFile := fs.String("gguf", "", "compare the MoE layer of the model in this GGUF file (header only)")
	routingFlag := fs.String("routing", "uniform", "routing: uniform, zipf:S, hot:H:F or file:PATH")
	format := fs.String("format", "text", "output: text, csv or json")
	plotFile := fs.String("plot", "", "also draw time and delta vs n to this .png or .svg file")
	var measuredFiles listFlag
	fs.Var(&measuredFiles, "measured", "with --plot: draw the measured times of this calibration TSV or test-backend-ops log beside the predicted ones (repeatable)")
	pos, code, ok := parseWithArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return fail(stderr, "compare", fmt.Errorf("want two variants A B, got %d arguments (usage: simrun compare [flags] A B)", len(pos)))
	}
	set := flagsGiven(fs)
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	if err := checkChoice("--format", *format, "text", "csv", "json"); err != nil {
		return fail(stderr, "compare", err)
	}
	if err := checkPlotFile(*plotFile); err != nil {
		return fail(stderr, "compare", err)
	}
	var measuredCases []accuracy.Case
	measuredNames := strings.Join(measuredFiles, ", ")
	if len(measuredFiles) > 0 {
		if *plotFile == "" {
			return fail(stderr, "compare", fmt.Errorf("--measured %s: the measured points are drawn on the --plot picture; give --plot FILE.png too", measuredNames))
		}
		rows, _, err := readMeasurements(measuredFiles, stderr)
		if err != nil {
			return fail(stderr, "compare", fmt.Errorf("--measured: %w", err))
		}
		if measuredCases, err = accuracy.Match(rows, accuracy.MatchOptions{}); err != nil {
			return fail(stderr, "compare", fmt.Errorf("--measured: %w", err))
		}
	}
	sh, err := shape.shape()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	c, model, err := study.ParseComparison(study.CompareInputs{Variants: [2]string{pos[0], pos[1]}, Chips: *chipFlag, Ns: *nFlag, Path: *pathFlag,
		Routing: *routingFlag, Op: shape.op, Kernels: shape.kernel, Shape: sh, Shapes: *shapes, Preset: *preset, GGUF: *ggufFile,
		Given: func(f string) bool { return set[f] }, Labels: flagLabels}, opt)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	opt = c.Options
	variants := c.Variants
	sides := c.SideNames()
	rows, err := c.Run()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	switch *format {
	case "json":
		warnUnverified(stderr, "compare", study.Unverified(model))
		err = study.WriteCompareJSON(stdout, rows)
	case "csv":
		warnUnverified(stderr, "compare", study.Unverified(model))
		err = study.WriteCompareCSV(stdout, rows)
	default:
		err = trace.WriteCompareText(stdout, rows, sides[0], sides[1], model, opt)
	}
	if err == nil && *plotFile != "" {
		measured := plots.MeasuredPoints(rows, measuredCases)
		if len(measuredFiles) > 0 && len(measured) == 0 {
			return fail(stderr, "compare", fmt.Errorf("--measured %s: none of its mul_mm_id rows is a point of the comparison (its chips, path, variants %s and %s, shapes and n); nothing to overlay",
				measuredNames, variants[0].Arg, variants[1].Arg))
		}
		if err = writePlot(*plotFile, func(w io.Writer, format string) error {
			return plots.WriteCompare(w, format, rows, sides[0], sides[1], measured)
		}); err == nil && *format == "text" {
			fmt.Fprintf(stdout, "\nplot: %s", *plotFile)
			if len(measuredFiles) > 0 {
				fmt.Fprintf(stdout, " (%d measured points of %s)", len(measured), measuredNames)
			}
			fmt.Fprintln(stdout)
		}
	}
	if err != nil {
		return fail(stderr, "compare", err)
	}
	sf.writeRates(stderr)
	return exitOK
}
