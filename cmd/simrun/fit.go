package main

import (
	"fmt"
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

const fitUsage = `Fit named chip parameters to measurement files (none: the embedded calibration sets) with a
coarse grid and Nelder-Mead (gonum/optimize), report leave-one-problem-out cross-validation
(--cv), and write each fitted chip as a chip file with its provenance.

usage: simrun fit --param NAME@CHIP[=LO:HI] [--param ...] [flags] [FILE...]`

func runFit(c *call) func() int {
	var params listFlag
	c.fs.Var(&params, "param", "parameter to fit, NAME@CHIP[=LO:HI] (repeatable), e.g. sg_launch_clk@\"M1 Pro 16-core GPU\"=0:2000")
	cv := c.fs.Bool("cv", false, "also run leave-one-problem-out cross-validation (one full fit per held-out problem)")
	maxEvals := c.fs.Int("max-evals", 0, fmt.Sprintf("evaluations per fit, the start, the coarse grid (shrunk to fit) and the simplex together, at most %d (0: the full grid and 40 simplex evaluations per parameter, at most %d)", accuracy.MaxEvals, accuracy.MaxEvals))
	outDir := c.fs.String("out-dir", ".", "directory for the fitted chip files")
	deltaWeight := c.fs.Float64("delta-weight", 1, "weight of the variant-delta errors against the absolute errors in the loss")
	return func() int {
		opt, err := c.measure.sim.options()
		if err != nil {
			return c.fail(err)
		}
		fo := accuracy.FitOptions{Sim: opt, MaxEvals: *maxEvals, CV: *cv, DeltaWeight: *deltaWeight}
		if err := fo.CheckFlags(); err != nil {
			return c.fail(err)
		}
		if st, err := os.Stat(*outDir); err != nil || !st.IsDir() {
			return c.fail(fmt.Errorf("--out-dir %q: not a directory (the fitted chip files go there)", *outDir))
		}
		cases, files, err := c.measure.read(c.args, "", c.stderr)
		if err != nil {
			return c.fail(err)
		}
		fps, err := accuracy.ParseFitParams(params, cases)
		if err != nil {
			return c.fail(err)
		}
		res, err := accuracy.Fit(cases, fps, fo)
		if err != nil {
			return c.fail(err)
		}
		if !*cv {
			res.CV = nil
		}
		if err := res.WriteText(c.stdout, c.measure.table.width()); err != nil {
			return c.fail(err)
		}
		fitted, err := res.FittedChips("simrun fit "+strings.Join(quoteArgs(c.given), " "), files)
		if err != nil {
			return c.fail(err)
		}
		for _, fc := range fitted {
			if fc.DroppedFrom != "" {
				fmt.Fprintf(c.stdout, "%s: calibration_from %q dropped: the chip file holds its own fit and the values it had taken from that chip\n", fc.Chip.Name, fc.DroppedFrom)
			}
			b, err := fc.Chip.MarshalIndent()
			if err != nil {
				return c.fail(err)
			}
			out := filepath.Join(*outDir, fc.File)
			if err := fileio.WriteFile(out, append(b, '\n')); err != nil {
				return c.fail(err)
			}
			fmt.Fprintf(c.stdout, "wrote %s\n", out)
		}
		c.measure.sim.writeRates(c.stderr)
		return exitOK
	}
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
