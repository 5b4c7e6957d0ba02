package tile

import (
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// TestDenseDispatch follows kernel-facts §2.1's order on the types metalsim
// decodes.
func TestDenseDispatch(t *testing.T) {
	for _, tc := range []struct {
		p    DenseProblem
		want MetalKernel
	}{
		{DenseProblem{M: 64, N: 1, K: 256, TypeA: dequant.Q4_0}, KernelMulMV},
		{DenseProblem{M: 64, N: 2, K: 256, TypeA: dequant.Q4_0}, KernelMulMVExt},
		{DenseProblem{M: 64, N: 8, K: 256, TypeA: dequant.F32}, KernelMulMVExt},
		{DenseProblem{M: 64, N: 8, K: 256, TypeA: dequant.Q8_0, HalfB: true}, KernelMulMV}, // ext needs f32 activations
		{DenseProblem{M: 64, N: 4, K: 192, TypeA: dequant.F16}, KernelMulMV},               // k % 128 != 0
		{DenseProblem{M: 64, N: 4, K: 256, TypeA: dequant.IQ2_XXS}, KernelMulMV},           // iq: no ext
		{DenseProblem{M: 64, N: 9, K: 256, TypeA: dequant.IQ2_XXS}, KernelMulMM},
		{DenseProblem{M: 64, N: 9, K: 64, TypeA: dequant.F16}, KernelMulMM},
		{DenseProblem{M: 64, N: 512, K: 48, TypeA: dequant.F16}, KernelMulMV}, // k < 64
	} {
		if got := DenseWorkload(tc.p).Dispatch(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestMulMVExtGeometry checks nxpsg, r0ptg and r1ptg against §2.1.
func TestMulMVExtGeometry(t *testing.T) {
	r1 := map[int]int{2: 2, 3: 3, 4: 4, 5: 5, 6: 3, 7: 4, 8: 4}
	for n := 2; n <= 8; n++ {
		for _, k := range []int{256, 384} {
			v, err := MulMVExt(dequant.Q4_0, k, n)
			if err != nil {
				t.Fatal(err)
			}
			nx := 8
			if k%256 == 0 && n < 3 {
				nx = 16
			}
			if v.LanesPerRow != nx || v.RowsPerTG() != 32/nx*2 || v.Tokens != r1[n] || v.NSG != 2 || v.Span() != 16*nx {
				t.Errorf("n=%d k=%d: nxpsg %d r0ptg %d r1ptg %d nsg %d span %d", n, k, v.LanesPerRow, v.RowsPerTG(), v.Tokens, v.NSG, v.Span())
			}
		}
	}
	for _, tc := range []struct {
		t    dequant.Type
		k, n int
	}{{dequant.IQ3_S, 256, 4}, {dequant.Q4_0, 192, 4}, {dequant.Q4_0, 256, 9}, {dequant.Q4_0, 256, 1}} {
		if _, err := MulMVExt(tc.t, tc.k, tc.n); err == nil {
			t.Errorf("MulMVExt(%s, k=%d, n=%d): no error", tc.t, tc.k, tc.n)
		}
	}
}

// TestMulMVGeometry checks the per-type choices documented in mulmv.go.
func TestMulMVGeometry(t *testing.T) {
	for _, tc := range []struct {
		t                         dequant.Type
		k, rows, nsg, chunks, tab int
		ksplit                    bool
	}{
		{dequant.Q4_0, 2048, 8, 2, 1, 0, false},
		{dequant.Q8_0, 2048, 2, 4, 1, 0, true},
		{dequant.F16, 256, 2, 1, 1, 0, true},
		{dequant.F32, 1536, 2, 3, 1, 0, true},
		{dequant.IQ2_XXS, 256, 8, 2, 2, 256*8 + 128, false},
		{dequant.IQ3_XXS, 256, 8, 2, 2, 256*4 + 128, false},
		{dequant.IQ2_XS, 256, 8, 2, 2, 512*8 + 128, false},
		{dequant.IQ3_S, 256, 8, 2, 2, 512 * 4, false},
		{dequant.IQ2_S, 256, 8, 2, 2, 0, false},
	} {
		v := MulMV(tc.t, tc.k, false)
		if v.RowsPerTG() != tc.rows || v.NSG != tc.nsg || v.ChunksPerLane != tc.chunks || v.TableBytes != tc.tab || v.KSplit != tc.ksplit {
			t.Errorf("%s k=%d: %+v (rows %d)", tc.t, tc.k, v, v.RowsPerTG())
		}
	}
}

// TestVecPrograms builds every mat-vec program shape and checks structure,
// threadgroup memory, registers and the per-step instruction mix of q4_0.
func TestVecPrograms(t *testing.T) {
	for _, typ := range dequant.Types() {
		kernels := []VecKernel{MulMV(typ, 512, false), MulMV(typ, 512, true)}
		if v, err := MulMVExt(typ, 512, 5); err == nil {
			kernels = append(kernels, v)
		}
		for _, v := range kernels {
			b, err := NewVecBuilder(v, typ, false, 512)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []Context{b.Context(v.RowsPerTG(), v.Tokens), b.Context(1, 1)} {
				p := b.Program(c)
				if err := p.Validate(); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
				r := p.Registers()
				if r.Accumulators != v.RowsPerGroup*v.Tokens || r.Total <= r.Base || p.TGMemBytes > MaxTGMemoryBytes {
					t.Errorf("%s: registers %+v, threadgroup memory %d", p.Name, r, p.TGMemBytes)
				}
			}
		}
	}
	// q4_0 mul_mv: per simdgroup and k-step 4 rows x (one dequantize call:
	// 20 int, 19 fp32, 16 convert; products: 20 fp32) and 4 activation loads
	b, err := NewVecBuilder(MulMV(dequant.Q4_0, 1024, false), dequant.Q4_0, false, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var fp32, conv, act int
	for _, in := range b.Program(b.Context(8, 1)).Timing().Insts[isa.SecBody][0] {
		switch {
		case in.Class == isa.ClassFP32:
			fp32 += int(in.Count)
		case in.Class == isa.ClassConvert:
			conv += int(in.Count)
		case in.Stream == isa.StreamActivations:
			act += int(in.Count)
		}
	}
	if fp32 != 4*(19+20) || conv != 4*16 || act != 4 {
		t.Errorf("q4_0 mul_mv step: %d fp32, %d conversions, %d activation loads; want %d, %d, 4", fp32, conv, act, 4*39, 4*16)
	}
	if _, err := NewVecBuilder(VecKernel{Name: "bad", NSG: 2, LanesPerRow: 12, RowsPerGroup: 1, ChunksPerLane: 1, Tokens: 1}, dequant.Q4_0, false, 256); err == nil {
		t.Error("lanes per row 12: no error")
	}
}

// TestMMBuilder checks bc_out, threadgroup memory and the store path of the
// dense kernel_mul_mm (kernel-facts §2.1, §3.6, §5.1).
func TestMMBuilder(t *testing.T) {
	count := func(p *isa.Program, code isa.Code) int {
		n := 0
		for sg := 0; sg < p.NSG; sg++ {
			for _, op := range p.Epilogue[sg] {
				if op.Code == code {
					n++
				}
			}
		}
		return n
	}
	whole, err := NewMMBuilder(DenseProblem{M: 128, N: 64, K: 256, TypeA: dequant.Q4_0}, Simdgroup)
	if err != nil {
		t.Fatal(err)
	}
	part, err := NewMMBuilder(DenseProblem{M: 96, N: 40, K: 256, TypeA: dequant.Q4_0}, Simdgroup)
	if err != nil {
		t.Fatal(err)
	}
	if whole.BCOut || !part.BCOut {
		t.Fatalf("bc_out: %v, %v", whole.BCOut, part.BCOut)
	}
	pw := whole.Program(whole.Context(0, 0))
	pf := part.Program(part.Context(0, 0)) // a full tile of a bc_out problem: direct
	pp := part.Program(part.Context(1, 1)) // 32 rows x 8 tokens: staged
	if pw.TGMemBytes != 6144 || pf.TGMemBytes != 8192 {
		t.Errorf("threadgroup memory %d, %d: want 6144 and 8192", pw.TGMemBytes, pf.TGMemBytes)
	}
	if count(pw, isa.OpStoreAccDev) != 32 || count(pf, isa.OpStoreAccDev) != 32 || count(pp, isa.OpCopyOut) != 1 || count(pp, isa.OpStoreAcc) != 32 {
		t.Error("store paths: want 32 direct stores on full tiles, staging + one copy-out on partial ones")
	}
	ten, err := NewMMBuilder(DenseProblem{M: 96, N: 200, K: 256, TypeA: dequant.Q4_0}, Tensor)
	if err != nil {
		t.Fatal(err)
	}
	if g := ten.Grid(); g != [3]int{2, 2, 1} {
		t.Errorf("tensor grid %v, want [2 2 1]", g)
	}
	pt := ten.Program(ten.Context(1, 1))
	if pt.TGMemBytes != 4096 || pt.Tiling.Rows != 32 || pt.Tiling.Tokens != 72 || len(pt.Matmuls) != 1 || !pt.Matmuls[0].Relaxed {
		t.Errorf("tensor tile: %d bytes, %d rows, %d tokens, %+v", pt.TGMemBytes, pt.Tiling.Rows, pt.Tiling.Tokens, pt.Matmuls)
	}
	if _, err := NewMMBuilder(DenseProblem{M: 64, N: 64, K: 80, TypeA: dequant.F16}, Simdgroup); err == nil {
		t.Error("k = 80: no error")
	}
}
