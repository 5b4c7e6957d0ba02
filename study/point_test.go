package study

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestPointShape: every kernel's shape comes from its own programs: the
// mat-vec kernels' threads and threadgroup memory are their geometry's
// (kernel-geometry §3: iq2_xs two simdgroups and a 4224-byte table copy;
// mul_mv_ext two simdgroups and none), the mat-mat kernels' their tile's
// (kernel-facts §2.1: 8192 bytes for mul_mm_id, 6144 for mul_mm's full tiles).
func TestPointShape(t *testing.T) {
	up := Variant{Arg: "upstream", Variant: tile.Upstream()}
	moe := tile.MoEWorkload(tile.Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 8, TypeA: dequant.IQ2_XS})
	for _, tc := range []struct {
		w              tile.Workload
		kern           tile.MetalKernel
		threads, tgMem int
	}{
		{moe, tile.KernelMulMVID, 64, 4224}, // iq2_xs: 2 simdgroups, its grid and signs copied to threadgroup memory
		{moe, tile.KernelMulMMID, 128, 8192},
		{tile.DenseWorkload(tile.DenseProblem{M: 64, N: 1, K: 256, TypeA: dequant.IQ2_XS}), tile.KernelMulMV, 64, 4224},
		{tile.DenseWorkload(tile.DenseProblem{M: 64, N: 4, K: 256, TypeA: dequant.Q4_0}), tile.KernelMulMVExt, 64, 0},
		{tile.DenseWorkload(tile.DenseProblem{M: 64, N: 64, K: 256, TypeA: dequant.Q4_0}), tile.KernelMulMM, 128, 6144},
	} {
		pt := Point{Variant: up, Workload: tc.w, Kernel: tc.kern}
		sh, err := pt.Shape()
		if err != nil {
			t.Errorf("%s %s: %v", tc.w, tc.kern, err)
			continue
		}
		if sh.Threads != tc.threads || sh.TGMemoryBytes != tc.tgMem || sh.Registers.Total <= 0 {
			t.Errorf("%s %s: %d threads, %d B threadgroup memory, %d registers; want %d threads, %d B", tc.w, tc.kern,
				sh.Threads, sh.TGMemoryBytes, sh.Registers.Total, tc.threads, tc.tgMem)
		}
	}
	// a forced kernel outside its limits is the kernel's error, naming the
	// forced kernel's input
	for _, tc := range []struct {
		pt   Point
		want string
	}{
		{Point{Variant: up, Workload: tile.DenseWorkload(tile.DenseProblem{M: 64, N: 16, K: 256, TypeA: dequant.Q4_0}), Kernel: tile.KernelMulMVExt,
			Labels: Labels{Kernel: "--kernel"}}, "--kernel: mul_mv_ext: n = 16: must be in [2, 8]"},
		{Point{Variant: up, Workload: moe, Kernel: tile.KernelMulMM}, "kernel: kernel mul_mm: computes mul_mat"},
		{Point{Variant: up, Workload: tile.DenseWorkload(tile.DenseProblem{M: 64, N: 4, K: 256, TypeA: dequant.IQ2_XS}), Kernel: tile.KernelMulMVExt},
			"mul_mv_ext: type_a = iq2_xs: no mul_mv_ext kernel"},
	} {
		if _, err := tc.pt.Shape(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s as %s: %v, want %q", tc.pt.Workload, tc.pt.Kernel, err, tc.want)
		}
	}
}

// TestPointRun: a point times the kernel llama.cpp dispatches (mul_mv_id
// below 32 tokens, whatever the variant: both variants time the same, and
// the half-tile's note says its knobs are left out) or the forced one; its
// row carries the kernel and the detail columns.
func TestPointRun(t *testing.T) {
	chip := chips.MustLookup("M1 Pro")
	w := tile.MoEWorkload(tile.Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 8, TypeA: dequant.IQ2_XS})
	sm := sim.NewSimulator()
	run := func(v tile.Variant, kern tile.MetalKernel) *Row {
		pt := Point{Chip: chip, Variant: Variant{Arg: v.Name, Variant: v}, Workload: w, Kernel: kern, Options: sim.Options{Draws: 1}}
		o, err := pt.Run(sm)
		if err != nil {
			t.Fatal(err)
		}
		return pt.Row(o)
	}
	up, half, forced := run(tile.Upstream(), tile.KernelAuto), run(tile.HalfTile(), tile.KernelAuto), run(tile.HalfTile(), tile.KernelMulMMID)
	if up.Kernel != "mul_mv_id" || half.Kernel != "mul_mv_id" || up.TotalUs != half.TotalUs || up.Path != "" {
		t.Errorf("n = 8: kernels %s, %s, %.2f vs %.2f µs, path %q: want mul_mv_id and the same time", up.Kernel, half.Kernel, up.TotalUs, half.TotalUs, up.Path)
	}
	if up.Note != "" || !strings.Contains(half.Note, "half_skip, b_padding, codebook, b_extents do not apply to mul_mv_id") {
		t.Errorf("notes %q, %q", up.Note, half.Note)
	}
	if forced.Kernel != "mul_mm_id" || forced.Path != "simdgroup" || forced.HalfTilesSkipped == 0 || !strings.Contains(forced.Note, "llama.cpp runs mul_mv_id here") {
		t.Errorf("forced mul_mm_id: kernel %s, path %s, %d half-tiles skipped, note %q", forced.Kernel, forced.Path, forced.HalfTilesSkipped, forced.Note)
	}
	if up.CodebookLoads1+up.CodebookLoads2+up.CodebookLoads4+up.CodebookLoads8+up.CodebookLoadsMore == 0 || up.WeightBytes == 0 || up.DRAMLoadBytes == 0 {
		t.Errorf("mul_mv_id detail: %+v", up.Detail)
	}
	if err := up.checkKernel(); err != nil {
		t.Errorf("the row's kernel and path: %v", err)
	}
}

// TestCodebookWidths: every codebook load any kernel makes is 1, 2, 4 or 8
// bytes wide, the widths Detail has a column for.
func TestCodebookWidths(t *testing.T) {
	for _, typ := range dequant.Types() {
		for _, s := range []dequant.Strategy{dequant.ByteReads, dequant.WordReads} {
			for _, l := range dequant.ChunkCost(typ, s).Loads {
				if l.Space == dequant.Constant && l.Width != 1 && l.Width != 2 && l.Width != 4 && l.Width != 8 {
					t.Errorf("%s %s: a %d-byte codebook load", typ, s, l.Width)
				}
			}
		}
	}
}
