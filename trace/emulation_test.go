package trace

import (
	"math"
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

// TestEmulateEveryKernel: each kernel's emulated output is within its bound
// of its reference, and an output one part in a thousand off is not (the
// bounds are sharp enough to catch a wrong value).
func TestEmulateEveryKernel(t *testing.T) {
	moe, dense := kernelWorkloads(24, 3)
	for _, tc := range []struct {
		w    tile.Workload
		kern tile.MetalKernel
		path tile.Path
	}{
		{moe, tile.KernelMulMVID, tile.Simdgroup}, {moe, tile.KernelMulMMID, tile.Simdgroup},
		{dense(1), tile.KernelMulMV, tile.Simdgroup}, {dense(4), tile.KernelMulMVExt, tile.Simdgroup},
		{dense(20), tile.KernelMulMM, tile.Simdgroup}, {dense(20), tile.KernelMulMM, tile.Tensor},
	} {
		k := tile.Kernel{Variant: tile.Upstream(), Path: tc.path}
		em, err := Emulate(tc.w, tc.kern, k, 5, 2)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.w, tc.kern, err)
		}
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
