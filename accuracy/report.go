package accuracy

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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

// kernels names the pair's kernel, or the variant's and the baseline's
// where they differ ("mul_mm vs mul_mv_ext").
func (p PairResult) kernels() string {
	if p.BaselineKernel != "" && p.BaselineKernel != p.Kernel {
		return p.Kernel + " vs " + p.BaselineKernel
	}
	return p.Kernel
}

// cells are the pair's cells in the order of the pair tables' columns (chip,
// path, shape, n, variant vs baseline, measured Δ, predicted Δ, error).
func (p PairResult) cells() []string {
	sh, n := p.shape()
	return []string{p.Chip, p.Path.String(), sh, strconv.Itoa(n), p.Variant + " vs " + p.Baseline,
		fmt.Sprintf("%+.1f", p.MeasuredDeltaPct), fmt.Sprintf("%+.1f", p.PredictedDeltaPct), fmt.Sprintf("%+.1f", p.ErrorPP)}
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
