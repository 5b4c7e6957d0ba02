package trace

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// WriteCounters prints a dispatch's counters as a two-column table.
func WriteCounters(w io.Writer, c tile.Counters) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name string, v any) { fmt.Fprintf(tw, "  %s\t%v\n", name, v) }
	row("threadgroups launched", c.Launched)
	row("threadgroups exited early", c.Exited)
	row("tiles computed", c.Active)
	row("half-tiles skipped", c.Skipped.HalfTiles)
	row("simdgroup MMAs (8x8x8) executed", c.Work.MMA8)
	row("simdgroup MMAs skipped", c.Skipped.MMA8)
	row("tensor MMAs (16x16x16) executed", c.Work.MMA16)
	row("tensor MMAs skipped", c.Skipped.MMA16)
	row("matmul2d calls", c.Work.Matmul2D)
	row("matmul2d calls skipped", c.Skipped.Matmul2D)
	row("fragment loads (8x8)", c.Work.FragLoads)
	row("threadgroup barriers", c.Work.Barriers)
	widths := slices.Sorted(maps.Keys(c.Work.CodebookLoads))
	if len(widths) == 0 {
		row("codebook loads", 0)
	}
	for _, wd := range widths {
		row(fmt.Sprintf("codebook loads, %d-byte", wd), c.Work.CodebookLoads[wd])
	}
	for s := isa.StreamMeta; s < isa.NumStreams; s++ {
		if s == isa.StreamCodebook {
			continue
		}
		row(fmt.Sprintf("device bytes, %s", s), c.Work.DeviceBytes[s])
	}
	row("threadgroup-memory bytes", c.Work.TGBytes)
	row("simdgroup instructions", c.Work.Instructions)
	return tw.Flush()
}

// RegisterSplit renders where a thread's registers go: base, accumulators,
// cooperative tensors and the transient peak split by what it holds.
func RegisterSplit(r isa.Registers) string {
	var parts []string
	for _, p := range []struct {
		name string
		n    int
	}{{"dequant", r.Dequant}, {"activations", r.Activations}, {"A/B fragments", r.Fragments}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p.name, p.n))
		}
	}
	split := ""
	if len(parts) > 0 {
		split = " at its peak: " + strings.Join(parts, " + ")
	}
	return fmt.Sprintf("base %d, accumulators %d, cooperative %d, transient %d%s",
		r.Base, r.Accumulators, r.Cooperative, r.Transient, split)
}

// WriteResult prints a timing prediction: time split, occupancy, utilisation,
// limiter and counters (what the simulation cost, which changes from run to
// run, is WriteRates').
//
// A MUL_MAT_ID names its problem and, for mul_mm_id, the variant and path; a
// MUL_MAT (r.Dense) its problem and kernel, and for mul_mm the variant and
// path. Only mul_mm_id has map0 in its time.
func WriteResult(w io.Writer, r *sim.Result) error {
	moe := r.Dense == (tile.DenseProblem{})
	problem, draws, drawn, first, busyOf := r.Problem.String(), fmt.Sprintf(", %d routing draws", r.Draws), "mean over draws", "first routing draw", "first draw"
	if !moe {
		problem, draws, drawn, first, busyOf = r.Dense.String(), "", "one dispatch", "the dispatch", "the dispatch"
	}
	switch r.KernelName {
	case tile.KernelMulMMID.String():
		fmt.Fprintf(w, "%s on %s, %s path, variant %s (%s engine%s)\n", problem, r.Chip, r.Kernel.Path, r.Kernel.Name, r.Engine, draws)
		fmt.Fprintf(w, "  predicted         %10.1f µs per run (mul_mm_id %.1f + map0 %.1f + dispatch %.1f), %.2f TFLOPS\n",
			r.TotalUs, r.KernelUs, r.Map0Us, r.OverheadUs, r.TFLOPS)
	case tile.KernelMulMM.String():
		fmt.Fprintf(w, "%s on %s, kernel mul_mm, %s path, variant %s (%s engine%s)\n", problem, r.Chip, r.Kernel.Path, r.Kernel.Name, r.Engine, draws)
	default:
		fmt.Fprintf(w, "%s on %s, kernel %s (%s engine%s)\n", problem, r.Chip, r.KernelName, r.Engine, draws)
	}
	if r.KernelName != tile.KernelMulMMID.String() {
		fmt.Fprintf(w, "  predicted         %10.1f µs per run (%s %.1f + dispatch %.1f), %.2f TFLOPS\n",
			r.TotalUs, r.KernelName, r.KernelUs, r.OverheadUs, r.TFLOPS)
	}
	o := r.Occupancy
	fmt.Fprintf(w, "  registers/thread  %10d (%s)\n", r.Registers.Total, RegisterSplit(r.Registers))
	fmt.Fprintf(w, "  occupancy         %10d threadgroups = %d simdgroups per core, limited by %s (registers %d, threadgroup memory %s, threads %d)\n",
		o.TGsPerCore, o.SGsPerCore, o.Limiter, o.ByRegisters, unbounded(o.ByTGMemory), o.ByThreads)
	u := r.Utilization
	fmt.Fprintf(w, "  utilisation       FMA pipes %.0f%%, conversions %.0f%%, tensor %.0f%%, TG memory %.0f%%, L1 %.0f%%, DRAM %.0f%%, issue %.0f%%\n",
		100*u.FMA, 100*u.IC, 100*u.Tensor, 100*u.TGMem, 100*u.L1, 100*u.DRAM, 100*u.Issue)
	fmt.Fprintf(w, "  limiter           %s (%s)\n", r.Limit, r.Limit.Meaning())
	fmt.Fprintf(w, "  idle SG-cycles    %.3g (simdgroups waiting at barriers)\n", r.IdleSGCycles)
	if len(r.CoreBusyUs) > 0 {
		lo, hi, sum := r.CoreBusyUs[0], r.CoreBusyUs[0], 0.0
		for _, b := range r.CoreBusyUs {
			lo, hi, sum = min(lo, b), max(hi, b), sum+b
		}
		mean := sum / float64(len(r.CoreBusyUs))
		idle := 0.0
		if hi > 0 {
			idle = 100 * (1 - mean/hi)
		}
		fmt.Fprintf(w, "  cores busy        %d cores, busy until min %.1f / mean %.1f / max %.1f µs (%s): idle %.1f%% of core-time before the last finishes\n",
			len(r.CoreBusyUs), lo, mean, hi, busyOf, idle)
	}
	fmt.Fprintf(w, "  kernel cycles     %.4g (%s, %s)\n", r.KernelCycles, r.KernelName, drawn)
	fmt.Fprint(w, "  loads by level    distinct bytes requested, by the level that served them:")
	for l, b := range r.LevelBytes {
		fmt.Fprintf(w, "  %s %.3g", sim.LevelNames[l], b)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  DRAM traffic      %.3g bytes (weights read first by their threadgroup, activations' cache misses, stores)\n", r.DRAMBytes)
	fmt.Fprintf(w, "  counters (%s):\n", first)
	return WriteCounters(w, r.Counters)
}

// WriteRates prints what a simulation cost, like GPGPU-Sim's closing lines:
// instruction rates (issued one by one by the core model, and represented by
// the timing model), simulated GPU cycles per wall second, and the slowdown
// against the simulated hardware time. simulatedUs and simulatedCycles cover
// every dispatch the run timed (all routing draws).
func WriteRates(w io.Writer, s sim.SimStats, simulatedUs, simulatedCycles float64) error {
	sec := s.Wall.Seconds()
	if sec <= 0 {
		sec = 1e-9
	}
	_, err := fmt.Fprintf(w, "  simulation        %.3g s wall; %.3g simdgroup-instructions simulated in detail (%.3g /s); %.3g modelled (%.3g /s); %.3g GPU cycles simulated (%.3g /s); slowdown %.3gx the simulated hardware time\n",
		sec, float64(s.Instructions), float64(s.Instructions)/sec, float64(s.Represented), float64(s.Represented)/sec,
		simulatedCycles, simulatedCycles/sec, sec/(simulatedUs*1e-6))
	return err
}
