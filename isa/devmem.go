package isa

import (
	"math"

	"github.com/metalsim/metalsim/dequant"
)

// Ops of the dense kernel_mul_mm epilogues and tensor path, which read
// activations and write results straight in device memory (DeviceMemory,
// vec.go). Each function is one column of the op table (op.go).

func execStoreAccDev(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	d := m.dev()
	acc := &m.sgs[sg].acc[op.A]
	row0, tok0 := int(op.Arg)%tl.StageStride, int(op.Arg)/tl.StageStride
	for u := 0; u < 8; u++ {
		for r := 0; r < 8; r++ {
			if row, tok := row0+r, tok0+u; row < tl.Rows && tok < tl.Tokens {
				d.Store(row, tok, acc[u*8+r])
			}
		}
	}
}

func execCopyOut(m *Machine, _ int, _ Op) {
	tl := &m.P.Tiling
	for j := 0; j < tl.Tokens; j++ {
		m.Mem.StoreRow(j, m.Stage[j*tl.StageStride:j*tl.StageStride+tl.Rows])
	}
}

// Truncate10 truncates a float32 to 10 mantissa bits (toward zero): what
// matmul2d with relaxed_precision does to a float operand on the tensor unit
// (tf32-like, apple-gpu.md §6.1). Half values pass unchanged.
func Truncate10(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ 0x1fff)
}

// execMatmul2DDev reads the left operand's view from device memory (tokens
// past the view's extent are zero), truncated when the descriptor is relaxed,
// then runs the simdgroup's share like matmul2d.
func execMatmul2DDev(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	mm := &m.P.Matmuls[op.A]
	d := m.dev()
	lv := mm.Left
	if n := lv.Base + lv.D0*lv.S0 + lv.D1*lv.S1; len(m.ext.left) < n {
		m.ext.left = make([]float32, n)
	}
	if len(m.ext.tmp) < lv.D0 {
		m.ext.tmp = make([]float32, lv.D0)
	}
	buf, tmp := m.ext.left, m.ext.tmp[:lv.D0]
	for tok := 0; tok < lv.D1; tok++ {
		d.Vector(mm.DestRow+tok, m.Step*tl.NK, tmp) // a token part's view starts at its first token
		for k, v := range tmp {
			if mm.Relaxed {
				v = Truncate10(v)
			}
			buf[lv.Base+k*lv.S0+tok*lv.S1] = v
		}
	}
	c := m.coop[op.A]
	ownedTiles(mm, m.P.NSG, sg, func(mt, nt int) {
		for mi := mt * 16; mi < min(mt*16+16, mm.M); mi++ {
			for ni := nt * 16; ni < min(nt*16+16, mm.N); ni++ {
				c[mi*mm.N+ni] += dot16(buf, m.TG, mm, mi, ni)
			}
		}
	})
}

// execStoreCoopDev stores the simdgroup's tiles of coop[A] (M = tokens from
// DestRow on, N = rows) to dst, bounded by the tile's valid tokens and rows.
func execStoreCoopDev(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	mm := &m.P.Matmuls[op.A]
	d := m.dev()
	c := m.coop[op.A]
	ownedTiles(mm, m.P.NSG, sg, func(mt, nt int) {
		for mi := mt * 16; mi < min(mt*16+16, mm.M, tl.Tokens-mm.DestRow); mi++ {
			for ni := nt * 16; ni < min(nt*16+16, mm.N, tl.Rows); ni++ {
				d.Store(ni, mm.DestRow+mi, c[mi*mm.N+ni])
			}
		}
	})
}

// timing expansion and registers

func expandStoreAccDev(p *Program, _ int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	row0, tok0 := int(op.Arg)%tl.StageStride, int(op.Arg)/tl.StageStride
	rows := min(8, max(0, tl.Rows-row0))
	toks := min(8, max(0, tl.Tokens-tok0))
	// an 8x8 float block: 256 bytes, 8 per lane
	return append(out, Inst{Class: ClassDevStore, Count: 1, ILP: 1, Wait: WaitALU, Stream: StreamOutput,
		Bytes: 256, Unique: uint32(4 * rows * toks)})
}

func expandCopyOut(p *Program, _ int, _ Op, out []Inst) []Inst {
	tl := &p.Tiling
	if tl.Tokens == 0 || tl.Rows == 0 {
		return out
	}
	// one lane per token row: Rows/4 float4 copies, then the scalar tail
	for _, part := range []struct{ n, w int }{{tl.Rows / 4, 16}, {tl.Rows % 4, 4}} {
		if part.n == 0 {
			continue
		}
		b := uint32(part.w * tl.Tokens)
		out = append(out,
			Inst{Class: ClassTGLoad, Count: u16(part.n), ILP: u8(part.n), Bytes: b},
			Inst{Class: ClassDevStore, Count: u16(part.n), ILP: u8(part.n), Wait: WaitTG, Stream: StreamOutput,
				Bytes: b, Unique: b * uint32(part.n)})
	}
	return out
}

// leftDevShare returns the device bytes of matmul2d_dev's left operand per
// 16-deep chunk that one simdgroup accounts for: the valid tokens of every
// token fragment any simdgroup reads, shared evenly by the simdgroups (they all
// read them; the first read reaches memory).
func leftDevShare(p *Program, mm *Matmul, elem int) uint32 {
	read := map[int]bool{}
	for sg := 0; sg < p.NSG; sg++ {
		ownedTiles(mm, p.NSG, sg, func(mt, _ int) { read[mt] = true })
	}
	b := 0
	for mt := range read {
		b += min(16, max(0, mm.Left.D1-16*mt)) * 16 * elem
	}
	return uint32(b / p.NSG)
}

func expandMatmul2DDev(p *Program, sg int, op Op, out []Inst) []Inst {
	mm := &p.Matmuls[op.A]
	tiles, left, right := matmulShare(mm, p.NSG, sg)
	if tiles == 0 {
		return out
	}
	elem := actBytes(&p.Tiling)
	share := leftDevShare(p, mm, elem)
	_, kc := mm.Tiles16()
	return matmulCall(out, tiles, kc, WaitTG|WaitDevice, func(out []Inst) []Inst {
		// a 16x16 left fragment is 8*elem bytes per lane: two per-lane
		// gathers of row pieces, each in a sector of its own (AGXF's address
		// formula, docs/physics-evidence.md §1.3); the right fragment (half,
		// threadgroup memory) as in matmul2d
		b := uint32(lanes * 4 * elem)
		return append(out,
			Inst{Class: ClassDevLoad, Count: u16(2 * left), ILP: u8(2 * left), Stream: StreamActivations,
				Bytes: b, Unique: share, Sectors: float32(b / dequant.SectorBytes)},
			Inst{Class: ClassTGLoad, Count: u16(2 * right), ILP: u8(2 * right), Bytes: 256})
	})
}

func matmulDevRegs(p *Program, op Op) Footprint {
	mm := &p.Matmuls[op.A]
	_, left, right := matmulShare(mm, p.NSG, 0)
	// 16x16 fragments per lane: float 8 registers, half 4 (AGXF)
	lr := 8
	if p.Tiling.HalfB {
		lr = 4
	}
	return Footprint{Regs: lr*left + 4*right, Key: 200 + int(op.A), Use: UseFragments}
}

func expandStoreCoopDev(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	mm := &p.Matmuls[op.A]
	tiles, valid := 0, 0
	ownedTiles(mm, p.NSG, sg, func(mt, nt int) {
		tiles++
		valid += min(16, max(0, min(mm.M, tl.Tokens-mm.DestRow)-16*mt)) * min(16, max(0, min(mm.N, tl.Rows)-16*nt))
	})
	if tiles == 0 {
		return out
	}
	// a 16x16 float tile is 1 KiB: two 16-byte stores per lane
	return append(out, Inst{Class: ClassDevStore, Count: u16(2 * tiles), ILP: u8(2 * tiles), Wait: WaitALU,
		Stream: StreamOutput, Bytes: 512, Unique: uint32(4 * valid)})
}
