package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace/plots"
)

// readMeasurements parses measurement files of any supported format (calibration
// TSV, test-backend-ops console log, --output sql); with no files it returns the
// embedded calibration sets. Malformed log lines are reported to stderr and
// skipped; a malformed TSV is an error, and so is a file of any format that
// yields no measurement rows, and a file given twice (the same cleaned path,
// or the same content), whose rows would count twice.
func readMeasurements(files []string, stderr io.Writer) ([]hw.Row, []string, error) {
	if len(files) == 0 {
		rows, err := hw.CalibrationRows()
		return rows, hw.CalibrationFiles(), err
	}
	byPath := map[string]string{}
	for _, f := range files {
		if prev, dup := byPath[filepath.Clean(f)]; dup {
			if prev == f {
				return nil, nil, fmt.Errorf("%s: given twice; give each measurement file once", f)
			}
			return nil, nil, fmt.Errorf("%s: given twice (as %s and %s); give each measurement file once", f, prev, f)
		}
		byPath[filepath.Clean(f)] = f
	}
	byContent := map[[sha256.Size]byte]string{}
	var rows []hw.Row
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(data)
		if prev, dup := byContent[sum]; dup && len(data) > 0 {
			return nil, nil, fmt.Errorf("%s: the same content as %s (a copy or a link?); give each measurement file once", f, prev)
		}
		byContent[sum] = f
		switch hw.Sniff(data) {
		case hw.FormatTSV:
			r, err := hw.ParseTSV(bytes.NewReader(data), f)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, r...)
		case hw.FormatConsole, hw.FormatSQL:
			lg, err := hw.ParseLog(bytes.NewReader(data), f)
			if err != nil {
				return nil, nil, err
			}
			for _, e := range lg.Errors {
				fmt.Fprintf(stderr, "warning: %v (line skipped)\n", e)
			}
			for _, s := range lg.SkippedOps() {
				why := "not a matmul op"
				if s.Reason != "other op" {
					why = s.Reason // the sql rows of another mode (grad, support)
				}
				fmt.Fprintf(stderr, "%s: %d lines of %s skipped (%s)\n", f, s.Lines, opName(s.Op), why)
			}
			for _, u := range lg.Unsupported {
				fmt.Fprintf(stderr, "%s: line %d: %s not supported by the backend\n", f, u.Line, u.Op)
			}
			if err := lg.CheckRows(f); err != nil {
				return nil, nil, err
			}
			rows = append(rows, lg.Rows...)
		default:
			first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
			switch {
			case first == "":
				return nil, nil, fmt.Errorf("%s: empty file (want a calibration TSV, a test-backend-ops log or its --output sql form)", f)
			case strings.Contains(first, "\t"):
				return nil, nil, fmt.Errorf("%s: its first line has tabs but does not start with #: a calibration TSV's header line is \"# \" and the column names (\"# chip<TAB>gpu_path<TAB>op ...\"); nor is it a test-backend-ops log or its --output sql form", f)
			}
			return nil, nil, fmt.Errorf("%s: not a calibration TSV, a test-backend-ops log or its --output sql form", f)
		}
	}
	return rows, files, nil
}

func opName(op string) string {
	if op == "" {
		return "backend notices"
	}
	return op
}

// measureFlags pick how rows map to chips and variants.
type measureFlags struct {
	chip    chipFlags
	variant string
}

func (f *measureFlags) register(fs *flag.FlagSet) {
	f.chip.registerUsage(fs, "",
		"chip of every row, a name or alias (simrun chips) or a chip .json file; default: the chip each row names (a log's \"Apple M1 Pro\" maps to the common core count)",
		"load the chip of every row from this chip file")
	fs.StringVar(&f.variant, "variant", "", "built-in kernel variant of rows that name none (logs); default upstream")
}

func (f *measureFlags) cases(rows []hw.Row) ([]accuracy.Case, error) {
	chip, err := f.chip.chip()
	if err != nil {
		return nil, err
	}
	if f.variant != "" {
		if _, err := tile.LookupVariant(f.variant); err != nil {
			return nil, fmt.Errorf("--variant: %w", err)
		}
		if !slices.ContainsFunc(rows, func(r hw.Row) bool { return r.Variant == "" }) {
			return nil, fmt.Errorf("--variant %s: every row names its variant; --variant sets the variant of rows that name none (test-backend-ops logs)", f.variant)
		}
	}
	opt := accuracy.MatchOptions{Chip: chip, Variant: f.variant}
	if chip != nil {
		// --chip and --chip-file replace the chip of every row
		for i := range rows {
			rows[i].Chip = ""
		}
	}
	return accuracy.Match(rows, opt)
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
	var sf simFlags
	var tf tableFlags
	mf.register(fs)
	sf.register(fs)
	tf.register(fs)
	format := fs.String("format", "text", "output: text, json, markdown, or doc (the whole of docs/accuracy.md)")
	baseline := fs.String("baseline", "", "a measurement file of the baseline build: its rows are the upstream variant, paired with the FILE rows (--variant)")
	plotFile := fs.String("plot", "", "also draw predicted vs measured (and the deltas) to this .png or .svg file")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := checkPlotFile(*plotFile); err != nil {
		return fail(stderr, "validate", err)
	}
	if !strings.Contains(" text json markdown doc ", " "+*format+" ") {
		return fail(stderr, "validate", fmt.Errorf("--format %q: allowed text, json, markdown, doc", *format))
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "validate", err)
	}
	if *baseline != "" && (mf.variant == "" || fs.NArg() == 0) {
		return fail(stderr, "validate", fmt.Errorf("--baseline %s: also give --variant NAME and the variant build's FILE", *baseline))
	}
	files := fs.Args()
	if *baseline != "" {
		// read with the FILEs, so that a FILE that is the baseline is an error
		files = append([]string{*baseline}, files...)
	}
	rows, _, err := readMeasurements(files, stderr)
	if err != nil {
		return fail(stderr, "validate", err)
	}
	for i := range rows {
		if *baseline != "" && rows[i].Source == *baseline && rows[i].Variant == "" {
			rows[i].Variant = "upstream"
		}
	}
	cases, err := mf.cases(rows)
	if err != nil {
		return fail(stderr, "validate", err)
	}
	rep, err := accuracy.Validate(cases, sim.NewSimulator(), opt)
	if err != nil {
		return fail(stderr, "validate", err)
	}
	switch *format {
	case "json":
		err = rep.WriteJSON(stdout)
	case "markdown":
		err = rep.WriteMarkdown(stdout)
	case "doc":
		var chipList []*chips.Chip
		if chipList, err = chips.All(); err == nil {
			err = rep.WriteAccuracyDoc(stdout, "go run ./cmd/simrun validate "+strings.Join(quoteArgs(args), " "), chipList)
		}
	default:
		err = rep.WriteText(stdout, tf.width())
	}
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
	sf.writeRates(stderr)
	return exitOK
}
