package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/trace/plots"
)

// readMeasurements reads measurement files (hw.ReadFiles; none: the
// embedded calibration sets), printing what was skipped to stderr.
func readMeasurements(files []string, stderr io.Writer) ([]hw.Row, []string, error) {
	m, err := hw.ReadFiles(files)
	if m != nil {
		for _, n := range m.Notes {
			fmt.Fprintln(stderr, n)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return m.Rows, m.Files, nil
}

// measureFlags are the flags of the commands that predict measurement files
// (validate, fit): how rows map to chips and variants, the simulation's
// options and the table width.
type measureFlags struct {
	chip    chipFlags
	variant string
	sim     simFlags
	table   tableFlags
}

func (f *measureFlags) register(fs *flag.FlagSet) {
	f.chip.registerUsage(fs, "",
		"chip of every row, a name or alias (simrun chips) or a chip .json file; default: the chip each row names (a log's \"Apple M1 Pro\" maps to the common core count)",
		"load the chip of every row from this chip file")
	fs.StringVar(&f.variant, "variant", "", "built-in kernel variant of rows that name none (logs); default upstream")
	f.sim.register(fs)
	f.table.register(fs)
}

// read reads measurement files (readMeasurements; a baseline file first,
// its rows that name no variant the upstream one) and maps their rows to
// cases (accuracy.MatchAll: --chip and --chip-file replace every row's chip).
func (f *measureFlags) read(files []string, baseline string, stderr io.Writer) ([]accuracy.Case, []string, error) {
	if baseline != "" {
		files = append([]string{baseline}, files...) // read together: a FILE that is the baseline is an error
	}
	rows, files, err := readMeasurements(files, stderr)
	if err != nil {
		return nil, nil, err
	}
	for i := range rows {
		if baseline != "" && rows[i].Source == baseline && rows[i].Variant == "" {
			rows[i].Variant = "upstream"
		}
	}
	chip, err := f.chip.chip()
	if err != nil {
		return nil, nil, err
	}
	cases, err := accuracy.MatchAll(rows, accuracy.MatchOptions{Chip: chip, Variant: f.variant})
	return cases, files, err
}

const validateUsage = `Predict every row of measurement files (calibration TSVs, test-backend-ops perf logs or their
--output sql form; none: the embedded calibration sets) and print measured vs predicted µs and
error per row, variant-vs-baseline deltas, then MAPE, WMAPE, max error and R² of log times.
Rows the model does not cover are listed with the reason.

Two logs of one machine, a baseline build and a variant build, are paired with
  simrun validate --baseline A.log --variant halftile B.log
which reports measured vs predicted deltas per case.

usage: simrun validate [flags] [FILE...]`

func runValidate(c *call) func() int {
	format := c.fs.String("format", "text", "output: text, json, markdown, or doc (the whole of docs/accuracy.md)")
	baseline := c.fs.String("baseline", "", "a measurement file of the baseline build: its rows are the upstream variant, paired with the FILE rows (--variant)")
	plotFile := c.fs.String("plot", "", "also draw predicted vs measured (and the deltas) to this .png or .svg file")
	return func() int {
		if err := checkPlotFile(*plotFile); err != nil {
			return c.fail(err)
		}
		if err := accuracy.CheckFormat(*format); err != nil {
			return c.fail(err)
		}
		opt, err := c.measure.sim.options()
		if err != nil {
			return c.fail(err)
		}
		if *baseline != "" && (c.measure.variant == "" || len(c.args) == 0) {
			return c.fail(fmt.Errorf("--baseline %s: also give --variant NAME and the variant build's FILE", *baseline))
		}
		cases, _, err := c.measure.read(c.args, *baseline, c.stderr)
		if err != nil {
			return c.fail(err)
		}
		rep, err := accuracy.Validate(cases, sim.NewSimulator(), opt)
		if err != nil {
			return c.fail(err)
		}
		err = rep.Write(c.stdout, *format, c.measure.table.width(), "go run ./cmd/simrun validate "+strings.Join(quoteArgs(c.given), " "))
		if err == nil && *plotFile != "" {
			if err = writePlot(*plotFile, func(w io.Writer, format string) error {
				return plots.WriteAccuracy(w, format, rep)
			}); err == nil && *format == "text" {
				fmt.Fprintf(c.stdout, "\nplot: %s\n", *plotFile)
			}
		}
		if err != nil {
			return c.fail(err)
		}
		c.measure.sim.writeRates(c.stderr)
		return exitOK
	}
}

const headlineUsage = `The headline experiment: the 128-expert top-8 q4_0 perf shape of test-backend-ops (m=768,
k=2048), every calibration row (n = 8..512 on the M1 Pro, simdgroup path; 32..512 on the M5, tensor
path), upstream vs halftile, predicted next to the measured values embedded from the calibration sets;
n < 32 runs mul_mv_id, as llama.cpp does.`

func runHeadline(c *call) func() int {
	return func() int {
		opt, err := c.sim.options()
		if err != nil {
			return c.fail(err)
		}
		rep, err := accuracy.ValidateCalibration(sim.NewSimulator(), opt)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(c.stdout, "MUL_MAT_ID q4_0 x f32, 128 experts, top-8, m=768, k=2048: measured (calibration sets) vs predicted")
		fmt.Fprintln(c.stdout)
		if err := rep.WriteComparison(c.stdout, c.table.width()); err != nil {
			return c.fail(err)
		}
		c.sim.writeRates(c.stderr)
		return exitOK
	}
}
