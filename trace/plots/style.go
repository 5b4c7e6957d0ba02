package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg
)

// seriesColours are the Okabe–Ito colours, told apart with every common
// colour-vision deficiency, in the order series take them (yellow last: it
// is faint on white).
var seriesColours = [...]color.RGBA{
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	{R: 0xB8, G: 0xA0, B: 0x00, A: 0xFF}, // dark yellow
}

// Colours of what is not a series: reference lines, bands, labels.
var (
	referenceGrey = color.Gray{Y: 110}                         // y = x, zero lines
	bandGrey      = color.RGBA{R: 226, G: 226, B: 226, A: 255} // the ±10 % band
	labelGrey     = color.RGBA{R: 51, G: 51, B: 51, A: 255}    // point labels
)

// colour is series i's colour.
func colour(i int) color.Color { return seriesColours[i%len(seriesColours)] }

// markers are the filled glyph shapes series or kinds take, in order; hollow
// gives each one's outline, for measured points beside predicted ones.
var markers = [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// marker is glyph shape i.
func marker(i int) draw.GlyphDrawer { return markers[i%len(markers)] }

// hollow is the outline of a filled marker (a stroked one is its own).
func hollow(g draw.GlyphDrawer) draw.GlyphDrawer {
	switch g.(type) {
	case draw.CircleGlyph:
		return draw.RingGlyph{}
	case draw.BoxGlyph:
		return draw.SquareGlyph{}
	case draw.PyramidGlyph:
		return draw.TriangleGlyph{}
	}
	return g
}

// dashes are the line styles series or kinds take after the solid one.
var dashes = [...][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}

// dash is line style i.
func dash(i int) []vg.Length { return dashes[i%len(dashes)] }

// legendGap is the space between the panels and the legend column.
const legendGap = vg.Length(12)

// newLegend is a legend for a column beside the panels: entries top-down,
// text after the icons.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(2)
	return l
}

// legendHeading adds a line of text without an icon, heading the entries
// that follow.
func legendHeading(l *plot.Legend, text string) { l.Add(text) }

// legendWidth is the width the legend's column needs.
func legendWidth(l *plot.Legend) vg.Length {
	if l == nil {
		return 0
	}
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X
}

// whiteCanvas makes a canvas of the given size and format (png or svg),
// filled white.
func whiteCanvas(width, height vg.Length, format string) (vg.CanvasWriterTo, draw.Canvas, error) {
	cv, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, draw.Canvas{}, err
	}
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	return cv, dc, nil
}

// drawPanels draws the panels (rows of plots, each row as long as the
// first; nil leaves a tile empty) aligned on area, padX apart.
func drawPanels(area draw.Canvas, panels [][]*plot.Plot, padX vg.Length) {
	tiles := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(10), PadX: padX, PadY: vg.Points(18)}
	canvases := plot.Align(panels, tiles, area)
	for i, row := range panels {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
}

// render draws the panels (rows of plots, each row as long as the first)
// with the legend in a column to their right, on a canvas of the given size,
// and writes it to w in format (png or svg).
func render(w io.Writer, format string, width, height vg.Length, panels [][]*plot.Plot, legend *plot.Legend) error {
	cv, dc, err := whiteCanvas(width, height, format)
	if err != nil {
		return err
	}
	area := dc
	if lw := legendWidth(legend); lw > 0 {
		area = draw.Crop(dc, 0, -(lw + legendGap + vg.Points(6)), 0, 0)
		col := draw.Crop(dc, width-lw-vg.Points(6), -vg.Points(6), 0, -vg.Points(24))
		legend.Draw(col)
	}
	drawPanels(area, panels, vg.Points(24))
	_, err = cv.WriteTo(w)
	return err
}

// checkFormat checks a picture format.
func checkFormat(format string) error {
	if format != "png" && format != "svg" {
		return fmt.Errorf("picture format %q: want png or svg", format)
	}
	return nil
}

// numberLabel renders a tick value short: plain up to 99999, else with an
// exponent ("2e5").
func numberLabel(v float64) string {
	if math.Abs(v) < 1e5 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // "2e+05"
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	return mant + "e" + strconv.Itoa(e)
}

// logTicks marks a log axis: 1, 2 and 5 times each power of ten labelled
// (only the powers when the axis spans more than three decades), the other
// whole multiples as minor ticks.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	wide := math.Log10(hi/lo) > 3
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !wide && (m == 2 || m == 5) {
				t.Label = numberLabel(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// linearTicks label a linear axis at a round step (niceStep, four to six
// labels), with a minor tick halfway between.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := niceStep(hi - lo)
	// a label's value to the step's decimals: 3 × 0.2 is 0.6, not 0.6000000000000001
	scale := math.Pow(10, max(0, 1-math.Floor(math.Log10(step))))
	round := func(v float64) float64 {
		if r := math.Round(v*scale) / scale; r != 0 {
			return r
		}
		return 0 // not -0
	}
	var ts []plot.Tick
	for i := math.Ceil(lo/step - 0.5); i*step <= hi+step/2; i++ {
		for j, v := range []float64{round(i * step), round((i + 0.5) * step)} {
			if v < lo-step*1e-9 || v > hi+step*1e-9 {
				continue
			}
			t := plot.Tick{Value: v}
			if j == 0 {
				t.Label = numberLabel(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// niceStep is the round step (1, 2 or 5 times a power of ten) that cuts a
// span into at most six parts.
func niceStep(span float64) float64 {
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*step) <= 6 {
			return m * step
		}
	}
	return 10 * step
}

// niceRange widens lo..hi to the enclosing multiples of its round step
// (niceStep), so that the axis ends on a tick past its extreme points; a
// flat range widens by one step.
func niceRange(lo, hi float64) (float64, float64) {
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(hi), 1)
	}
	step := niceStep(span)
	nlo, nhi := math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if nlo == nhi {
		nlo, nhi = nlo-step, nhi+step
	}
	return nlo, nhi
}

// logRange widens lo..hi (both > 0) by a factor at each end, so that the
// extreme points sit inside a log axis.
func logRange(lo, hi, factor float64) (float64, float64) {
	return lo / factor, hi * factor
}

// glyph is a marker style of one colour and shape at the pictures' size.
func glyph(c color.Color, shape draw.GlyphDrawer) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Shape: shape, Radius: vg.Points(3.5)}
}

// newPanel is a plot with a grid and the pictures' text sizes.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Add(lightGrid())
	return p
}

// swatch is a legend icon of a colour: a short thick line.
func swatch(c color.Color) *plotter.Line {
	l := &plotter.Line{}
	l.Color, l.Width = c, vg.Points(4)
	return l
}

// lightGrid is a grid of faint lines at the major ticks.
func lightGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 232}
	g.Horizontal.Color = color.Gray{Y: 232}
	return g
}

// renderWithBar draws a title over the panels (rows of plots; nil leaves a
// tile empty) with a colour bar in a column to their right.
func renderWithBar(w io.Writer, format string, width, height vg.Length, title string, panels [][]*plot.Plot, bar *plot.Plot) error {
	cv, dc, err := whiteCanvas(width, height, format)
	if err != nil {
		return err
	}
	st := plot.New().Title.TextStyle
	st.Font.Size = vg.Points(12)
	st.YAlign = draw.YTop
	th := st.Rectangle(title).Size().Y + vg.Points(10)
	dc.FillText(st, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(4)}, title)
	barWidth := vg.Inch
	area := draw.Crop(dc, 0, -barWidth, 0, -th)
	bar.Draw(draw.Crop(dc, width-barWidth+vg.Points(8), -vg.Points(8), vg.Points(36), -th-vg.Points(8)))
	drawPanels(area, panels, vg.Points(18))
	_, err = cv.WriteTo(w)
	return err
}
