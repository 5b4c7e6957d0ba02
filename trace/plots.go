package trace

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg

	"github.com/metalsim/metalsim/sim"
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

// WriteOccupancyPlot draws in format (png or svg) the resident simdgroups per
// core of chip against registers per thread, lo to hi, for threadgroups of
// threads threads and tgMem bytes of threadgroup memory, marking the
// kernel's own count regs.
func WriteOccupancyPlot(w io.Writer, format string, chip *sim.Chip, kernel string, threads, regs, tgMem, lo, hi int) error {
	lo, hi = min(lo, regs), max(hi, regs)
	pts := make(plotter.XYs, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		sg := 0.0
		if o, err := sim.OccupancyFor(chip, threads, n, tgMem); err == nil {
			sg = float64(o.SGsPerCore)
		}
		pts = append(pts, plotter.XY{X: float64(n), Y: sg})
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: resident simdgroups per core\n%d threads per threadgroup, %d B threadgroup memory", chip.Name, threads, tgMem)
	p.X.Label.Text = "registers per thread"
	p.Y.Label.Text = "simdgroups per core"
	top := 0.0
	for _, pt := range pts {
		top = max(top, pt.Y)
	}
	p.Y.Min, p.Y.Max = 0, 1.35*top+2 // room for the legend above the curve
	p.X.Tick.Marker = intTicks{}
	p.Y.Tick.Marker = intTicks{}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	line.StepStyle = plotter.PostStep
	line.Width = vg.Points(1.5)
	line.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	own := 0.0
	if o, err := sim.OccupancyFor(chip, threads, regs, tgMem); err == nil {
		own = float64(o.SGsPerCore)
	}
	mark, err := plotter.NewScatter(plotter.XYs{{X: float64(regs), Y: own}})
	if err != nil {
		return err
	}
	mark.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(5), Color: color.RGBA{R: 214, G: 39, B: 40, A: 255}}
	p.Add(plotter.NewGrid(), line, mark)
	p.Legend.Add("SGs per core", line)
	p.Legend.Add(fmt.Sprintf("%s: %d registers, %.0f SGs", kernel, regs, own), mark)
	p.Legend.Top = true
	wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// intTicks marks whole numbers at a round step (about eight labels).
type intTicks struct{}

// Ticks implements plot.Ticker.
func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for _, s := range []float64{1, 2, 4, 8, 16, 32, 64, 128} {
		step = s
		if (hi-lo)/s <= 8 {
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return ts
}
