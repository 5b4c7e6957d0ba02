package trace_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

// tracedAsPlain runs grid g on the detailed engine without a recorder, then
// observe with a full recorder of cores, and checks that the traced run
// timed exactly like the plain one; it returns the traced result and the
// timeline.
func tracedAsPlain(t *testing.T, s *sim.Simulator, g *sim.Grid, chip *chips.Chip, cores []int, observe func(*trace.Recorder) (*sim.GridResult, error)) (*sim.GridResult, *trace.Timeline) {
	t.Helper()
	plain, err := s.RunGrid(g, chip, sim.Detailed)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := trace.NewRecorder(trace.RecordOptions{Full: true, Cores: cores})
	if err != nil {
		t.Fatal(err)
	}
	traced, err := observe(rec)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(plain.Cycles) != math.Float64bits(traced.Cycles) || plain.Instructions != traced.Instructions {
		t.Fatalf("traced run: %v cycles, %d instructions; untraced: %v, %d", traced.Cycles, traced.Instructions, plain.Cycles, plain.Instructions)
	}
	return traced, rec.Timeline()
}

// TestObservedRunDoesNotChangeTiming: views are consumers. A full traced run
// times exactly like the detailed engine without a recorder.
func TestObservedRunDoesNotChangeTiming(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 16, Used: 4, M: 256, K: 512, Tokens: 64, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	s := sim.NewSimulator()
	tpe, err := routing.Uniform{}.Counts(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _, err := s.MulMMIDGrid(p, k, tpe)
	if err != nil {
		t.Fatal(err)
	}
	traced, tl := tracedAsPlain(t, s, g, chip, []int{0, 5}, func(rec *trace.Recorder) (*sim.GridResult, error) {
		return s.Observe(p, k, chip, 3, rec)
	})
	if !tl.Complete || tl.SimulatedCycles != int64(traced.Cycles) {
		t.Errorf("complete %v, simulated %d cycles, want %v", tl.Complete, tl.SimulatedCycles, traced.Cycles)
	}
	kinds := map[trace.SpanKind]int{}
	for _, sp := range tl.Spans {
		kinds[sp.Kind]++
		if sp.Core != 0 && sp.Core != 5 {
			t.Fatalf("span of untraced core %d", sp.Core)
		}
		if sp.End <= sp.Start || sp.Start < tl.Start || sp.End > tl.End {
			t.Fatalf("span %+v outside the window [%d, %d]", sp, tl.Start, tl.End)
		}
		if _, ok := tl.TG(sp.TG); !ok {
			t.Fatalf("span %+v: threadgroup unknown", sp)
		}
	}
	for _, k := range []trace.SpanKind{trace.SpanThreadgroup, trace.SpanPhase, trace.SpanBarrier} {
		if kinds[k] == 0 {
			t.Errorf("no %v spans", k)
		}
	}
	// the DRAM counter carries the bytes the run moved (all inside the window)
	var dram float64
	for _, s := range tl.Samples {
		if s.Kind == trace.CounterDRAM {
			dram += s.Value * 1e9 * float64(tl.Sample) / (tl.ClockMHz * 1e6)
		}
	}
	want := traced.Utilization.DRAM * traced.Cycles * chip.DRAMBandwidthGBs.Value * 1e9 / chip.Clock()
	if want <= 0 || math.Abs(dram/want-1) > 1e-6 {
		t.Errorf("DRAM counter carries %.0f bytes, the run moved %.0f", dram, want)
	}
}

// TestTraceStopsAfterWindow: by default the run ends soon after the window.
func TestTraceStopsAfterWindow(t *testing.T) {
	chip := chips.MustLookup("M5 10-core GPU")
	p := tile.Problem{Experts: 32, Used: 8, M: 512, K: 1024, Tokens: 256, TypeA: dequant.Q4_0}
	rec, err := trace.NewRecorder(trace.RecordOptions{StartUs: 5, EndUs: 15})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.NewSimulator().Observe(p, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Tensor}, chip, 1, rec); err != nil {
		t.Fatal(err)
	}
	tl := rec.Timeline()
	if tl.Complete {
		t.Fatal("complete run for a 10 µs window")
	}
	if len(tl.Spans) == 0 {
		t.Fatal("no spans")
	}
	cut := map[trace.SpanKind]int{}
	for _, sp := range tl.Spans {
		if sp.Start < tl.Start || sp.End > tl.End {
			t.Fatalf("span %+v outside [%d, %d]", sp, tl.Start, tl.End)
		}
		// every span still going at the window's end is marked, whatever
		// its kind (the run goes on past the window to a threadgroup finish)
		if sp.End == tl.End {
			if !sp.Open {
				t.Fatalf("span %+v ends at the window's end but is not marked open", sp)
			}
			cut[sp.Kind]++
		}
	}
	if cut[trace.SpanThreadgroup] == 0 || cut[trace.SpanPhase] == 0 {
		t.Errorf("spans cut by the window's end, by kind: %v; want threadgroups and phases", cut)
	}
}

func TestTraceOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  trace.RecordOptions
		want string
	}{
		{trace.RecordOptions{StartUs: 10, EndUs: 5}, "window"},
		{trace.RecordOptions{StartUs: -1, EndUs: 5}, "window"},
		{trace.RecordOptions{Cores: []int{}}, "at least one core"},
		{trace.RecordOptions{Cores: []int{-2}}, "core -2"},
		{trace.RecordOptions{MaxEvents: -1}, "max events"},
		{trace.RecordOptions{IdleNs: math.NaN()}, "idle"},
		{trace.RecordOptions{SampleUs: -1}, "sample interval"},
		{trace.RecordOptions{SampleUs: 0.001, MaxEvents: 1000}, "no room"},
	} {
		_, err := trace.NewRecorder(tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.opt, err, tc.want)
		}
	}
	chip := chips.MustLookup("M1 8-core GPU")
	rec, err := trace.NewRecorder(trace.RecordOptions{Cores: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	if _, err := sim.NewSimulator().Observe(smallProblem, k, chip, 1, rec); err == nil || !strings.Contains(err.Error(), "8 cores") {
		t.Errorf("core 8 of 8: %v", err)
	}
}

// TestTraceCapCutsInFlight: when the event cap stops the recording, the
// threadgroups in flight keep their spans, cut (open) where it stopped; with
// Full the run still goes to the dispatch's end, and its time is the untraced
// one.
func TestTraceCapCutsInFlight(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	for _, full := range []bool{false, true} {
		rec, err := trace.NewRecorder(trace.RecordOptions{Cores: []int{0}, MaxEvents: 300, Full: full})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.NewSimulator().Observe(smallProblem, k, chip, 1, rec)
		if err != nil {
			t.Fatal(err)
		}
		tl := rec.Timeline()
		if !tl.Truncated {
			t.Fatalf("full %v: a 300-event cap was not hit", full)
		}
		cut := 0
		for _, sp := range tl.Spans {
			if sp.Kind == trace.SpanThreadgroup && sp.Open && sp.End == tl.TruncatedAt {
				cut++
			}
		}
		if cut == 0 {
			t.Errorf("full %v: no threadgroup span cut where the cap stopped the recording", full)
		}
		if n := len(tl.Spans) + len(tl.Samples); n > 300 {
			t.Errorf("full %v: %d spans and samples past a cap of 300 (the cut spans must fit in the room kept for them)", full, n)
		}
		if tl.Complete != full {
			t.Errorf("full %v: complete run %v", full, tl.Complete)
		}
		if full {
			plain, err := sim.Simulate(smallProblem, k, chip, sim.Options{Engine: sim.Detailed, Draws: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Us != plain.KernelUs {
				t.Errorf("full run after the cap: %.1f µs, the detailed engine %.1f µs", res.Us, plain.KernelUs)
			}
		}
	}
}

var smallProblem = tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 128, TypeA: dequant.Q4_0}

// TestObservedWorkloadsTimeAsRun: every kernel's traced dispatch times
// exactly like its dispatch on the detailed engine, and the timeline names
// the kernel and places every threadgroup of it (mul_mv_id's on its pair's
// expert).
func TestObservedWorkloadsTimeAsRun(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	moe := tile.Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 5, TypeA: dequant.Q4_0}
	dense := func(n int) tile.DenseProblem { return tile.DenseProblem{M: 96, N: n, K: 256, TypeA: dequant.Q4_0} }
	k := tile.Kernel{Variant: tile.Tile64x8(), Path: tile.Simdgroup}
	for _, tc := range []struct {
		w      tile.Workload
		kernel tile.MetalKernel
		label  string
	}{
		{tile.MoEWorkload(moe), tile.KernelMulMVID, "mul_mv_id"},
		{tile.DenseWorkload(dense(1)), tile.KernelMulMV, "mul_mv"},
		{tile.DenseWorkload(dense(5)), tile.KernelMulMVExt, "mul_mv_ext"},
		{tile.DenseWorkload(dense(40)), tile.KernelMulMM, "mul_mm tile64x8/simdgroup"},
	} {
		s := sim.NewSimulator()
		var g *sim.Grid
		var err error
		if tc.w.Op == tile.OpMulMatID {
			ids, ierr := routing.IDs(routing.Uniform{}, moe, 3)
			if ierr != nil {
				t.Fatal(ierr)
			}
			g, _, err = s.MulMVIDGrid(moe, ids, chip)
		} else {
			g, err = s.DenseGrid(tc.w.Dense, tc.kernel, k, chip)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, tl := tracedAsPlain(t, s, g, chip, []int{0, 1}, func(rec *trace.Recorder) (*sim.GridResult, error) {
			traced, kern, err := s.ObserveWorkload(tc.w, k, tile.KernelAuto, chip, 3, rec)
			if err == nil && kern != tc.kernel {
				err = fmt.Errorf("%s: kernel %s, want %s", tc.w, kern, tc.kernel)
			}
			return traced, err
		})
		if tl.Kernel != tc.label || tl.Metal != tc.kernel.String() || len(tl.TGs) == 0 {
			t.Errorf("%s: timeline kernel %q (%s), %d threadgroups", tc.w, tl.Kernel, tl.Metal, len(tl.TGs))
		}
		for _, tg := range tl.TGs {
			if tg.Tokens < 1 || tg.Rows < 1 || tg.Z < 0 || tc.w.Op == tile.OpMulMat && tg.Z != 0 || tc.w.Op == tile.OpMulMatID && tg.Z >= moe.Experts {
				t.Errorf("%s: threadgroup %+v", tc.w, tg)
				break
			}
		}
	}
}
