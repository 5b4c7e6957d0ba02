package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/metalsim/metalsim/study"
)

// sweepAxes are a sweep's swept values in sweep order: the token counts
// (ascending), the routings (with their skew), and the series, one per chip
// and variant.
type sweepAxes struct {
	ns       []int
	routings []string
	series   []sweepSeries
	chips    []string
	variants []string
}

// sweepSeries is one chip and variant of a sweep, by their indices in the
// axes' chips and variants.
type sweepSeries struct{ chip, variant int }

// axesOf reads the axes from the rows that ran (rows with an error are
// not drawn).
func axesOf(rows []*study.Row) sweepAxes {
	var a sweepAxes
	add := func(list []string, v string) []string {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		if !slices.Contains(a.ns, r.N) {
			a.ns = append(a.ns, r.N)
		}
		a.routings = add(a.routings, r.Routing)
		a.chips = add(a.chips, r.Chip)
		a.variants = add(a.variants, r.Variant)
		if s := a.seriesOf(r); !slices.Contains(a.series, s) {
			a.series = append(a.series, s)
		}
	}
	slices.Sort(a.ns)
	return a
}

// seriesOf is a row's chip and variant.
func (a *sweepAxes) seriesOf(r *study.Row) sweepSeries {
	return sweepSeries{chip: slices.Index(a.chips, r.Chip), variant: slices.Index(a.variants, r.Variant)}
}

// name is a series' legend and panel name.
func (a *sweepAxes) name(s sweepSeries) string { return a.chips[s.chip] + ", " + a.variants[s.variant] }

// SweepKind says how WriteSweep draws rows: "lines over n", "lines over
// routing" or "heatmap" (both n and the routing swept).
func SweepKind(rows []*study.Row) string {
	a := axesOf(rows)
	switch {
	case len(a.ns) > 1 && len(a.routings) > 1:
		return "heatmap"
	case len(a.routings) > 1:
		return "lines over routing"
	}
	return "lines over n"
}

// WriteSweep draws a sweep's rows in format (png or svg): with one axis
// swept (n, on a log2 axis, or the routing), a line of predicted µs per
// chip and variant over it (colour by variant, marker and line style by
// chip; routings that differ by more than their skew are categories, their
// points not joined); with n
// and the routing both swept, a heatmap of µs over n and the routing per
// chip and variant, each cell labelled with its time. Rows with an error
// are left out.
func WriteSweep(w io.Writer, format string, rows []*study.Row) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	a := axesOf(rows)
	if len(a.series) == 0 {
		return fmt.Errorf("no sweep point without an error: nothing to draw")
	}
	if SweepKind(rows) == "heatmap" {
		return writeSweepHeatmap(w, format, rows, a)
	}
	return writeSweepLines(w, format, rows, a)
}

// sweepTitle names the sweep's shape (and its one routing when it is not
// swept).
func sweepTitle(rows []*study.Row, a sweepAxes) string {
	var r *study.Row
	for _, x := range rows {
		if x.Error == "" {
			r = x
			break
		}
	}
	t := fmt.Sprintf("sweep %s: %s x %s, %d experts, top-%d, m=%d, k=%d, b=%d", r.SweepID, r.TypeA, r.TypeB, r.Experts, r.Used, r.M, r.K, r.B)
	if len(a.routings) == 1 {
		t += ", routing " + r.Routing
	}
	if len(a.ns) == 1 {
		t += ", n = " + strconv.Itoa(r.N)
	}
	return t
}

// writeSweepLines draws one line per chip and variant over the swept axis.
func writeSweepLines(w io.Writer, format string, rows []*study.Row, a sweepAxes) error {
	overRouting := len(a.routings) > 1
	xLabel := "n (tokens, log2 scale)"
	if overRouting {
		xLabel = "routing"
	}
	p := newPanel(sweepTitle(rows, a), xLabel, "predicted µs per MUL_MAT_ID")
	x := func(r *study.Row) float64 {
		if overRouting {
			return float64(slices.Index(a.routings, r.Routing))
		}
		return float64(r.N)
	}
	lines := make([]plotter.XYs, len(a.series))
	lo, hi := math.Inf(1), math.Inf(-1)
	joined := true // points over n, or over the skews of one routing, are joined; other routings are categories
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		joined = joined && (!overRouting || r.Skew != "")
		i := slices.Index(a.series, a.seriesOf(r))
		lines[i] = append(lines[i], plotter.XY{X: x(r), Y: r.TotalUs})
		lo, hi = min(lo, r.TotalUs), max(hi, r.TotalUs)
	}
	legend := newLegend()
	for i, xys := range lines {
		slices.SortStableFunc(xys, func(p, q plotter.XY) int { return compareFloat(p.X, q.X) })
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		s := a.series[i]
		l.Color, l.Dashes = colour(s.variant), dash(s.chip)
		pts.GlyphStyle = glyph(colour(s.variant), marker(s.chip))
		if !joined {
			// categories: the series side by side around each, not on top of each other
			for k := range pts.XYs {
				pts.XYs[k].X += 0.05 * (float64(i) - float64(len(lines)-1)/2)
			}
		}
		if joined {
			p.Add(l, pts)
			legend.Add(a.name(s), l, pts)
		} else {
			p.Add(pts)
			legend.Add(a.name(s), pts)
		}
	}
	if overRouting {
		ticks := make([]plot.Tick, len(a.routings))
		for i, name := range a.routings {
			ticks[i] = plot.Tick{Value: float64(i), Label: name}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.3, float64(len(a.routings)-1)+0.3
	} else {
		ticks := make([]plot.Tick, len(a.ns))
		for i, n := range a.ns {
			ticks[i] = plot.Tick{Value: float64(n), Label: strconv.Itoa(n)}
		}
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = float64(a.ns[0])/1.15, float64(a.ns[len(a.ns)-1])*1.15
	}
	if hi/lo > 8 {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		p.Y.Min, p.Y.Max = logRange(lo, hi, 1.2)
		p.Y.Label.Text += " (log scale)"
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.08 // times from zero: differences at their true scale
		p.Y.Tick.Marker = linearTicks{}
	}
	return render(w, format, 8*vg.Inch+legendWidth(&legend)+legendGap, 5*vg.Inch, [][]*plot.Plot{{p}}, &legend)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// heatScale maps a heatmap's times to colours: light for fast, dark for
// slow, in luminance steps a reader perceives as even; over log10(µs) when
// the times span more than a factor of four, so that the short ones are told
// apart too.
type heatScale struct {
	cmap palette.ColorMap
	log  bool
}

// at is the colour of a time.
func (h heatScale) at(us float64) color.Color {
	v := us
	if h.log {
		v = math.Log10(us)
	}
	c, err := h.cmap.At(min(max(v, h.cmap.Min()), h.cmap.Max()))
	if err != nil {
		return color.Gray{Y: 128}
	}
	return c
}

// bar is the scale's colour bar, ticked in µs.
func (h heatScale) bar() *plot.Plot {
	bar := plot.New()
	bar.Title.Text = "µs"
	bar.HideX()
	bar.Add(&plotter.ColorBar{ColorMap: h.cmap, Vertical: true})
	bar.Y.Padding = 0
	bar.Y.Tick.Marker = linearTicks{}
	if h.log {
		bar.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
			ts := logTicks{}.Ticks(math.Pow(10, lo), math.Pow(10, hi))
			for i := range ts {
				ts[i].Value = math.Log10(ts[i].Value)
			}
			return ts
		})
		bar.Title.Text = "µs (log scale)"
	}
	return bar
}

// newHeatScale is the scale of times lo..hi.
func newHeatScale(lo, hi float64) (heatScale, error) {
	h := heatScale{log: hi > 4*lo && lo > 0}
	if h.log {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	cmap, err := heatRamp(lo, hi)
	h.cmap = cmap
	return h, err
}

// heatRamp is the heatmaps' colour map over lo..hi.
func heatRamp(lo, hi float64) (palette.ColorMap, error) {
	m, err := moreland.NewLuminance([]color.Color{
		color.RGBA{R: 0x66, G: 0x25, B: 0x06, A: 0xFF},
		color.RGBA{R: 0xCC, G: 0x4C, B: 0x02, A: 0xFF},
		color.RGBA{R: 0xFE, G: 0x99, B: 0x29, A: 0xFF},
		color.RGBA{R: 0xFF, G: 0xF7, B: 0xBC, A: 0xFF},
	})
	if err != nil {
		return nil, err
	}
	if hi <= lo {
		lo, hi = lo-0.5, hi+0.5 // one value: a range around it
	}
	m = palette.Reverse(m)
	m.SetMin(lo)
	m.SetMax(hi)
	return m, nil
}

// writeSweepHeatmap draws one heatmap of µs over n and the routing per chip
// and variant, sharing one colour scale.
func writeSweepHeatmap(w io.Writer, format string, rows []*study.Row, a sweepAxes) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	grids := make([][]float64, len(a.series)) // [series][routing*len(ns)+n]
	for i := range grids {
		grids[i] = make([]float64, len(a.ns)*len(a.routings))
		for j := range grids[i] {
			grids[i][j] = math.NaN()
		}
	}
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		i := slices.Index(a.series, a.seriesOf(r))
		grids[i][slices.Index(a.routings, r.Routing)*len(a.ns)+slices.Index(a.ns, r.N)] = r.TotalUs
		lo, hi = min(lo, r.TotalUs), max(hi, r.TotalUs)
	}
	scale, err := newHeatScale(lo, hi)
	if err != nil {
		return err
	}
	cols := min(len(a.series), 3)
	nrows := (len(a.series) + cols - 1) / cols
	panels := make([][]*plot.Plot, nrows)
	for i := range panels {
		panels[i] = make([]*plot.Plot, cols)
	}
	for i, s := range a.series {
		p := newPanel(a.name(s), "n (tokens)", "routing")
		p.Add(&heatCells{ns: a.ns, routings: a.routings, us: grids[i], scale: scale})
		nt := make([]plot.Tick, len(a.ns))
		for j, n := range a.ns {
			nt[j] = plot.Tick{Value: float64(j), Label: strconv.Itoa(n)}
		}
		rt := make([]plot.Tick, len(a.routings))
		for j, r := range a.routings {
			rt[j] = plot.Tick{Value: float64(j), Label: r}
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(nt), plot.ConstantTicks(rt)
		p.X.Min, p.X.Max = -0.5, float64(len(a.ns))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(a.routings))-0.5
		p.X.Padding, p.Y.Padding = 0, 0
		panels[i/cols][i%cols] = p
	}
	for i := len(a.series); i < nrows*cols; i++ {
		panels[i/cols][i%cols] = nil
	}
	// cells of 0.7 x 0.4 inches, and room for the axes and titles
	panelW := 0.7*vg.Inch*vg.Length(len(a.ns)) + 1.3*vg.Inch
	panelH := 0.4*vg.Inch*vg.Length(len(a.routings)) + 1.1*vg.Inch
	width := panelW*vg.Length(cols) + 1.2*vg.Inch
	height := panelH*vg.Length(nrows) + vg.Points(30)
	return renderWithBar(w, format, max(width, 6*vg.Inch), height, sweepTitle(rows, a), panels, scale.bar())
}

// heatCells draws a grid of cells, one per n and routing, coloured by their
// time and labelled with it (dark text on light cells, light on dark).
type heatCells struct {
	ns       []int
	routings []string
	us       []float64 // [routing*len(ns)+n]; NaN: no point
	scale    heatScale
}

// Plot implements plot.Plotter.
func (h *heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	st := text.Style{Font: plot.NewLegend().TextStyle.Font, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	st.Font.Size = vg.Points(9)
	for ri := range h.routings {
		for ni := range h.ns {
			v := h.us[ri*len(h.ns)+ni]
			x0, x1 := trX(float64(ni)-0.5), trX(float64(ni)+0.5)
			y0, y1 := trY(float64(ri)-0.5), trY(float64(ri)+0.5)
			rect := []vg.Point{{X: x0 + 1, Y: y0 + 1}, {X: x1 - 1, Y: y0 + 1}, {X: x1 - 1, Y: y1 - 1}, {X: x0 + 1, Y: y1 - 1}}
			if math.IsNaN(v) {
				c.FillPolygon(color.Gray{Y: 240}, rect)
				continue
			}
			fill := h.scale.at(v)
			c.FillPolygon(fill, rect)
			st.Color = color.Black
			if luminance(fill) < 0.45 {
				st.Color = color.White
			}
			c.FillText(st, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, cellText(v))
		}
	}
}

// cellText renders a cell's µs: whole above 100, one decimal below.
func cellText(us float64) string {
	if us >= 100 {
		return strconv.FormatFloat(us, 'f', 0, 64)
	}
	return strconv.FormatFloat(us, 'f', 1, 64)
}

// luminance is a colour's relative luminance, 0 (black) to 1 (white).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xFFFF
}
