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
