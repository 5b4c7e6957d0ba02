package plots

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/tile"
)

// Measured is a measured time at one point of a comparison: Row indexes
// the comparison's rows, Side is 0 for variant A and 1 for B.
type Measured struct {
	Row, Side int
	Us        float64
}

// MeasuredPoints finds the measured times of a comparison's points among
// measured cases: a modelled mul_mm_id row with a time, of the point's chip,
// path, variant and problem (the comparison times mul_mm_id at every n, so
// rows llama.cpp ran with another kernel do not match). A point measured
// more than once takes the first row.
func MeasuredPoints(rows []study.CompareRow, cases []accuracy.Case) []Measured {
	var out []Measured
	for i, r := range rows {
		if r.Total {
			continue
		}
		for side, s := range []study.CompareSide{r.A, r.B} {
			for _, c := range cases {
				if c.Modelled && c.Row.HasTime && c.Kernel == accuracy.KernelMulMMID && c.Chip.Name == r.Chip &&
					c.Path.String() == s.Path && c.Variant.Name == s.Variant && c.Problem == r.Problem {
					out = append(out, Measured{Row: i, Side: side, Us: c.Row.USPerRun})
					break
				}
			}
		}
	}
	return out
}

// compareSeries is one chip and shape of a comparison: its points in n order.
type compareSeries struct {
	name        string
	rows        []int // indices into the comparison's rows
	a, b, delta plotter.XYs
	total       bool
}

// WriteCompare draws a comparison of variants a and b in format (png or
// svg) as two panels against n on a log2 axis: the time of A (solid) and B
// (dashed) per chip and shape, and the delta in percent; measured points,
// when given, are hollow markers of their series (and their delta, where
// both variants were measured).
func WriteCompare(w io.Writer, format string, rows []study.CompareRow, a, b string, measured []Measured) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("no comparison rows: nothing to draw")
	}
	// lines join the points in n order, whatever order --n gave them in (a
	// stable sort keeps the chips' and shapes' order within each n)
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(rows[i].N, rows[j].N) })
	var all []*compareSeries
	byName := map[string]*compareSeries{}
	layer := false
	for _, i := range order {
		r := rows[i]
		name := r.Chip + ", " + r.Shape
		if r.Total {
			name = r.Chip + ", layer total (sum of the matmuls)"
			layer = true
		}
		s := byName[name]
		if s == nil {
			s = &compareSeries{name: name, total: r.Total}
			byName[name] = s
			all = append(all, s)
		}
		x := float64(r.N)
		s.rows = append(s.rows, i)
		s.a = append(s.a, plotter.XY{X: x, Y: r.A.Us})
		s.b = append(s.b, plotter.XY{X: x, Y: r.B.Us})
		s.delta = append(s.delta, plotter.XY{X: x, Y: r.DeltaPct})
	}
	timeLabel := "µs per MUL_MAT_ID"
	if len(rows) > 0 && rows[0].Op == tile.OpMulMat.String() {
		timeLabel = "µs per MUL_MAT"
	}
	if layer {
		timeLabel = "µs: per matmul, and their sum for the layer"
	}
	top := newPanel(fmt.Sprintf("A = %s (solid) vs B = %s (dashed)", a, b), "n (tokens, log2 scale)", timeLabel)
	bottom := newPanel("Δ = (B - A) / A: below 0, B is faster", "n (tokens, log2 scale)", "Δ %")
	ticks := nTicks(rows)
	lo, hi := float64(rows[order[0]].N), float64(rows[order[len(order)-1]].N)
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, ticks
		p.X.Min, p.X.Max = lo/1.15, hi*1.15
	}
	legend := newLegend()
	dlo, dhi, tmax := 0.0, 0.0, 0.0
	for i, s := range all {
		c, m := colour(i), marker(i)
		for j, xy := range []plotter.XYs{s.a, s.b} {
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			l.Color, l.Dashes = c, dash(j)
			pts.GlyphStyle = glyph(c, m)
			top.Add(l, pts)
			if j == 0 {
				legend.Add(s.name, l, pts)
			}
		}
		l, pts, err := plotter.NewLinePoints(s.delta)
		if err != nil {
			return err
		}
		l.Color, pts.GlyphStyle = c, glyph(c, m)
		bottom.Add(l, pts)
		for k := range s.a {
			tmax = max(tmax, s.a[k].Y, s.b[k].Y)
			dlo, dhi = min(dlo, s.delta[k].Y), max(dhi, s.delta[k].Y)
		}
	}
	mt, md := measuredXYs(rows, all, measured)
	for i := range all {
		for _, add := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{top, mt[i]}, {bottom, md[i]}} {
			if len(add.xys) == 0 {
				continue
			}
			s, err := plotter.NewScatter(add.xys)
			if err != nil {
				return err
			}
			s.GlyphStyle = glyph(colour(i), hollow(marker(i)))
			s.GlyphStyle.Radius = vg.Points(5)
			add.p.Add(s)
			for _, xy := range add.xys {
				if add.p == top {
					tmax = max(tmax, xy.Y)
				} else {
					dlo, dhi = min(dlo, xy.Y), max(dhi, xy.Y)
				}
			}
		}
	}
	top.Y.Min, top.Y.Max = 0, tmax*1.08 // times from zero: the gap between A and B at its true scale
	top.Y.Tick.Marker = linearTicks{}
	bottom.Y.Min, bottom.Y.Max = niceRange(dlo, dhi)
	bottom.Y.Tick.Marker = linearTicks{}
	zero, err := referenceLine(plotter.XYs{{X: lo / 1.15, Y: 0}, {X: hi * 1.15, Y: 0}})
	if err != nil {
		return err
	}
	bottom.Add(zero)
	legendHeading(&legend, "")
	for j, v := range []string{"A: " + a, "B: " + b} {
		l := swatch(referenceGrey)
		l.Width, l.Dashes = vg.Points(1.5), dash(j)
		legend.Add(v, l)
	}
	pred, err := plotter.NewScatter(plotter.XYs{{}})
	if err != nil {
		return err
	}
	pred.GlyphStyle = glyph(referenceGrey, marker(0))
	legend.Add("predicted (filled)", pred)
	if len(measured) > 0 {
		s, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return err
		}
		s.GlyphStyle = glyph(referenceGrey, hollow(marker(0)))
		s.GlyphStyle.Radius = vg.Points(5)
		legend.Add(fmt.Sprintf("measured (hollow): %d points", len(measured)), s)
	}
	return render(w, format, 8*vg.Inch+legendWidth(&legend)+legendGap, 9*vg.Inch, [][]*plot.Plot{{top}, {bottom}}, &legend)
}

// measuredXYs returns per series the measured times (top panel) and the
// measured deltas where both sides were measured (bottom panel).
func measuredXYs(rows []study.CompareRow, all []*compareSeries, measured []Measured) (times, deltas []plotter.XYs) {
	times, deltas = make([]plotter.XYs, len(all)), make([]plotter.XYs, len(all))
	bySide := map[[2]int]float64{}
	for _, m := range measured {
		bySide[[2]int{m.Row, m.Side}] = m.Us
	}
	for i, s := range all {
		for _, r := range s.rows {
			x := float64(rows[r].N)
			ua, okA := bySide[[2]int{r, 0}]
			ub, okB := bySide[[2]int{r, 1}]
			for _, u := range []struct {
				us float64
				ok bool
			}{{ua, okA}, {ub, okB}} {
				if u.ok {
					times[i] = append(times[i], plotter.XY{X: x, Y: u.us})
				}
			}
			if okA && okB && ua > 0 {
				deltas[i] = append(deltas[i], plotter.XY{X: x, Y: 100 * (ub - ua) / ua})
			}
		}
	}
	return times, deltas
}

// nTicks puts a labelled tick at every n of the comparison.
func nTicks(rows []study.CompareRow) plot.Ticker {
	var ticks []plot.Tick
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.N] {
			seen[r.N] = true
			ticks = append(ticks, plot.Tick{Value: float64(r.N), Label: strconv.Itoa(r.N)})
		}
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return plot.ConstantTicks(ticks)
}
