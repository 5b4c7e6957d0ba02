package emulate_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Tolerances of the functional checks of the kernels besides mul_mm_id, each
// derived from how the kernel computes (u = 2^-24, the float32 unit roundoff;
// S = Σ_k |w_k·y_k| of the operands as the kernel multiplies them; Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1, §4.2).
const u = 1.0 / (1 << 24)

// halfTol is the bound of the half-staged kernels (kernel_mul_mm on the
// simdgroup path: half(w)·half(y); on the tensor path: half(w) times y
// truncated to 10 mantissa bits by relaxed_precision). Both operands have at
// most 11 significant bits, so every product is exact in float32 and the output
// is a float32 sum of K exact terms in some order: K-1 roundings, each of a
// partial sum no larger than S, so |emulated - exact| <= (K-1)·u·S·(1 + K·u).
// The reference is the float64 sum (error <= K·2^-53·S) rounded once to float32
// (<= u·S): together (K+1)·u·S·(1 + K·u), golden.AccumulationTolerance.
func halfTol(k int, s float64) float64 { return golden.AccumulationTolerance(k, s) }

// vecTol is the bound of the mat-vec kernels (kernel_mul_mv, _id, _ext) for an
// evaluation in which every term passes through at most d roundings. They
// multiply float32 weights by float32 activations, so a product (up to 48
// significant bits) is rounded, or fused into an fma; each later addition on
// the term's way to the output rounds once more. Then |emulated - exact| <=
// γ_d·S with γ_n = n·u/(1 - n·u), whatever the summation tree (Higham §3.1,
// §4.2). The float64 reference errs by at most K·2^-53·S <= u·S (K < 2^29)
// before its one rounding to float32 (<= u·(1 + u)·S): γ_d + 2u + u² <= γ_{d+2}
// (Lemma 3.3). Any order of the K terms has d <= K (γ_{K+2}: a bound for the
// hardware's unknown order too); the emulator's order (vecDepth) is far
// shallower, which makes the check sharp enough to see activations rounded to
// half.
func vecTol(d int, s float64) float64 {
	n := float64(d + 2)
	return n * u / (1 - n*u) * s
}

// vecDepth is the most roundings a term meets in the emulated mat-vec order
// (isa/vec.go, dot): its product (1), the rest of its chain (a lane's weights
// of one dot in 4 chains), the two pairwise combines (2), one accumulator
// update per dot (kernel_mul_mv: one per k-step; mul_mv_ext: one per piece of
// a step), the simd_sum tree levels, and, when simdgroups split K, the
// sequential sum of their partials.
func vecDepth(v tile.VecKernel, k int) int {
	steps := ceilDiv(k, v.Span())
	per, dots := v.WeightsPerLane, 1
	switch v.Form {
	case isa.VecExt4:
		per, dots = 4, v.WeightsPerLane/4
	case isa.VecExt16:
		per, dots = 16, 1
	}
	d := 1 + (ceilDiv(per, 4) - 1) + 2 + steps*dots
	for l := v.LanesPerRow; l > 1; l /= 2 {
		d++
	}
	if v.KSplit {
		d += v.NSG - 1
	}
	return d
}

// weightDecoder returns the weights a kernel multiplies: ggml's to_float for
// kernel_mul_mv (and _id), the Metal dequantizers' float32 values for
// mul_mv_ext and mul_mm (which rounds them to half when it stages them).
func weightDecoder(t dequant.Type, kern tile.MetalKernel) dequant.ChunkFunc {
	if kern == tile.KernelMulMV || kern == tile.KernelMulMVID {
		return dequant.CPUChunkDecoder(t)
	}
	return dequant.Decoder(t, dequant.ByteReads)
}

// reference returns float64 references of dst[j*M + i] = Σ_k w'[i][k]·y'[j][k]
// rounded once to float32, and S per output, with w' = wf(kernel kern's
// weights, weightDecoder) and y' = yf(y): the operands as the kernel
// multiplies them.
func reference(p tile.DenseProblem, kern tile.MetalKernel, w []byte, src1 []float32, wf, yf func(float32) float32) ([]float32, []float64) {
	rb, _ := p.TypeA.RowBytes(p.K)
	l := p.TypeA.Layout()
	dec := weightDecoder(p.TypeA, kern)
	wr := make([]float64, p.M*p.K)
	var chunk [16]float32
	for i := 0; i < p.M; i++ {
		for k0 := 0; k0 < p.K; k0 += 16 {
			dec(w[i*rb+k0/l.BlockWeights*l.BlockBytes:][:l.BlockBytes], k0%l.BlockWeights/16, &chunk)
			for j, v := range chunk {
				wr[i*p.K+k0+j] = float64(wf(v))
			}
		}
	}
	ref, sum := make([]float32, p.N*p.M), make([]float64, p.N*p.M)
	for j := 0; j < p.N; j++ {
		y := src1[j*p.K:][:p.K]
		for i := 0; i < p.M; i++ {
			var s, a float64
			for k, v := range wr[i*p.K : (i+1)*p.K] {
				t := v * float64(yf(y[k]))
				s += t
				a += math.Abs(t)
			}
			ref[j*p.M+i], sum[j*p.M+i] = float32(s), a
		}
	}
	return ref, sum
}

func same(v float32) float32 { return v }

// denseVec returns the mat-vec geometry a dense case runs with.
func denseVec(p tile.DenseProblem, kern tile.MetalKernel) tile.VecKernel {
	if kern == tile.KernelMulMVExt {
		v, _ := tile.MulMVExt(p.TypeA, p.K, p.N)
		return v
	}
	return tile.MulMV(p.TypeA, p.K, false)
}

// worst returns the largest |dst - ref| / tol(n, S) over all outputs.
func worst(dst, ref []float32, sum []float64, n int, tol func(int, float64) float64) float64 {
	w := 0.0
	for i, v := range dst {
		d := math.Abs(float64(v) - float64(ref[i]))
		if t := tol(n, sum[i]); t > 0 {
			w = math.Max(w, d/t)
		} else if d > 0 || math.IsNaN(d) {
			return math.Inf(1)
		}
	}
	return w
}

// kernelCase is one dense problem and the kernel it must run.
type kernelCase struct {
	p    tile.DenseProblem
	kern tile.MetalKernel
	path tile.Path
}

func (c kernelCase) String() string {
	return fmt.Sprintf("%s %s/%s", c.p, c.kern, c.path)
}

// checkDense emulates a case and compares it with the reference of its kernel.
func checkDense(t *testing.T, c kernelCase, seed uint64) []float32 {
	t.Helper()
	if got := tile.DenseWorkload(c.p).Dispatch(); got != c.kern {
		t.Fatalf("%v: the host picks %s", c, got)
	}
	ts := emulate.RandomDenseTensors(c.p, seed)
	res, err := emulate.MulMat(c.p, c.path, ts, 0)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	wf, yf, tol, n := same, same, vecTol, 0
	if c.kern != tile.KernelMulMM {
		n = vecDepth(denseVec(c.p, c.kern), c.p.K)
	}
	if c.kern == tile.KernelMulMM {
		// staged as half, bf16 as bfloat (both operands)
		wf, yf, tol, n = c.p.TypeA.RoundStaged, c.p.TypeA.RoundStaged, halfTol, c.p.K
		if c.path == tile.Tensor {
			yf = isa.Truncate10
		}
	}
	ref, sum := reference(c.p, c.kern, ts.Weights, ts.Src1, wf, yf)
	if r := worst(res.Dst, ref, sum, n, tol); r > 1 {
		t.Errorf("%v: error %.3g x tolerance", c, r)
	}
	return res.Dst
}

// TestDenseKernelsAgainstReference checks every dense kernel on every weight
// type against float64 references: kernel_mul_mm on both paths with partial
// row and token tiles (bc_out, staged and direct stores) and with whole tiles;
// kernel_mul_mv for n = 1 and for n = 3 where no mul_mv_ext exists (iq types,
// f16 activations), with rows past the last row block, k shorter than a k-step
// and, for the K-splitting types, 1 to 4 simdgroups; kernel_mul_mv_ext for every
// r1ptg and both nxpsg.
func TestDenseKernelsAgainstReference(t *testing.T) {
	var cases []kernelCase
	for _, typ := range dequant.Types() {
		for _, path := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			cases = append(cases, kernelCase{tile.DenseProblem{M: 96, N: 40, K: 256, TypeA: typ}, tile.KernelMulMM, path})
			if typ != dequant.BF16 { // bf16 has no f16-activation mul_mm (TestDenseKernelErrors)
				cases = append(cases, kernelCase{tile.DenseProblem{M: 64, N: 64, K: 256, TypeA: typ, HalfB: true}, tile.KernelMulMM, path})
			}
		}
		// row-owning kernels: 3 k-steps; K-splitting ones: 4 simdgroups
		// and a partial second step
		k := 3 * tile.MulMV(typ, 1024, false).Span()
		if tile.MulMV(typ, 1024, false).KSplit {
			k = 2560
		}
		cases = append(cases,
			kernelCase{tile.DenseProblem{M: 21, N: 1, K: k, TypeA: typ}, tile.KernelMulMV, 0},
			// one partial k-step: k of one block (idle lanes)
			kernelCase{tile.DenseProblem{M: 5, N: 1, K: max(32, typ.Layout().BlockWeights), TypeA: typ}, tile.KernelMulMV, 0})
		// several tokens on mul_mv where the type has no mul_mv_ext for them
		if p := (tile.DenseProblem{M: 13, N: 3, K: 2048, TypeA: typ}); tile.DenseWorkload(p).Dispatch() == tile.KernelMulMV {
			cases = append(cases, kernelCase{p, tile.KernelMulMV, 0})
		}
		for n := 2; n <= 8; n++ {
			p := tile.DenseProblem{M: 19, N: n, K: 256, TypeA: typ}
			if tile.DenseWorkload(p).Dispatch() == tile.KernelMulMVExt {
				cases = append(cases, kernelCase{p, tile.KernelMulMVExt, 0})
			}
		}
		if p := (tile.DenseProblem{M: 11, N: 2, K: 384, TypeA: typ}); tile.DenseWorkload(p).Dispatch() == tile.KernelMulMVExt {
			cases = append(cases, kernelCase{p, tile.KernelMulMVExt, 0}) // nxpsg = 8 at n = 2
		}
	}
	// f16 activations: kernel_mul_mv_f16_f16 (_4 and _short)
	cases = append(cases,
		kernelCase{tile.DenseProblem{M: 13, N: 3, K: 256, TypeA: dequant.F16, HalfB: true}, tile.KernelMulMV, 0},
		kernelCase{tile.DenseProblem{M: 40, N: 2, K: 16, TypeA: dequant.F16, HalfB: true}, tile.KernelMulMV, 0},
		kernelCase{tile.DenseProblem{M: 40, N: 1, K: 16, TypeA: dequant.F32}, tile.KernelMulMV, 0})
	for i, c := range cases {
		checkDense(t, c, uint64(i)+1)
	}
}

// TestMulMVKernelsAgree: mul_mv and mul_mv_ext give the same outputs within
// their bounds, and kernel_mul_mv_id on one expert gives kernel_mul_mv's bits.
func TestMulMVKernelsAgree(t *testing.T) {
	p := tile.DenseProblem{M: 24, N: 4, K: 512, TypeA: dequant.Q4_0}
	ts := emulate.RandomDenseTensors(p, 7)
	mv, err := emulate.Dense(p, tile.KernelMulMV, tile.Kernel{}, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := emulate.Dense(p, tile.KernelMulMVExt, tile.Kernel{}, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		kern tile.MetalKernel
		dst  []float32
	}{{tile.KernelMulMV, mv.Dst}, {tile.KernelMulMVExt, ext.Dst}} {
		ref, sum := reference(p, k.kern, ts.Weights, ts.Src1, same, same)
		if r := worst(k.dst, ref, sum, vecDepth(denseVec(p, k.kern), p.K), vecTol); r > 1 {
			t.Errorf("%s: error %.3g x tolerance", k.kern, r)
		}
	}
	id := tile.Problem{Experts: 1, Used: 1, M: p.M, K: p.K, Tokens: p.N, TypeA: p.TypeA}
	res, err := emulate.MulMVID(id, &emulate.Tensors{Weights: ts.Weights, Src1: ts.Src1, IDs: make([]int32, p.N)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(res.Dst, mv.Dst) {
		t.Error("mul_mv_id on one expert differs from mul_mv")
	}
}

// TestMulMVIDAgainstReference checks kernel_mul_mv_id on every weight type,
// with broadcast and per-slot activations and a partial last row block.
func TestMulMVIDAgainstReference(t *testing.T) {
	for _, typ := range dequant.Types() {
		for _, bcast := range []bool{false, true} {
			p := tile.Problem{Experts: 4, Used: 2, M: 40, K: 512, Tokens: 5, Broadcast: bcast, TypeA: typ}
			ts := randomTensors(p, uint64(typ)+3)
			res, err := emulate.MulMVID(p, ts, 0)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			// the reference of pair (t, s): expert ids[t][s] with src1 row t*ne11 + s%ne11
			var worstR float64
			for z := 0; z < p.Tokens*p.Used; z++ {
				tok, s := z/p.Used, z%p.Used
				rb, _ := typ.RowBytes(p.K)
				e := int(ts.IDs[z])
				dp := tile.DenseProblem{M: p.M, N: 1, K: p.K, TypeA: typ}
				row := (tok*p.SrcRows() + s%p.SrcRows()) * p.K
				ref, sum := reference(dp, tile.KernelMulMVID, ts.Weights[e*p.M*rb:(e+1)*p.M*rb], ts.Src1[row:row+p.K], same, same)
				worstR = math.Max(worstR, worst(res.Dst[z*p.M:(z+1)*p.M], ref, sum, vecDepth(tile.MulMV(typ, p.K, true), p.K), vecTol))
			}
			if worstR > 1 {
				t.Errorf("%s: error %.3g x tolerance", p, worstR)
			}
			if c := res.Counters; c.Launched != int64(p.Tokens*p.Used*ceilDiv(p.M, tile.MulMV(typ, p.K, true).RowsPerTG())) {
				t.Errorf("%s: %d threadgroups", p, c.Launched)
			}
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestEmulateDenseDeterministic: the same bits with 1 and 3 workers.
func TestEmulateDenseDeterministic(t *testing.T) {
	for _, c := range []kernelCase{
		{tile.DenseProblem{M: 100, N: 50, K: 256, TypeA: dequant.IQ2_XS}, tile.KernelMulMM, tile.Tensor},
		{tile.DenseProblem{M: 100, N: 5, K: 256, TypeA: dequant.Q8_0}, tile.KernelMulMVExt, 0},
	} {
		ts := emulate.RandomDenseTensors(c.p, 9)
		a, err := emulate.MulMat(c.p, c.path, ts, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := emulate.MulMat(c.p, c.path, ts, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(a.Dst, b.Dst) {
			t.Errorf("%v: emulation differs between 1 and 3 workers", c)
		}
	}
}

// TestDenseCounters checks counters whose values follow from the documents.
func TestDenseCounters(t *testing.T) {
	// mul_mm simdgroup path, 96 x 40: grid 2 x 2, each threadgroup 128 MMAs per
	// k-step of 32 (padding included, kernel-facts §3.7)
	p := tile.DenseProblem{M: 96, N: 40, K: 256, TypeA: dequant.Q4_0}
	res, err := emulate.MulMat(p, tile.Simdgroup, emulate.RandomDenseTensors(p, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counters; c.Launched != 4 || c.Work.MMA8 != 4*8*128 || c.Work.Barriers != 4*(2*8+2)-2 {
		// barriers: 2 per k-step; the staged epilogue (3 partial tiles) adds 2
		t.Errorf("mul_mm: launched %d, MMAs %d, barriers %d", c.Launched, c.Work.MMA8, c.Work.Barriers)
	}
	// tensor path: one 64x128 tile per row tile, 8 matmul2d runs of 32x... 16x16x16 MMAs:
	// (128/16)·(64/16)·(32/16) = 64 per run
	res, err = emulate.MulMat(p, tile.Tensor, emulate.RandomDenseTensors(p, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counters; c.Launched != 2 || c.Work.Matmul2D != 2*8 || c.Work.MMA16 != 2*8*64 {
		t.Errorf("mul_mm tensor: launched %d, matmul2d %d, MMA16 %d", c.Launched, c.Work.Matmul2D, c.Work.MMA16)
	}
	// mul_mv q4_0, m = 20, n = 1, k = 1024: ceil(20/8) = 3 threadgroups of 2
	// simdgroups, 2 k-steps, 4 rows per simdgroup: 3·2·2·4 dequantize calls per
	// lane (32 lanes)
	p = tile.DenseProblem{M: 20, N: 1, K: 1024, TypeA: dequant.Q4_0}
	res, err = emulate.MulMat(p, 0, emulate.RandomDenseTensors(p, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counters; c.Launched != 3 || c.Work.DequantChunks != 3*2*2*4*32 {
		t.Errorf("mul_mv: launched %d, dequant chunks %d", c.Launched, c.Work.DequantChunks)
	}
}

// TestDenseKernelErrors: a kernel the type has none of, or a token count or
// activation type the kernel does not take, is an error naming the field,
// the type and the rule.
func TestDenseKernelErrors(t *testing.T) {
	for _, tc := range []struct {
		p    tile.DenseProblem
		kern tile.MetalKernel
		want string
	}{
		{tile.DenseProblem{M: 8, N: 9, K: 256, TypeA: dequant.IQ2_S}, tile.KernelMulMVExt, "type_a = iq2_s"},
		{tile.DenseProblem{M: 8, N: 4, K: 256, TypeA: dequant.TQ2_0}, tile.KernelMulMVExt, "type_a = tq2_0"},
		{tile.DenseProblem{M: 8, N: 4, K: 256, TypeA: dequant.Q4_K, HalfB: true}, tile.KernelMulMV, "type_b = f16 with type_a = q4_K"},
		{tile.DenseProblem{M: 64, N: 64, K: 256, TypeA: dequant.BF16, HalfB: true}, tile.KernelMulMM, "type_b = f16 with type_a = bf16"},
		{tile.DenseProblem{M: 8, N: 3, K: 256, TypeA: dequant.Q4_K}, tile.KernelMulMVExt, "n = 3: must be in [4, 8] for type_a = q4_K"},
	} {
		if _, err := emulate.Dense(tc.p, tc.kern, tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, emulate.RandomDenseTensors(tc.p, 1), 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want an error naming %q", tc.p, tc.kern, err, tc.want)
		}
	}
}

// TestDenseVariantsAgainstReference: kernel_mul_mm runs a variant's tile and
// knobs for values as mul_mm_id does: the 64x8 small-batch tile forced where
// llama.cpp runs mul_mv_ext, the half-tile (edge tiles skip their empty token
// parts; on the tensor path one matmul2d per part, left operand offset by the
// part) and zeroed B padding, on full and partial tiles and both paths.
func TestDenseVariantsAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		p tile.DenseProblem
		k tile.Kernel
	}{
		{tile.DenseProblem{M: 96, N: 5, K: 256, TypeA: dequant.Q4_0}, tile.Kernel{Variant: tile.Tile64x8(), Path: tile.Simdgroup}},
		{tile.DenseProblem{M: 64, N: 8, K: 512, TypeA: dequant.Q8_0}, tile.Kernel{Variant: tile.Tile64x8(), Path: tile.Simdgroup}},
		{tile.DenseProblem{M: 100, N: 40, K: 256, TypeA: dequant.IQ2_XS}, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}},
		{tile.DenseProblem{M: 64, N: 20, K: 256, TypeA: dequant.Q4_0}, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Tensor}},
		{tile.DenseProblem{M: 64, N: 140, K: 256, TypeA: dequant.F16}, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Tensor}},
	} {
		ts := emulate.RandomDenseTensors(tc.p, 3)
		res, err := emulate.Dense(tc.p, tile.KernelMulMM, tc.k, ts, 0)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.p, tc.k, err)
		}
		yf := dequant.RoundHalf
		if tc.k.Path == tile.Tensor {
			yf = isa.Truncate10
		}
		ref, sum := reference(tc.p, tile.KernelMulMM, ts.Weights, ts.Src1, dequant.RoundHalf, yf)
		if r := worst(res.Dst, ref, sum, tc.p.K, halfTol); r > 1 {
			t.Errorf("%s %s: error %.3g x tolerance", tc.p, tc.k, r)
		}
	}
}
