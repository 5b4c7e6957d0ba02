package plots

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/metalsim/metalsim/accuracy"
)

// Band is the relative error the accuracy picture shades around y = x.
const Band = 0.10

// labelledWorst is how many of the worst points the accuracy picture names:
// the largest errors, and every point outside the band up to this many.
const labelledWorst = 5

// accuracyKernels are the Metal kernels in the order their markers are
// given: the MoE kernels first.
var accuracyKernels = []string{accuracy.KernelMulMMID, accuracy.KernelMulMVID, accuracy.KernelMulMM, accuracy.KernelMulMV, accuracy.KernelMulMVExt}

// accuracyPoint is one point of the accuracy picture.
type accuracyPoint struct {
	x, y   float64
	chip   int // colour
	kernel int // marker
	err    float64
	label  string
}

// AccuracyPoints counts the points the accuracy picture draws: the modelled
// rows with a measured time (the left panel) and the variant-vs-baseline
// pairs (the right panel, drawn when there are any).
func AccuracyPoints(rep *accuracy.Report) (rows, pairs int) {
	abs, rel, _, _ := accuracyPoints(rep)
	return len(abs), len(rel)
}

// accuracyPoints returns the points of both panels and the chip and kernel
// names that colour and mark them (chips in name order, kernels in
// accuracyKernels order, each only if some point has it).
func accuracyPoints(rep *accuracy.Report) (abs, rel []accuracyPoint, chipNames, kernelNames []string) {
	shapes := map[string]bool{}
	for _, r := range rep.Rows {
		if r.Modelled && r.Row.HasTime {
			chipNames = append(chipNames, r.Chip.Name)
			kernelNames = append(kernelNames, r.Kernel)
			shapes[rowShape(r)] = true
		}
	}
	for _, p := range rep.Pairs {
		chipNames = append(chipNames, p.Chip)
		kernelNames = append(kernelNames, p.Kernel)
	}
	slices.Sort(chipNames)
	chipNames = slices.Compact(chipNames)
	kernelNames = slices.DeleteFunc(slices.Clone(accuracyKernels), func(k string) bool { return !slices.Contains(kernelNames, k) })
	manyShapes := len(shapes) > 1
	for _, r := range rep.Rows {
		if !r.Modelled || !r.Row.HasTime {
			continue
		}
		n, _ := r.Row.Params.Get("n")
		label := fmt.Sprintf("%s n=%s: %+.1f %%", r.Variant.Name, n, r.ErrorPct)
		if manyShapes {
			label = fmt.Sprintf("%s %s n=%s: %+.1f %%", r.Kernel, r.Variant.Name, n, r.ErrorPct)
		}
		abs = append(abs, accuracyPoint{x: r.MeasuredUs, y: r.PredictedUs, chip: slices.Index(chipNames, r.Chip.Name),
			kernel: slices.Index(kernelNames, r.Kernel), err: r.ErrorPct, label: label})
	}
	for _, p := range rep.Pairs {
		_, n := pairShape(p)
		rel = append(rel, accuracyPoint{x: p.MeasuredDeltaPct, y: p.PredictedDeltaPct, chip: slices.Index(chipNames, p.Chip),
			kernel: slices.Index(kernelNames, p.Kernel), err: p.ErrorPP, label: fmt.Sprintf("n=%d: %+.1f pp", n, p.ErrorPP)})
	}
	return abs, rel, chipNames, kernelNames
}

// rowShape names a row's problem but its tokens, to tell whether a report
// has several shapes.
func rowShape(r accuracy.RowResult) string {
	if r.Kernel == accuracy.KernelMulMMID || r.Kernel == accuracy.KernelMulMVID {
		p := r.Problem
		p.Tokens = 0
		return p.String()
	}
	d := r.Dense
	d.N = 0
	return d.String()
}

// pairShape returns a pair's problem and its tokens.
func pairShape(p accuracy.PairResult) (string, int) {
	if p.Kernel == accuracy.KernelMulMMID || p.Kernel == accuracy.KernelMulMVID {
		return p.Problem.String(), p.Problem.Tokens
	}
	return p.Dense.String(), p.Dense.N
}

// WriteAccuracy draws a validation in format (png or svg): predicted
// against measured µs on log-log axes with y = x and a ±10 % band, colour by
// chip and marker by kernel, the worst points named; beside it, when the
// report has variant-vs-baseline pairs, their measured against predicted
// Δ %.
func WriteAccuracy(w io.Writer, format string, rep *accuracy.Report) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	abs, rel, chipNames, kernelNames := accuracyPoints(rep)
	if len(abs) == 0 && len(rel) == 0 {
		return fmt.Errorf("no modelled row with a measured time or a delta: nothing to draw")
	}
	legend := newLegend()
	legendHeading(&legend, "colour: chip")
	for i, c := range chipNames {
		l := swatch(colour(i))
		legend.Add(c, l)
	}
	legendHeading(&legend, "marker: kernel")
	for i, k := range kernelNames {
		s, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return err
		}
		s.GlyphStyle = glyph(referenceGrey, marker(i))
		legend.Add(k, s)
	}
	legendHeading(&legend, "")
	row := []*plot.Plot{}
	if len(abs) > 0 {
		p, err := absolutePanel(rep, abs, &legend)
		if err != nil {
			return err
		}
		row = append(row, p)
	}
	if len(rel) > 0 {
		p, err := deltaPanel(rep, rel)
		if err != nil {
			return err
		}
		row = append(row, p)
	}
	width := 4.9*vg.Inch*vg.Length(len(row)) + legendWidth(&legend) + legendGap
	return render(w, format, width, 5.4*vg.Inch, [][]*plot.Plot{row}, &legend)
}

// absolutePanel draws predicted against measured µs.
func absolutePanel(rep *accuracy.Report, pts []accuracyPoint, legend *plot.Legend) (*plot.Plot, error) {
	s := rep.Summary
	p := newPanel(fmt.Sprintf("predicted vs measured: %d rows, MAPE %.1f %%, R²(log) %.3f", len(pts), s.MAPE, s.R2Log),
		"measured µs per op (log scale)", "predicted µs per op (log scale)")
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		lo, hi = min(lo, pt.x, pt.y), max(hi, pt.x, pt.y)
	}
	lo, hi = logRange(lo, hi, 1.25)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Scale, ax.Tick.Marker = plot.LogScale{}, logTicks{}
		ax.Min, ax.Max = lo, hi
	}
	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: lo * (1 - Band)}, {X: hi, Y: hi * (1 - Band)}, {X: hi, Y: hi * (1 + Band)}, {X: lo, Y: lo * (1 + Band)}})
	if err != nil {
		return nil, err
	}
	band.Color, band.LineStyle.Width = bandGrey, 0
	diag, err := referenceLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	p.Add(band, diag)
	legend.Add("y = x: predicted = measured", diag)
	legend.Add(fmt.Sprintf("±%.0f %% of measured", 100*Band), band)
	if err := addPoints(p, pts, func(pt accuracyPoint) bool { return math.Abs(pt.err) > 100*Band }); err != nil {
		return nil, err
	}
	return p, nil
}

// deltaPanel draws the pairs' predicted against measured Δ %.
func deltaPanel(rep *accuracy.Report, pts []accuracyPoint) (*plot.Plot, error) {
	which := "variant vs baseline"
	if v, b := rep.Pairs[0].Variant, rep.Pairs[0].Baseline; !slices.ContainsFunc(rep.Pairs, func(p accuracy.PairResult) bool { return p.Variant != v || p.Baseline != b }) {
		which = v + " vs " + b
	}
	p := newPanel(fmt.Sprintf("Δ %% %s: %d pairs, mean |error| %.1f pp", which, len(pts), rep.Summary.MeanDeltaPP),
		"measured Δ %", "predicted Δ %")
	lo, hi := 0.0, 0.0 // the axes hold 0: no change
	for _, pt := range pts {
		lo, hi = min(lo, pt.x, pt.y), max(hi, pt.x, pt.y)
	}
	lo, hi = niceRange(lo, hi)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Min, ax.Max, ax.Tick.Marker = lo, hi, linearTicks{}
	}
	diag, err := referenceLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	p.Add(diag)
	if err := addPoints(p, pts, func(accuracyPoint) bool { return false }); err != nil {
		return nil, err
	}
	return p, nil
}

// addPoints adds one scatter per chip and kernel and the labels of the worst
// points: the labelledWorst largest |err|, and beyond them those outside
// (up to labelledWorst in all).
func addPoints(p *plot.Plot, pts []accuracyPoint, outside func(accuracyPoint) bool) error {
	type key struct{ chip, kernel int }
	var keys []key
	groups := map[key]plotter.XYs{}
	for _, pt := range pts {
		k := key{pt.chip, pt.kernel}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], plotter.XY{X: pt.x, Y: pt.y})
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.chip, b.chip), cmp.Compare(a.kernel, b.kernel)) })
	for _, k := range keys {
		s, err := plotter.NewScatter(groups[k])
		if err != nil {
			return err
		}
		s.GlyphStyle = glyph(colour(k.chip), marker(k.kernel))
		p.Add(s)
	}
	worst := slices.Clone(pts)
	slices.SortStableFunc(worst, func(a, b accuracyPoint) int { return cmp.Compare(math.Abs(b.err), math.Abs(a.err)) })
	n := min(len(worst), 3)
	for n < len(worst) && n < labelledWorst && outside(worst[n]) {
		n++
	}
	var at, all plotter.XYs
	var texts []string
	for _, pt := range worst[:n] {
		at = append(at, plotter.XY{X: pt.x, Y: pt.y})
		texts = append(texts, pt.label)
	}
	for _, pt := range pts {
		all = append(all, plotter.XY{X: pt.x, Y: pt.y})
	}
	p.Add(newPointLabels(at, texts, all))
	return nil
}

// referenceLine is a thin grey line.
func referenceLine(xys plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = referenceGrey, vg.Points(0.8)
	return l, nil
}
