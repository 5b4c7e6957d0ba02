package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

func chip(t *testing.T, name string) *chips.Chip {
	t.Helper()
	c := chips.MustLookup(name)
	return c
}

// TestRunOtherKernels times each kernel once and checks the result's
// bookkeeping: the kernel timed, one dispatch boundary and no map0, the
// engine, and the grid's threadgroup count.
func TestRunOtherKernels(t *testing.T) {
	m1 := chip(t, "M1 Pro 16-core GPU")
	m5 := chip(t, "M5 10-core GPU")
	s := sim.NewSimulator()
	for _, tc := range []struct {
		c        *chips.Chip
		p        tile.DenseProblem
		kernel   string
		engine   sim.Engine
		launched int64
	}{
		{m1, tile.DenseProblem{M: 200, N: 1, K: 1024, TypeA: dequant.Q4_0}, "mul_mv", sim.Fast, 25},
		{m1, tile.DenseProblem{M: 200, N: 3, K: 1024, TypeA: dequant.IQ3_S}, "mul_mv", sim.Fast, 3 * 25},
		{m1, tile.DenseProblem{M: 200, N: 5, K: 1024, TypeA: dequant.Q8_0}, "mul_mv_ext", sim.Fast, 25},
		{m1, tile.DenseProblem{M: 200, N: 40, K: 1024, TypeA: dequant.F16}, "mul_mm", sim.Fast, 4 * 2},
		{m5, tile.DenseProblem{M: 200, N: 40, K: 1024, TypeA: dequant.Q4_0}, "mul_mm", sim.Fast, 4},
	} {
		r, err := s.RunWorkload(tile.DenseWorkload(tc.p), tile.Kernel{Variant: tile.Upstream(), Path: sim.DefaultPath(tc.c)}, tile.KernelAuto, tc.c, sim.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.p, err)
		}
		if r.KernelName != tc.kernel || r.Engine != tc.engine || r.Counters.Launched != tc.launched || r.Dense != tc.p {
			t.Errorf("%s: kernel %s engine %s launched %d, want %s %s %d", tc.p, r.KernelName, r.Engine, r.Counters.Launched, tc.kernel, tc.engine, tc.launched)
		}
		if r.Map0Us != 0 || r.OverheadUs != tc.c.DispatchOverheadUs.Value || math.Abs(r.TotalUs-r.KernelUs-r.OverheadUs) > 1e-9 || r.KernelUs <= 0 {
			t.Errorf("%s: total %.2f = kernel %.2f + map0 %.2f + overhead %.2f: want one dispatch boundary", tc.p, r.TotalUs, r.KernelUs, r.Map0Us, r.OverheadUs)
		}
	}
	p := tile.Problem{Experts: 16, Used: 4, M: 100, K: 512, Tokens: 8, TypeA: dequant.Q4_0}
	r, err := s.RunMulMVID(p, m1, sim.Options{Draws: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.KernelName != "mul_mv_id" || r.Map0Us != 0 || r.OverheadUs != m1.DispatchOverheadUs.Value || r.Counters.Launched != 8*4*13 || r.Draws != 2 {
		t.Errorf("mul_mv_id: %s map0 %.2f overhead %.2f launched %d draws %d", r.KernelName, r.Map0Us, r.OverheadUs, r.Counters.Launched, r.Draws)
	}
}

// TestMatVecIsDRAMBound: a large single-token mat-vec cannot beat the chip's
// DRAM bandwidth and, with enough threadgroups, gets within reach of it.
func TestMatVecIsDRAMBound(t *testing.T) {
	c := chip(t, "M1 Pro 16-core GPU")
	p := tile.DenseProblem{M: 2048, N: 1, K: 4096, TypeA: dequant.Q4_0}
	r, err := sim.NewSimulator().RunWorkload(tile.DenseWorkload(p), tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, tile.KernelAuto, c, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	floor := float64(p.M*rb) / (c.DRAMBandwidthGBs.Value * 1e3) // µs
	if r.KernelUs < floor || r.KernelUs > 3*floor {
		t.Errorf("kernel %.1f µs for %d weight bytes: want between the DRAM floor %.1f µs and 3x it", r.KernelUs, p.M*rb, floor)
	}
}

// TestWeightReuse checks the SLC reuse rule of the mat-vec grids.
func TestWeightReuse(t *testing.T) {
	c := chip(t, "M1 Pro 16-core GPU")
	s := sim.NewSimulator()
	// expert 3 read by pairs 0 and 2 (one pair of traffic apart: repeat), and
	// by pair 7 of a problem whose experts are larger than the SLC (no repeat)
	p := tile.Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 4, TypeA: dequant.Q8_0}
	ids := []int32{3, 1, 3, 2, 4, 5, 6, 7}
	g, b, err := s.MulMVIDGrid(p, ids, c)
	if err != nil {
		t.Fatal(err)
	}
	gx := p.M / b.Kernel.RowsPerTG()
	for z, want := range []bool{false, false, true, false, false, false, false, false} {
		if _, rep := g.TG(z * gx); rep != want {
			t.Errorf("pair %d: repeat %v, want %v", z, rep, want)
		}
	}
	big := tile.Problem{Experts: 2, Used: 1, M: 16384, K: 16384, Tokens: 2, TypeA: dequant.F16} // 512 MiB per expert
	g, _, err = s.MulMVIDGrid(big, []int32{1, 1}, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, rep := g.TG(g.Launched - 1); rep {
		t.Error("a 512 MiB expert re-read by the next pair is marked as an SLC hit")
	}
	// dense: the next token re-reads the matrix, from the SLC when it fits
	for _, tc := range []struct {
		p    tile.DenseProblem
		want bool
	}{
		{tile.DenseProblem{M: 256, N: 2, K: 256, TypeA: dequant.IQ2_XS}, true},
		{tile.DenseProblem{M: 16384, N: 2, K: 16384, TypeA: dequant.F16}, false},
	} {
		g, err := s.DenseGrid(tc.p, tile.DenseWorkload(tc.p).Dispatch(), tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, rep := g.TG(0); rep {
			t.Errorf("%s: the first token's threadgroup is a repeat", tc.p)
		}
		if _, rep := g.TG(g.Launched - 1); rep != tc.want {
			t.Errorf("%s: second token repeat %v, want %v", tc.p, rep, tc.want)
		}
	}
}

// TestOtherKernelErrors: impossible problems are errors naming the field.
func TestOtherKernelErrors(t *testing.T) {
	c := chip(t, "M1 Pro 16-core GPU")
	s := sim.NewSimulator()
	for _, tc := range []struct {
		p    tile.DenseProblem
		want string
	}{
		{tile.DenseProblem{M: 0, N: 1, K: 256, TypeA: dequant.Q4_0}, "m = 0"},
		{tile.DenseProblem{M: 8, N: 0, K: 256, TypeA: dequant.Q4_0}, "n = 0"},
		{tile.DenseProblem{M: 8, N: 1, K: 100, TypeA: dequant.Q4_0}, "k = 100"},
		{tile.DenseProblem{M: 8, N: 16, K: 80, TypeA: dequant.F16}, "k = 80: must be a multiple of 32"},
	} {
		if _, err := s.RunWorkload(tile.DenseWorkload(tc.p), tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, tile.KernelAuto, c, sim.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.p, err, tc.want)
		}
	}
	p := tile.Problem{Experts: 4, Used: 2, M: 64, K: 256, Tokens: 2, TypeA: dequant.Q4_0}
	if _, _, err := s.MulMVIDGrid(p, []int32{0, 1, 2, 9}, c); err == nil || !strings.Contains(err.Error(), "ids[1][1] = 9") {
		t.Errorf("bad expert id: %v", err)
	}
	if _, err := s.RunMulMVID(p, c, sim.Options{Routing: countsOnly{}}); err == nil || !strings.Contains(err.Error(), "expert ids") {
		t.Errorf("counts-only routing: %v", err)
	}
}

// countsOnly is a routing that gives tokens per expert but no ids.
type countsOnly struct{}

func (countsOnly) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return routing.UniformCounts(p, seed), nil
}
func (countsOnly) Name() string { return "counts-only" }

// TestBatchedDense: a batched MUL_MAT (attention's KQ over heads) launches
// one z plane per matmul, credits every matmul's FLOPs, and takes about as
// long as its matmuls one after the other: each plane here has more
// threadgroups than the chip has resident slots, so planes cannot overlap
// much (the bounds are loose: the last wave of one plane overlaps the next;
// measured 8.2 for the mul_mm case, 6.7 for mul_mv).
// A broadcast plane re-reads the matrix the previous plane read.
func TestBatchedDense(t *testing.T) {
	m1 := chip(t, "M1 Pro 16-core GPU")
	s := sim.NewSimulator()
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	for _, one := range []tile.DenseProblem{
		{M: 512, N: 512, K: 128, TypeA: dequant.F16}, // mul_mm, pp KQ of one head
		{M: 512, N: 1, K: 128, TypeA: dequant.F16},   // mul_mv, tg KQ of one head
	} {
		r1, err := s.RunWorkload(tile.DenseWorkload(one), k, tile.KernelAuto, m1, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		batched := one
		batched.Batch, batched.Broadcast = 4, 2
		rb, err := s.RunWorkload(tile.DenseWorkload(batched), k, tile.KernelAuto, m1, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rb.Counters.Launched != 8*r1.Counters.Launched || rb.KernelName != r1.KernelName {
			t.Errorf("%s: launched %d (%s), want 8 x %d (%s)", batched, rb.Counters.Launched, rb.KernelName, r1.Counters.Launched, r1.KernelName)
		}
		if math.Abs(batched.FLOPs()-8*one.FLOPs()) > 0 {
			t.Errorf("%s: FLOPs %.0f, want 8 x %.0f", batched, batched.FLOPs(), one.FLOPs())
		}
		if ratio := rb.KernelUs / r1.KernelUs; ratio < 5 || ratio > 8.5 {
			t.Errorf("%s: %.2f µs, %.2f x one matmul's %.2f µs: want between 5 and 8.5", batched, rb.KernelUs, ratio, r1.KernelUs)
		}
		if !strings.Contains(batched.String(), "bs=[4,1],nr=[2,1]") || strings.Contains(one.String(), "bs=") {
			t.Errorf("strings %q, %q", batched.String(), one.String())
		}
	}
	bad := tile.DenseProblem{M: 64, N: 64, K: 64, TypeA: dequant.F16, Batch: -1}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "bs (batch) = -1") {
		t.Errorf("negative batch: %v", err)
	}
}
