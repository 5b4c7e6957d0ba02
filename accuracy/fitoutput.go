package accuracy

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/metalsim/metalsim/chips"
)

// ParseFitParams parses fit's --param specs (ParseFitParam) against the
// chips of the cases, refusing a parameter given twice.
func ParseFitParams(specs []string, cases []Case) ([]FitParam, error) {
	var chipList []*chips.Chip
	seen := map[string]bool{}
	for _, c := range cases {
		if c.Chip != nil && !seen[c.Chip.Name] {
			seen[c.Chip.Name] = true
			chipList = append(chipList, c.Chip)
		}
	}
	var fps []FitParam
	for _, s := range specs {
		fp, err := ParseFitParam(s, chipList)
		if err != nil {
			return nil, err
		}
		for _, o := range fps {
			if o.Name == fp.Name && o.Chip == fp.Chip {
				return nil, fmt.Errorf("--param %q: %s@%s is given twice (one parameter, one pair of bounds)", s, fp.Name, fp.Chip)
			}
		}
		fps = append(fps, fp)
	}
	return fps, nil
}

// WriteText prints a fit: the fitted values, the summaries before and
// after, the rows after (tables width characters wide, 0: every column) and
// the cross-validation folds.
func (r *FitResult) WriteText(w io.Writer, width int) error {
	fmt.Fprintf(w, "fitted in %d evaluations, loss %.4g\n", r.Evals, r.Objective)
	for _, p := range r.Params {
		fmt.Fprintf(w, "  %s @ %s: %g -> %g (bounds %g..%g)\n", p.Name, p.Chip, p.Start, p.Value, p.Lo, p.Hi)
	}
	line := func(rep *Report) string {
		s := rep.Summary
		return fmt.Sprintf("MAPE %.2f%%, max %.2f%%, delta error mean %.2f pp, max %.2f pp", s.MAPE, s.MaxErrPct, s.MeanDeltaPP, s.MaxDeltaPP)
	}
	fmt.Fprintf(w, "\nbefore: %s\nafter:  %s\n\n", line(r.Before), line(r.After))
	if err := r.After.WriteText(w, width); err != nil {
		return err
	}
	if r.CV == nil {
		return nil
	}
	fmt.Fprintln(w, "\nleave-one-problem-out cross-validation:")
	for _, f := range r.CV {
		shape := f.Problem.String()
		if f.Dense.M > 0 {
			shape = f.Dense.String()
		}
		fmt.Fprintf(w, "  %s %s: %d rows, MAPE %.2f%%, mean delta error %.2f pp\n", f.Chip, shape, f.Rows, f.MAPE, f.DeltaErr)
	}
	_, err := fmt.Fprintf(w, "  mean held-out MAPE %.2f%%\n", r.CVMAPE)
	return err
}

// FittedChip is a chip the fit changed, ready to be written as a chip file.
type FittedChip struct {
	Chip *chips.Chip
	File string // its file name: the chip's name in lower case, runs of other characters as "-"
	// DroppedFrom is the calibration_from the chip had, dropped: the file
	// holds its own fit, which loading it must not overwrite with that
	// chip's values (the values it had taken from there stay, sourced
	// "calibrated:" + the chip); "" when it had none.
	DroppedFrom string
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// FittedChips returns the chips with fitted values, each parameter sourced
// "calibrated" with a note of the command and files that fitted it, and the
// fit's calibration record.
func (r *FitResult) FittedChips(command string, files []string) ([]FittedChip, error) {
	var out []FittedChip
	for _, c := range r.Chips {
		fitted := false
		for _, p := range r.Params {
			if p.Chip != c.Name {
				continue
			}
			fitted = true
			cur, _ := c.Param(p.Name)
			cur.Source, cur.Evidence = "calibrated", "F"
			cur.Note = fmt.Sprintf("fitted by `%s` to %s: %g -> %g", command, strings.Join(files, ", "), p.Start, p.Value)
			if err := c.SetParam(p.Name, cur); err != nil {
				return nil, err
			}
		}
		if !fitted {
			continue
		}
		c.Calibration = r.Record(c.Name, command, files)
		fc := FittedChip{Chip: c, File: strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(c.Name), "-"), "-") + ".json", DroppedFrom: c.CalibrationFrom}
		c.CalibrationFrom = ""
		out = append(out, fc)
	}
	return out, nil
}
