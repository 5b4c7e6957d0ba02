package trace

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/tile"
)

// OccupancyReport is a kernel's occupancy on a chip: its shape, the
// threads, registers and threadgroup memory to count with (the shape's, or a
// what-if's), and the range of a table over registers per thread.
type OccupancyReport struct {
	Chip                 *chips.Chip
	Kernel               string // "variant/path"
	TypeA, TypeB         string // the operand types the shape is for
	Shape                tile.Shape
	Threads, Regs, TGMem int
	// WhatIf says how Threads, Regs or TGMem were given when any is not the
	// shape's ("": all are the shape's); RegsFrom says where Regs came from
	// when not from the shape (the table marks its row with it).
	WhatIf, RegsFrom string
	Lo, Hi, Step     int // the table's register counts, MIN:MAX:STEP
}

// WriteOccupancy prints the chip's limits, the kernel, the resident
// threadgroups and simdgroups per core and what limits them, and the table
// over registers per thread (the report's own count inserted and marked). It
// reports whether the threadgroup launches at all.
func WriteOccupancy(w io.Writer, r OccupancyReport) (bool, error) {
	chip, shape := r.Chip, r.Shape
	nThreads, nRegs, nMem := r.Threads, r.Regs, r.TGMem
	maxSG := int(chip.MaxThreadsPerCore.Value) / 32
	fmt.Fprintf(w, "occupancy on %s: register file %.0f KiB, %d threads, %d threadgroups, %.0f KiB threadgroup memory per core (thread granule %d)\n",
		chip.Name, chip.RegisterFile.Value/1024, int(chip.MaxThreadsPerCore.Value), int(chip.MaxTGsPerCore.Value), chip.TGMemoryPerCore.Value/1024, int(chip.ThreadGranule.Value))
	fmt.Fprintf(w, "  kernel     %s for %s x %s: %d threads, %d registers per thread (%s), %d B threadgroup memory\n",
		r.Kernel, r.TypeA, r.TypeB, shape.Threads, shape.Registers.Total, RegisterSplit(shape.Registers), shape.TGMemoryBytes)
	if r.WhatIf != "" {
		fmt.Fprintf(w, "  what-if    %d threads, %d registers per thread, %d B threadgroup memory (%s)\n", nThreads, nRegs, nMem, r.WhatIf)
	}
	o, err := chips.OccupancyFor(chip, nThreads, nRegs, nMem)
	launches := err == nil
	if err != nil {
		fmt.Fprintf(w, "  resident   none: %v\n", err)
	} else {
		fmt.Fprintf(w, "  resident   %d threadgroups = %d simdgroups per core (%.0f%% of %d), limited by %s\n",
			o.TGsPerCore, o.SGsPerCore, 100*float64(o.SGsPerCore)/float64(maxSG), maxSG, o.Limiter)
		fmt.Fprintf(w, "  each alone registers %d, threadgroup memory %s, threads %d, threadgroup cap %d threadgroups\n",
			o.ByRegisters, unbounded(o.ByTGMemory), o.ByThreads, o.ByTGCap)
	}

	fmt.Fprintf(w, "\nby registers per thread (%d threads, %d B threadgroup memory):\n", nThreads, nMem)
	var tb bytes.Buffer
	tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "registers\tthreads/TG\tTGs/core\tSGs/core\toccupancy\tlimiter\t")
	rows := regRows(r.Lo, r.Hi, r.Step, nRegs)
	for _, n := range rows {
		mark := ""
		if n == nRegs {
			mark = "<- this kernel"
			if r.RegsFrom != "" {
				mark = "<- " + r.RegsFrom
			}
		}
		o, err := chips.OccupancyFor(chip, nThreads, n, nMem)
		if err != nil {
			fmt.Fprintf(tw, "%d\t%d\t0\t0\t0%%\tcannot launch\t%s\n", n, nThreads, mark)
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.0f%%\t%s\t%s\n", n, nThreads, o.TGsPerCore, o.SGsPerCore, 100*float64(o.SGsPerCore)/float64(maxSG), o.Limiter, mark)
	}
	if err := tw.Flush(); err != nil {
		return launches, err
	}
	for _, l := range strings.SplitAfter(tb.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(l, " \n"), strings.Repeat("\n", strings.Count(l, "\n")))
	}
	return launches, nil
}

// ParseRegisterRange reads the register counts of an occupancy table,
// MIN:MAX:STEP with 1 <= MIN <= MAX <= 256 and STEP >= 1; label names the
// input in errors.
func ParseRegisterRange(label, s string) (lo, hi, step int, err error) {
	f := strings.Split(s, ":")
	bad := fmt.Errorf("%s %q: want MIN:MAX:STEP register counts with 1 <= MIN <= MAX <= 256 and STEP >= 1, e.g. 16:128:4", label, s)
	if len(f) != 3 {
		return 0, 0, 0, bad
	}
	var v [3]int
	for i := range f {
		if v[i], err = strconv.Atoi(strings.TrimSpace(f[i])); err != nil {
			return 0, 0, 0, bad
		}
	}
	lo, hi, step = v[0], v[1], v[2]
	if lo < 1 || hi < lo || hi > 256 || step < 1 {
		return 0, 0, 0, bad
	}
	return lo, hi, step, nil
}

func unbounded(n int) string {
	if n > 1<<30 {
		return "unbounded"
	}
	return strconv.Itoa(n)
}

// regRows returns the table's register counts with the kernel's own count
// inserted in order.
func regRows(lo, hi, step, own int) []int {
	var out []int
	for n := lo; n <= hi; n += step {
		out = append(out, n)
	}
	if i, found := slices.BinarySearch(out, own); !found {
		out = slices.Insert(out, i, own)
	}
	return out
}

// WriteOccupancyPlot draws in format (png or svg) the resident simdgroups per
// core of chip against registers per thread, lo to hi, for threadgroups of
// threads threads and tgMem bytes of threadgroup memory, marking the
// kernel's own count regs.
func WriteOccupancyPlot(w io.Writer, format string, chip *chips.Chip, kernel string, threads, regs, tgMem, lo, hi int) error {
	lo, hi = min(lo, regs), max(hi, regs)
	pts := make(plotter.XYs, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		sg := 0.0
		if o, err := chips.OccupancyFor(chip, threads, n, tgMem); err == nil {
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
	if o, err := chips.OccupancyFor(chip, threads, regs, tgMem); err == nil {
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
