package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels names points beside them. Each label goes where it overlaps
// no label placed before it and no point, inside the data area: right of
// its point, else left, else above or below; failing those, moved up or
// down with a leader line to its point. Labels are placed in the order
// given, so the first (the worst points) get the best places.
type pointLabels struct {
	at     plotter.XYs // the named points
	texts  []string
	others plotter.XYs // every point of the panel: labels avoid them
	style  text.Style
}

// newPointLabels names the points at with texts, avoiding others.
func newPointLabels(at plotter.XYs, texts []string, others plotter.XYs) *pointLabels {
	st := plot.NewLegend().TextStyle // the plot's default font and handler
	st.Font.Size = vg.Points(8.5)
	st.Color = labelGrey
	return &pointLabels{at: at, texts: texts, others: others, style: st}
}

// labelGap is the space between a point and its label.
const labelGap = vg.Length(5)

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	r := vg.Points(4) // a marker's half size, and then some
	var taken []vg.Rectangle
	for _, o := range l.others {
		pt := vg.Point{X: trX(o.X), Y: trY(o.Y)}
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
	}
	leader := draw.LineStyle{Color: labelGrey, Width: vg.Points(0.4)}
	for i, s := range l.texts {
		pt := vg.Point{X: trX(l.at[i].X), Y: trY(l.at[i].Y)}
		size := l.style.Rectangle(s).Size()
		at := func(x, y vg.Length) vg.Rectangle {
			return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + size.X, Y: y + size.Y}}
		}
		right, left := pt.X+labelGap, pt.X-labelGap-size.X
		mid := pt.Y - size.Y/2
		cands := []vg.Rectangle{at(right, mid), at(left, mid), at(pt.X-size.X/2, pt.Y+labelGap), at(pt.X-size.X/2, pt.Y-labelGap-size.Y)}
		near := len(cands) // candidates from here on need a leader line
		for k := 1; k <= 12; k++ {
			dy := vg.Length(k) * (size.Y + vg.Points(2))
			cands = append(cands, at(right, mid+dy), at(right, mid-dy), at(left, mid+dy), at(left, mid-dy))
		}
		chosen := -1
		for j, cand := range cands {
			if inside(cand, c.Rectangle) && !overlapsAny(cand, taken) {
				chosen = j
				break
			}
		}
		if chosen < 0 {
			continue // no free place: the point stays unnamed rather than hidden under text
		}
		box := cands[chosen]
		taken = append(taken, box)
		c.FillText(l.style, box.Min, s)
		if chosen >= near {
			x := box.Min.X
			if x < pt.X {
				x = box.Max.X
			}
			c.StrokeLine2(leader, pt.X, pt.Y, x, box.Min.Y+size.Y/2)
		}
	}
}

// inside reports whether r lies within bounds.
func inside(r, bounds vg.Rectangle) bool {
	return r.Min.X >= bounds.Min.X && r.Min.Y >= bounds.Min.Y && r.Max.X <= bounds.Max.X && r.Max.Y <= bounds.Max.Y
}

// overlapsAny reports whether r overlaps any of rs.
func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}
