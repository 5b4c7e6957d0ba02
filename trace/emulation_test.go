package trace

import (
	"math"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/tile"
)

// TestCompareEmulation: the worst error is in units of the accumulation
// bound; a nonzero value where every product is zero is infinitely wrong,
// and a NaN stays NaN (so a "<= 1" check fails it).
func TestCompareEmulation(t *testing.T) {
	ref := golden.References{F64: []float32{1, 0}, F16In: []float32{1, 0}, SumAbs: []float64{1, 0}}
	ref.Staged = ref.F16In
	tol := golden.AccumulationTolerance(64, 1)
	e := CompareEmulation(64, []float32{1 + float32(tol/2), 0}, ref, false)
	if e.Worst <= 0 || e.Worst > 1 || e.MaxAbsF64 == 0 || e.MaxAbsStaged != e.MaxAbsF64 || e.Ref != "ref_f16in" {
		t.Fatalf("within the bound: %+v", e)
	}
	if e := CompareEmulation(64, []float32{1, 1e-30}, ref, false); !math.IsInf(e.Worst, 1) {
		t.Fatalf("a value where every product is zero: worst %g, want +Inf", e.Worst)
	}
	if e := CompareEmulation(64, []float32{float32(math.NaN()), 0}, ref, false); !math.IsNaN(e.Worst) {
		t.Fatalf("a NaN: worst %g, want NaN", e.Worst)
	}
	// bf16: judged against the bfloat-staged reference
	ref.Staged = []float32{2, 0}
	if e := CompareEmulation(64, []float32{2, 0}, ref, true); e.Worst != 0 || e.Ref != "ref_bf16in" {
		t.Fatalf("bf16: %+v", e)
	}
}

// kernelWorkloads returns the small workloads the every-kernel tests run: a
// 4-expert top-2 q4_0 mul_mat_id of m rows, k = 256 and tokens tokens, and
// the q8_0 mul_mat of m rows, k = 256 and n tokens.
func kernelWorkloads(m, tokens int) (moe tile.Workload, dense func(n int) tile.Workload) {
	moe = tile.MoEWorkload(tile.Problem{Experts: 4, Used: 2, M: m, K: 256, Tokens: tokens, TypeA: dequant.Q4_0})
	return moe, func(n int) tile.Workload {
		return tile.DenseWorkload(tile.DenseProblem{M: m, N: n, K: 256, TypeA: dequant.Q8_0})
	}
}

// kernelRun is one case of the every-kernel tests: a workload and the kernel,
// path and variant it runs on.
type kernelRun struct {
	w       tile.Workload
	kern    tile.MetalKernel
	path    tile.Path
	variant tile.Variant
}

// emulate emulates the run (seed 5, two workers), failing the test on an error.
func (r kernelRun) emulate(t *testing.T) *Emulation {
	t.Helper()
	em, err := Emulate(r.w, r.kern, tile.Kernel{Variant: r.variant, Path: r.path}, 5, 2)
	if err != nil {
		t.Fatalf("%s %s: %v", r.w, r.kern, err)
	}
	return em
}

// TestEmulateEveryKernel: each kernel's emulated output is within its bound
// of its reference, and an output one part in a thousand off is not (the
// bounds are sharp enough to catch a wrong value).
func TestEmulateEveryKernel(t *testing.T) {
	moe, dense := kernelWorkloads(24, 3)
	up := tile.Upstream()
	for _, tc := range []kernelRun{
		{moe, tile.KernelMulMVID, tile.Simdgroup, up}, {moe, tile.KernelMulMMID, tile.Simdgroup, up},
		{dense(1), tile.KernelMulMV, tile.Simdgroup, up}, {dense(4), tile.KernelMulMVExt, tile.Simdgroup, up},
		{dense(20), tile.KernelMulMM, tile.Simdgroup, up}, {dense(20), tile.KernelMulMM, tile.Tensor, up},
	} {
		em := tc.emulate(t)
		if !(em.Error.Worst <= 1) {
			t.Errorf("%s %s/%s: %.3g x the bound", tc.w, tc.kern, tc.path, em.Error.Worst)
		}
		if tc.kern == tile.KernelMulMMID {
			continue // CompareEmulation's own test covers it
		}
		dst := em.Result.Dst
		dst[len(dst)/2] *= 1.001
		var e EmulationError
		if tc.kern == tile.KernelMulMVID {
			t2 := emulate.RandomTensors(tc.w.MoE, 5)
			e = CompareMulMVID(tc.w.MoE, t2, dst)
		} else {
			e = CompareDense(tc.w.Dense, tc.kern, tc.path, emulate.RandomDenseTensors(tc.w.Dense, 5), dst)
		}
		if e.Worst <= 1 {
			t.Errorf("%s %s/%s: a value 0.1%% off is %.3g x the bound", tc.w, tc.kern, tc.path, e.Worst)
		}
	}
}

// TestEmulateMACsBoundsTheRun: the estimate is at least the products
// (n·n_used·m·k, m·n·k) and at least the multiply-accumulates the kernel
// executed (emulate.Result.MACs), on a routing that leaves experts partly
// filled; a matrix kernel's executed MACs are its matrix ops', padding
// included, so at least the products; a mat-vec kernel's executed MACs and
// estimate are its products exactly.
func TestEmulateMACsBoundsTheRun(t *testing.T) {
	moe, dense := kernelWorkloads(72, 40)
	for _, tc := range []kernelRun{
		{moe, tile.KernelMulMVID, tile.Simdgroup, tile.Upstream()},
		{moe, tile.KernelMulMMID, tile.Simdgroup, tile.Upstream()},
		{moe, tile.KernelMulMMID, tile.Simdgroup, tile.HalfTile()},
		{moe, tile.KernelMulMMID, tile.Tensor, tile.Upstream()},
		{dense(1), tile.KernelMulMV, tile.Simdgroup, tile.Upstream()},
		{dense(4), tile.KernelMulMVExt, tile.Simdgroup, tile.Upstream()},
		{dense(40), tile.KernelMulMM, tile.Simdgroup, tile.Upstream()},
		{dense(40), tile.KernelMulMM, tile.Tensor, tile.Upstream()},
	} {
		est, err := EmulateMACs(tc.w, tc.kern, tile.Kernel{Variant: tc.variant, Path: tc.path})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.w, tc.kern, err)
		}
		em := tc.emulate(t)
		p := asMoE(tc.w)
		products := float64(p.Tokens) * float64(p.Used) * float64(p.M) * float64(p.K)
		c := em.Result.Counters.Work
		matrix := float64(c.MMA8)*8*8*8 + float64(c.MMA16)*16*16*16
		ran := em.Result.MACs
		matVec := tc.kern == tile.KernelMulMVID || tc.kern == tile.KernelMulMV || tc.kern == tile.KernelMulMVExt
		name := tc.w.String() + " " + tc.kern.String() + "/" + tc.path.String() + "/" + tc.variant.Name
		switch {
		case est < products || est < ran:
			t.Errorf("%s: estimate %.4g below the products %.4g or the %.4g executed", name, est, products, ran)
		case matVec && (ran != products || est != products):
			t.Errorf("%s: mat-vec executed %.4g and estimate %.4g, want the products %.4g", name, ran, est, products)
		case !matVec && (ran != matrix || ran < products):
			t.Errorf("%s: executed %.4g, want the matrix ops' %.4g, at least the products %.4g", name, ran, matrix, products)
		}
	}
}

// TestCheckEmulateMACs: a run past the bound is refused with its estimate and
// the --max-macs that accepts it, which does.
func TestCheckEmulateMACs(t *testing.T) {
	w := tile.MoEWorkload(tile.Problem{Experts: 128, Used: 8, M: 4096, K: 4096, Tokens: 4096, TypeA: dequant.Q4_0})
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	err := CheckEmulateMACs(w, tile.KernelMulMMID, k, 0)
	if err == nil || !strings.Contains(err.Error(), "estimated 6.18e+11 multiply-accumulates") || !strings.Contains(err.Error(), "--max-macs 6.2e+11 accepts it") {
		t.Fatalf("the 128-expert 4096-cube shape at the default bound: %v", err)
	}
	if err := CheckEmulateMACs(w, tile.KernelMulMMID, k, 6.2e11); err != nil {
		t.Errorf("at the --max-macs the error names: %v", err)
	}
}
