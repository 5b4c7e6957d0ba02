package accuracy

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
)

func shape(r RowResult) string {
	p := r.Row.Params
	get := func(k string) string { v, _ := p.Get(k); return v }
	if r.Row.Op == hw.OpMulMat {
		return fmt.Sprintf("%s m=%s k=%s", get("type_a"), get("m"), get("k"))
	}
	return fmt.Sprintf("%s %s/%s m=%s k=%s", get("type_a"), get("n_mats"), get("n_used"), get("m"), get("k"))
}

func chipName(r RowResult) string {
	if r.Chip != nil {
		return r.Chip.Name
	}
	return r.Row.Chip
}

// dense reports whether the pair's rows are MUL_MAT rows.
func (p PairResult) dense() bool {
	return p.Kernel == KernelMulMM || p.Kernel == KernelMulMV || p.Kernel == KernelMulMVExt
}

// shape renders the pair's problem as the row tables do, and its tokens.
func (p PairResult) shape() (string, int) {
	if p.dense() {
		d := p.Dense
		return fmt.Sprintf("%s m=%d k=%d", d.TypeA, d.M, d.K), d.N
	}
	pr := p.Problem
	return fmt.Sprintf("%s %d/%d m=%d k=%d", pr.TypeA, pr.Experts, pr.Used, pr.M, pr.K), pr.Tokens
}

// rowCells are a row's cells in the order of the row tables' columns (chip,
// path, kernel, shape, n, variant, measured, predicted, error, limiter,
// occupancy); meas is the measured cell as the table's format shows it. A
// row that is not modelled gives its reason in the limiter column.
func rowCells(r RowResult, meas string) []string {
	n, _ := r.Row.Params.Get("n")
	cells := []string{chipName(r), r.Path.String(), kernelName(r), shape(r), n, r.Variant.Name, meas}
	switch {
	case !r.Modelled:
		return append(cells, "not modelled", "", r.Reason, "")
	case r.Row.HasTime:
		return append(cells, fmt.Sprintf("%.1f", r.PredictedUs), fmt.Sprintf("%+.1f", r.ErrorPct), r.Result.Limit.String(), occupancy(r.Result))
	}
	return append(cells, fmt.Sprintf("%.1f", r.Result.TotalUs), "", r.Result.Limit.String(), occupancy(r.Result))
}

// cells are the pair's cells in the order of the pair tables' columns (chip,
// path, shape, n, variant vs baseline, measured Δ, predicted Δ, error).
func (p PairResult) cells() []string {
	sh, n := p.shape()
	return []string{p.Chip, p.Path.String(), sh, strconv.Itoa(n), p.Variant + " vs " + p.Baseline,
		fmt.Sprintf("%+.1f", p.MeasuredDeltaPct), fmt.Sprintf("%+.1f", p.PredictedDeltaPct), fmt.Sprintf("%+.1f", p.ErrorPP)}
}

// writeTabRow writes cells as one line of a tabwriter table; empty trailing
// cells are left out, so they do not widen a column.
func writeTabRow(w io.Writer, cells []string) {
	for len(cells) > 0 && cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// writeMarkdownRow writes cells as one row of a Markdown table: "| a | | b |".
func writeMarkdownRow(w io.Writer, cells []string) {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		if c != "" {
			b.WriteString(" " + c)
		}
		b.WriteString(" |")
	}
	fmt.Fprintln(w, b.String())
}

// WriteText prints the report as aligned tables: rows, pairs, summaries.
func (rep *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "chip\tpath\tkernel\tshape\tn\tvariant\tmeasured µs\tpredicted µs\terror %\tlimiter\tTGs/core, registers")
	for _, r := range rep.Rows {
		meas := "-"
		if r.Row.HasTime {
			meas = fmt.Sprintf("%.1f", r.MeasuredUs)
		} else if r.Row.HasDelta {
			meas = fmt.Sprintf("Δ %+.1f%% vs %s", r.Row.DeltaPct, r.Row.Baseline)
		}
		writeTabRow(tw, rowCells(r, meas))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Pairs) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "chip\tpath\tshape\tn\tvariant vs baseline\tmeasured Δ %\tpredicted Δ %\terror pp")
		for _, p := range rep.Pairs {
			writeTabRow(tw, p.cells())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	rep.writeNotes(w)
	fmt.Fprintln(w)
	for _, cs := range rep.PerChip {
		fmt.Fprintf(w, "%s/%s: %s\n", cs.Chip, cs.Path, cs.Summary.line())
	}
	fmt.Fprintf(w, "all: %s\n", rep.Summary.line())
	return nil
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

func (s Summary) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, %d modelled", s.Rows, s.Modelled)
	if s.Relative > 0 {
		fmt.Fprintf(&b, " (%d more compared by their delta only)", s.Relative)
	}
	if s.NotModelled > 0 {
		fmt.Fprintf(&b, " (%d not modelled, listed with the reason)", s.NotModelled)
	}
	if s.Modelled > 0 {
		fmt.Fprintf(&b, "; MAPE %.2f%%, WMAPE %.2f%%, max %.2f%%, R²(log) %.4f", s.MAPE, s.WMAPE, s.MaxErrPct, s.R2Log)
	}
	if s.Pairs > 0 {
		fmt.Fprintf(&b, "; %d deltas: mean |error| %.2f pp, max %.2f pp", s.Pairs, s.MeanDeltaPP, s.MaxDeltaPP)
	}
	return b.String()
}

// WriteMarkdown prints the report as Markdown tables (docs/accuracy.md).
func (rep *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintln(w, "| chip | path | kernel | shape | n | variant | measured µs | predicted µs | error % | limiter | TGs/core, registers |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---|---:|---:|---:|---|---|")
	for _, r := range rep.Rows {
		meas := "–"
		if r.Row.HasTime {
			meas = fmt.Sprintf("%.1f", r.MeasuredUs)
		}
		writeMarkdownRow(w, rowCells(r, meas))
	}
	if len(rep.Pairs) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| chip | path | shape | n | variant vs baseline | measured Δ % | predicted Δ % | error pp |")
		fmt.Fprintln(w, "|---|---|---|---:|---|---:|---:|---:|")
		for _, p := range rep.Pairs {
			writeMarkdownRow(w, p.cells())
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| chip / path | rows | modelled | MAPE % | WMAPE % | max % | R²(log) | deltas | mean Δ err pp | max Δ err pp |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	line := func(name string, s Summary) {
		// figures over no rows (or no pairs) are not zero errors: "–"
		abs, del := "– | – | – | –", "– | –"
		if s.Modelled > 0 {
			abs = fmt.Sprintf("%.2f | %.2f | %.2f | %.4f", s.MAPE, s.WMAPE, s.MaxErrPct, s.R2Log)
		}
		if s.Pairs > 0 {
			del = fmt.Sprintf("%.2f | %.2f", s.MeanDeltaPP, s.MaxDeltaPP)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %d | %s |\n", name, s.Rows, s.Modelled, abs, s.Pairs, del)
	}
	for _, cs := range rep.PerChip {
		line(cs.Chip+" / "+cs.Path.String(), cs.Summary)
	}
	line("all", rep.Summary)
	return nil
}

// WriteComparison prints one line per chip, path and problem with the upstream
// and every other variant side by side: measured and predicted µs, the error,
// the delta, skipped half-tiles, occupancy and limiter.
func (rep *Report) WriteComparison(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chip\tpath\tkernel\tn\tupstream µs\tpredicted\terr %\thalftile µs\tpredicted\terr %\tΔ measured %\tΔ predicted %\thalf-tiles skipped\tTGs/core\tlimiter (upstream / halftile)\t")
	for _, p := range rep.Pairs {
		var up, va *RowResult
		for i := range rep.Rows {
			r := &rep.Rows[i]
			if r.Chip == nil || r.Chip.Name != p.Chip || r.Path != p.Path || r.Kernel != p.Kernel || r.Problem != p.Problem || r.Dense != p.Dense || !r.Modelled {
				continue
			}
			switch r.Variant.Name {
			case p.Baseline:
				up = r
			case p.Variant:
				va = r
			}
		}
		if up == nil || va == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.1f\t%+.1f\t%.1f\t%.1f\t%+.1f\t%+.1f\t%+.1f\t%d\t%d (%s)\t%s / %s\t\n",
			p.Chip, p.Path, p.Kernel, max(p.Problem.Tokens, p.Dense.N), up.MeasuredUs, up.PredictedUs, up.ErrorPct, va.MeasuredUs, va.PredictedUs, va.ErrorPct,
			p.MeasuredDeltaPct, p.PredictedDeltaPct, va.Result.Counters.Skipped.HalfTiles,
			va.Result.Occupancy.TGsPerCore, va.Result.Occupancy.Limiter, up.Result.Limit, va.Result.Limit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Rows {
		if !r.Modelled {
			n, _ := r.Row.Params.Get("n")
			fmt.Fprintf(w, "%s n=%s %s: measured %.1f µs, not modelled: %s\n", chipName(r), n, r.Variant.Name, r.MeasuredUs, r.Reason)
		}
	}
	fmt.Fprintln(w)
	for _, cs := range rep.PerChip {
		fmt.Fprintf(w, "%s/%s: %s\n", cs.Chip, cs.Path, cs.Summary.line())
	}
	return nil
}

// occupancy renders a prediction's residency and registers per thread:
// "6 (registers), 60 regs".
func occupancy(r *sim.Result) string {
	return fmt.Sprintf("%d (%s), %d regs", r.Occupancy.TGsPerCore, r.Occupancy.Limiter, r.Registers.Total)
}

// kernelName is the Metal kernel a row ran ("–" for a row without a chip).
func kernelName(r RowResult) string {
	if r.Kernel == "" {
		return "–"
	}
	return r.Kernel
}
