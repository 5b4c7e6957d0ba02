package trace

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

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

// Override sets the report's threads, registers and threadgroup memory to
// the what-if values given (nil: not given, the shape's stays), each checked
// against the chip's limits; errors name the flags that give them
// (--threads, --regs, --tg-mem).
func (r *OccupancyReport) Override(threads, regs, tgMem *int) error {
	chip := r.Chip
	for _, o := range []struct {
		flag    string
		v       *int
		lo, hi  int
		dst     *int
		context string
	}{
		{"--threads", threads, 1, int(chip.MaxThreadsPerTG.Value), &r.Threads, " (max threads per threadgroup on " + chip.Name + ")"},
		{"--regs", regs, 1, chips.MaxRegsPerThread, &r.Regs, ""},
		{"--tg-mem", tgMem, 0, int(chip.TGMemoryPerTG.Value), &r.TGMem, " (threadgroup memory per threadgroup on " + chip.Name + ")"},
	} {
		if o.v == nil {
			continue
		}
		if *o.v < o.lo || *o.v > o.hi {
			return fmt.Errorf("%s = %d: must be in [%d, %d]%s", o.flag, *o.v, o.lo, o.hi, o.context)
		}
		*o.dst, r.WhatIf = *o.v, "--threads/--regs/--tg-mem"
	}
	if regs != nil {
		r.RegsFrom = "--regs"
	}
	return nil
}
