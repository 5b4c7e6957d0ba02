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

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

var smallProblem = tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 128, TypeA: dequant.Q4_0}

// TestSimulateDeterministic: the same inputs give the same bits, whatever the
// number of OS threads and whether the simulator's caches were warm.
func TestSimulateDeterministic(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
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
			chip := chips.MustLookup(tc.chip)
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
	m5 := chips.MustLookup("M5 10-core GPU")
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
		runAloneAndAfter(t, tc.name, tc.first, tc.second)
	}
}

// runAloneAndAfter runs second on a fresh Simulator and on one that ran first,
// and reports an error where the two predictions differ in any model output.
func runAloneAndAfter(t *testing.T, name string, first, second func(*sim.Simulator) (*sim.Result, error)) (alone, after *sim.Result) {
	t.Helper()
	alone, err := second(sim.NewSimulator())
	if err != nil {
		t.Fatal(err)
	}
	s := sim.NewSimulator()
	if _, err := first(s); err != nil {
		t.Fatal(err)
	}
	if after, err = second(s); err != nil {
		t.Fatal(err)
	}
	if a, b := modelOutputs(t, after), modelOutputs(t, alone); a != b {
		t.Errorf("%s: %.4f µs, alone %.4f µs\n%s\nalone:\n%s", name, after.TotalUs, alone.TotalUs, a, b)
	}
	return alone, after
}

// TestOtherMSharesMixes: a mix measurement does not read the activation
// reuse (its core has no DRAM channel), so problems of another m with the
// same k-loop share their measured mixes: after a run of one m, a run of
// another m on the same Simulator simulates fewer instructions than alone and
// predicts the same bits, for the mat-vec kernels (one program per k whatever
// m) and mul_mm_id.
func TestOtherMSharesMixes(t *testing.T) {
	m1 := chips.MustLookup("M1 Pro 16-core GPU")
	dense := func(m int) func(*sim.Simulator) (*sim.Result, error) {
		p := tile.DenseProblem{M: m, N: 1, K: 1024, TypeA: dequant.Q4_0}
		return func(s *sim.Simulator) (*sim.Result, error) {
			return s.RunWorkload(tile.DenseWorkload(p), tile.Kernel{Variant: tile.Upstream()}, tile.KernelAuto, m1, sim.Options{})
		}
	}
	moe := func(m, n int) func(*sim.Simulator) (*sim.Result, error) {
		p := tile.Problem{Experts: 32, Used: 4, M: m, K: 1024, Tokens: n, TypeA: dequant.Q4_0}
		return func(s *sim.Simulator) (*sim.Result, error) {
			return s.RunWorkload(tile.MoEWorkload(p), tile.Kernel{Variant: tile.Upstream()}, tile.KernelAuto, m1, sim.Options{Draws: 2})
		}
	}
	for _, tc := range []struct {
		name          string
		first, second func(*sim.Simulator) (*sim.Result, error)
	}{
		{"mul_mv m=4096 after m=1024", dense(1024), dense(4096)},
		{"mul_mv_id m=1792 after m=768", moe(768, 8), moe(1792, 8)},
		{"mul_mm_id m=1024 after m=512", moe(512, 128), moe(1024, 128)},
	} {
		alone, after := runAloneAndAfter(t, tc.name, tc.first, tc.second)
		if after.Sim.Instructions >= alone.Sim.Instructions {
			t.Errorf("%s simulated %d instructions, alone %d: want fewer (the first run measured its mixes)",
				tc.name, after.Sim.Instructions, alone.Sim.Instructions)
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
	chip := chips.MustLookup("M1 Pro 16-core GPU")
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
		chip := chips.MustLookup(tc.chip)
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

// TestHalfTileShowsOnSimdgroupPath: on the M1 Pro the half-tile skip halves the
// matrix work of small tiles and the prediction follows; skipped half-tiles and
// idle simdgroups are counted.
func TestHalfTileShowsOnSimdgroupPath(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
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
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	_, err := sim.Simulate(smallProblem, k, chip, sim.Options{})
	if err == nil || !strings.Contains(err.Error(), "threadgroup memory = 65536 bytes") || !strings.Contains(err.Error(), "tg_memory_per_tg_bytes") {
		t.Fatalf("64 KiB tile on the M1 Pro: %v, want an error naming tg_memory_per_tg_bytes", err)
	}
	good, err := os.ReadFile(filepath.Join("..", "chips", "data", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(good), `"tg_memory_per_tg_bytes": {"value": 32768,`, `"tg_memory_per_tg_bytes": {"value": 65536,`, 1)
	s = strings.Replace(s, `"tg_memory_per_core_bytes": {"value": 57344,`, `"tg_memory_per_core_bytes": {"value": 131072,`, 1)
	whatIf, err := chips.Parse([]byte(s), "what-if.json")
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
	chip := chips.MustLookup("M1 Pro 16-core GPU")
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
	chip := chips.MustLookup("M1 Pro 16-core GPU")
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
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 1, Used: 1, M: 64, K: 256, Tokens: 1, TypeA: dequant.IQ2_XXS}
	r, err := sim.NewSimulator().RunMulMVID(p, chip, sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(r.Counters.Launched) * (256*8 + 128); r.LevelBytes[0] != want {
		t.Errorf("L1 served %g bytes to %d threadgroups, want %g (the codebook, once each)", r.LevelBytes[0], r.Counters.Launched, want)
	}
}

// TestChipsShareMixesByContent: chips whose core models are equal (bins of
// one die at one clock) share their measured mixes in one Simulator, and a
// chip's result is the same whether another chip measured its mixes first or
// it ran alone.
func TestChipsShareMixesByContent(t *testing.T) {
	p := tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 128, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	a, b := chips.MustLookup("M1 Pro 14-core GPU"), chips.MustLookup("M1 Pro 16-core GPU")
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

// TestMatVecStreamsAtChipBandwidth: a DRAM-bound dense mat-vec grid (LLaMA-2
// 7B's 4096x4096 projection at n = 1, several waves) draws the chip's DRAM
// bandwidth on the fast engine as it does on the detailed one. A core whose
// front end launches a threadgroup issues nothing, but its transfers in
// flight keep arriving (fastCore.advance); before that rule the fast engine
// stopped the core's share of the DRAM during every launch and read these
// grids 5-9 % slower than the detailed engine (0.88-0.94 of the bandwidth).
func TestMatVecStreamsAtChipBandwidth(t *testing.T) {
	chip := chips.MustLookup("M2 Max 38-core GPU")
	bpc := chip.DRAMBandwidthGBs.Value * 1e3 / chip.ClockMHz.Value // bytes per cycle
	for _, typ := range []dequant.Type{dequant.F16, dequant.Q8_0} {
		d := tile.DenseProblem{M: 4096, K: 4096, N: 1, TypeA: typ}
		var r [2]*sim.Result
		for i, e := range []sim.Engine{sim.Fast, sim.Detailed} {
			res, err := sim.NewSimulator().RunWorkload(tile.DenseWorkload(d), tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, tile.KernelAuto, chip, sim.Options{Engine: e})
			if err != nil {
				t.Fatal(err)
			}
			r[i] = res
		}
		// the engines differ in the first wave's start and the last one's
		// end (a few hundred cycles of 78,000-145,000): 3 % bounds that
		if dev := math.Abs(r[0].KernelUs/r[1].KernelUs - 1); dev > 0.03 {
			t.Errorf("%s: fast %.1f µs, detailed %.1f µs (%.1f %% apart)", typ, r[0].KernelUs, r[1].KernelUs, 100*dev)
		}
		// the grid's DRAM bytes over its time: all but its first and last
		// few hundred cycles stream, so at least 0.95 of the bandwidth
		if f := r[0].DRAMBytes / (r[0].KernelCycles * bpc); f < 0.95 {
			t.Errorf("%s: the fast engine streams %.3f of the chip's DRAM bandwidth, want at least 0.95", typ, f)
		}
	}
}
