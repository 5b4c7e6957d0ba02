package tile

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
)

// TestDispatchRule: the rule's text names the condition that picked the
// kernel, for every branch of kernel-facts §2.
func TestDispatchRule(t *testing.T) {
	moe := func(n, k int) Workload {
		return MoEWorkload(Problem{Experts: 8, Used: 2, M: 64, K: k, Tokens: n, TypeA: dequant.Q4_0})
	}
	dense := func(typ dequant.Type, n, k int, halfB bool) Workload {
		return DenseWorkload(DenseProblem{M: 64, N: n, K: k, TypeA: typ, HalfB: halfB})
	}
	for _, tc := range []struct {
		w    Workload
		kern MetalKernel
		rule string
	}{
		{moe(8, 256), KernelMulMVID, "n < 32 tokens"},
		{moe(64, 32), KernelMulMVID, "k < 64"},
		{moe(32, 256), KernelMulMMID, "n >= 32 tokens and k >= 64"},
		{dense(dequant.Q4_0, 5, 256, false), KernelMulMVExt, "f32 activations, k % 128 = 0 and 2 <= n <= 8 for q4_0"},
		{dense(dequant.Q4_0, 9, 256, false), KernelMulMM, "n > 8 tokens and k >= 64"},
		{dense(dequant.Q4_0, 16, 32, false), KernelMulMV, "k < 64"},
		{dense(dequant.Q4_0, 1, 256, false), KernelMulMV, "n < 2: mul_mv_ext takes 2 to 8 tokens for q4_0"},
		{dense(dequant.IQ2_XS, 4, 256, false), KernelMulMV, "iq2_xs has no mul_mv_ext"},
		{dense(dequant.Q4_0, 4, 256, true), KernelMulMV, "f32 activations only"},
		{dense(dequant.Q4_0, 4, 320, false), KernelMulMV, "n <= 8 tokens and mul_mv_ext needs k % 128 = 0"},
		{dense(dequant.Q4_K, 3, 256, false), KernelMulMV, "n < 4: mul_mv_ext takes 4 to 8 tokens for q4_K"},
	} {
		if got := tc.w.Dispatch(); got != tc.kern {
			t.Errorf("%s: dispatch %s, want %s", tc.w, got, tc.kern)
		}
		if got := tc.w.DispatchRule(); !strings.Contains(got, tc.rule) {
			t.Errorf("%s: rule %q, want it to contain %q", tc.w, got, tc.rule)
		}
		if n := tc.w.ForcedNote(tc.kern); n != "" {
			t.Errorf("%s: llama.cpp's own kernel has a forced note %q", tc.w, n)
		}
	}
	w := dense(dequant.Q4_0, 5, 256, false)
	if got := w.ForcedNote(KernelMulMM); !strings.Contains(got, "kernel mul_mm is forced: llama.cpp runs mul_mv_ext here (f32 activations") {
		t.Errorf("forced note %q", got)
	}
}

// TestWorkloadKernelShape: every kernel's shape comes from its own programs:
// the mat-vec kernels' threads and threadgroup memory are their geometry's
// (kernel-geometry §3: iq2_xs two simdgroups and a 4224-byte table copy;
// mul_mv_ext two simdgroups and none), the mat-mat kernels' their tile's
// (kernel-facts §2.1: 8192 bytes for mul_mm_id, 6144 for mul_mm's full tiles).
func TestWorkloadKernelShape(t *testing.T) {
	up := Kernel{Variant: Upstream(), Path: Simdgroup}
	moe := MoEWorkload(Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 8, TypeA: dequant.IQ2_XS})
	for _, tc := range []struct {
		w              Workload
		kern           MetalKernel
		threads, tgMem int
	}{
		{moe, KernelMulMVID, 64, 4224}, // iq2_xs: 2 simdgroups, its grid and signs copied to threadgroup memory
		{moe, KernelMulMMID, 128, 8192},
		{DenseWorkload(DenseProblem{M: 64, N: 1, K: 256, TypeA: dequant.IQ2_XS}), KernelMulMV, 64, 4224},
		{DenseWorkload(DenseProblem{M: 64, N: 4, K: 256, TypeA: dequant.Q4_0}), KernelMulMVExt, 64, 0},
		{DenseWorkload(DenseProblem{M: 64, N: 64, K: 256, TypeA: dequant.Q4_0}), KernelMulMM, 128, 6144},
	} {
		sh, err := tc.w.KernelShape(tc.kern, up)
		if err != nil {
			t.Errorf("%s %s: %v", tc.w, tc.kern, err)
			continue
		}
		if sh.Threads != tc.threads || sh.TGMemoryBytes != tc.tgMem || sh.Registers.Total <= 0 {
			t.Errorf("%s %s: %d threads, %d B threadgroup memory, %d registers; want %d threads, %d B", tc.w, tc.kern,
				sh.Threads, sh.TGMemoryBytes, sh.Registers.Total, tc.threads, tc.tgMem)
		}
	}
	// a forced kernel outside its limits is the kernel's error
	if _, err := DenseWorkload(DenseProblem{M: 64, N: 16, K: 256, TypeA: dequant.Q4_0}).KernelShape(KernelMulMVExt, up); err == nil ||
		!strings.Contains(err.Error(), "mul_mv_ext: n = 16: must be in [2, 8]") {
		t.Errorf("mul_mv_ext at n = 16: %v", err)
	}
	if _, err := moe.KernelShape(KernelMulMM, up); err == nil || !strings.Contains(err.Error(), "computes mul_mat") {
		t.Errorf("mul_mm for a mul_mat_id: %v", err)
	}
}
