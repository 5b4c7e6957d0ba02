package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

const occupancySummary = `How many threadgroups and simdgroups of a kernel stay resident on one core of a chip, which
resource limits them, and a table over register counts (like CUDA's occupancy calculator).

The kernel's threads, registers per thread and threadgroup memory come from a variant's programs
(--variant, for the operand types --type and --type-b on --path); --threads, --regs and --tg-mem
override them for what-if questions. The register rule: resident threads = register file / (4 B x
registers), rounded down to the chip's thread granule. Exit code 1 when the threadgroup cannot launch.`

func runOccupancy(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("occupancy", occupancySummary, stderr)
	var kf kernelFlags
	var cf chipFlags
	kf.register(fs, "")
	cf.register(fs, "M1 Pro 16-core GPU")
	typeA := fs.String("type", "q4_0", "weight type, for the variant's registers")
	typeB := fs.String("type-b", "f32", "activation type (f32, f16), for the variant's registers")
	threads := fs.Int("threads", 0, "threads per threadgroup (default: the variant's)")
	regs := fs.Int("regs", 0, "registers per thread (default: the variant's)")
	tgMem := fs.Int("tg-mem", 0, "threadgroup memory in bytes (default: the variant's)")
	table := fs.String("table", "16:128:4", "register counts of the table, MIN:MAX:STEP")
	plotFile := fs.String("plot", "", "draw simdgroups per core against registers per thread into this .png or .svg file")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "occupancy", fmt.Errorf("unexpected arguments %q (flags only)", fs.Args()))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	chip, err := cf.chip()
	if err != nil {
		return fail(stderr, "occupancy", err)
	}
	k, err := kf.kernel(chip)
	if err != nil {
		return fail(stderr, "occupancy", err)
	}
	// the variant's programs for the operand types; only the types matter, and
	// k must hold whole blocks and k-steps
	pf := problemFlags{shapeFlags: shapeFlags{experts: 8, used: 2, m: k.NR0, k: 256 * k.NK, typeA: *typeA, typeB: *typeB}, n: k.NR1}
	p, err := pf.problem()
	if err != nil {
		return fail(stderr, "occupancy", err)
	}
	shape, err := tile.KernelShape(p, k)
	if err != nil {
		return fail(stderr, "occupancy", err)
	}
	maxTG := int(chip.MaxThreadsPerTG.Value)
	nThreads, nRegs, nMem := shape.Threads, shape.Registers.Total, shape.TGMemoryBytes
	if set["threads"] {
		if *threads < 1 || *threads > maxTG {
			return fail(stderr, "occupancy", fmt.Errorf("--threads = %d: must be in [1, %d] (max threads per threadgroup on %s)", *threads, maxTG, chip.Name))
		}
		nThreads = *threads
	}
	if set["regs"] {
		if *regs < 1 || *regs > sim.MaxRegsPerThread {
			return fail(stderr, "occupancy", fmt.Errorf("--regs = %d: must be in [1, %d]", *regs, sim.MaxRegsPerThread))
		}
		nRegs = *regs
	}
	if set["tg-mem"] {
		if lim := int(chip.TGMemoryPerTG.Value); *tgMem < 0 || *tgMem > lim {
			return fail(stderr, "occupancy", fmt.Errorf("--tg-mem = %d: must be in [0, %d] (threadgroup memory per threadgroup on %s)", *tgMem, lim, chip.Name))
		}
		nMem = *tgMem
	}
	lo, hi, step, err := parseRegTable(*table)
	if err != nil {
		return fail(stderr, "occupancy", err)
	}
	ext := strings.ToLower(filepath.Ext(*plotFile))
	if *plotFile != "" && ext != ".png" && ext != ".svg" {
		return fail(stderr, "occupancy", fmt.Errorf("--plot %q: want a .png or .svg file", *plotFile))
	}
	if *plotFile != "" {
		if err := checkOutFile("--plot", *plotFile, ""); err != nil {
			return fail(stderr, "occupancy", err)
		}
	}

	maxSG := int(chip.MaxThreadsPerCore.Value) / 32
	fmt.Fprintf(stdout, "occupancy on %s: register file %.0f KiB, %d threads, %d threadgroups, %.0f KiB threadgroup memory per core (thread granule %d)\n",
		chip.Name, chip.RegisterFile.Value/1024, int(chip.MaxThreadsPerCore.Value), int(chip.MaxTGsPerCore.Value), chip.TGMemoryPerCore.Value/1024, int(chip.ThreadGranule.Value))
	r := shape.Registers
	fmt.Fprintf(stdout, "  kernel     %s for %s x %s: %d threads, %d registers per thread (%s), %d B threadgroup memory\n",
		k, p.TypeA, *typeB, shape.Threads, r.Total, trace.RegisterSplit(r), shape.TGMemoryBytes)
	if set["threads"] || set["regs"] || set["tg-mem"] {
		fmt.Fprintf(stdout, "  what-if    %d threads, %d registers per thread, %d B threadgroup memory (--threads/--regs/--tg-mem)\n", nThreads, nRegs, nMem)
	}
	code := exitOK
	o, err := sim.OccupancyFor(chip, nThreads, nRegs, nMem)
	if err != nil {
		fmt.Fprintf(stdout, "  resident   none: %v\n", err)
		code = exitFailed
	} else {
		fmt.Fprintf(stdout, "  resident   %d threadgroups = %d simdgroups per core (%.0f%% of %d), limited by %s\n",
			o.TGsPerCore, o.SGsPerCore, 100*float64(o.SGsPerCore)/float64(maxSG), maxSG, o.Limiter)
		fmt.Fprintf(stdout, "  each alone registers %d, threadgroup memory %s, threads %d, threadgroup cap %d threadgroups\n",
			o.ByRegisters, unbounded(o.ByTGMemory), o.ByThreads, o.ByTGCap)
	}

	fmt.Fprintf(stdout, "\nby registers per thread (%d threads, %d B threadgroup memory):\n", nThreads, nMem)
	var tb bytes.Buffer
	tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "registers\tthreads/TG\tTGs/core\tSGs/core\toccupancy\tlimiter\t")
	rows := regRows(lo, hi, step, nRegs)
	for _, n := range rows {
		mark := ""
		if n == nRegs {
			mark = "<- this kernel"
			if set["regs"] {
				mark = "<- --regs"
			}
		}
		o, err := sim.OccupancyFor(chip, nThreads, n, nMem)
		if err != nil {
			fmt.Fprintf(tw, "%d\t%d\t0\t0\t0%%\tcannot launch\t%s\n", n, nThreads, mark)
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.0f%%\t%s\t%s\n", n, nThreads, o.TGsPerCore, o.SGsPerCore, 100*float64(o.SGsPerCore)/float64(maxSG), o.Limiter, mark)
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, "occupancy", err)
	}
	for _, l := range strings.SplitAfter(tb.String(), "\n") {
		fmt.Fprint(stdout, strings.TrimRight(l, " \n"), strings.Repeat("\n", strings.Count(l, "\n")))
	}
	if *plotFile != "" {
		if err := writePlot(*plotFile, func(w io.Writer, format string) error {
			return trace.WriteOccupancyPlot(w, format, chip, k.String(), nThreads, nRegs, nMem, lo, hi)
		}); err != nil {
			fmt.Fprintf(stderr, "simrun occupancy: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", *plotFile)
	}
	return code
}

func unbounded(n int) string {
	if n > 1<<30 {
		return "unbounded"
	}
	return strconv.Itoa(n)
}

// parseRegTable reads --table MIN:MAX:STEP.
func parseRegTable(s string) (lo, hi, step int, err error) {
	f := strings.Split(s, ":")
	bad := fmt.Errorf("--table %q: want MIN:MAX:STEP register counts with 1 <= MIN <= MAX <= 256 and STEP >= 1, e.g. 16:128:4", s)
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
