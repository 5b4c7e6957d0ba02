package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/chips"
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
	var sf simFlags
	var tf tableFlags
	mf.register(fs)
	sf.register(fs)
	tf.register(fs)
	cv := fs.Bool("cv", false, "also run leave-one-problem-out cross-validation (one full fit per held-out problem)")
	maxEvals := fs.Int("max-evals", 0, fmt.Sprintf("simplex evaluations per fit after the grid, at most %d (0: 40 per parameter)", accuracy.MaxEvals))
	outDir := fs.String("out-dir", ".", "directory for the fitted chip files")
	deltaWeight := fs.Float64("delta-weight", 1, "weight of the variant-delta errors against the absolute errors in the loss")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "fit", err)
	}
	if !(*deltaWeight > 0 && *deltaWeight <= 100) {
		return fail(stderr, "fit", fmt.Errorf("--delta-weight = %g: must be in (0, 100]", *deltaWeight))
	}
	if *maxEvals < 0 || *maxEvals > accuracy.MaxEvals {
		return fail(stderr, "fit", fmt.Errorf("--max-evals = %d: must be in [0, %d] (an evaluation times every row, about a second on the calibration sets)", *maxEvals, accuracy.MaxEvals))
	}
	if st, err := os.Stat(*outDir); err != nil || !st.IsDir() {
		return fail(stderr, "fit", fmt.Errorf("--out-dir %q: not a directory (the fitted chip files go there)", *outDir))
	}
	rows, files, err := readMeasurements(fs.Args(), stderr)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	cases, err := mf.cases(rows)
	if err != nil {
		return fail(stderr, "fit", err)
	}
	var chipList []*chips.Chip
	seen := map[string]bool{}
	for _, c := range cases {
		if c.Chip != nil && !seen[c.Chip.Name] {
			seen[c.Chip.Name] = true
			chipList = append(chipList, c.Chip)
		}
	}
	var fps []accuracy.FitParam
	for _, s := range params {
		fp, err := accuracy.ParseFitParam(s, chipList)
		if err != nil {
			return fail(stderr, "fit", err)
		}
		for _, o := range fps {
			if o.Name == fp.Name && o.Chip == fp.Chip {
				return fail(stderr, "fit", fmt.Errorf("--param %q: %s@%s is given twice (one parameter, one pair of bounds)", s, fp.Name, fp.Chip))
			}
		}
		fps = append(fps, fp)
	}
	res, err := accuracy.Fit(cases, fps, accuracy.FitOptions{Sim: opt, MaxEvals: *maxEvals, CV: *cv, DeltaWeight: *deltaWeight})
	if err != nil {
		return fail(stderr, "fit", err)
	}
	fmt.Fprintf(stdout, "fitted in %d evaluations, loss %.4g\n", res.Evals, res.Objective)
	for _, p := range res.Params {
		fmt.Fprintf(stdout, "  %s @ %s: %g -> %g (bounds %g..%g)\n", p.Name, p.Chip, p.Start, p.Value, p.Lo, p.Hi)
	}
	fmt.Fprintf(stdout, "\nbefore: %s\nafter:  %s\n\n", summaryLine(res.Before), summaryLine(res.After))
	if err := res.After.WriteText(stdout, tf.width()); err != nil {
		return fail(stderr, "fit", err)
	}
	if *cv {
		fmt.Fprintln(stdout, "\nleave-one-problem-out cross-validation:")
		for _, f := range res.CV {
			shape := f.Problem.String()
			if f.Dense.M > 0 {
				shape = f.Dense.String()
			}
			fmt.Fprintf(stdout, "  %s %s: %d rows, MAPE %.2f%%, mean delta error %.2f pp\n", f.Chip, shape, f.Rows, f.MAPE, f.DeltaErr)
		}
		fmt.Fprintf(stdout, "  mean held-out MAPE %.2f%%\n", res.CVMAPE)
	}
	command := "simrun fit " + strings.Join(quoteArgs(args), " ")
	for _, c := range res.Chips {
		fitted := false
		for _, p := range res.Params {
			if p.Chip != c.Name {
				continue
			}
			fitted = true
			cur, _ := c.Param(p.Name)
			cur.Source, cur.Evidence = "calibrated", "F"
			cur.Note = fmt.Sprintf("fitted by `%s` to %s: %g -> %g", command, strings.Join(files, ", "), p.Start, p.Value)
			if err := c.SetParam(p.Name, cur); err != nil {
				return fail(stderr, "fit", err)
			}
		}
		if !fitted {
			continue
		}
		c.Calibration = res.Record(c.Name, command, files)
		if from := c.CalibrationFrom; from != "" {
			// the file now carries a calibration of its own: loading it must
			// not copy from's values over the fit (the values it had taken
			// from there stay, sourced "calibrated:" + from)
			c.CalibrationFrom = ""
			fmt.Fprintf(stdout, "%s: calibration_from %q dropped: the chip file holds its own fit and the values it had taken from that chip\n", c.Name, from)
		}
		b, err := c.MarshalIndent()
		if err != nil {
			return fail(stderr, "fit", err)
		}
		out := filepath.Join(*outDir, slug(c.Name)+".json")
		if err := fileio.WriteFile(out, append(b, '\n')); err != nil {
			return fail(stderr, "fit", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", out)
	}
	sf.writeRates(stderr)
	return exitOK
}

func summaryLine(r *accuracy.Report) string {
	s := r.Summary
	return fmt.Sprintf("MAPE %.2f%%, max %.2f%%, delta error mean %.2f pp, max %.2f pp", s.MAPE, s.MaxErrPct, s.MeanDeltaPP, s.MaxDeltaPP)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug turns a chip name into a file name: "M1 Pro 16-core GPU" -> "m1-pro-16-core-gpu".
func slug(name string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
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
