package main

import (
	"fmt"
	"io"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
	"github.com/metalsim/metalsim/trace/plots"
)

const occupancyUsage = `How many threadgroups and simdgroups of a kernel stay resident on one core of a chip, which
resource limits them, and a table over register counts (like CUDA's occupancy calculator).

The kernel's threads, registers per thread and threadgroup memory come from its programs: the kernel
llama.cpp dispatches for --op at --n tokens (default: the variant's tile, so mul_mm_id or mul_mm), or
--kernel, with a variant's tile (--variant, on --path) for the mat-mat kernels, for the operand types
--type and --type-b; --threads, --regs and --tg-mem override them for what-if questions. The register
rule: resident threads = register file / (4 B x registers), rounded down to the chip's thread granule. Exit code 1 when the threadgroup cannot launch.`

func runOccupancy(c *call) func() int {
	nFlag := c.fs.Int("n", 0, "tokens, for the kernel llama.cpp dispatches (0: the variant's tile tokens, nr1)")
	sf := shapeFlags{bs: 1, nr: 1} // occupancy has no --bs and --nr: one matmul
	sf.registerTypes(c.fs, "weight type, for the variant's registers", "activation type (f32, f16), for the variant's registers")
	sf.registerOp(c.fs, "a dense matmul")
	threads := c.fs.Int("threads", 0, "threads per threadgroup (default: the variant's)")
	regs := c.fs.Int("regs", 0, "registers per thread (default: the variant's)")
	tgMem := c.fs.Int("tg-mem", 0, "threadgroup memory in bytes (default: the variant's)")
	table := c.fs.String("table", "16:128:4", "register counts of the table, MIN:MAX:STEP")
	plotFile := c.fs.String("plot", "", "draw simdgroups per core against registers per thread into this .png or .svg file")
	return func() int {
		set := flagsGiven(c.fs)
		chip, err := c.chip.chip()
		if err != nil {
			return c.fail(err)
		}
		sh, forced, err := sf.kernelShape()
		if err != nil {
			return c.fail(err)
		}
		k, err := c.kernel.kernel(chip)
		if err != nil {
			return c.fail(err)
		}
		// the kernel's programs for the operand types; only the types matter, and
		// k must hold whole blocks and k-steps
		n := *nFlag
		if n == 0 {
			n = k.NR1
		}
		sh.Experts, sh.Used = 8, 2
		w, err := sh.Workload(n, k.NR0, 256*k.NK)
		if err != nil {
			return c.fail(flagError(err))
		}
		pt, _ := c.kernel.point(chip, w, forced, sim.Options{}) // kernel checked the flags
		kern, k, err := pt.Kernels()
		if err != nil {
			return c.fail(err)
		}
		shape, err := pt.Shape()
		if err != nil {
			return c.fail(err)
		}
		lo, hi, step, err := trace.ParseRegisterRange("--table", *table)
		if err != nil {
			return c.fail(err)
		}
		if err := checkPlotFile(*plotFile); err != nil {
			return c.fail(err)
		}
		label := trace.RunLabel(kern, k)
		rep := trace.OccupancyReport{Chip: chip, Kernel: label, TypeA: sh.TypeA.String(), TypeB: sf.typeB, Shape: shape,
			Threads: shape.Threads, Regs: shape.Registers.Total, TGMem: shape.TGMemoryBytes, Lo: lo, Hi: hi, Step: step}
		given := func(name string, v *int) *int { // a what-if value, or nil
			if set[name] {
				return v
			}
			return nil
		}
		if err := rep.Override(given("threads", threads), given("regs", regs), given("tg-mem", tgMem)); err != nil {
			return c.fail(err)
		}
		code := exitOK
		launches, err := trace.WriteOccupancy(c.stdout, rep)
		if err != nil {
			return c.fail(err)
		}
		if !launches {
			code = exitFailed
		}
		if err := trace.WriteNotes(c.stdout, "", study.Notes(pt.Workload, kern, k)); err != nil {
			return c.fail(err)
		}
		if *plotFile != "" {
			if err := writePlot(*plotFile, func(w io.Writer, format string) error {
				return plots.WriteOccupancy(w, format, chip, label, rep.Threads, rep.Regs, rep.TGMem, lo, hi)
			}); err != nil {
				return c.fail(err)
			}
			fmt.Fprintf(c.stdout, "\nwrote %s\n", *plotFile)
		}
		return code
	}
}
