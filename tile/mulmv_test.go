package tile

import (
	"strings"
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

// TestMulMVGeometry checks the host's per-type geometry against
// docs/kernel-geometry.md §3: the worked grids of m = 4096, k = 14336 (rows
// per threadgroup, threads, threadgroup memory), the float variants, and for
// every type the structural rules the kernels' index arithmetic implies.
func TestMulMVGeometry(t *testing.T) {
	for _, tc := range []struct {
		t                  dequant.Type
		grid, threads, mem int
	}{
		{dequant.F16, 2048, 128, 256},
		{dequant.Q4_0, 512, 64, 0},
		{dequant.Q8_0, 2048, 128, 256},
		{dequant.Q4_K, 1024, 64, 0},
		{dequant.Q6_K, 1024, 64, 0},
		{dequant.Q5_K, 2048, 64, 0},
		{dequant.IQ2_XS, 512, 64, 4224},
	} {
		v := MulMV(tc.t, 14336, false)
		if g := ceilDiv(4096, v.RowsPerTG()); g != tc.grid || 32*v.NSG != tc.threads || v.SMem != tc.mem {
			t.Errorf("%s: grid %d, %d threads, %d B; want %d, %d, %d", tc.t, g, 32*v.NSG, v.SMem, tc.grid, tc.threads, tc.mem)
		}
	}
	// f16: nsg = min(4, ceil(k/128)); _short below 32 (mul_mv only)
	for _, tc := range []struct {
		k    int
		id   bool
		nsg  int
		form dequant.MatVecForm
	}{{256, false, 2, dequant.MatVecMain}, {64, true, 1, dequant.MatVecMain}, {16, false, 1, dequant.MatVecShort}, {16, true, 1, dequant.MatVecMain}, {4096, false, 4, dequant.MatVecMain}} {
		v := MulMV(dequant.F16, tc.k, tc.id)
		if v.NSG != tc.nsg || v.MVForm != tc.form {
			t.Errorf("f16 k=%d id=%v: nsg %d form %s, want %d %s", tc.k, tc.id, v.NSG, v.MVForm, tc.nsg, tc.form)
		}
	}
	if v := MulMV(dequant.F16, 16, false); v.RowsPerTG() != 32 || v.Span() != 16 || v.Metal != "kernel_mul_mv_f16_f32_short" {
		t.Errorf("_short: %d rows, span %d, %s", v.RowsPerTG(), v.Span(), v.Metal)
	}
	if v := MulMV(dequant.Q4_K, 4096, true); v.Metal != "kernel_mul_mv_id_q4_K_f32" || v.Name != "mul_mv_id" {
		t.Errorf("mul_mv_id q4_K: %s %s", v.Name, v.Metal)
	}
	for _, typ := range dequant.Types() {
		g := MatVecGeometry(typ, 4096, false)
		v := MulMV(typ, 4096, false)
		l := typ.Layout()
		c := dequant.MatVecCosts(typ, g.Form)
		switch {
		case g.NR0 < 1 || g.Source == "" || g.Kernel == "":
			t.Errorf("%s: incomplete row %+v", typ, g)
		case c.Weights != g.WeightsPerLane:
			t.Errorf("%s: %d weights per lane, the cost data %d", typ, g.WeightsPerLane, c.Weights)
		case typ.Quantized() && g.LanesPerBlock*g.WeightsPerLane != l.BlockWeights:
			t.Errorf("%s: %d lanes per block x %d weights != %d", typ, g.LanesPerBlock, g.WeightsPerLane, l.BlockWeights)
		case typ.Quantized() && v.Span()%l.BlockWeights != 0:
			t.Errorf("%s: a k-step of %d weights is not whole blocks", typ, v.Span())
		case g.KSplit != (typ == dequant.Q8_0 || !typ.Quantized()):
			t.Errorf("%s: K split %v", typ, g.KSplit)
		}
		// a threadgroup table copy fills the declared memory exactly: 64
		// threads each copy their slice (the 16-float tables: each simdgroup
		// writes the 32-float area)
		if tab := g.Table; tab.Where == TableThreadgroup {
			got := 64 * (tab.EntriesPerLane*tab.EntryBytes + tab.SignsPerLane)
			if tab.EntriesPerLane == 1 {
				got = 32 * tab.EntryBytes
			}
			if got != g.SMem {
				t.Errorf("%s: the copy writes %d bytes, the pipeline declares %d", typ, got, g.SMem)
			}
		}
	}
}

// TestVecPrograms builds every mat-vec program shape and checks structure,
// threadgroup memory, registers and the per-step instruction mix of q4_0.
func TestVecPrograms(t *testing.T) {
	for _, typ := range dequant.Types() {
		kernels := []VecKernel{MulMV(typ, 512, false), MulMV(typ, 512, true), MulMV(typ, 16*typ.Chunks(), false)}
		for _, n := range []int{2, 5, 8} {
			if v, err := MulMVExt(typ, 512, n); err == nil {
				kernels = append(kernels, v)
			}
		}
		for _, v := range kernels {
			k := max(512, v.Span())
			if v.Span() < 32 {
				k = v.Span()
			}
			b, err := NewVecBuilder(v, typ, false, k)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, v.Name, err)
			}
			for _, c := range []Context{b.Context(v.RowsPerTG(), v.Tokens), b.Context(1, 1)} {
				p := b.Program(c)
				if err := p.Validate(); err != nil {
					t.Errorf("%s: %v", p.Name, err)
				}
				r := p.Registers()
				if r.Accumulators != v.RowsPerGroup*v.Tokens || r.Total <= r.Base || p.TGMemBytes > MaxTGMemoryBytes || p.TGMemBytes < v.SMem {
					t.Errorf("%s: registers %+v, threadgroup memory %d", p.Name, r, p.TGMemBytes)
				}
			}
		}
	}
	// q4_0 mul_mv: per simdgroup and k-step the step arithmetic once (29
	// fp32) and 4 rows x (22 fp32, 16 int, 16 conversions; 5 weight loads), 4
	// float4 activation loads
	b, err := NewVecBuilder(MulMV(dequant.Q4_0, 1024, false), dequant.Q4_0, false, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var fp32, conv, act, wl int
	for _, in := range b.Program(b.Context(8, 1)).Timing().Insts[isa.SecBody][0] {
		switch {
		case in.Class == isa.ClassFP32:
			fp32 += int(in.Count)
		case in.Class == isa.ClassConvert:
			conv += int(in.Count)
		case in.Stream == isa.StreamActivations:
			act += int(in.Count)
		case in.Stream == isa.StreamWeights:
			wl += int(in.Count)
		}
	}
	if fp32 != 29+4*22 || conv != 4*16 || act != 4 || wl != 4*5 {
		t.Errorf("q4_0 mul_mv step: %d fp32, %d conversions, %d activation loads, %d weight loads; want %d, %d, 4, 20", fp32, conv, act, wl, 29+4*22, 4*16)
	}
	// the weight loads of all rows come before the first arithmetic
	insts := b.Program(b.Context(8, 1)).Timing().Insts[isa.SecBody][0]
	lastLoad, firstALU := -1, len(insts)
	for i, in := range insts {
		if in.Stream == isa.StreamWeights {
			lastLoad = i
		}
		if in.Class == isa.ClassFP32 && firstALU == len(insts) {
			firstALU = i
		}
	}
	if lastLoad > firstALU {
		t.Errorf("q4_0 mul_mv: a weight load (group %d) after the first arithmetic (group %d)", lastLoad, firstALU)
	}
	if _, err := NewVecBuilder(VecKernel{Name: "bad", NSG: 2, LanesPerRow: 12, RowsPerGroup: 1, WeightsPerLane: 16, Tokens: 1}, dequant.Q4_0, false, 256); err == nil {
		t.Error("lanes per row 12: no error")
	}
	for _, tc := range []struct {
		v   VecKernel
		typ dequant.Type
	}{{MulMV(dequant.Q4_0, 256, false), dequant.Q4_0}, {MulMV(dequant.F16, 256, true), dequant.F16}} {
		if _, err := NewVecBuilder(tc.v, tc.typ, true, 256); err == nil || !strings.Contains(err.Error(), "type_b = f16") {
			t.Errorf("%s %s with f16 activations: %v", tc.v.Name, tc.typ, err)
		}
	}
	if _, err := NewVecBuilder(MulMV(dequant.F16, 256, false), dequant.F16, true, 256); err != nil {
		t.Errorf("kernel_mul_mv_f16_f16: %v", err)
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
