package trace

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
)

// WriteCompareText prints a comparison of variants a and b as a table, after
// a header that names the variants, the routing and the timing options (and
// the model, for a layer).
func WriteCompareText(w io.Writer, rows []study.CompareRow, a, b string, model *models.Model, opt sim.Options) error {
	fmt.Fprintf(w, "A = %s, B = %s; routing %s, %d draws, seed %d, %s engine; Δ = B - A (negative: B faster)\n",
		a, b, opt.Routing.Name(), opt.Draws, opt.Seed, opt.Engine)
	if model != nil {
		WriteModelHeader(w, model, "")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chip\tshape\tn\tA µs\tB µs\tΔ µs\tΔ %\thalf-tiles skipped A/B\tMMAs A/B\toccupancy A/B\tlimiter A/B\tkernel A/B\t")
	var notes []string
	for _, r := range rows {
		occ, lim, kern := "-", "-", "-"
		if !r.Total {
			occ = fmt.Sprintf("%d (%s) / %d (%s)", r.A.TGsPerCore, r.A.OccLimiter, r.B.TGsPerCore, r.B.OccLimiter)
			lim = r.A.Limiter + " / " + r.B.Limiter
			kern = r.A.Kernel + " / " + r.B.Kernel
			notes = append(append(notes, r.A.Notes()...), r.B.Notes()...)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%+.1f\t%+.1f%%\t%d / %d\t%s / %s\t%s\t%s\t%s\t\n",
			r.Chip, r.Shape, r.N, r.A.Us, r.B.Us, r.DeltaUs, r.DeltaPct, r.A.Skipped, r.B.Skipped,
			mmaCount(r.A), mmaCount(r.B), occ, lim, kern)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return WriteNotes(w, "", notes)
}

// WriteNotes prints each distinct note once, in the order of first
// appearance, as "note: ..." lines after indent.
func WriteNotes(w io.Writer, indent string, notes []string) error {
	seen := map[string]bool{}
	for _, n := range notes {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if _, err := fmt.Fprintf(w, "%snote: %s\n", indent, n); err != nil {
			return err
		}
	}
	return nil
}

// mmaCount renders an MMA count with its shape (8x8x8 or 16x16x16; the
// mat-vec kernels have none).
func mmaCount(s study.CompareSide) string {
	if s.MMAShape == "" {
		return strconv.FormatInt(s.MMAs, 10)
	}
	return fmt.Sprintf("%d (%s)", s.MMAs, s.MMAShape)
}

// WriteModelHeader prints a model's MoE shape and source, flagging its
// unverified numbers, and its expert tensors and notes.
func WriteModelHeader(w io.Writer, m *models.Model, forced string) {
	fmt.Fprintf(w, "model %s: %d experts, top-%d, hidden %d, expert FFN %d (%s)\n", m.Name, m.Experts, m.Used, m.Hidden, m.FFN, m.Source)
	if len(m.Unverified) > 0 {
		fmt.Fprintf(w, "  unverified: %s (not checked against the model's own config: verify before relying on them)\n", strings.Join(m.Unverified, ", "))
	}
	for _, t := range m.Tensors {
		fmt.Fprintf(w, "  %s: %s %v\n", t.Name, t.Type, t.Dims)
	}
	for _, n := range m.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if forced != "" && m.Tensors != nil {
		var decl []string
		for _, t := range m.Tensors {
			decl = append(decl, t.Role+" "+t.Type)
		}
		fmt.Fprintf(w, "  every expert tensor simulated as %s (--type); the file declares %s\n", forced, strings.Join(decl, ", "))
	}
}

// WriteModelText prints a model layer's rows as a table, and their notes.
func WriteModelText(w io.Writer, rows []study.ModelRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "n\tmatmul\ttensor\ttype\tkernel\tm\tk\tb\tµs\tTFLOPS\toccupancy\tlimiter\thalf-tiles skipped\tMMAs\t")
	var notes []string
	for _, r := range rows {
		occ, b, m, k := "", "", "", ""
		if r.Matmul != "layer" {
			occ = fmt.Sprintf("%d (%s)", r.TGsPerCore, r.OccLimiter)
			b, m, k = strconv.Itoa(r.B), strconv.Itoa(r.M), strconv.Itoa(r.K)
			notes = append(notes, r.Notes()...)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.2f\t%s\t%s\t%d\t%d\t\n",
			r.N, r.Matmul, r.Tensor, r.Type, r.Kernel, m, k, b, r.Us, r.TFLOPS, occ, r.Limiter, r.Skipped, r.MMAs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return WriteNotes(w, "", notes)
}

// WritePresets lists the model presets: every number with its config field
// and source document, an "unverified" mark where it could not be checked,
// and the source documents.
func WritePresets(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "preset\taliases\texperts\ttop-k\thidden\texpert FFN\tsource")
	field := func(f models.Field) string {
		s := fmt.Sprintf("%d (%s, %s)", f.Value, f.Key, f.Source)
		if f.Unverified {
			s += " unverified"
		}
		return s
	}
	var unverified []string
	for _, p := range models.Presets() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Aliases, ", "),
			field(p.Experts), field(p.Used), field(p.Hidden), field(p.FFN), p.Source)
		for _, f := range p.Config.Fields() {
			if f.Unverified {
				unverified = append(unverified, fmt.Sprintf("%s %s = %d", p.Name, f.Key, f.Value))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(unverified) > 0 {
		fmt.Fprintf(w, "\nunverified (not checked against the model's own config): %s\n", strings.Join(unverified, "; "))
	}
	for _, p := range models.Presets() {
		if p.Notes != "" {
			fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Notes)
		}
	}
	fmt.Fprintln(w, "\nsources (docs/model-configs.md; simrun bench --list gives every number of each model):")
	for _, src := range models.Sources() {
		fmt.Fprintf(w, "  %s: %s %s\n", src.Key, src.What, src.URL)
	}
	return nil
}
