package sim_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// perfSuite is test-backend-ops' MUL_MAT_ID perf set for q4_0 that mul_mm_id
// runs (n >= 32): the two shapes x n in {32..512} x {upstream, halftile} x the
// two calibrated chips on their default paths.
func perfSuite(b *testing.B) (cases []func(*sim.Simulator) *sim.Result) {
	shapes := []tile.Problem{
		tile.HeadlineProblem(0),
		{Experts: 32, Used: 4, M: 1792, K: 2048, TypeA: dequant.Q4_0},
	}
	for _, chipName := range []string{"M1 Pro 16-core GPU", "M5 10-core GPU"} {
		chip := chips.MustLookup(chipName)
		path := tile.Simdgroup
		if chip.TensorPath {
			path = tile.Tensor
		}
		for _, shape := range shapes {
			for _, n := range []int{32, 64, 128, 256, 512} {
				for _, v := range []tile.Variant{tile.Upstream(), tile.HalfTile()} {
					p := shape
					p.Tokens = n
					k := tile.Kernel{Variant: v, Path: path}
					cases = append(cases, func(s *sim.Simulator) *sim.Result {
						r, err := s.Run(p, k, chip, sim.Options{})
						if err != nil {
							b.Fatal(err)
						}
						return r
					})
				}
			}
		}
	}
	return cases
}

// BenchmarkPerfSuite times the whole MUL_MAT_ID perf suite in timing mode with a
// fresh simulator (no warm caches) per iteration.
func BenchmarkPerfSuite(b *testing.B) {
	cases := perfSuite(b)
	var detailed, modelled int64
	for i := 0; i < b.N; i++ {
		s := sim.NewSimulator()
		for _, c := range cases {
			r := c(s)
			detailed += r.Sim.Instructions
			modelled += r.Sim.Represented
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec/float64(b.N), "s/suite")
	b.ReportMetric(float64(detailed)/sec/1e6, "M-instr-simulated/s")
	b.ReportMetric(float64(modelled)/sec/1e6, "M-instr-modelled/s")
}

// BenchmarkPerfSuiteParallel times the same suite the way simrun validate and
// the headline run it: rows on GOMAXPROCS goroutines sharing one fresh
// simulator (each mix is measured once, by the first row that needs it).
func BenchmarkPerfSuiteParallel(b *testing.B) {
	cases := perfSuite(b)
	var detailed, modelled atomic.Int64
	for i := 0; i < b.N; i++ {
		s := sim.NewSimulator()
		next := make(chan func(*sim.Simulator) *sim.Result)
		var wg sync.WaitGroup
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range next {
					r := c(s)
					detailed.Add(r.Sim.Instructions)
					modelled.Add(r.Sim.Represented)
				}
			}()
		}
		for _, c := range cases {
			next <- c
		}
		close(next)
		wg.Wait()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec/float64(b.N), "s/suite")
	b.ReportMetric(float64(detailed.Load())/sec/1e6, "M-instr-simulated/s")
	b.ReportMetric(float64(modelled.Load())/sec/1e6, "M-instr-modelled/s")
}

// BenchmarkDetailedEngine runs every instruction of a mid-size dispatch and
// reports the instruction rate of the core model.
func BenchmarkDetailedEngine(b *testing.B) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 32, Used: 4, M: 512, K: 1024, Tokens: 256, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	var instr int64
	for i := 0; i < b.N; i++ {
		r, err := sim.Simulate(p, k, chip, sim.Options{Engine: sim.Detailed, Draws: 1})
		if err != nil {
			b.Fatal(err)
		}
		instr += r.Sim.Instructions
	}
	b.ReportMetric(float64(instr)/b.Elapsed().Seconds()/1e6, "M-instr/s")
}

// BenchmarkMillionTokens times the timing mode on n = 1,000,000 tokens and
// reports the peak heap, which must stay bounded by resident tiles, not tokens.
func BenchmarkMillionTokens(b *testing.B) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.HeadlineProblem(1_000_000)
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	for i := 0; i < b.N; i++ {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := sim.Simulate(p, k, chip, sim.Options{Draws: 1}); err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/1e6, "MB-allocated")
		b.ReportMetric(float64(after.HeapSys)/1e6, "MB-heap-sys")
	}
}

// BenchmarkLargestAccepted times the largest n the default work bound
// accepts (sim.DefaultMaxWork, on the fast engine with 4 draws) for the
// calibration shape and for a one-expert shape whose cost is all map0's
// chunks, and reports the peak heap (sampled every millisecond), which must
// stay under 100 MB (docs/performance.md, "Bounded work").
func BenchmarkLargestAccepted(b *testing.B) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	k := tile.Kernel{Variant: tile.Upstream()}
	for _, p := range []tile.Problem{
		tile.HeadlineProblem(1_586_272),
		{Experts: 1, Used: 1, M: 64, K: 64, Tokens: tile.MaxTokens, TypeA: dequant.Q4_0},
	} {
		b.Run(fmt.Sprintf("experts=%d,n=%d", p.Experts, p.Tokens), func(b *testing.B) {
			for range b.N {
				runtime.GC()
				var peak uint64
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
					}
				}()
				_, err := sim.Simulate(p, k, chip, sim.Options{})
				close(stop)
				<-done
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(peak)/1e6, "MB-peak-heap")
			}
		})
	}
}

// llama7BRows are LLaMA-2 7B's matmul shapes (m x k: q/k/v/o 4096x4096,
// gate/up 11008x4096, down 4096x11008, output 32000x4096) in q4_0 on every
// chip metalsim knows, at n tokens: a validate run over a model's matmuls.
func llama7BRows(n int) []tile.DenseProblem {
	var ps []tile.DenseProblem
	for _, mk := range [][2]int{{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}} {
		ps = append(ps, tile.DenseProblem{M: mk[0], N: n, K: mk[1], TypeA: dequant.Q4_0})
	}
	return ps
}

// BenchmarkDenseRows times LLaMA-2 7B's four matmul shapes on every M1–M4
// chip (30 chips, 120 rows: issue #17's two sets) at n = 1 (mul_mv) and
// n = 512 (mul_mm), on GOMAXPROCS workers sharing one Simulator as `simrun
// validate` runs a file's rows; the goal is each set under 1.5 s on two
// cores (s/op).
func BenchmarkDenseRows(b *testing.B) {
	for _, n := range []int{1, 512} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			chipList, err := chips.All()
			if err != nil {
				b.Fatal(err)
			}
			var rows []kernelRow
			for _, c := range chipList {
				if !slices.ContainsFunc([]string{"M1 ", "M2 ", "M3 ", "M4 "}, func(f string) bool { return strings.HasPrefix(c.Name, f) }) {
					continue // the M1–M4 chips only
				}
				for _, p := range llama7BRows(n) {
					rows = append(rows, kernelRow{c, tile.DenseWorkload(p), tile.Upstream()})
				}
			}
			if len(rows) != 120 {
				b.Fatalf("%d rows, want 120 (30 M1–M4 chips x 4 shapes)", len(rows))
			}
			for i := 0; i < b.N; i++ {
				runRows(b, rows)
			}
			b.ReportMetric(float64(len(rows)), "rows/op")
		})
	}
}

// kernelRow is one validate row of a kernel set: a workload on a chip, timed
// as the kernel llama.cpp dispatches for it.
type kernelRow struct {
	chip *chips.Chip
	w    tile.Workload
	v    tile.Variant
}

// kernelRowSets returns, per kernel llama.cpp dispatches, a set of realistic
// rows on the two calibrated chips (M1 Pro, M5): mul_mm_id the perf suite's
// 40 rows (BenchmarkPerfSuite); mul_mv_id the same two MUL_MAT_ID shapes at
// n = 8 and 16; mul_mv, mul_mv_ext and mul_mm LLaMA-2 7B's four matmul
// shapes (llama7BRows) at n = 1, n = 4 and 8, and n = 512.
func kernelRowSets(b *testing.B) map[tile.MetalKernel][]kernelRow {
	sets := map[tile.MetalKernel][]kernelRow{}
	moe := []tile.Problem{
		tile.HeadlineProblem(0),
		{Experts: 32, Used: 4, M: 1792, K: 2048, TypeA: dequant.Q4_0},
	}
	add := func(want tile.MetalKernel, r kernelRow) {
		if got := r.w.Dispatch(); got != want {
			b.Fatalf("%s dispatches %s, want %s", r.w, got, want)
		}
		sets[want] = append(sets[want], r)
	}
	for _, name := range []string{"M1 Pro 16-core GPU", "M5 10-core GPU"} {
		c := chips.MustLookup(name)
		for _, shape := range moe {
			for _, n := range []int{32, 64, 128, 256, 512} {
				for _, v := range []tile.Variant{tile.Upstream(), tile.HalfTile()} {
					p := shape
					p.Tokens = n
					add(tile.KernelMulMMID, kernelRow{c, tile.MoEWorkload(p), v})
				}
			}
			for _, n := range []int{8, 16} {
				p := shape
				p.Tokens = n
				add(tile.KernelMulMVID, kernelRow{c, tile.MoEWorkload(p), tile.Upstream()})
			}
		}
		for _, kn := range []struct {
			k  tile.MetalKernel
			ns []int
		}{{tile.KernelMulMV, []int{1}}, {tile.KernelMulMVExt, []int{4, 8}}, {tile.KernelMulMM, []int{512}}} {
			for _, n := range kn.ns {
				for _, p := range llama7BRows(n) {
					add(kn.k, kernelRow{c, tile.DenseWorkload(p), tile.Upstream()})
				}
			}
		}
	}
	return sets
}

// runRows times rows the way `simrun validate` runs a file: on GOMAXPROCS
// workers sharing one fresh Simulator. It returns the wall time and the
// simdgroup instructions the core model issued for them.
func runRows(b *testing.B, rows []kernelRow) (time.Duration, int64) {
	start := time.Now()
	s := sim.NewSimulator()
	var next, instr atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1)) - 1; j < len(rows); j = int(next.Add(1)) - 1 {
				r := rows[j]
				k := tile.Kernel{Variant: r.v, Path: sim.DefaultPath(r.chip)}
				res, err := s.RunWorkload(r.w, k, tile.KernelAuto, r.chip, sim.Options{})
				if err != nil {
					b.Error(err)
					return
				}
				instr.Add(res.Sim.Instructions)
			}
		}()
	}
	wg.Wait()
	return time.Since(start), instr.Load()
}

// BenchmarkKernelRows times a row of every kernel llama.cpp dispatches
// (kernelRowSets), each kernel's set from a fresh Simulator, the sets one
// after the other within an iteration (in an order rotated by one kernel per
// iteration), and reports each kernel's cost per row as a ratio to a
// mul_mm_id row (the goal: every ratio at most 1), with the mul_mm_id row's
// milliseconds. Each set's time is its fastest iteration: on a machine shared
// with other jobs a loaded second slows whichever set runs in it, and the
// minimum over a few iterations is what such a set costs (docs/performance.md).
// The instructions the core model issued per row, which no load moves, are
// reported the same way (-instr).
func BenchmarkKernelRows(b *testing.B) {
	sets := kernelRowSets(b)
	kernels := []tile.MetalKernel{tile.KernelMulMMID, tile.KernelMulMVID, tile.KernelMulMVExt, tile.KernelMulMV, tile.KernelMulMM}
	best := make([]time.Duration, len(kernels))
	instr := make([]int64, len(kernels))
	for it := range b.N {
		for j := range kernels {
			i := (it + j) % len(kernels)
			d, n := runRows(b, sets[kernels[i]])
			if it == 0 || d < best[i] {
				best[i] = d
			}
			instr[i] = n
		}
	}
	perRow := func(i int) float64 { return best[i].Seconds() / float64(len(sets[kernels[i]])) }
	instrPerRow := func(i int) float64 { return float64(instr[i]) / float64(len(sets[kernels[i]])) }
	b.ReportMetric(perRow(0)*1e3, "mul_mm_id-ms/row")
	b.ReportMetric(instrPerRow(0)/1e6, "mul_mm_id-M-instr/row")
	for i, k := range kernels[1:] {
		b.ReportMetric(perRow(i+1)/perRow(0), k.String()+"/mul_mm_id")
		b.ReportMetric(instrPerRow(i+1)/instrPerRow(0), k.String()+"-instr/mul_mm_id")
	}
}

// BenchmarkKernelSet times each kernel's set of BenchmarkKernelRows alone
// (one sub-benchmark per kernel, from a fresh Simulator per iteration), for
// a profile or an instruction count of one kernel's rows:
//
//	GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no sim.test -test.run '^$' -test.bench 'KernelSet/mul_mv_id$' -test.benchtime 1x
func BenchmarkKernelSet(b *testing.B) {
	sets := kernelRowSets(b)
	for _, k := range []tile.MetalKernel{tile.KernelMulMMID, tile.KernelMulMVID, tile.KernelMulMVExt, tile.KernelMulMV, tile.KernelMulMM} {
		b.Run(k.String(), func(b *testing.B) {
			var d time.Duration
			for range b.N {
				t, _ := runRows(b, sets[k])
				d += t
			}
			b.ReportMetric(d.Seconds()*1e3/float64(b.N*len(sets[k])), "ms/row")
		})
	}
}
