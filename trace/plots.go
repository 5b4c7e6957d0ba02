package trace

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg

	"github.com/metalsim/metalsim/study"
)

// WriteComparePlot draws a comparison of variants a and b in format (png or
// svg) as two panels against n: the time of A (solid) and B (dashed) per chip
// and shape, and the delta in percent.
func WriteComparePlot(w io.Writer, format string, rows []study.CompareRow, a, b string) error {
	type series struct {
		key         string
		a, b, delta plotter.XYs
	}
	// lines join the points in n order, whatever order --n gave them in (a
	// stable sort keeps the chips' and shapes' order within each n)
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(r, s study.CompareRow) int { return cmp.Compare(r.N, s.N) })
	var all []*series
	byKey := map[string]*series{}
	for _, r := range rows {
		key := r.Chip + " " + r.Shape
		s := byKey[key]
		if s == nil {
			s = &series{key: key}
			byKey[key] = s
			all = append(all, s)
		}
		x := float64(r.N)
		s.a = append(s.a, plotter.XY{X: x, Y: r.A.Us})
		s.b = append(s.b, plotter.XY{X: x, Y: r.B.Us})
		s.delta = append(s.delta, plotter.XY{X: x, Y: r.DeltaPct})
	}
	top, bottom := plot.New(), plot.New()
	top.Title.Text = fmt.Sprintf("%s (solid) vs %s (dashed)", a, b)
	top.Y.Label.Text = "µs per MUL_MAT_ID"
	bottom.Y.Label.Text = "Δ = (B - A) / A, %"
	bottom.Title.Text = "delta (colours as above; below 0: B faster)"
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Label.Text = "n (tokens)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = nTicks(rows)
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: float64(rows[0].N), Y: 0}, {X: float64(rows[len(rows)-1].N), Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = color.Gray{Y: 128}
	bottom.Add(zero)
	for i, s := range all {
		c := plotutil.Color(i)
		for j, xy := range []plotter.XYs{s.a, s.b} {
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			l.Color, pts.Color = c, c
			pts.Shape = plotutil.Shape(i)
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			} else {
				top.Legend.Add(s.key, l, pts)
			}
			top.Add(l, pts)
		}
		l, pts, err := plotter.NewLinePoints(s.delta)
		if err != nil {
			return err
		}
		l.Color, pts.Color, pts.Shape = c, c, plotutil.Shape(i)
		bottom.Add(l, pts)
	}
	top.Y.Min = 0 // times from zero: the gap between A and B at its true scale
	top.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ts := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
			}
		}
		return ts
	})
	cv, err := draw.NewFormattedCanvas(8*vg.Inch, 9*vg.Inch, format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(cv))
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	_, err = cv.WriteTo(w)
	return err
}

// nTicks puts a tick at every n of the comparison.
func nTicks(rows []study.CompareRow) plot.Ticker {
	var ticks []plot.Tick
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.N] {
			seen[r.N] = true
			ticks = append(ticks, plot.Tick{Value: float64(r.N), Label: strconv.Itoa(r.N)})
		}
	}
	return plot.ConstantTicks(ticks)
}
