package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/fileio"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func runFit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("fit", "Fit named chip parameters to measurement files (none: the embedded calibration sets) with a\n"+
		"coarse grid and Nelder-Mead (gonum/optimize), report leave-one-problem-out cross-validation\n"+
		"(--cv), and write each fitted chip as a chip file with its provenance.\n\n"+
		"usage: simrun fit --param NAME@CHIP[=LO:HI] [--param ...] [flags] [FILE...]", stderr)
	var params listFlag
	fs.Var(&params, "param", "parameter to fit, NAME@CHIP[=LO:HI] (repeatable), e.g. sg_launch_clk@\"M1 Pro 16-core GPU\"=0:2000")
	var mf measureFlags
	mf.register(fs)
	cv := fs.Bool("cv", false, "also run leave-one-problem-out cross-validation (one full fit per held-out problem)")
	maxEvals := fs.Int("max-evals", 0, fmt.Sprintf("evaluations per fit, the start, the coarse grid (shrunk to fit) and the simplex together, at most %d (0: the full grid and 40 simplex evaluations per parameter, at most %d)", accuracy.MaxEvals, accuracy.MaxEvals))
	outDir := fs.String("out-dir", ".", "directory for the fitted chip files")
	deltaWeight := fs.Float64("delta-weight", 1, "weight of the variant-delta errors against the absolute errors in the loss")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	opt, err := mf.sim.options()
	if err != nil {
		return fail(stderr, "fit", err)
	}
	fo := accuracy.FitOptions{Sim: opt, MaxEvals: *maxEvals, CV: *cv, DeltaWeight: *deltaWeight}
	if err := fo.CheckFlags(); err != nil {
		return fail(stderr, "fit", err)
	}
	if st, err := os.Stat(*outDir); err != nil || !st.IsDir() {
		return fail(stderr, "fit", fmt.Errorf("--out-dir %q: not a directory (the fitted chip files go there)", *outDir))
	}
	cases, files, err := mf.read(fs.Args(), "", stderr)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	fps, err := accuracy.ParseFitParams(params, cases)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	res, err := accuracy.Fit(cases, fps, fo)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	if !*cv {
		res.CV = nil
	}
	if err := res.WriteText(stdout, mf.table.width()); err != nil {
		return fail(stderr, "fit", err)
	}
	fitted, err := res.FittedChips("simrun fit "+strings.Join(quoteArgs(args), " "), files)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	for _, fc := range fitted {
		if fc.DroppedFrom != "" {
			fmt.Fprintf(stdout, "%s: calibration_from %q dropped: the chip file holds its own fit and the values it had taken from that chip\n", fc.Chip.Name, fc.DroppedFrom)
		}
		b, err := fc.Chip.MarshalIndent()
		if err != nil {
			return fail(stderr, "fit", err)
		}
		out := filepath.Join(*outDir, fc.File)
		if err := fileio.WriteFile(out, append(b, '\n')); err != nil {
			return fail(stderr, "fit", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", out)
	}
	mf.sim.writeRates(stderr)
	return exitOK
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}
