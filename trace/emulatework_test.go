package trace

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

// TestEmulateMACsBoundsTheRun: the estimate is at least the products
// (n·n_used·m·k, m·n·k) and at least the multiply-accumulates the matrix ops
// of every kernel and path execute, padding included, on a routing that
// leaves experts partly filled; the mat-vec kernels' estimate is their
// products exactly.
func TestEmulateMACsBoundsTheRun(t *testing.T) {
	moe, dense := kernelWorkloads(72, 40)
	for _, tc := range []struct {
		w       tile.Workload
		kern    tile.MetalKernel
		path    tile.Path
		variant tile.Variant
	}{
		{moe, tile.KernelMulMVID, tile.Simdgroup, tile.Upstream()},
		{moe, tile.KernelMulMMID, tile.Simdgroup, tile.Upstream()},
		{moe, tile.KernelMulMMID, tile.Simdgroup, tile.HalfTile()},
		{moe, tile.KernelMulMMID, tile.Tensor, tile.Upstream()},
		{dense(1), tile.KernelMulMV, tile.Simdgroup, tile.Upstream()},
		{dense(4), tile.KernelMulMVExt, tile.Simdgroup, tile.Upstream()},
		{dense(40), tile.KernelMulMM, tile.Simdgroup, tile.Upstream()},
		{dense(40), tile.KernelMulMM, tile.Tensor, tile.Upstream()},
	} {
		k := tile.Kernel{Variant: tc.variant, Path: tc.path}
		est, err := EmulateMACs(tc.w, tc.kern, k)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.w, tc.kern, err)
		}
		em, err := Emulate(tc.w, tc.kern, k, 5, 2)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.w, tc.kern, err)
		}
		p := asMoE(tc.w)
		products := float64(p.Tokens) * float64(p.Used) * float64(p.M) * float64(p.K)
		c := em.Result.Counters.Work
		ran := float64(c.MMA8)*8*8*8 + float64(c.MMA16)*16*16*16
		name := tc.w.String() + " " + tc.kern.String() + "/" + tc.path.String() + "/" + tc.variant.Name
		switch {
		case est < products || est < ran:
			t.Errorf("%s: estimate %.4g below the products %.4g or the matrix ops' %.4g", name, est, products, ran)
		case ran == 0 && est != products:
			t.Errorf("%s: mat-vec estimate %.4g, want the products %.4g", name, est, products)
		case ran == 0 && tc.kern != tile.KernelMulMVID && tc.kern != tile.KernelMulMV && tc.kern != tile.KernelMulMVExt:
			t.Errorf("%s: no matrix ops ran", name)
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
