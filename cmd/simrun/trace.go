package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

const traceUsage = `Run one matmul dispatch (the kernel llama.cpp dispatches for --op and --n, or --kernel; a
MUL_MAT_ID with one routing draw) on the detailed engine and write a Chrome trace-event JSON timeline that ui.perfetto.dev and chrome://tracing open (docs/trace.md):
per traced core a process with a track per threadgroup slot (which tile: expert e, row tile y,
token tile x, tokens) and per simdgroup of the slot (setup / stage / compute / store phases, barrier
waits, idle), resident threadgroups per core, and the chip's DRAM bandwidth in GB/s.

Size: 30 to 130 spans per µs per traced core, ~160 bytes each: the default (first 200 µs, cores 0,1)
is 12,000-19,000 events and 2-3 MB on the M1 Pro, ~50,000 events and 8.4 MB on the M5's tensor path,
about 1 s of simulation. Time and size grow with --window and --cores; --max-events caps the events
(the trace then stops where the cap was hit, and simrun says so). The run stops at the first
threadgroup finish after the window unless --full.

--png FILE and --svg FILE draw the window as a Gantt picture (docs/tutorial.md): one row per simdgroup
("c0 s1 sg2": core 0, threadgroup slot 1, simdgroup 2) grouped by core and slot, coloured by phase,
barrier wait and idle, a grey threadgroup lane above each slot, a time axis in µs, and each kind's
share of the simdgroup time in the legend. At most --rows simdgroup rows are drawn (whole slots, in
core order; raise --rows or narrow --cores to see the rest). With a picture and no --out, no JSON
is written.`

// maxTraceEvents bounds --max-events: a traced event holds about 1 KB of
// memory until the file is written (spans, then their JSON), so ten times the
// default is ~5 GB and ~800 MB of JSON, past what Perfetto opens comfortably.
const maxTraceEvents = 10 * trace.DefaultMaxEvents

func runTrace(c *call) func() int {
	seed := c.fs.Uint64("seed", 1, "seed of the routing draw")
	out := c.fs.String("out", "trace.json", "output file (- for standard output, the summary then goes to standard error); not written when only --png/--svg are given")
	window := c.fs.String("window", fmt.Sprintf("0:%d", trace.DefaultWindowUs), "time window START:END in µs from the dispatch start")
	cores := c.fs.String("cores", "0,1", "cores to trace: a list of numbers and ranges (0,2,4-7) or all")
	maxEvents := c.fs.Int("max-events", trace.DefaultMaxEvents, fmt.Sprintf("cap on spans and counter samples, at most %d", maxTraceEvents))
	idle := c.fs.Float64("idle", 0, "idle threshold in ns: a resident simdgroup that issues nothing for longer shows an idle span (0: twice the chip's DRAM latency)")
	sample := c.fs.Float64("sample", trace.DefaultSampleUs, "DRAM bandwidth counter interval in µs")
	full := c.fs.Bool("full", false, "run the whole dispatch (to report its time) instead of stopping after the window")
	pngFile := c.fs.String("png", "", "also draw the window as a Gantt picture into this .png file (- for standard output)")
	svgFile := c.fs.String("svg", "", "also draw the window as a Gantt picture into this .svg file (- for standard output)")
	maxRows := c.fs.Int("rows", trace.DefaultTimelineMaxRows, "most simdgroup rows in the --png/--svg picture (whole slots, in core order)")
	return func() int {
		set := flagsGiven(c.fs)
		pt, err := c.point(sim.Options{})
		if err != nil {
			return c.fail(err)
		}
		chip := pt.Chip
		w, forced := pt.Workload, pt.Kernel
		kern, k, err := pt.Kernels()
		if err != nil {
			return c.fail(err)
		}
		if *seed == 0 {
			return c.fail(errors.New("--seed = 0: must be positive"))
		}
		start, end, err := trace.ParseWindow("--window", *window)
		if err != nil {
			return c.fail(err)
		}
		// simulate's limits: map0 launches (pt.Kernels), and the run's work (the
		// whole dispatch, or up to the window's end) stays under --max-work
		mw, err := c.maxWork.value()
		if err != nil {
			return c.fail(err)
		}
		sm := sim.NewSimulator()
		pt.Options = sim.Options{Engine: sim.Detailed, Draws: 1, MaxWork: mw}
		if err := pt.CheckObserveWork(sm, end, *full); err != nil {
			return c.fail(flagError(err))
		}
		list, err := trace.ParseCores("--cores", *cores, chip)
		if err != nil {
			return c.fail(err)
		}
		ro := trace.RecordOptions{StartUs: start, EndUs: end, Cores: list, MaxEvents: *maxEvents, IdleNs: *idle, SampleUs: *sample, Full: *full}
		if err := ro.CheckFlags(maxTraceEvents); err != nil {
			return c.fail(err)
		}
		outs := trace.Outputs{PNG: *pngFile, SVG: *svgFile, MaxRows: *maxRows}
		if *out != "" && (set["out"] || *pngFile == "" && *svgFile == "") {
			outs.JSON = *out // the JSON unless only pictures were asked for
		}
		if err := outs.Check(checkOutFile); err != nil {
			return c.fail(err)
		}
		rec, err := trace.NewRecorder(ro)
		if err != nil {
			return c.fail(err)
		}
		t0 := time.Now()
		res, _, err := sm.ObserveWorkload(w, k, forced, chip, *seed, rec)
		if err != nil {
			return c.fail(flagError(err)) // the plan checks k against the tile
		}
		tl := rec.Timeline()

		summary, err := outs.Write(c.stdout, c.stderr, tl, res, func(file string, b []byte) error { return writeOut(c.stdout, file, b) })
		if err != nil {
			return c.fail(err)
		}
		if err := trace.WriteNotes(summary, "  ", study.Notes(w, kern, k)); err != nil {
			return c.fail(err)
		}
		if tl.Truncated {
			fmt.Fprintf(c.stderr, "simrun trace: the cap of %d events was hit at %.1f µs: the trace ends there; narrow --window or --cores, or raise --max-events\n",
				tl.MaxEvents, tl.Us(tl.TruncatedAt))
		}
		// the closing rate line (stderr: wall-clock figures); a trace issues
		// every instruction it times, up to where its window ends the run
		st := sim.SimStats{Instructions: res.Instructions, Represented: res.Instructions, Wall: time.Since(t0)}
		_ = trace.WriteRates(c.stderr, st, res.Us, res.Cycles)
		return exitOK
	}
}
