package trace

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/metalsim/metalsim/isa"
)

// The timeline picture: a Gantt chart of a Timeline. One row per
// simdgroup track ("c0 s1 sg2": core 0, threadgroup slot 1, simdgroup 2),
// grouped by core and slot, each slot topped by a thin threadgroup lane that
// shows which threadgroup lived in the slot (alternating greys, labelled with
// its tile where there is room) and vertical lines at threadgroup starts
// through the slot's rows. A span at least one time column wide is drawn
// exactly; the spans shorter than a column (the column is the window divided
// by TimelineOptions.Columns) are summed per column and drawn as stacked
// shares of the row's height, so a 1 ms window still shows what mix of phases
// each simdgroup ran.

// Picture defaults.
const (
	// DefaultTimelineMaxRows caps the simdgroup rows of a picture: 2 cores of
	// 6 to 8 resident threadgroups of 4 simdgroups fit.
	DefaultTimelineMaxRows = 64
	// MaxTimelineRows bounds TimelineOptions.MaxRows: 1024 rows make a PNG
	// about 12,000 pixels tall.
	MaxTimelineRows = 1024
	// DefaultTimelineWidth is the picture's width in inches (1056 pixels at
	// the PNG's 96 dpi).
	DefaultTimelineWidth = 11
)

// TimelineKind is a colour of the picture: a program phase, a barrier wait
// or idle.
type TimelineKind int

// The kinds, in legend order.
const (
	KindSetup TimelineKind = iota
	KindStage
	KindCompute
	KindStore
	KindBarrier
	KindIdle
	NumTimelineKinds // number of kinds (not a kind)
)

var kindNames = [NumTimelineKinds]string{"setup", "stage", "compute", "store", "barrier wait", "idle"}

// String returns the kind's name as the legend and the trace tracks print it.
func (k TimelineKind) String() string {
	if k < 0 || k >= NumTimelineKinds {
		return fmt.Sprintf("TimelineKind(%d)", int(k))
	}
	return kindNames[k]
}

// kindColors: close to the Perfetto colours of the same spans (stage yellow,
// compute green, barrier red, idle grey), distinct in grey scale too.
var kindColors = [NumTimelineKinds]color.RGBA{
	{R: 148, G: 103, B: 189, A: 255}, // setup: purple
	{R: 255, G: 187, B: 51, A: 255},  // stage: amber
	{R: 44, G: 160, B: 44, A: 255},   // compute: green
	{R: 31, G: 119, B: 180, A: 255},  // store: blue
	{R: 214, G: 39, B: 40, A: 255},   // barrier wait: red
	{R: 190, G: 190, B: 190, A: 255}, // idle: light grey
}

var (
	tgShades    = [2]color.RGBA{{R: 205, G: 205, B: 205, A: 255}, {R: 165, G: 165, B: 165, A: 255}}
	exitColor   = color.RGBA{A: 255}
	tgLineColor = color.RGBA{R: 40, G: 40, B: 40, A: 255}
)

// spanKind maps a span to its colour; ok is false for threadgroup spans.
func spanKind(sp Span) (TimelineKind, bool) {
	switch sp.Kind {
	case SpanPhase:
		switch sp.Phase {
		case isa.PhaseSetup:
			return KindSetup, true
		case isa.PhaseStage:
			return KindStage, true
		case isa.PhaseCompute:
			return KindCompute, true
		case isa.PhaseStore:
			return KindStore, true
		}
	case SpanBarrier:
		return KindBarrier, true
	case SpanIdle:
		return KindIdle, true
	}
	return 0, false
}

// TimelineOptions control WriteTimeline. Zero values take the defaults.
type TimelineOptions struct {
	// Format is "png" or "svg".
	Format string
	// MaxRows caps the simdgroup rows drawn (default DefaultTimelineMaxRows).
	// Rows go in order of core, slot and simdgroup, whole slots first: the
	// slots that do not fit are left out and the picture says how many rows.
	MaxRows int
	// Width is the picture's width (default DefaultTimelineWidth inches); the
	// height follows from the rows.
	Width vg.Length
	// Columns is the time resolution: spans shorter than the window divided
	// by Columns are drawn as per-column shares (default: one column per
	// point of the plot area, about 1.3 pixels).
	Columns int
}

// TimelineStats says what WriteTimeline drew.
type TimelineStats struct {
	// Rows are the simdgroup rows drawn, OmittedRows those left out by
	// MaxRows.
	Rows, OmittedRows int
	// Threadgroups are the threadgroup spans drawn (in the drawn slots).
	Threadgroups int
	// Rects counts the rectangles drawn for simdgroup rows, Binned how many
	// of them are column shares.
	Rects, Binned int
	// Time is the simdgroup time drawn per kind, in µs summed over the rows;
	// BySG the same per simdgroup index (BySG[2] sums every "sg2" row).
	Time [NumTimelineKinds]float64
	BySG [][NumTimelineKinds]float64
	// Bytes is the size of the file written.
	Bytes int64
}

// Shares returns t as fractions of its sum (zeros when it is empty).
func Shares(t [NumTimelineKinds]float64) [NumTimelineKinds]float64 {
	var sum float64
	for _, v := range t {
		sum += v
	}
	if sum > 0 {
		for i := range t {
			t[i] /= sum
		}
	}
	return t
}

// Layout, in row units (a simdgroup row is 1) and points.
const (
	laneUnits    = 0.8  // a slot's threadgroup lane
	slotGapUnits = 0.25 // between slots of a core
	coreGapUnits = 0.9  // between cores
	rowPoints    = 9    // points per row unit
	rowInset     = 0.07 // blank above and below a simdgroup row's bars, in units
)

type slotKey struct{ core, slot int }

// row is one simdgroup track of the picture.
type row struct {
	core, slot, sg int
	top            float64 // layout units from the top
}

// lane is one slot's threadgroup lane.
type lane struct {
	slotKey
	top, bottom float64 // lane, then the slot's rows down to bottom
}

// WriteTimeline draws a timeline as a PNG or SVG picture (see the comment at
// the top of this file): simdgroup rows grouped by core and threadgroup slot,
// coloured spans per phase, barrier wait and idle, threadgroup lanes and
// boundaries, a legend with each kind's share of the drawn simdgroup time,
// and a time axis in µs from the dispatch start.
func WriteTimeline(w io.Writer, tl *Timeline, opt TimelineOptions) (TimelineStats, error) {
	var st TimelineStats
	format := strings.ToLower(opt.Format)
	if format != "png" && format != "svg" {
		return st, fmt.Errorf("timeline picture: format %q: want png or svg", opt.Format)
	}
	if opt.MaxRows == 0 {
		opt.MaxRows = DefaultTimelineMaxRows
	}
	if opt.MaxRows < 1 || opt.MaxRows > MaxTimelineRows {
		return st, fmt.Errorf("timeline picture: max rows = %d: must be in [1, %d]", opt.MaxRows, MaxTimelineRows)
	}
	if opt.Width == 0 {
		opt.Width = DefaultTimelineWidth * vg.Inch
	}
	if opt.Width < 3*vg.Inch || opt.Width > 100*vg.Inch {
		return st, fmt.Errorf("timeline picture: width %.1f in: must be in [3, 100] inches", opt.Width/vg.Inch)
	}
	if opt.Columns < 0 {
		return st, fmt.Errorf("timeline picture: columns = %d: must be >= 0", opt.Columns)
	}
	if tl == nil || tl.ClockMHz <= 0 || tl.End <= tl.Start {
		return st, errors.New("timeline picture: empty timeline (no window)")
	}

	// the tracks: (core, slot) groups with their simdgroups
	sgs := map[slotKey][]int{}
	for _, sp := range tl.Spans {
		k := slotKey{sp.Core, sp.Slot}
		if sp.SG < 0 {
			if _, ok := sgs[k]; !ok {
				sgs[k] = nil
			}
			continue
		}
		if !slices.Contains(sgs[k], sp.SG) {
			sgs[k] = append(sgs[k], sp.SG)
		}
	}
	keys := make([]slotKey, 0, len(sgs))
	total := 0
	for k, l := range sgs {
		slices.Sort(l)
		keys = append(keys, k)
		total += len(l)
	}
	if total == 0 {
		return st, errors.New("timeline picture: the timeline holds no simdgroup spans (nothing ran in the window on the traced cores)")
	}
	slices.SortFunc(keys, func(a, b slotKey) int { return cmp.Or(cmp.Compare(a.core, b.core), cmp.Compare(a.slot, b.slot)) })

	// layout, whole slots while they fit
	var rows []row
	var lanes []lane
	rowOf := map[[3]int]int{}
	y, lastCore := 0.0, -1
	for _, k := range keys {
		l := sgs[k]
		if len(l) == 0 {
			continue
		}
		if len(rows)+len(l) > opt.MaxRows {
			if len(rows) > 0 {
				break
			}
			l = l[:opt.MaxRows] // one slot alone is too many: its first rows
		}
		if lastCore >= 0 {
			if k.core != lastCore {
				y += coreGapUnits
			} else {
				y += slotGapUnits
			}
		}
		lastCore = k.core
		ln := lane{slotKey: k, top: y}
		y += laneUnits
		for _, sg := range l {
			rowOf[[3]int{k.core, k.slot, sg}] = len(rows)
			rows = append(rows, row{core: k.core, slot: k.slot, sg: sg, top: y})
			y++
		}
		ln.bottom = y
		lanes = append(lanes, ln)
	}
	height := y
	st.Rows, st.OmittedRows = len(rows), total-len(rows)
	maxSG := 0
	for _, r := range rows {
		maxSG = max(maxSG, r.sg)
	}
	st.BySG = make([][NumTimelineKinds]float64, maxSG+1)

	// the time axis: the window, or less when the run ended inside it
	x0, x1 := tl.Start, tl.End
	if tl.Complete && tl.SimulatedCycles > x0 && tl.SimulatedCycles < x1 {
		x1 = tl.SimulatedCycles
	}
	if tl.Truncated && tl.TruncatedAt > x0 && tl.TruncatedAt < x1 {
		x1 = tl.TruncatedAt
	}
	us := func(c int64) float64 { return float64(c) / tl.ClockMHz }

	// the plot area's width decides the columns
	p := plot.New()
	p.Y.Tick.Label.Font.Size = vg.Points(7)
	tick := p.Y.Tick.Label
	p.X.Min, p.X.Max = us(x0), us(x1)
	p.Y.Min, p.Y.Max = 0, height
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Label.Text = "µs from the dispatch start"
	p.X.Tick.Marker = timeTicks{}
	p.Y.Tick.Length = vg.Points(2)
	var yt []plot.Tick
	for _, ln := range lanes {
		yt = append(yt, plot.Tick{Value: height - ln.top - laneUnits/2, Label: fmt.Sprintf("c%d s%d TG", ln.core, ln.slot)})
	}
	for _, r := range rows {
		yt = append(yt, plot.Tick{Value: height - r.top - 0.5, Label: fmt.Sprintf("c%d s%d sg%d", r.core, r.slot, r.sg)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 225}

	g := &gantt{tl: tl, rows: rows, lanes: lanes, height: height, x0: x0, x1: x1, us: us, st: &st, label: tick}
	for _, sp := range tl.Spans {
		if sp.SG < 0 {
			continue
		}
		if _, ok := rowOf[[3]int{sp.Core, sp.Slot, sp.SG}]; !ok {
			continue
		}
		if k, ok := spanKind(sp); ok {
			d := us(min(sp.End, x1)) - us(max(sp.Start, x0))
			if d > 0 {
				st.Time[k] += d
				st.BySG[sp.SG][k] += d
			}
		}
	}
	g.rowOf = rowOf
	p.Add(grid, g)

	// the picture: header (title, subtitle, legend) above the plot
	title := p.Title.TextStyle
	title.Font.Size = vg.Points(11)
	title.XAlign = draw.XLeft
	sub := title
	sub.Font.Size = vg.Points(8.5)
	legendText := sub
	legendText.YAlign = draw.YCenter
	header := vg.Points(62)
	xAxis := vg.Points(42)
	h := header + xAxis + vg.Points(height*rowPoints) + vg.Points(8)
	var cv vg.CanvasWriterTo
	if format == "png" {
		// whole pixels, and rectangles snapped to them: crisp edges between
		// spans, and a PNG a fraction of the size of an antialiased one
		g.px = vg.Inch / vg.Length(vgimg.DefaultDPI)
		h = vg.Length(math.Ceil(float64(h/g.px))) * g.px
		opt.Width = vg.Length(math.Round(float64(opt.Width/g.px))) * g.px
		cv = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(opt.Width, h), vgimg.UseDPI(vgimg.DefaultDPI))}
	} else {
		cv = vgsvg.New(opt.Width, h)
	}
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(8)
	body := draw.Crop(dc, pad, -2*pad, pad/2, -header)
	dataC := p.DataCanvas(body)
	g.columns = opt.Columns
	if g.columns == 0 {
		g.columns = max(1, int(math.Round(float64(dataC.Max.X-dataC.Min.X))))
	}

	top := dc.Max.Y - pad
	dc.FillText(title, vg.Point{X: pad, Y: top}, fmt.Sprintf("%s on %s: %s", tl.Kernel, tl.Chip, problemShort(tl.Problem)))
	top -= vg.Points(16)
	coresTxt := make([]string, len(tl.Cores))
	for i, c := range tl.Cores {
		coresTxt[i] = fmt.Sprint(c)
	}
	subTxt := fmt.Sprintf("window %g-%g µs, seed %d, cores %s: %d simdgroup rows", us(tl.Start), us(tl.End), tl.Seed, strings.Join(coresTxt, ","), st.Rows)
	if st.OmittedRows > 0 {
		subTxt += fmt.Sprintf(" (%d more not drawn)", st.OmittedRows)
	}
	switch {
	case tl.Truncated:
		subTxt += fmt.Sprintf("; event cap hit at %.1f µs", us(tl.TruncatedAt))
	case tl.Complete && x1 < tl.End:
		subTxt += fmt.Sprintf("; the dispatch ended at %.1f µs", us(x1))
	}
	subTxt += fmt.Sprintf("; spans < %.3g µs drawn as column shares; legend: share of the simdgroup time", us(x1-x0)/float64(g.columns))
	dc.FillText(sub, vg.Point{X: pad, Y: top}, subTxt)
	top -= vg.Points(22)

	shares := Shares(st.Time)
	x := pad
	sw := vg.Points(10)
	for k := TimelineKind(0); k < NumTimelineKinds; k++ {
		fillRect(&dc, kindColors[k], x, top-sw/2, x+sw, top+sw/2)
		txt := fmt.Sprintf("%s %s", k, pct(shares[k]))
		dc.FillText(legendText, vg.Point{X: x + sw + vg.Points(3), Y: top}, txt)
		x += sw + vg.Points(3) + legendText.Width(txt) + vg.Points(12)
	}
	fillRect(&dc, tgShades[0], x, top-sw/4, x+2*sw, top+sw/4)
	fillRect(&dc, tgShades[1], x+2*sw, top-sw/4, x+4*sw, top+sw/4)
	txt := "threadgroups (lane above each slot; line at a start)"
	dc.FillText(legendText, vg.Point{X: x + 4*sw + vg.Points(3), Y: top}, txt)

	p.Draw(body)
	n, err := cv.WriteTo(w)
	st.Bytes = n
	return st, err
}

// problemShort keeps the test-backend-ops vars that tell problems apart.
func problemShort(s string) string {
	var keep []string
	for _, f := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "type_a", "n_mats", "n_used", "m", "n", "k":
			keep = append(keep, k+"="+v)
		}
	}
	if len(keep) == 0 {
		return s
	}
	return strings.Join(keep, " ")
}

func pct(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.01:
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func fillRect(c *draw.Canvas, clr color.Color, x0, y0, x1, y1 vg.Length) {
	c.FillPolygon(clr, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}

// gantt is the plotter of the rows and lanes.
type gantt struct {
	tl      *Timeline
	rows    []row
	lanes   []lane
	rowOf   map[[3]int]int
	height  float64
	x0, x1  int64
	us      func(int64) float64
	columns int
	st      *TimelineStats
	label   draw.TextStyle
	px      vg.Length // PNG pixel: rectangles are snapped to it (0: not)
}

// rect fills a rectangle, its edges snapped to whole pixels for a PNG.
func (g *gantt) rect(c *draw.Canvas, clr color.Color, x0, y0, x1, y1 vg.Length) {
	if g.px > 0 {
		snap := func(v vg.Length) vg.Length { return vg.Length(math.Round(float64(v/g.px))) * g.px }
		x0, y0, x1, y1 = snap(x0), snap(y0), snap(x1), snap(y1)
		if x1 <= x0 {
			x1 = x0 + g.px
		}
	}
	fillRect(c, clr, x0, y0, x1, y1)
}

// Plot implements plot.Plotter.
func (g *gantt) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x := func(cyc int64) vg.Length { return trX(g.us(cyc)) }
	yTop := func(units float64) vg.Length { return trY(g.height - units) }

	// lanes: threadgroup spans, boundaries through the slot's rows
	laneOf := map[slotKey]int{}
	for i, ln := range g.lanes {
		laneOf[ln.slotKey] = i
	}
	label := g.label
	label.XAlign, label.YAlign = draw.XLeft, draw.YCenter
	type tgMark struct {
		lane int
		at   int64
	}
	var marks []tgMark
	type tgSpan struct {
		lane int
		sp   Span
	}
	var tgs []tgSpan
	for _, sp := range g.tl.Spans {
		if sp.Kind != SpanThreadgroup {
			continue
		}
		if li, ok := laneOf[slotKey{sp.Core, sp.Slot}]; ok {
			tgs = append(tgs, tgSpan{li, sp})
		}
	}
	slices.SortStableFunc(tgs, func(a, b tgSpan) int { return cmp.Or(cmp.Compare(a.lane, b.lane), cmp.Compare(a.sp.Start, b.sp.Start)) })
	shade := 0
	for i, t := range tgs {
		sp := t.sp
		if i == 0 || tgs[i-1].lane != t.lane {
			shade = 0
		}
		g.st.Threadgroups++
		ln := g.lanes[t.lane]
		tg, _ := g.tl.TG(sp.TG)
		a, b := x(max(sp.Start, g.x0)), x(min(sp.End, g.x1))
		if b <= a {
			continue
		}
		lo, hi := yTop(ln.top+laneUnits-0.08), yTop(ln.top+0.08)
		if tg.Tokens == 0 {
			g.rect(&c, exitColor, a, lo, max(b, a+vg.Points(0.6)), hi)
			continue
		}
		g.rect(&c, tgShades[shade%2], a, lo, b, hi)
		shade++
		if sp.Start >= g.x0 {
			marks = append(marks, tgMark{t.lane, sp.Start})
		}
		txt := fmt.Sprintf("e%d y%d x%d: %d tok", tg.Z, tg.Y, tg.X, tg.Tokens)
		if tg.HalfTile {
			txt += ", half"
		}
		if b-a > label.Width(txt)+vg.Points(4) {
			c.FillText(label, vg.Point{X: a + vg.Points(2), Y: (lo + hi) / 2}, txt)
		}
	}

	// simdgroup rows: long spans exactly, short ones as column shares
	width := g.x1 - g.x0
	colOf := func(t int64) int {
		return min(g.columns-1, int(float64(t-g.x0)*float64(g.columns)/float64(width)))
	}
	colStart := func(i int) int64 { return g.x0 + int64(math.Round(float64(i)*float64(width)/float64(g.columns))) }
	minLen := float64(width) / float64(g.columns)
	bins := make([]map[int]*[NumTimelineKinds]float64, len(g.rows))
	type exact struct {
		row  int
		k    TimelineKind
		a, b int64
	}
	var exacts []exact
	for _, sp := range g.tl.Spans {
		if sp.SG < 0 {
			continue
		}
		ri, ok := g.rowOf[[3]int{sp.Core, sp.Slot, sp.SG}]
		if !ok {
			continue
		}
		k, ok := spanKind(sp)
		if !ok {
			continue
		}
		a, b := max(sp.Start, g.x0), min(sp.End, g.x1)
		if b <= a {
			continue
		}
		if float64(b-a) >= minLen {
			exacts = append(exacts, exact{ri, k, a, b})
			continue
		}
		if bins[ri] == nil {
			bins[ri] = map[int]*[NumTimelineKinds]float64{}
		}
		for col := colOf(a); col <= colOf(b-1); col++ {
			lo, hi := max(a, colStart(col)), min(b, colStart(col+1))
			if hi <= lo {
				continue
			}
			t := bins[ri][col]
			if t == nil {
				t = new([NumTimelineKinds]float64)
				bins[ri][col] = t
			}
			t[k] += float64(hi - lo)
		}
	}
	for ri, m := range bins {
		r := g.rows[ri]
		lo, hi := yTop(r.top+1-rowInset), yTop(r.top+rowInset)
		for _, col := range slices.Sorted(maps.Keys(m)) {
			t := m[col]
			var sum float64
			for _, v := range t {
				sum += v
			}
			a, b := x(colStart(col)), x(colStart(col+1))
			y := lo
			for k := TimelineKind(0); k < NumTimelineKinds; k++ {
				if t[k] == 0 {
					continue
				}
				y1 := y + (hi-lo)*vg.Length(t[k]/sum)
				g.rect(&c, kindColors[k], a, y, b, y1)
				g.st.Rects++
				g.st.Binned++
				y = y1
			}
		}
	}
	for _, e := range exacts {
		r := g.rows[e.row]
		g.rect(&c, kindColors[e.k], x(e.a), yTop(r.top+1-rowInset), x(e.b), yTop(r.top+rowInset))
		g.st.Rects++
	}

	// threadgroup starts through their slot's rows, on top
	ls := draw.LineStyle{Color: tgLineColor, Width: vg.Points(0.6)}
	for _, m := range marks {
		ln := g.lanes[m.lane]
		xx := x(m.at)
		c.StrokeLine2(ls, xx, yTop(ln.top), xx, yTop(ln.bottom))
	}
	// slot and core separators
	sep := draw.LineStyle{Color: color.Gray{Y: 200}, Width: vg.Points(0.4)}
	for i, ln := range g.lanes {
		if i > 0 && g.lanes[i-1].core != ln.core {
			mid := (g.lanes[i-1].bottom + ln.top) / 2
			c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(0.8)}, c.Min.X, yTop(mid), c.Max.X, yTop(mid))
		} else if i > 0 {
			mid := (g.lanes[i-1].bottom + ln.top) / 2
			c.StrokeLine2(sep, c.Min.X, yTop(mid), c.Max.X, yTop(mid))
		}
	}
}

// timeTicks labels about ten round times.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(span/10)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(m*step) <= 12 {
			step *= m
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if m := v + step/2; m < hi {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	return ts
}
