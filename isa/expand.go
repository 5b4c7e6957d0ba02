package isa

import "github.com/metalsim/metalsim/dequant"

// Expansion of ops into timing instructions, and their register footprints.
// Each function is one column of the op table (see op.go).

const lanes = 32

func expandALU(_ *Program, _ int, op Op, out []Inst) []Inst {
	if op.N == 0 {
		return out
	}
	return append(out, Inst{Class: Class(op.A), Count: op.N, ILP: max(1, op.B), Wait: Wait(op.C) | WaitALU})
}

func expandMem(_ *Program, _ int, op Op, out []Inst) []Inst {
	if op.N == 0 {
		return out
	}
	// distinct bytes: map0's routing words are one 4-byte word per
	// instruction; a codebook copy's lanes each copy entries of their own
	unique := uint32(op.N) * 4
	if Stream(op.B) == StreamCodebook {
		unique = uint32(op.N) * uint32(op.Arg)
	}
	return append(out, Inst{Class: Class(op.A), Count: op.N, ILP: uint8(min(int(op.N), 255)), Stream: Stream(op.B),
		Bytes: uint32(op.Arg), Unique: unique, Wait: Wait(op.C)})
}

func expandLoadMeta(_ *Program, _ int, op Op, out []Inst) []Inst {
	unique := 4 * uint32(op.N) // one word all lanes read (tpe)
	if op.Arg > 0 {
		unique = uint32(op.Arg) // the lanes' own words (ids of their B rows)
	}
	in := Inst{Class: ClassDevLoad, Count: op.N, ILP: uint8(min(int(op.N), 255)), Stream: StreamMeta,
		Bytes: lanes * 4, Unique: unique}
	if op.Arg == 0 {
		in.Sectors = 1 // every lane reads the same word: one sector (docs/model.md §2, "Gathers")
	}
	return append(out, in)
}

func expandZeroAcc(_ *Program, _ int, _ Op, out []Inst) []Inst {
	// an 8x8 float fragment is 2 registers per lane: two moves.
	return append(out, Inst{Class: ClassInt, Count: 2, ILP: 2})
}

// aRows returns the distinct (clamped row, 16-weight chunk) pairs simdgroup sg's
// lanes decode for A work item t.
func aRows(p *Program, sg, t int) int {
	tl := &p.Tiling
	seen := map[[2]int]bool{}
	for lane := 0; lane < lanes; lane++ {
		if row, kc, ok := tl.AItem(sg, lane, t); ok {
			seen[[2]int{min(row, tl.Rows-1), kc}] = true
		}
	}
	return len(seen)
}

func expandDequantA(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	cost := dequant.ChunkCost(tl.TypeA, tl.Strategy)
	chunks := aRows(p, sg, int(op.N))
	if chunks == 0 {
		return out
	}
	// The weight bytes this simdgroup consumes per k-step: its distinct
	// 16-weight chunks times a chunk's share of the row's bytes per step.
	unique := uint32(float64(chunks) * tl.RowBytesPerStep * 16 / float64(tl.NK))
	first := true
	for _, l := range cost.Loads {
		in := Inst{Count: uint16(l.Count), ILP: uint8(l.Count), Bytes: uint32(lanes * l.Width)}
		if l.Space == dequant.Device {
			in.Class, in.Stream = ClassDevLoad, StreamWeights
			if first {
				in.Unique, first = unique, false
			}
		} else {
			// codebook entries are indexed by the weight bytes just loaded:
			// a per-lane gather of the sectors the tile's lanes touch
			in.Class, in.Stream, in.Wait = ClassConstLoad, StreamCodebook, WaitDevice
			in.Sectors = float32(tableGather(tl, dequant.TilePattern, l.What).Sectors)
		}
		out = append(out, in)
	}
	alu := []struct {
		c Class
		n int
	}{{ClassInt, cost.Int}, {ClassFP32, cost.FP32}, {ClassConvert, cost.Convert}}
	wait := WaitDevice
	for _, a := range alu {
		if a.n == 0 {
			continue
		}
		// 16 outputs decode independently; the chains are bounded by the
		// registers a lane holds (4 live chains).
		out = append(out, Inst{Class: a.c, Count: uint16(a.n), ILP: 4, Wait: wait | WaitALU})
		wait = 0
	}
	return out
}

func dequantRegs(p *Program, _ Op) Footprint {
	cost := dequant.ChunkCost(p.Tiling.TypeA, p.Tiling.Strategy)
	return Footprint{Regs: 16 + cost.Temps, Key: 1, Use: UseDequant}
}

func expandStoreA(p *Program, sg int, op Op, out []Inst) []Inst {
	if aRows(p, sg, int(op.N)) == 0 {
		return out
	}
	// 16 scalar half stores per lane (kernel-facts §3.4).
	return append(out, Inst{Class: ClassTGStore, Count: 16, ILP: 16, Wait: WaitALU, Bytes: lanes * 2})
}

// bRows returns the distinct (clamped) token rows and the number of active lanes
// of simdgroup sg for the B work item of op (load_b, convert_b, store_b).
func bRows(p *Program, sg int, op Op) (rows, active int) {
	tl := &p.Tiling
	seen := map[[2]int]bool{}
	for lane := 0; lane < lanes; lane++ {
		row, kc, ok := tl.BItem(sg, lane, int(op.N))
		if !ok || op.C&SkipPadding != 0 && row >= tl.Tokens {
			continue
		}
		active++
		seen[[2]int{min(row, tl.Tokens-1), kc}] = true
	}
	return len(seen), active
}

func bWidth(tl *Tiling) int {
	if tl.HalfB {
		return 16
	}
	return 32
}

func expandLoadB(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	pieces, active := bRows(p, sg, op)
	if active == 0 {
		return out
	}
	w := bWidth(tl)
	return append(out, Inst{Class: ClassDevLoad, Count: 1, ILP: 1, Stream: StreamActivations,
		Bytes: uint32(lanes * w), Unique: uint32(pieces * w)})
}

// loadBRegs: a simdgroup issues all its B passes' loads before it stores any
// (tile.Builder.staging), so each pass holds its own registers.
func loadBRegs(p *Program, op Op) Footprint {
	return Footprint{Regs: bWidth(&p.Tiling) / 4, Key: 1<<20 + int(op.N), Use: UseActivations} // a key no other op uses
}

func expandConvertB(p *Program, sg int, op Op, out []Inst) []Inst {
	if p.Tiling.HalfB {
		return out
	}
	if _, active := bRows(p, sg, op); active == 0 {
		return out
	}
	// one float move with a half destination per value (ALU instructions write
	// 16-bit registers directly, apple-gpu.md 2.2 note)
	return append(out, Inst{Class: ClassFP32, Count: 8, ILP: 8, Wait: WaitDevice | WaitALU})
}

func expandStoreB(p *Program, sg int, op Op, out []Inst) []Inst {
	if _, active := bRows(p, sg, op); active == 0 {
		return out
	}
	return append(out, Inst{Class: ClassTGStore, Count: 1, ILP: 1, Wait: WaitDevice | WaitALU, Bytes: lanes * 16})
}

func expandZeroB(_ *Program, _ int, _ Op, out []Inst) []Inst {
	return append(out, Inst{Class: ClassTGStore, Count: 1, ILP: 1, Bytes: lanes * 16})
}

func expandBarrier(_ *Program, _ int, _ Op, out []Inst) []Inst {
	return append(out, Inst{Class: ClassBarrier, Count: 1, ILP: 1})
}

func expandLoadFrag(_ *Program, _ int, _ Op, out []Inst) []Inst {
	// 64 halves = 128 bytes per simdgroup, 4 bytes per lane.
	return append(out, Inst{Class: ClassTGLoad, Count: 1, ILP: 1, Bytes: 128})
}

func fragRegs(_ *Program, op Op) Footprint {
	// 64 halves over 32 lanes = 2 halves = one 32-bit register.
	return Footprint{Regs: 1, Key: 100 + int(op.A), Use: UseFragments}
}

func expandMMA(_ *Program, _ int, _ Op, out []Inst) []Inst {
	return append(out, Inst{Class: ClassMMA8, Count: 1, ILP: 1, Wait: WaitTG})
}

func accRegs(_ *Program, op Op) Footprint {
	return Footprint{Regs: 2, Persistent: true, Key: int(op.A)}
}

func expandStoreAcc(_ *Program, _ int, _ Op, out []Inst) []Inst {
	// 64 floats = 256 bytes per simdgroup, 8 bytes per lane.
	return append(out, Inst{Class: ClassTGStore, Count: 1, ILP: 1, Wait: WaitALU, Bytes: 256})
}

// matmulShare returns simdgroup sg's share of descriptor mm: output tiles, and
// the distinct left (token) and right (row) 16x16 fragments it reads per chunk.
func matmulShare(mm *Matmul, nsg, sg int) (tiles, left, right int) {
	ls, rs := map[int]bool{}, map[int]bool{}
	ownedTiles(mm, nsg, sg, func(mt, nt int) {
		tiles++
		ls[mt], rs[nt] = true, true
	})
	return tiles, len(ls), len(rs)
}

func expandMatmul2D(p *Program, sg int, op Op, out []Inst) []Inst {
	mm := &p.Matmuls[op.A]
	tiles, left, right := matmulShare(mm, p.NSG, sg)
	if tiles == 0 {
		return out
	}
	reL, reR := regathered(p, sg, op)
	_, kc := mm.Tiles16()
	return matmulCall(out, tiles, kc, WaitTG, func(out []Inst) []Inst {
		// a 16x16 half fragment is 512 bytes: two 8-byte gathers per lane
		// (tensor loads are per-lane gathers of 2 words, apple-gpu.md §4).
		for _, f := range []struct {
			n  int
			re bool
		}{{left, reL}, {right, reR}} {
			if f.n > 0 {
				out = append(out, Inst{Class: ClassTGLoad, Count: uint16(2 * f.n), ILP: u8(2 * f.n), Bytes: 256, Regather: f.re})
			}
		}
		return out
	})
}

// Matmul2DHideMMAs is the number of MMAs in a simdgroup's share of one
// matmul2d call from which the call's fixed cost hides behind them: TZ's
// cooperative kernel on A19 pays 13-22 clk per call beyond its MMAs with 1-4
// MMAs per call and at most 6 with 8 or more (TZ-FIG, docs/physics-evidence.md
// §2.3).
const Matmul2DHideMMAs = 8

// matmulCall expands one matmul2d call of a simdgroup owning tiles output
// tiles over kc 16-deep chunks: per chunk the operand gathers (gathers) and
// the MMAs, the first chunk's first MMA marked as the call's start when the
// call is too short to hide its fixed cost, then the accumulate step of
// multiply_accumulate mode: the call's MMA chain runs from zero and the old
// C is added after it with ordinary fp32 adds, 8 per lane per owned 16x16
// tile (AGXF, "Accumulate-mode composition"; docs/physics-evidence.md §2.4).
func matmulCall(out []Inst, tiles, kc int, wait Wait, gathers func([]Inst) []Inst) []Inst {
	for c := 0; c < kc; c++ {
		out = gathers(out)
		w := wait
		if c > 0 {
			w |= WaitALU // the call's chain: this chunk adds to the previous one's
		}
		n := tiles
		if c == 0 && tiles*kc < Matmul2DHideMMAs {
			out = append(out, Inst{Class: ClassMMA16, Count: 1, ILP: 1, Wait: w, CallStart: true})
			n--
		}
		if n > 0 {
			out = append(out, Inst{Class: ClassMMA16, Count: uint16(n), ILP: u8(n), Wait: w})
		}
	}
	return append(out, Inst{Class: ClassFP32, Count: uint16(8 * tiles), ILP: u8(8 * tiles), Wait: WaitALU, Accumulate: true})
}

// regathered reports whether an earlier matmul2d op of the k-step body of
// simdgroup sg reads the same left and right operand views as op (the
// half-tile's two calls share the weight tile).
func regathered(p *Program, sg int, op Op) (left, right bool) {
	mm := &p.Matmuls[op.A]
	for _, o := range p.Ops(SecBody, sg) {
		if o.Code != op.Code {
			continue
		}
		if o.A == op.A {
			break
		}
		e := &p.Matmuls[o.A]
		left = left || e.Left == mm.Left
		right = right || e.Right == mm.Right
	}
	return left, right
}

// tableGather returns what one simdgroup load of table what touches for the
// tiling's weight type and strategy under pattern pt (zero if unknown: the
// access is then costed by its bytes).
func tableGather(tl *Tiling, pt dequant.Pattern, what string) dequant.Gather {
	g, _ := dequant.TableGather(tl.TypeA, tl.Strategy, pt, what)
	return g
}

func matmulRegs(p *Program, op Op) Footprint {
	mm := &p.Matmuls[op.A]
	// operand fragments of one chunk: 16x16 half = 4 registers per lane each; the
	// destination's registers are counted once per descriptor (Registers).
	_, left, right := matmulShare(mm, p.NSG, 0)
	return Footprint{Regs: 4 * (left + right), Key: 200 + int(op.A), Use: UseFragments}
}

func expandStoreCoop(p *Program, sg int, op Op, out []Inst) []Inst {
	mm := &p.Matmuls[op.A]
	tiles, _, _ := matmulShare(mm, p.NSG, sg)
	if tiles == 0 {
		return out
	}
	// a 16x16 float tile is 1 KiB: 32 bytes per lane, two 16-byte stores.
	return append(out, Inst{Class: ClassTGStore, Count: uint16(2 * tiles), ILP: u8(2 * tiles), Wait: WaitALU, Bytes: 512})
}

func expandScatter(p *Program, _ int, _ Op, out []Inst) []Inst {
	tl := &p.Tiling
	// a row's floats leave as float4 (a lane each, lanes per pass), the rows
	// past the last float4 one scalar each in a last pass: 4 bytes per row
	// in all
	vec := tl.Rows / 4
	passes := []struct{ n, lanes, bytes int }{
		{vec / lanes, lanes, 16},             // full float4 passes
		{min(1, vec%lanes), vec % lanes, 16}, // a partial one
		{min(1, tl.Rows%4), tl.Rows % 4, 4},  // the scalar tail
	}
	out = append(out,
		Inst{Class: ClassDevLoad, Count: 1, ILP: 1, Stream: StreamMeta, Bytes: lanes * 4, Unique: 4},
		Inst{Class: ClassInt, Count: 4, ILP: 2, Wait: WaitDevice})
	for _, ps := range passes {
		if ps.n > 0 {
			out = append(out, Inst{Class: ClassTGLoad, Count: uint16(ps.n), ILP: u8(ps.n), Wait: WaitALU, Bytes: uint32(ps.lanes * ps.bytes)})
		}
	}
	for _, ps := range passes {
		if ps.n > 0 {
			b := uint32(ps.lanes * ps.bytes)
			out = append(out, Inst{Class: ClassDevStore, Count: uint16(ps.n), ILP: u8(ps.n), Wait: WaitTG, Stream: StreamOutput,
				Bytes: b, Unique: uint32(ps.n) * b})
		}
	}
	return out
}

func noRegs(*Program, Op) Footprint { return Footprint{} }
