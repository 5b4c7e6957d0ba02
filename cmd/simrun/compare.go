package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/models"
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
	var variants [2]study.Variant
	for i, a := range pos {
		va, err := study.LoadVariants("variant "+string(rune('A'+i)), []string{a})
		if err != nil {
			return fail(stderr, "compare", err)
		}
		variants[i] = va[0]
	}
	chips, err := study.LoadChips("--chip", *chipFlag)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	path, err := parsePath(*pathFlag)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	ns, err := study.ParseNs("--n", *nFlag)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	if *format != "text" && *format != "csv" && *format != "json" {
		return fail(stderr, "compare", fmt.Errorf("--format %q: allowed text, csv, json", *format))
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
	list, model, err := compareShapes(&shape, set, *shapes, *preset, *ggufFile)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	used, experts := shape.used, shape.experts
	if model != nil {
		used, experts = model.Used, model.Experts
	}
	r, err := parseOneRouting("compare", *routingFlag, used, experts, ns)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	opt.Routing = r
	kernels, err := study.ParseKernelPair("--op", shape.op, "--kernel", shape.kernel)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	c := study.Comparison{Chips: chips, Variants: variants, Path: path, Kernels: kernels, Shapes: list, Layer: model != nil, Ns: ns, Options: opt, Labels: flagLabels}
	sides := c.SideNames()
	rows, err := c.Run()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	switch *format {
	case "json":
		warnUnverified(stderr, "compare", model)
		err = study.WriteCompareJSON(stdout, rows)
	case "csv":
		warnUnverified(stderr, "compare", model)
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

// compareShapes returns the shapes to compare: a model's layer matmuls, the
// --shapes list, or the problem flags' one shape.
func compareShapes(shape *shapeFlags, set map[string]bool, shapes, preset, ggufFile string) ([]study.CompareShape, *models.Model, error) {
	sh, err := shape.shape()
	if err != nil {
		return nil, nil, err
	}
	if preset != "" || ggufFile != "" {
		for _, f := range []string{"experts", "used", "m", "k", "b", "shapes"} {
			if set[f] {
				return nil, nil, fmt.Errorf("--%s: the model sets it; drop it or drop --preset/--gguf", f)
			}
		}
		m, err := loadModel(preset, ggufFile)
		if err != nil {
			return nil, nil, err
		}
		out, err := study.ModelShapes(m, models.LayerOptions{Tokens: 1, Type: sh.TypeA, ForceType: set["type"], HalfB: sh.HalfB}, sh.Op)
		if err != nil {
			return nil, nil, modelTypeHint(err)
		}
		return out, m, nil
	}
	dims := []study.MK{{M: shape.m, K: shape.k}}
	if shapes != "" || set["shapes"] {
		if set["m"] || set["k"] {
			return nil, nil, errors.New("--shapes: give either --shapes or --m/--k")
		}
		if dims, err = study.ParseShapes("--shapes", shapes); err != nil {
			return nil, nil, err
		}
	}
	label := ""
	if shapes != "" {
		label = "--shapes"
	}
	out, err := study.DimShapes(sh, dims, flagLabels, label)
	return out, nil, err
}
