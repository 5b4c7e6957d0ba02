package sim_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

func mustChip(t testing.TB, name string) *sim.Chip {
	t.Helper()
	c, err := sim.LookupChip(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var smallProblem = tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 128, TypeA: dequant.Q4_0}

// TestSimulateDeterministic: the same inputs give the same bits, whatever the
// number of OS threads and whether the simulator's caches were warm.
func TestSimulateDeterministic(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	prev := runtime.GOMAXPROCS(1)
	a, err := sim.Simulate(smallProblem, k, chip, sim.Options{})
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.NewSimulator()
	// warm the shared caches with other problems first
	for _, n := range []int{32, 512} {
		p := smallProblem
		p.Tokens = n
		if _, err := s.Run(p, k, chip, sim.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.Run(smallProblem, k, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(a.TotalUs) != math.Float64bits(b.TotalUs) || a.Counters.Work.MMA8 != b.Counters.Work.MMA8 {
		t.Fatalf("results differ: %v µs vs %v µs", a.TotalUs, b.TotalUs)
	}
}

// modelOutputs renders everything a Result says about the modelled GPU (all
// but the simulator's own statistics: wall time, instructions it simulated).
func modelOutputs(t *testing.T, r *sim.Result) string {
	t.Helper()
	c := *r
	c.Sim = sim.SimStats{}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConcurrentRunsShareMixes: runs of one kernel in flight together on one
// Simulator (sharing, and racing to measure, its core mixes), and runs after
// other runs warmed its caches, give the same bits as each run alone on a
// fresh Simulator with one OS thread.
func TestConcurrentRunsShareMixes(t *testing.T) {
	for _, tc := range []struct {
		chip string
		k    tile.Kernel
	}{
		{"M1 Pro 16-core GPU", tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}},
		{"M5 10-core GPU", tile.Kernel{Variant: tile.Upstream(), Path: tile.Tensor}},
	} {
		t.Run(tc.k.String(), func(t *testing.T) {
			chip := mustChip(t, tc.chip)
			ns := []int{40, 64, 96, 128}
			run := func(s *sim.Simulator, n int) (string, error) {
				p := smallProblem
				p.Tokens = n
				r, err := s.Run(p, tc.k, chip, sim.Options{})
				if err != nil {
					return "", err
				}
				return modelOutputs(t, r), nil
			}
			alone := make([]string, len(ns))
			prev := runtime.GOMAXPROCS(1)
			for i, n := range ns {
				var err error
				if alone[i], err = run(sim.NewSimulator(), n); err != nil {
					runtime.GOMAXPROCS(prev)
					t.Fatal(err)
				}
			}
			// in reverse order on one simulator: each run meets mixes and
			// classes the later-listed runs created first
			s := sim.NewSimulator()
			for i := len(ns) - 1; i >= 0; i-- {
				got, err := run(s, ns[i])
				if err != nil {
					runtime.GOMAXPROCS(prev)
					t.Fatal(err)
				}
				if got != alone[i] {
					t.Errorf("n = %d after larger runs on one simulator:\n%s\nalone:\n%s", ns[i], got, alone[i])
				}
			}
			runtime.GOMAXPROCS(max(prev, 4))
			defer runtime.GOMAXPROCS(prev)
			s = sim.NewSimulator()
			together, errs := concurrently(len(ns), func(i int) (string, error) { return run(s, ns[i]) })
			for i := range ns {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if together[i] != alone[i] {
					t.Errorf("n = %d concurrently:\n%s\nalone:\n%s", ns[i], together[i], alone[i])
				}
			}
		})
	}
}

// TestOtherShapesDoNotLeak: a kernel's programs are shared across problems
// of another m, whose activation reuse (and so memory pattern and DRAM
// demand) differs; a run after one of another m on the same Simulator gives
// the bits it gives alone. (Classes were keyed by program alone: an M5
// m = 512 run moved 9 % after an m = 4096 one, and validate's rows, which
// run concurrently, depended on scheduling.)
func TestOtherShapesDoNotLeak(t *testing.T) {
	m5 := mustChip(t, "M5 10-core GPU")
	mm := func(m int) func(*sim.Simulator) (*sim.Result, error) {
		p := tile.Problem{Experts: 128, Used: 8, M: m, K: 1024, Tokens: 256, TypeA: dequant.Q4_0}
		return func(s *sim.Simulator) (*sim.Result, error) {
			return s.Run(p, tile.Kernel{Variant: tile.Upstream(), Path: tile.Tensor}, m5, sim.Options{Draws: 1})
		}
	}
	mv := func(m int) func(*sim.Simulator) (*sim.Result, error) {
		p := tile.Problem{Experts: 32, Used: 4, M: m, K: 1024, Tokens: 8, TypeA: dequant.F16}
		return func(s *sim.Simulator) (*sim.Result, error) { return s.RunMulMVID(p, m5, sim.Options{Draws: 1}) }
	}
	for _, tc := range []struct {
		name          string
		first, second func(*sim.Simulator) (*sim.Result, error)
	}{
		{"mul_mm_id m=512 after m=4096", mm(4096), mm(512)},
		{"mul_mm_id m=4096 after m=512", mm(512), mm(4096)},
		{"mul_mv_id m=5 after m=13", mv(13), mv(5)},
	} {
		alone, err := tc.second(sim.NewSimulator())
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewSimulator()
		if _, err := tc.first(s); err != nil {
			t.Fatal(err)
		}
		after, err := tc.second(s)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := modelOutputs(t, after), modelOutputs(t, alone); a != b {
			t.Errorf("%s: %.4f µs, alone %.4f µs\n%s\nalone:\n%s", tc.name, after.TotalUs, alone.TotalUs, a, b)
		}
	}
}

// TestVariantsShareMixes: on the simdgroup path the half-tile variant's full
// tiles time exactly like upstream's (same instructions; it differs in the
// other tiles), so after an upstream run a halftile run on the same Simulator
// reuses those measured mixes: it simulates fewer instructions than on a
// fresh Simulator and predicts the same bits, also when the two run
// concurrently (racing to measure the mixes they share).
func TestVariantsShareMixes(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	p := smallProblem
	p.Tokens = 512 // mostly full tiles
	up := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	half := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	alone, err := sim.NewSimulator().Run(p, half, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.NewSimulator()
	if _, err := s.Run(p, up, chip, sim.Options{}); err != nil {
		t.Fatal(err)
	}
	after, err := s.Run(p, half, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := modelOutputs(t, after), modelOutputs(t, alone); got != want {
		t.Errorf("halftile after upstream:\n%s\nalone:\n%s", got, want)
	}
	if after.Sim.Instructions >= alone.Sim.Instructions {
		t.Errorf("halftile after upstream simulated %d instructions, alone %d: want fewer (the full tiles' mixes are upstream's)",
			after.Sim.Instructions, alone.Sim.Instructions)
	}
	upAlone, err := sim.NewSimulator().Run(p, up, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2))
	defer runtime.GOMAXPROCS(prev)
	s = sim.NewSimulator()
	kernels := []tile.Kernel{up, half}
	got, errs := concurrently(len(kernels), func(i int) (*sim.Result, error) {
		return s.Run(p, kernels[i], chip, sim.Options{})
	})
	for i, want := range []*sim.Result{upAlone, alone} {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if g, w := modelOutputs(t, got[i]), modelOutputs(t, want); g != w {
			t.Errorf("%v concurrently with the other variant:\n%s\nalone:\n%s", kernels[i], g, w)
		}
	}
}

// concurrently runs f(0) .. f(n-1), each on its own goroutine, and returns
// their results and errors by index once all have returned.
func concurrently[T any](n int, f func(i int) (T, error)) ([]T, []error) {
	res, errs := make([]T, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = f(i)
		}()
	}
	wg.Wait()
	return res, errs
}

// TestFastAgreesWithDetailed: the fast engine (cached core mixes, threadgroup
// events) predicts what the detailed engine (every instruction) does.
func TestFastAgreesWithDetailed(t *testing.T) {
	for _, tc := range []struct {
		chip string
		path tile.Path
	}{{"M1 Pro 16-core GPU", tile.Simdgroup}, {"M5 10-core GPU", tile.Tensor}} {
		chip := mustChip(t, tc.chip)
		// several waves of threadgroups per core, as in real dispatches
		p := tile.Problem{Experts: 64, Used: 8, M: 512, K: 1024, Tokens: 256, TypeA: dequant.Q4_0}
		for _, v := range []tile.Variant{tile.Upstream(), tile.HalfTile()} {
			k := tile.Kernel{Variant: v, Path: tc.path}
			fast, err := sim.Simulate(p, k, chip, sim.Options{Draws: 1})
			if err != nil {
				t.Fatal(err)
			}
			det, err := sim.Simulate(p, k, chip, sim.Options{Draws: 1, Engine: sim.Detailed})
			if err != nil {
				t.Fatal(err)
			}
			// the fast engine approximates steady k-loops per mix of resident
			// threadgroups and a chip-wide DRAM roofline; 8% bounds its error
			// against the detailed engine on this mostly-full grid
			if d := math.Abs(fast.KernelUs/det.KernelUs - 1); d > 0.08 {
				t.Errorf("%s %s: fast %.1f µs, detailed %.1f µs (%.1f%% apart)", tc.chip, v.Name, fast.KernelUs, det.KernelUs, 100*d)
			}
			if det.Sim.Instructions < fast.Counters.Work.Instructions {
				t.Errorf("%s %s: detailed engine issued %d instructions, the grid has %d", tc.chip, v.Name, det.Sim.Instructions, fast.Counters.Work.Instructions)
			}
			checkSameTraffic(t, tc.chip+" "+v.Name, fast, det)
		}
	}
}

// checkSameTraffic: the two engines count the same device traffic for the
// same threadgroups (the fast engine per threadgroup from its own program, the
// detailed one at every issue), and, for weight types without a codebook,
// every byte the grid's device loads request is served by one memory level
// (codebook reads are constant loads, which the levels count and the
// counters' device bytes do not).
func checkSameTraffic(t *testing.T, name string, fast, det *sim.Result) {
	t.Helper()
	// the same byte counts summed in another order (per threadgroup against
	// per core; activation shares are fractions): equal to float64 rounding
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b)) }
	var loaded, served float64
	for s, b := range fast.Counters.Work.DeviceBytes {
		if isa.Stream(s) != isa.StreamOutput {
			loaded += float64(b)
		}
	}
	for l := range fast.LevelBytes {
		served += fast.LevelBytes[l]
		if !same(fast.LevelBytes[l], det.LevelBytes[l]) {
			t.Errorf("%s: %s bytes: fast engine %.6g, detailed %.6g", name, sim.LevelNames[l], fast.LevelBytes[l], det.LevelBytes[l])
		}
	}
	if fast.Counters.Work.CodebookLoads == nil && !same(served, loaded) {
		t.Errorf("%s: the levels served %.6g bytes, the grid's loads request %.6g", name, served, loaded)
	}
	if !same(fast.DRAMBytes, det.DRAMBytes) || fast.DRAMBytes <= 0 {
		t.Errorf("%s: DRAM traffic: fast engine %.6g, detailed %.6g", name, fast.DRAMBytes, det.DRAMBytes)
	}
}

// TestOccupancyMesaTable: the register rule reproduces Mesa's G13 table
// (apple-gpu.md 2.2) with the M1 Pro's 208 KiB and 64-thread granule.
func TestOccupancyMesaTable(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	for _, tc := range []struct{ regs, threads int }{
		{52, 1024}, {56, 896}, {64, 832}, {68, 768}, {72, 704}, {80, 640}, {92, 576}, {104, 512}, {116, 448}, {128, 384},
	} {
		o, err := sim.OccupancyFor(chip, 32, tc.regs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if o.MaxThreadsByTG != tc.threads {
			t.Errorf("%d registers: %d threads, Mesa's table says %d", tc.regs, o.MaxThreadsByTG, tc.threads)
		}
	}
	o, err := sim.OccupancyFor(chip, 128, 40, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if o.TGsPerCore != 7 || o.Limiter != "threadgroup memory" {
		t.Errorf("128 threads, 40 registers, 8 KiB: %d per core limited by %s, want 7 by threadgroup memory", o.TGsPerCore, o.Limiter)
	}
	if _, err := sim.OccupancyFor(chip, 1024, 128, 0); err == nil || !strings.Contains(err.Error(), "cannot launch") {
		t.Errorf("1024 threads at 128 registers: %v, want a launch error", err)
	}
	// the message shows the rule and the fields behind the limit
	g := chip.Clone()
	g.ThreadGranule.Value = 1024
	_, err = sim.OccupancyFor(g, 128, 128, 0)
	if err == nil || !strings.Contains(err.Error(), "register_file_bytes 212992 / (4 bytes x 128 registers), rounded down to a multiple of occupancy_thread_granule 1024, is 0") {
		t.Errorf("granule 1024: %v", err)
	}
}

func TestChipsLoadAndResolve(t *testing.T) {
	chips, err := sim.Chips()
	if err != nil {
		t.Fatal(err)
	}
	if len(chips) < 2 {
		t.Fatalf("%d chips", len(chips))
	}
	names := map[string]bool{}
	for _, c := range chips {
		if names[c.Name] {
			t.Errorf("duplicate chip name %q", c.Name)
		}
		names[c.Name] = true
		for _, a := range append([]string{c.Name}, c.Aliases...) {
			got, err := sim.LookupChip(a)
			if err != nil || got.Name != c.Name {
				t.Errorf("LookupChip(%q) = %v, %v; want %s", a, got, err, c.Name)
			}
		}
		if c.CalibrationFrom != "" {
			from := mustChip(t, c.CalibrationFrom)
			for _, name := range []string{"barrier_clk", "sg_launch_clk"} {
				a, errA := c.Param(name)
				b, errB := from.Param(name)
				if errA != nil || errB != nil || a.Value != b.Value || a.Source != "calibrated:"+from.Name {
					t.Errorf("%s %s = %v (%s, %v), want %v from %s (%v)", c.Name, name, a.Value, a.Source, errA, b.Value, from.Name, errB)
				}
			}
			// the tiled-read efficiency is copied when the source fitted it
			if fe, _ := from.Param("tiled_dram_efficiency"); fe.Source == "calibrated" {
				if ce, _ := c.Param("tiled_dram_efficiency"); ce.Value != fe.Value {
					t.Errorf("%s tiled_dram_efficiency = %v, want %v from %s", c.Name, ce.Value, fe.Value, from.Name)
				}
			}
			// DRAM bandwidth is the chip's memory system: never copied.
			if a, _ := c.Param("dram_bandwidth_gbs"); strings.HasPrefix(a.Source, "calibrated") {
				t.Errorf("%s dram_bandwidth_gbs taken from %s (source %s); it must stay the chip's own", c.Name, from.Name, a.Source)
			}
		}
	}
	if c := mustChip(t, "Apple M1 Pro"); c.Name != "M1 Pro 16-core GPU" {
		t.Errorf("Apple M1 Pro -> %s", c.Name)
	}
	if _, err := sim.LookupChip("Apple M9"); err == nil || !strings.Contains(err.Error(), "unknown chip") {
		t.Errorf("unknown chip: %v", err)
	}
}

// TestChipsAreCopies checks that the embedded chips, parsed once, reach
// callers as copies: a caller that changes one (fit, a what-if sweep) changes
// nothing another lookup sees.
func TestChipsAreCopies(t *testing.T) {
	a := mustChip(t, "M1 Pro 16-core GPU")
	want := a.BarrierClk.Value
	a.BarrierClk.Value++
	a.Aliases[0] = "changed"
	a.Classes["mma8"] = sim.ClassCost{}
	if a.Calibration != nil && len(a.Calibration.Params) > 0 {
		a.Calibration.Params[0].Value++
	}
	for _, get := range []func() *sim.Chip{
		func() *sim.Chip { return mustChip(t, "M1 Pro 16-core GPU") },
		func() *sim.Chip {
			chips, err := sim.Chips()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chips {
				if c.Name == a.Name {
					return c
				}
			}
			t.Fatalf("Chips() lacks %s", a.Name)
			return nil
		},
	} {
		b := get()
		if b == a || b.BarrierClk.Value != want || b.Aliases[0] == "changed" || b.Classes["mma8"].Pipe == "" {
			t.Errorf("a changed copy of %s shows through a later lookup: barrier %v (want %v), aliases %v, mma8 %+v",
				a.Name, b.BarrierClk.Value, want, b.Aliases, b.Classes["mma8"])
		}
		if b.Calibration != nil && a.Calibration != nil && len(b.Calibration.Params) > 0 &&
			b.Calibration.Params[0].Value == a.Calibration.Params[0].Value {
			t.Errorf("the calibration record of %s is shared between copies", a.Name)
		}
	}
}

// TestChipFileErrorsInOneOrder: several unknown classes are reported in
// name order, the same text every time (not a map's order).
func TestChipFileErrorsInOneOrder(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("chips", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `"classes": {`, `"classes": {"zz": {}, "aa": {}, "mm": {},`, 1)
	var first string
	for i := range 30 {
		_, err := sim.ParseChip([]byte(bad), "bad.json")
		if err == nil {
			t.Fatal("three unknown classes accepted")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("the error changed between parses:\n%s\n%s", first, err)
		}
	}
	if a, m, z := strings.Index(first, `"aa"`), strings.Index(first, `"mm"`), strings.Index(first, `"zz"`); a < 0 || !(a < m && m < z) {
		t.Errorf("unknown classes not in name order: %s", first)
	}
}

func TestChipFileErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("chips", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(string) string
		want string
	}{
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"},`, "", 1)
		}, "cores: missing"},
		// a source is a key of apple-gpu.md (or one of the forms SourceKeys names)
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1"`, `"cores": {"value": 16, "source": "NOSUCH"`, 1)
		}, `cores: source "NOSUCH": must be a source key of docs/sources.md`},
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"`, `"cores": {"value": 16, "source": "PT-MB", "evidence": "X"`, 1)
		}, `cores: evidence "X": must be one of D, M, C, E, F`},
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"`, `"cores": {"value": 16, "source": "calibrated", "evidence": "F"`, 1)
		}, `cores: source "calibrated" needs a note`},
		{func(s string) string { return strings.Replace(s, `"cores": {"value": 16,`, `"cores": {"value": 0,`, 1) }, "cores = 0: must be in [1, 256]"},
		{func(s string) string {
			return strings.Replace(s, `"family": "apple7",`, `"family": "apple7", "warp": 3,`, 1)
		}, `unknown field "warp"`},
		{func(s string) string {
			return strings.Replace(s, `"mma8":       {"pipe": "fma"`, `"mma8":       {"pipe": "matrix"`, 1)
		}, "classes.mma8.pipe"},
		{func(s string) string {
			return strings.Replace(s, `"source": "CNC", "evidence": "M", "note": "M1"}`, `"source": ""}`, 1)
		}, "missing (every number needs a value and a source)"},
		// a field decoding cannot tell from its zero value must be present
		{func(s string) string { return strings.Replace(s, `"tensor_path": false,`, "", 1) }, "tensor_path: missing"},
		{func(s string) string {
			return strings.Replace(s, `"barrier_clk": {"value": 157, `, `"barrier_clk": {`, 1)
		}, "barrier_clk.value: missing"},
		// keys match fields whatever their case, as encoding/json decodes them
		{func(s string) string {
			return strings.Replace(s, `"barrier_clk": {"value": 157, `, `"Barrier_Clk": {`, 1)
		}, "barrier_clk.value: missing"},
		{func(s string) string {
			return strings.Replace(s, `"mma8":       {"pipe": "fma",    "issue_clk": {"value": 17, `, `"mma8":       {"pipe": "fma",    "issue_clk": {`, 1)
		}, "classes.mma8.issue_clk.value: missing"},
		// one object per file: what follows it is an error, not ignored
		{func(s string) string { return s + `{"garbage": true}` }, "content after the chip object"},
		{func(s string) string { return s + " xyz" }, "content after the chip object"},
		// a threadgroup's limits cannot exceed its core's
		{func(s string) string {
			return strings.Replace(s, `"tg_memory_per_tg_bytes": {"value": 32768,`, `"tg_memory_per_tg_bytes": {"value": 4194304,`, 1)
		}, "tg_memory_per_tg_bytes = 4.194304e+06: must be at most tg_memory_per_core_bytes = 57344"},
		{func(s string) string {
			return strings.Replace(s, `"max_threads_per_tg": {"value": 1024,`, `"max_threads_per_tg": {"value": 4096,`, 1)
		}, "max_threads_per_tg = 4096: must be at most max_threads_per_core = 3072"},
	} {
		_, err := sim.ParseChip([]byte(tc.edit(string(good))), "edited.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "edited.json") {
			t.Errorf("ParseChip: %v, want an error with %q naming the file", err, tc.want)
		}
	}
}

// TestHalfTileShowsOnSimdgroupPath: on the M1 Pro the half-tile skip halves the
// matrix work of small tiles and the prediction follows; skipped half-tiles and
// idle simdgroups are counted.
func TestHalfTileShowsOnSimdgroupPath(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	p := smallProblem
	p.Tokens = 32
	up, err := sim.Simulate(p, tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ht, err := sim.Simulate(p, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}, chip, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ht.KernelUs >= 0.9*up.KernelUs {
		t.Errorf("halftile %.1f µs vs upstream %.1f µs: want a clear gain on small tiles", ht.KernelUs, up.KernelUs)
	}
	if ht.Counters.Skipped.HalfTiles == 0 || ht.Counters.Skipped.MMA8 == 0 || up.Counters.Skipped.HalfTiles != 0 {
		t.Errorf("skipped half-tiles: halftile %d, upstream %d", ht.Counters.Skipped.HalfTiles, up.Counters.Skipped.HalfTiles)
	}
	if ht.IdleSGCycles <= up.IdleSGCycles {
		t.Errorf("idle simdgroup-cycles: halftile %.3g <= upstream %.3g", ht.IdleSGCycles, up.IdleSGCycles)
	}
}

// TestWhatIfChipLimits: a threadgroup's limits are the chip's data, not the
// tile's. A 128x128 tile stages 64 KiB of threadgroup memory, twice what Metal
// allows: on the M1 Pro it is refused with an error naming the chip field, and
// a what-if copy of the chip that raises the field runs it.
func TestWhatIfChipLimits(t *testing.T) {
	v := tile.Upstream()
	v.Name = "tile128x128"
	v.NR0, v.NR1 = 128, 128
	k := tile.Kernel{Variant: v, Path: tile.Simdgroup}
	chip := mustChip(t, "M1 Pro 16-core GPU")
	_, err := sim.Simulate(smallProblem, k, chip, sim.Options{})
	if err == nil || !strings.Contains(err.Error(), "threadgroup memory = 65536 bytes") || !strings.Contains(err.Error(), "tg_memory_per_tg_bytes") {
		t.Fatalf("64 KiB tile on the M1 Pro: %v, want an error naming tg_memory_per_tg_bytes", err)
	}
	good, err := os.ReadFile(filepath.Join("chips", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(good), `"tg_memory_per_tg_bytes": {"value": 32768,`, `"tg_memory_per_tg_bytes": {"value": 65536,`, 1)
	s = strings.Replace(s, `"tg_memory_per_core_bytes": {"value": 57344,`, `"tg_memory_per_core_bytes": {"value": 131072,`, 1)
	whatIf, err := sim.ParseChip([]byte(s), "what-if.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Simulate(smallProblem, k, whatIf, sim.Options{})
	if err != nil {
		t.Fatalf("64 KiB tile on a chip allowing it: %v", err)
	}
	if r.Occupancy.TGMemoryBytes != 65536 || r.Occupancy.TGsPerCore < 1 || r.KernelUs <= 0 {
		t.Errorf("occupancy %+v, %.1f µs: want the 64 KiB tile resident and timed", r.Occupancy, r.KernelUs)
	}
	// the thread limit likewise names its field
	wide := tile.Upstream()
	wide.Name = "wide"
	wide.NSG, wide.SGRows, wide.SGCols = 64, 8, 8
	wide.NR0, wide.NR1 = 128, 64 // 32 KiB: only the threads are too many
	_, err = sim.Simulate(smallProblem, tile.Kernel{Variant: wide, Path: tile.Simdgroup}, chip, sim.Options{})
	if err == nil || !strings.Contains(err.Error(), "threads per threadgroup = 2048") || !strings.Contains(err.Error(), "max_threads_per_tg") || strings.Contains(err.Error(), "threadgroup memory") {
		t.Errorf("2048-thread threadgroup on the M1 Pro: %v, want an error naming max_threads_per_tg", err)
	}
}

// TestProgressCountsEveryThreadgroup: a simulator given a Progress counts every
// threadgroup of every draw (and map0's one) on both engines, and the result
// is the same as without it.
func TestProgressCountsEveryThreadgroup(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	p := smallProblem
	p.Tokens = 5000 // 157 token tiles x 4 row tiles x 32 experts = 20096: a full progress step and a remainder per draw
	for _, e := range []sim.Engine{sim.Fast, sim.Detailed} {
		if e == sim.Detailed && testing.Short() {
			continue
		}
		draws := 3
		if e == sim.Detailed {
			draws = 2 // the slower engine: fewer draws
		}
		opt := sim.Options{Engine: e, Draws: draws}
		plain, err := sim.NewSimulator().Run(p, k, chip, opt)
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewSimulator()
		var pr sim.Progress
		s.SetProgress(&pr)
		r, err := s.Run(p, k, chip, opt)
		if err != nil {
			t.Fatal(err)
		}
		done, total := pr.Counts()
		if want := int64(draws)*r.Counters.Launched + 1; done != want || total != want {
			t.Errorf("%v: progress %d of %d, want %d of %d (%d draws of %d threadgroups and map0's one)", e, done, total, want, want, draws, r.Counters.Launched)
		}
		if r.KernelUs != plain.KernelUs || r.IdleSGCycles != plain.IdleSGCycles {
			t.Errorf("%v: %.6g µs with a Progress, %.6g without", e, r.KernelUs, plain.KernelUs)
		}
	}
}

// TestMatVecTrafficSameOnBothEngines: checkSameTraffic on the mat-vec kernel
// llama.cpp runs for n < 32 (its loop body has no barriers; with an iq type
// its prologue copies the codebook into threadgroup memory) and on the dense
// mul_mm kernel.
func TestMatVecTrafficSameOnBothEngines(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	for _, typ := range []dequant.Type{dequant.Q4_0, dequant.IQ2_XXS} {
		p := tile.Problem{Experts: 32, Used: 4, M: 512, K: 1024, Tokens: 8, TypeA: typ}
		d := tile.DenseProblem{M: 512, K: 1024, N: 256, TypeA: typ}
		var mv, mm [2]*sim.Result
		for i, e := range []sim.Engine{sim.Fast, sim.Detailed} {
			r, err := sim.NewSimulator().RunMulMVID(p, chip, sim.Options{Draws: 1, Engine: e})
			if err != nil {
				t.Fatal(err)
			}
			mv[i] = r
			r, err = sim.NewSimulator().RunWorkload(tile.DenseWorkload(d), tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, tile.KernelAuto, chip, sim.Options{Engine: e})
			if err != nil {
				t.Fatal(err)
			}
			mm[i] = r
		}
		checkSameTraffic(t, typ.String()+" mul_mv_id", mv[0], mv[1])
		checkSameTraffic(t, typ.String()+" mul_mm", mm[0], mm[1])
	}
}

// TestCodebookCopyBytes: a mat-vec threadgroup's codebook copy requests the
// codebook's bytes (iq2_xxs: 256 grid entries of 8 bytes and 128 sign bytes),
// served by L1, the only L1 traffic here (cacheLevels puts the re-read weights
// and activations of this chip's resident threadgroups beyond L1). It counted
// 4 bytes per copy instruction, map0's rule, before.
func TestCodebookCopyBytes(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 1, Used: 1, M: 64, K: 256, Tokens: 1, TypeA: dequant.IQ2_XXS}
	r, err := sim.NewSimulator().RunMulMVID(p, chip, sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(r.Counters.Launched) * (256*8 + 128); r.LevelBytes[0] != want {
		t.Errorf("L1 served %g bytes to %d threadgroups, want %g (the codebook, once each)", r.LevelBytes[0], r.Counters.Launched, want)
	}
}

// TestDocChipFilesLoad: the what-if chip files the docs run (docs/chips) load
// and validate, as a user's --chip FILE.json would.
func TestDocChipFilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "chips", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/chips: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		if _, err := sim.LoadChipFile(f); err != nil {
			t.Error(err)
		}
	}
}

// TestChipBins: a chip file's bins are chips of their own, differing only in
// what the bin gives (cores, DRAM bandwidth where it differs), with the
// calibration the file's chip takes; a bad bin is an error naming it.
func TestChipBins(t *testing.T) {
	for _, tc := range []struct {
		bin, of    string
		cores      float64
		ownDRAMGBs float64 // 0: the file's chip's
	}{
		{"M3 Max 30-core GPU", "M3 Max 40-core GPU", 30, 234},
		{"M2 Pro 16-core GPU", "M2 Pro 19-core GPU", 16, 0},
		{"M1 7-core GPU", "M1 8-core GPU", 7, 0},
	} {
		b, of := mustChip(t, tc.bin), mustChip(t, tc.of)
		if b.Cores.Value != tc.cores || len(b.Bins) != 0 {
			t.Errorf("%s: %g cores, %d bins", tc.bin, b.Cores.Value, len(b.Bins))
		}
		want := of.DRAMBandwidthGBs.Value
		if tc.ownDRAMGBs > 0 {
			want = tc.ownDRAMGBs
		}
		if b.DRAMBandwidthGBs.Value != want || b.ClockMHz != of.ClockMHz || b.BarrierClk != of.BarrierClk || b.SGLaunchClk != of.SGLaunchClk {
			t.Errorf("%s: DRAM %g GB/s (want %g), clock %v, barrier %v, launch %v; the file's chip: clock %v, barrier %v, launch %v",
				tc.bin, b.DRAMBandwidthGBs.Value, want, b.ClockMHz, b.BarrierClk, b.SGLaunchClk, of.ClockMHz, of.BarrierClk, of.SGLaunchClk)
		}
	}
	good, err := os.ReadFile(filepath.Join("chips", "m3-max-40c.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"cores": {"value": 30, "source": "apple-gpu.md §1", "evidence": "D"}`, `"cores": {"value": 0, "source": "apple-gpu.md §1", "evidence": "D"}`, "bins[0].cores = 0: must be in [1, 256]"},
		{`"name": "M3 Max 30-core GPU", `, ``, "bins[0].name: missing"},
		{`"name": "M3 Max 30-core GPU", `, `"name": "M3 Max 40-core GPU", `, `bins[0].name = "M3 Max 40-core GPU": must be a name of its own`},
	} {
		edited := strings.Replace(string(good), tc.old, tc.new, 1)
		if edited == string(good) {
			t.Fatalf("m3-max-40c.json changed: no %q", tc.old)
		}
		if _, err := sim.ParseChip([]byte(edited), "bins.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseChip: %v, want %q", err, tc.want)
		}
	}
}

// TestChipRates: lanes and the tensor unit's rate come from the chip's data
// (apple-gpu.md §1, §6.1: 128 FP32 lanes per core everywhere, two FP16 issues
// per clock and 1024 tensor flops per clock per core on the M5 family).
func TestChipRates(t *testing.T) {
	for _, tc := range []struct {
		chip             string
		fp32, fp16, tens float64
	}{{"M1 Pro 16-core GPU", 128, 128, 0}, {"M5 10-core GPU", 128, 256, 1024}, {"M4 Max 40-core GPU", 128, 128, 0}} {
		c := mustChip(t, tc.chip)
		l32, l16 := c.Lanes()
		if l32 != tc.fp32 || l16 != tc.fp16 || c.TensorFlopsPerClock() != tc.tens {
			t.Errorf("%s: lanes %g/%g, tensor %g flop/clk; want %g/%g, %g", tc.chip, l32, l16, c.TensorFlopsPerClock(), tc.fp32, tc.fp16, tc.tens)
		}
	}
}

// TestOccupancyWholeSimdgroups: a threadgroup takes registers and thread
// slots in whole simdgroups, so one of 33 threads takes 64 and residency
// never passes the core's simdgroups.
func TestOccupancyWholeSimdgroups(t *testing.T) {
	chip := mustChip(t, "M1 Pro 16-core GPU")
	o, err := sim.OccupancyFor(chip, 33, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if max := int(chip.MaxThreadsPerCore.Value) / 32; o.SGsPerCore > max || o.TGsPerCore != 48 {
		t.Errorf("33 threads at 8 registers: %d threadgroups, %d simdgroups; want 48 and at most %d", o.TGsPerCore, o.SGsPerCore, max)
	}
}

// TestChipsShareMixesByContent: chips whose core models are equal (bins of
// one die at one clock) share their measured mixes in one Simulator, and a
// chip's result is the same whether another chip measured its mixes first or
// it ran alone.
func TestChipsShareMixesByContent(t *testing.T) {
	p := tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 128, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	a, b := mustChip(t, "M1 Pro 14-core GPU"), mustChip(t, "M1 Pro 16-core GPU")
	shared := sim.NewSimulator()
	ra, err := shared.Run(p, k, a, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := shared.Run(p, k, b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := sim.NewSimulator().Run(p, k, b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rb.KernelCycles != alone.KernelCycles || rb.TotalUs != alone.TotalUs {
		t.Errorf("M1 Pro 16-core after the 14-core: %.6g cycles, alone %.6g", rb.KernelCycles, alone.KernelCycles)
	}
	if ra.KernelCycles == rb.KernelCycles {
		t.Errorf("14 and 16 cores time the same (%.6g cycles): the chips' own core counts must still apply", ra.KernelCycles)
	}
	if rb.Sim.Instructions >= alone.Sim.Instructions {
		t.Errorf("the second chip measured %d instructions, alone %d: equal core models should share their mixes", rb.Sim.Instructions, alone.Sim.Instructions)
	}
}
