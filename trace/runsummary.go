package trace

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// WritePerfettoSummary says what a Perfetto trace written to name holds
// (its events by kind and size), what ran (WriteRunSummary's lines) and the
// spans by kind.
func WritePerfettoSummary(w io.Writer, name string, tl *Timeline, st PerfettoStats, res *sim.GridResult) {
	fmt.Fprintf(w, "wrote %s (%.1f MB): %d events: %d spans, %d counter samples, %d metadata\n",
		name, float64(st.Bytes)/1e6, st.Events, st.Spans, st.Counters, st.Metadata)
	writeRunLines(w, tl, res)
	counts := map[string]int{}
	for _, sp := range tl.Spans {
		switch sp.Kind {
		case SpanPhase:
			counts[sp.Phase.String()]++
		default:
			counts[sp.Kind.String()]++
		}
	}
	keys := []string{SpanThreadgroup.String()}
	for ph := isa.Phase(0); ph < isa.NumPhases; ph++ {
		keys = append(keys, ph.String())
	}
	keys = append(keys, SpanBarrier.String(), SpanIdle.String())
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	fmt.Fprintf(w, "  spans: %s (idle: > %.0f ns without an issue)\n", strings.Join(parts, ", "), 1000*tl.Us(tl.IdleCycles))
	fmt.Fprintln(w, "  open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing; docs/trace.md explains the tracks")
}

// WriteRunSummary says what a traced run did when no JSON is written.
func WriteRunSummary(w io.Writer, tl *Timeline, res *sim.GridResult) {
	fmt.Fprintln(w, "traced one dispatch (no JSON: --out not given)")
	writeRunLines(w, tl, res)
}

// writeRunLines prints the kernel, problem, window and how far the run went.
func writeRunLines(w io.Writer, tl *Timeline, res *sim.GridResult) {
	seed := ""
	if tl.Seed != 0 {
		seed = fmt.Sprintf(", routing seed %d", tl.Seed)
	}
	fmt.Fprintf(w, "  %s, %s on %s%s\n", tl.Kernel, tl.Problem, tl.Chip, seed)
	coreList := make([]string, len(tl.Cores))
	for i, c := range tl.Cores {
		coreList[i] = strconv.Itoa(c)
	}
	fmt.Fprintf(w, "  window %g-%g µs, cores %s; ", tl.Us(tl.Start), tl.Us(tl.End), strings.Join(coreList, ","))
	switch {
	case tl.Complete:
		fmt.Fprintf(w, "the dispatch (%s) ran %.1f µs\n", tl.Metal, res.Us)
	case tl.Truncated:
		fmt.Fprintf(w, "the event cap was hit at %.1f µs (the trace ends there), the run stopped at %.1f µs\n", tl.Us(tl.TruncatedAt), tl.Us(tl.SimulatedCycles))
	default:
		fmt.Fprintf(w, "the run stopped at %.1f µs, after the window (--full runs the whole dispatch)\n", tl.Us(tl.SimulatedCycles))
	}
	// threadgroups that started and finished inside the window, on the
	// traced cores
	var tiles, exits int
	var sum float64
	for _, sp := range tl.Spans {
		if sp.Kind != SpanThreadgroup || sp.Open || sp.Start <= tl.Start && tl.Start > 0 {
			continue
		}
		if tg, ok := tl.TG(sp.TG); ok && tg.Tokens == 0 {
			exits++
			continue
		}
		tiles++
		sum += tl.Us(sp.End - sp.Start)
	}
	if tiles > 0 {
		fmt.Fprintf(w, "  threadgroups whole in the window: %d tiles, %.1f µs each on average; %d early exits\n", tiles, sum/float64(tiles), exits)
	} else {
		fmt.Fprintf(w, "  threadgroups whole in the window: no tile; %d early exits\n", exits)
	}
}

// WriteTimelineSummary says what a timeline picture written to name (in
// format) holds: its rows and the share of the drawn simdgroup time per kind,
// overall and per simdgroup index.
func WriteTimelineSummary(w io.Writer, name, format string, tl *Timeline, st TimelineStats) {
	fmt.Fprintf(w, "wrote %s (%s, %d KB): %d simdgroup rows", name, strings.ToUpper(format), (st.Bytes+512)/1024, st.Rows)
	if st.OmittedRows > 0 {
		fmt.Fprintf(w, " (%d more not drawn: --rows, or narrow --cores)", st.OmittedRows)
	}
	fmt.Fprintf(w, ", %d threadgroup spans, %d rectangles\n", st.Threadgroups, st.Rects)
	fmt.Fprintf(w, "  share of the simdgroup time drawn, by kind:\n  %-9s", "")
	for k := TimelineKind(0); k < NumTimelineKinds; k++ {
		fmt.Fprintf(w, "  %6s", k)
	}
	fmt.Fprintln(w)
	line := func(label string, v [NumTimelineKinds]float64) {
		fmt.Fprintf(w, "  %-9s", label)
		for k, f := range Shares(v) {
			fmt.Fprintf(w, "  %*.1f%%", max(6, len(TimelineKind(k).String()))-1, 100*f)
		}
		fmt.Fprintln(w)
	}
	line("all rows", st.Time)
	for sg, v := range st.BySG {
		line(fmt.Sprintf("sg%d rows", sg), v)
	}
}

// RunLabel names a run's kernel in a heading: the variant on its path for
// mul_mm_id ("halftile/simdgroup"), "mul_mm" and the same for mul_mm, the
// kernel's name for the mat-vec kernels, which take no variant.
func RunLabel(kern tile.MetalKernel, k tile.Kernel) string {
	switch kern {
	case tile.KernelMulMMID:
		return k.String()
	case tile.KernelMulMM:
		return "mul_mm " + k.String()
	}
	return kern.String()
}
