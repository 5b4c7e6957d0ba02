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

func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", "Predict every row of measurement files (calibration TSVs, test-backend-ops perf logs or their\n"+
		"--output sql form; none: the embedded calibration sets) and print measured vs predicted µs and\n"+
		"error per row, variant-vs-baseline deltas, then MAPE, WMAPE, max error and R² of log times.\n"+
		"Rows the model does not cover are listed with the reason.\n\n"+
		"Two logs of one machine, a baseline build and a variant build, are paired with\n"+
		"  simrun validate --baseline A.log --variant halftile B.log\n"+
		"which reports measured vs predicted deltas per case.\n\nusage: simrun validate [flags] [FILE...]", stderr)
	var mf measureFlags
	mf.register(fs)
	format := fs.String("format", "text", "output: text, json, markdown, or doc (the whole of docs/accuracy.md)")
	baseline := fs.String("baseline", "", "a measurement file of the baseline build: its rows are the upstream variant, paired with the FILE rows (--variant)")
	plotFile := fs.String("plot", "", "also draw predicted vs measured (and the deltas) to this .png or .svg file")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := checkPlotFile(*plotFile); err != nil {
		return fail(stderr, "validate", err)
	}
	if err := accuracy.CheckFormat(*format); err != nil {
		return fail(stderr, "validate", err)
	}
	opt, err := mf.sim.options()
	if err != nil {
		return fail(stderr, "validate", err)
	}
	if *baseline != "" && (mf.variant == "" || fs.NArg() == 0) {
		return fail(stderr, "validate", fmt.Errorf("--baseline %s: also give --variant NAME and the variant build's FILE", *baseline))
	}
	cases, _, err := mf.read(fs.Args(), *baseline, stderr)
	if err != nil {
		return fail(stderr, "validate", err)
	}
	rep, err := accuracy.Validate(cases, sim.NewSimulator(), opt)
	if err != nil {
		return fail(stderr, "validate", err)
	}
	err = rep.Write(stdout, *format, mf.table.width(), "go run ./cmd/simrun validate "+strings.Join(quoteArgs(args), " "))
	if err == nil && *plotFile != "" {
		if err = writePlot(*plotFile, func(w io.Writer, format string) error {
			return plots.WriteAccuracy(w, format, rep)
		}); err == nil && *format == "text" {
			fmt.Fprintf(stdout, "\nplot: %s\n", *plotFile)
		}
	}
	if err != nil {
		return fail(stderr, "validate", err)
	}
	mf.sim.writeRates(stderr)
	return exitOK
}

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
