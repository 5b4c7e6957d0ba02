package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/metalsim/metalsim/chips"
)

// occupancyBound is one resource's limit on resident simdgroups, as a
// function of registers per thread.
type occupancyBound struct {
	name string // as Occupancy.Limiter names it
	sgs  func(o chips.Occupancy) int
}

// WriteOccupancy draws in format (png or svg) the resident simdgroups per
// core of chip against registers per thread, lo to hi, for threadgroups of
// threads threads and tgMem bytes of threadgroup memory: what each resource
// alone allows (registers, threadgroup memory, threads, the threadgroup
// cap), the resident count (the least of them), and the kernel's own count
// regs, marked with the resource that limits it.
func WriteOccupancy(w io.Writer, format string, chip *chips.Chip, kernel string, threads, regs, tgMem, lo, hi int) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	lo, hi = min(lo, regs), max(hi, regs)
	perTG := (threads + 31) / 32
	bounds := []occupancyBound{
		{chips.OccRegisters, func(o chips.Occupancy) int { return o.ByRegisters * perTG }},
		{chips.OccTGMemory, func(o chips.Occupancy) int { return o.ByTGMemory * perTG }},
		{chips.OccThreads, func(o chips.Occupancy) int { return o.ByThreads * perTG }},
		{chips.OccTGCap, func(o chips.Occupancy) int { return o.ByTGCap * perTG }},
	}
	resident := make(plotter.XYs, 0, hi-lo+1)
	byBound := make([]plotter.XYs, len(bounds))
	top := 0.0
	for n := lo; n <= hi; n++ {
		o, err := chips.OccupancyFor(chip, threads, n, tgMem)
		sg := 0.0
		if err == nil {
			sg = float64(o.SGsPerCore)
			for i, b := range bounds {
				if o.ByTGMemory > 1<<30 && b.name == chips.OccTGMemory {
					continue // no threadgroup memory: no bound
				}
				byBound[i] = append(byBound[i], plotter.XY{X: float64(n), Y: float64(b.sgs(o))})
			}
		}
		resident = append(resident, plotter.XY{X: float64(n), Y: sg})
		top = max(top, sg)
	}
	own, err := chips.OccupancyFor(chip, threads, regs, tgMem)
	title := fmt.Sprintf("%s: resident simdgroups per core\n%s, %d threads per threadgroup, %d B threadgroup memory", chip.Name, kernel, threads, tgMem)
	p := newPanel(title, "registers per thread", "simdgroups per core")
	ymax := 1.3*top + 2
	legend := newLegend()
	res, err2 := plotter.NewLine(resident)
	if err2 != nil {
		return err2
	}
	res.StepStyle, res.Width, res.Color = plotter.PostStep, vg.Points(4), color.Gray{Y: 150}
	legend.Add("resident: the least of the bounds", res)
	p.Add(res) // under the bounds: the bound it follows shows its colour on it
	legendHeading(&legend, "")
	legendHeading(&legend, "each resource alone allows:")
	for i, b := range bounds {
		xys := byBound[i]
		if len(xys) == 0 {
			legend.Add(b.name+": no bound", swatch(color.Transparent))
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.StepStyle, l.Width, l.Color, l.Dashes = plotter.PostStep, vg.Points(1.2), colour(i), dash(1)
		p.Add(l)
		lo, hi := xys[0].Y, xys[0].Y
		for _, xy := range xys {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
		name := fmt.Sprintf("%s: %s SGs", b.name, rangeText(lo, hi))
		if lo > ymax {
			name += " (above the plot)"
		}
		legend.Add(name, l)
	}
	if err == nil {
		mark, err := plotter.NewScatter(plotter.XYs{{X: float64(regs), Y: float64(own.SGsPerCore)}})
		if err != nil {
			return err
		}
		mark.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(5), Color: color.Black}
		p.Add(mark)
		label := fmt.Sprintf("%d registers: %d SGs (%d TGs), limited by %s", regs, own.SGsPerCore, own.TGsPerCore, own.Limiter)
		avoid := stepSamples(resident)
		for _, b := range byBound {
			avoid = append(avoid, stepSamples(b)...)
		}
		p.Add(newPointLabels(plotter.XYs{{X: float64(regs), Y: float64(own.SGsPerCore)}}, []string{label}, avoid))
		legendHeading(&legend, "")
		legend.Add(fmt.Sprintf("%s, limited by %s", kernel, own.Limiter), mark)
	} else {
		legendHeading(&legend, "")
		legendHeading(&legend, fmt.Sprintf("%s at %d registers cannot launch", kernel, regs))
	}
	p.Y.Min, p.Y.Max = 0, ymax
	p.X.Min, p.X.Max = float64(lo), float64(hi)
	p.X.Tick.Marker = intTicks{}
	p.Y.Tick.Marker = intTicks{}
	return render(w, format, 7*vg.Inch+legendWidth(&legend)+legendGap, 4.5*vg.Inch, [][]*plot.Plot{{p}}, &legend)
}

// stepSamples returns points along a post-step line (flat to the next x,
// then up or down to its y), a quarter unit apart, for labels to avoid.
func stepSamples(xys plotter.XYs) plotter.XYs {
	var out plotter.XYs
	for i, xy := range xys {
		out = append(out, xy)
		if i+1 == len(xys) {
			break
		}
		next := xys[i+1]
		for x := xy.X + 0.25; x < next.X; x += 0.25 {
			out = append(out, plotter.XY{X: x, Y: xy.Y})
		}
		lo, hi := min(xy.Y, next.Y), max(xy.Y, next.Y)
		for y := lo; y <= hi; y += 0.25 {
			out = append(out, plotter.XY{X: next.X, Y: y})
		}
	}
	return out
}

// rangeText renders the range of a bound's values: "24" or "12-28".
func rangeText(lo, hi float64) string {
	if lo == hi {
		return strconv.Itoa(int(lo))
	}
	return fmt.Sprintf("%d-%d", int(lo), int(hi))
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
