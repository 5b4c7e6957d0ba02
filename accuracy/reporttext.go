package accuracy

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/metalsim/metalsim/termtable"
)

// WideFlag is the flag that shows every column of the text reports.
const WideFlag = "--wide"

// WriteText prints the report as tables for a terminal no wider than width
// (0: every column): the rows and the variant-vs-baseline deltas, each in
// sections by chip and path, the rows not modelled with the reason, the
// notes, and the summary per chip and path and over all rows.
func (rep *Report) WriteText(w io.Writer, width int) error {
	var omitted []string
	t := caseTable(
		termtable.Column{Name: "variant"},
		termtable.Column{Name: "measured µs", Right: true},
		termtable.Column{Name: "predicted µs", Right: true},
		termtable.Column{Name: "error %", Right: true},
		termtable.Column{Name: "limiter", Drop: 1},
		termtable.Column{Name: "TGs/core", Drop: 2},
		termtable.Column{Name: "regs/thread", Right: true, Drop: 3},
	)
	section := ""
	for _, r := range rep.Rows {
		if s := chipName(r) + ", " + r.Path.String() + " path"; s != section {
			t.Section(s)
			section = s
		}
		n, _ := r.Row.Params.Get("n")
		meas := "-"
		if r.Row.HasTime {
			meas = fmt.Sprintf("%.1f", r.MeasuredUs)
		} else if r.Row.HasDelta {
			meas = fmt.Sprintf("Δ %+.1f%% vs %s", r.Row.DeltaPct, r.Row.Baseline)
		}
		cells := []string{kernelName(r), shape(r), n, r.Variant.Name, meas}
		switch {
		case !r.Modelled:
			cells = append(cells, "not modelled")
		case r.Row.HasTime:
			cells = append(cells, fmt.Sprintf("%.1f", r.PredictedUs), fmt.Sprintf("%+.1f", r.ErrorPct), r.Result.Limit.String(),
				occupancyCell(r), strconv.Itoa(r.Result.Registers.Total))
		default:
			cells = append(cells, fmt.Sprintf("%.1f", r.Result.TotalUs), "", r.Result.Limit.String(),
				occupancyCell(r), strconv.Itoa(r.Result.Registers.Total))
		}
		t.Row(cells...)
	}
	o, err := t.Write(w, width)
	if err != nil {
		return err
	}
	omitted = append(omitted, o...)
	if len(rep.Pairs) > 0 {
		fmt.Fprintln(w)
		o, err := rep.pairTable().Write(w, width)
		if err != nil {
			return err
		}
		omitted = appendNew(omitted, o)
	}
	rep.writeNotModelled(w)
	rep.writeNotes(w)
	fmt.Fprintln(w)
	o, err = rep.summaryTable(true).Write(w, width)
	if err != nil {
		return err
	}
	omitted = appendNew(omitted, o)
	if note := termtable.OmittedNote(omitted, width, WideFlag); note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// caseTable is a table of rows or pairs: the kernel, the shape and n, then
// cols.
func caseTable(cols ...termtable.Column) *termtable.Table {
	return termtable.New(append([]termtable.Column{{Name: "kernel"}, {Name: "shape"}, {Name: "n", Right: true}}, cols...)...)
}

// pairTable is the table of variant-vs-baseline deltas, in sections by chip
// and path.
func (rep *Report) pairTable() *termtable.Table {
	t := caseTable(
		termtable.Column{Name: "variant vs baseline"},
		termtable.Column{Name: "measured Δ %", Right: true},
		termtable.Column{Name: "predicted Δ %", Right: true},
		termtable.Column{Name: "error pp", Right: true},
	)
	section := ""
	for _, p := range rep.Pairs {
		if s := p.Chip + ", " + p.Path.String() + " path"; s != section {
			t.Section(s)
			section = s
		}
		sh, n := p.shape()
		t.Row(p.kernels(), sh, strconv.Itoa(n), p.Variant+" vs "+p.Baseline,
			fmt.Sprintf("%+.1f", p.MeasuredDeltaPct), fmt.Sprintf("%+.1f", p.PredictedDeltaPct), fmt.Sprintf("%+.1f", p.ErrorPP))
	}
	return t
}

// summaryTable is the summary per chip and path and, with all, over every
// row. The columns of relative and not-modelled rows appear when a summary
// has such rows; figures over no rows (or no pairs) are "–", not zero errors.
func (rep *Report) summaryTable(all bool) *termtable.Table {
	sums := make([]ChipSummary, 0, len(rep.PerChip)+1)
	sums = append(sums, rep.PerChip...)
	if all {
		sums = append(sums, ChipSummary{Chip: "all", Summary: rep.Summary})
	}
	relative, notModelled := false, false
	for _, s := range sums {
		relative = relative || s.Relative > 0
		notModelled = notModelled || s.NotModelled > 0
	}
	cols := []termtable.Column{{Name: "chip / path"}, {Name: "rows", Right: true}, {Name: "modelled", Right: true}}
	if relative {
		cols = append(cols, termtable.Column{Name: "Δ only", Right: true})
	}
	if notModelled {
		cols = append(cols, termtable.Column{Name: "not modelled", Right: true})
	}
	cols = append(cols,
		termtable.Column{Name: "MAPE %", Right: true}, termtable.Column{Name: "WMAPE %", Right: true, Drop: 1},
		termtable.Column{Name: "max %", Right: true}, termtable.Column{Name: "R²(log)", Right: true},
		termtable.Column{Name: "deltas", Right: true},
		termtable.Column{Name: "mean Δ err pp", Right: true}, termtable.Column{Name: "max Δ err pp", Right: true})
	t := termtable.New(cols...)
	for _, s := range sums {
		name := s.Chip
		if s.Chip != "all" {
			name += " / " + s.Path.String()
		}
		cells := []string{name, strconv.Itoa(s.Rows), strconv.Itoa(s.Modelled)}
		if relative {
			cells = append(cells, strconv.Itoa(s.Relative))
		}
		if notModelled {
			cells = append(cells, strconv.Itoa(s.NotModelled))
		}
		abs := []string{"–", "–", "–", "–"}
		if s.Modelled > 0 {
			abs = []string{fmt.Sprintf("%.2f", s.MAPE), fmt.Sprintf("%.2f", s.WMAPE), fmt.Sprintf("%.2f", s.MaxErrPct), fmt.Sprintf("%.4f", s.R2Log)}
		}
		del := []string{"–", "–"}
		if s.Pairs > 0 {
			del = []string{fmt.Sprintf("%.2f", s.MeanDeltaPP), fmt.Sprintf("%.2f", s.MaxDeltaPP)}
		}
		cells = append(append(append(cells, abs...), strconv.Itoa(s.Pairs)), del...)
		t.Row(cells...)
	}
	return t
}

// writeNotModelled lists the rows not modelled with the reason, by source
// line.
func (rep *Report) writeNotModelled(w io.Writer) {
	first := true
	for _, r := range rep.Rows {
		if r.Modelled {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nnot modelled:")
			first = false
		}
		n, _ := r.Row.Params.Get("n")
		fmt.Fprintf(w, "  %s:%d: %s n=%s %s: %s\n", r.Row.Source, r.Row.Line, chipName(r), n, r.Variant.Name, r.Reason)
	}
}

// writeNotes lists what modelled rows' predictions assume beyond what
// llama.cpp does (Case.Note), by source line.
func (rep *Report) writeNotes(w io.Writer) {
	first := true
	for _, r := range rep.Rows {
		if r.Note == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nnotes:")
			first = false
		}
		fmt.Fprintf(w, "  %s:%d: %s\n", r.Row.Source, r.Row.Line, r.Note)
	}
}

// WriteComparison prints, for a terminal no wider than width (0: every
// column), one line per chip, path and problem with the baseline and the
// variant side by side: measured and predicted µs and the error of each, the
// measured and predicted delta, skipped half-tiles, occupancy and limiter;
// then the rows not modelled and the summary per chip and path.
func (rep *Report) WriteComparison(w io.Writer, width int) error {
	base, vari := "baseline", "variant"
	if len(rep.Pairs) > 0 {
		base, vari = rep.Pairs[0].Baseline, rep.Pairs[0].Variant
	}
	mixed := false // pairs of more than one variant and baseline name them in a column
	for _, p := range rep.Pairs {
		mixed = mixed || p.Baseline != base || p.Variant != vari
	}
	if mixed {
		base, vari = "baseline", "variant"
	}
	cols := []termtable.Column{{Name: "kernel"}, {Name: "n", Right: true}}
	if mixed {
		cols = append(cols, termtable.Column{Name: "variant vs baseline"})
	}
	cols = append(cols,
		termtable.Column{Name: "measured", Group: base + " µs", Right: true},
		termtable.Column{Name: "predicted", Group: base + " µs", Right: true},
		termtable.Column{Name: "err %", Group: base + " µs", Right: true},
		termtable.Column{Name: "measured", Group: vari + " µs", Right: true},
		termtable.Column{Name: "predicted", Group: vari + " µs", Right: true},
		termtable.Column{Name: "err %", Group: vari + " µs", Right: true},
		termtable.Column{Name: "measured", Group: "Δ %", Right: true},
		termtable.Column{Name: "predicted", Group: "Δ %", Right: true},
		termtable.Column{Name: "skipped", Group: "half-tiles", Right: true},
		termtable.Column{Name: "TGs/core", Drop: 1},
		termtable.Column{Name: "limiter"},
	)
	t := termtable.New(cols...)
	section := ""
	for _, p := range rep.Pairs {
		up, va := rep.pairRows(p)
		if up == nil || va == nil {
			continue
		}
		if s := p.Chip + ", " + p.Path.String() + " path"; s != section {
			t.Section(s)
			section = s
		}
		lim := up.Result.Limit.String()
		if l := va.Result.Limit.String(); l != lim {
			lim += "/" + l // baseline/variant, narrow: the headline fits 120 columns
		}
		cells := []string{p.kernels(), strconv.Itoa(max(p.Problem.Tokens, p.Dense.N))}
		if mixed {
			cells = append(cells, p.Variant+" vs "+p.Baseline)
		}
		cells = append(cells,
			fmt.Sprintf("%.1f", up.MeasuredUs), fmt.Sprintf("%.1f", up.PredictedUs), fmt.Sprintf("%+.1f", up.ErrorPct),
			fmt.Sprintf("%.1f", va.MeasuredUs), fmt.Sprintf("%.1f", va.PredictedUs), fmt.Sprintf("%+.1f", va.ErrorPct),
			fmt.Sprintf("%+.1f", p.MeasuredDeltaPct), fmt.Sprintf("%+.1f", p.PredictedDeltaPct),
			strconv.FormatInt(va.Result.Counters.Skipped.HalfTiles, 10), occupancyCell(*va), lim)
		t.Row(cells...)
	}
	omitted, err := t.Write(w, width)
	if err != nil {
		return err
	}
	for _, r := range rep.Rows {
		if !r.Modelled {
			n, _ := r.Row.Params.Get("n")
			fmt.Fprintf(w, "%s n=%s %s: measured %.1f µs, not modelled: %s\n", chipName(r), n, r.Variant.Name, r.MeasuredUs, r.Reason)
		}
	}
	fmt.Fprintln(w)
	o, err := rep.summaryTable(false).Write(w, width)
	if err != nil {
		return err
	}
	if note := termtable.OmittedNote(appendNew(omitted, o), width, WideFlag); note != "" {
		fmt.Fprintln(w, note)
	}
	return nil
}

// pairRows returns the modelled absolute rows of a pair's baseline and
// variant (nil when a pair has no such row: a relative row's pair).
func (rep *Report) pairRows(p PairResult) (base, variant *RowResult) {
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Chip == nil || r.Chip.Name != p.Chip || r.Path != p.Path || r.Problem != p.Problem || r.Dense != p.Dense || !r.Modelled {
			continue
		}
		switch {
		case r.Variant.Name == p.Baseline && r.Kernel == p.BaselineKernel:
			base = r
		case r.Variant.Name == p.Variant && r.Kernel == p.Kernel:
			variant = r
		}
	}
	return base, variant
}

// occupancyCell renders a modelled row's resident threadgroups per core and
// what limits them: "6 (registers)".
func occupancyCell(r RowResult) string {
	return fmt.Sprintf("%d (%s)", r.Result.Occupancy.TGsPerCore, r.Result.Occupancy.Limiter)
}

// appendNew appends the names of more that list does not hold yet.
func appendNew(list, more []string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}
