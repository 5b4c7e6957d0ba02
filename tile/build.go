package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// Instruction estimates for the kernel's scalar bookkeeping, which the source
// does not state in instructions. They are small next to the staging and matrix
// work of a k-step and are documented in docs/model.md.
const (
	// exitInts: compare r1 with the expert's count and branch.
	exitInts = 2
	// setupInts: thread/row/token indices, the id's token and slot (an integer
	// division and a modulo by ne20, emulated in software), and 64-bit pointer
	// arithmetic for the A and B rows.
	setupInts = 24
	// stepInts: per k-step pointer and chunk-index advance (il update with its
	// conditional, x and y increments) and the loop compare and branch.
	stepInts = 6
	// chunkInts: per 8-wide k chunk of the compute loop, the two fragment
	// pointer increments.
	chunkInts = 2
	// baseRegs: 32-bit registers per thread for addressing and control that live
	// through the loop: A and B device pointers (2 each), tile store offsets,
	// loop counter, chunk index, fragment pointers, thread and simdgroup ids.
	baseRegs = 12
)

// Builder makes the programs of one kernel for one problem, and caches them by
// tile context. It is safe for concurrent use; returned programs are immutable.
type Builder struct {
	Kernel Kernel
	typeA  dequant.Type
	halfB  bool
	rowBPS float64
	steps  int // k-steps of the problem's k

	progs programCache
}

// NewBuilder validates the kernel for the problem.
func NewBuilder(p Problem, k Kernel) (*Builder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := k.Validate(k.Path); err != nil {
		return nil, err
	}
	rb, err := p.TypeA.RowBytes(p.K)
	if err != nil {
		return nil, err
	}
	if err := checkMMActivations("mul_mm_id", p.TypeA, p.HalfB); err != nil {
		return nil, err
	}
	return &Builder{
		Kernel: k, typeA: p.TypeA, halfB: p.HalfB,
		rowBPS: float64(rb) * float64(k.NK) / float64(p.K), steps: p.K / k.NK,
	}, nil
}

// ShapePrograms returns the programs whose registers and threadgroup memory
// set the kernel's occupancy: the full tile and the half tile, the branches
// of the compiled kernel (it has one register count, its largest branch's).
func (b *Builder) ShapePrograms() []*isa.Program {
	k := b.Kernel
	return []*isa.Program{
		b.Program(Context{Rows: k.NR0, Tokens: k.NR1, Steps: b.steps}),
		b.Program(Context{Rows: k.NR0, Tokens: min(k.NR1H, k.NR1), Steps: b.steps}),
	}
}

// Shape returns what the kernel asks of a core (ShapeOf its ShapePrograms).
func (b *Builder) Shape() Shape { return ShapeOf(b.ShapePrograms()) }

// LoopProgram returns the program whose k-loop stands for prog's in core-mix
// measurements: a function of prog's k-loop class alone (never of which tile
// of the class a run met first), so results do not depend on run order.
//
// Each tile stands for the tile filling its last token part of NR1H: with
// re-staged B padding that program has the same loop body (every simdgroup
// stages every row). With zeroed padding, tiles of different token counts
// also differ in how many B rows are staged, and a partly filled tile is timed
// with the staging of its whole token part: at NK = 32 a 1-8-token tile stages
// one simdgroup's B rows too many. This is an approximation, measured in
// docs/model.md ("Approximations"); it cuts the mixes to measure by about
// four. With zeroed padding and parts of at most 8 tokens (the staging
// granularity at NK = 32) every tile is its own class.
func (b *Builder) LoopProgram(prog *isa.Program) *isa.Program {
	k := b.Kernel
	t := prog.Tiling
	padZero := k.Padding == PadZero
	if prog.Exit || (padZero && k.NR1H <= 8) {
		return prog
	}
	tokens := k.NR1
	if k.HalfSkip || padZero {
		tokens = min(k.NR1, roundUp(t.Tokens, k.NR1H))
	}
	return b.Program(Context{Rows: t.Rows, Tokens: tokens, Steps: prog.Steps})
}

// Program returns the (cached) program of a tile context. Repeat does not change
// the program.
func (b *Builder) Program(c Context) *isa.Program {
	return b.progs.get(c, "mul_mm_id", b.build)
}

func (b *Builder) build(c Context) *isa.Program {
	k := b.Kernel
	g := k.Geometry
	threads := 32 * g.NSG
	p := newProgram(fmt.Sprintf("%s rows=%d tokens=%d steps=%d", k, c.Rows, c.Tokens, c.Steps), g.NSG, c.Steps, g.TGMemoryBytes())
	layout := isa.Blocked8
	if k.Path == Tensor {
		layout = isa.RowMajor
	}
	p.Tiling = isa.Tiling{
		NR0: g.NR0, NR1: g.NR1, NK: g.NK, Rows: c.Rows, Tokens: c.Tokens, Threads: threads,
		Layout: layout, AOff: 0, BOff: g.NR0 * g.NK, TGHalves: g.NR0*g.NK + g.NR1*g.NK,
		StageStride: g.NR0, StageFloats: g.NR0 * g.NR1,
		TypeA: b.typeA, Strategy: k.Codebook, HalfB: b.halfB,
		RowBytesPerStep: b.rowBPS,
	}
	if c.Exit() {
		p.Exit, p.Steps = true, 0
		for sg := range p.Prologue {
			p.Prologue[sg] = []isa.Op{loadMeta(1), alu(isa.ClassInt, exitInts, 1)}
		}
		return p
	}
	bPasses := ceilDiv(g.NR1*g.NK/8, threads)
	parts := g.NR1 / g.NR1H
	usedParts := parts
	if k.HalfSkip {
		usedParts = ceilDiv(c.Tokens, g.NR1H)
	}
	if k.Path == Tensor {
		b.declareMatmuls(p, usedParts, c)
	}
	for sg := 0; sg < g.NSG; sg++ {
		ids := loadMeta(bPasses)
		ids.Arg = int32(4 * idWords(&p.Tiling, sg, bPasses))
		pro := []isa.Op{loadMeta(1), alu(isa.ClassInt, exitInts, 1), ids, alu(isa.ClassInt, setupInts, 4)}
		pro, body := b.staging(p, sg, c, pro)
		epi := []isa.Op{{Code: isa.OpBarrier}}
		if k.Path == Simdgroup {
			pro, body, epi = b.simdgroupCompute(p, sg, c, pro, body, epi)
		} else {
			for i := range p.Matmuls {
				if p.Matmuls[i].Used {
					body = append(body, isa.Op{Code: isa.OpMatmul2D, A: uint8(i)})
					epi = append(epi, isa.Op{Code: isa.OpStoreCoop, A: uint8(i)})
				}
			}
		}
		epi = append(epi, isa.Op{Code: isa.OpBarrier})
		for j := sg; j < c.Tokens; j += g.NSG {
			epi = append(epi, isa.Op{Code: isa.OpScatter, N: uint16(j)})
		}
		p.Prologue[sg], p.Body[sg], p.Epilogue[sg] = pro, body, epi
	}
	p.Skipped.HalfTiles = int64(b.skippedParts(parts, usedParts, c.Tokens))
	return p
}

// skippedParts counts the token parts of NR1H past the routed tokens whose
// work the kernel skips. The tensor path leaves every unused part's matmul2d
// out. The simdgroup path idles whole simdgroups, so a part counts only when
// every simdgroup column overlapping it is idle: with one column (sg_cols = 1)
// each simdgroup spans every part and nothing is skipped.
func (b *Builder) skippedParts(parts, usedParts, tokens int) int {
	g := b.Kernel.Geometry
	if b.Kernel.Path == Tensor {
		return parts - usedParts
	}
	tokPer := g.NR1 / g.SGCols
	n := 0
	for part := usedParts; part < parts; part++ {
		// the columns over a part are idle when the first of them is
		if b.columnIdle(part*g.NR1H/tokPer, tokens) {
			n++
		}
	}
	return n
}

// columnIdle reports whether the half-skip idles simdgroup column cg of a
// tile of that many tokens on the simdgroup path: the column's tokens all lie
// past the routed ones, rounded up to a part of NR1H.
func (b *Builder) columnIdle(cg, tokens int) bool {
	g := b.Kernel.Geometry
	return b.Kernel.HalfSkip && cg*(g.NR1/g.SGCols) >= roundUp(tokens, g.NR1H)
}

// staging returns the k-step's staging ops of simdgroup sg (barrier, B loads,
// A decode and stores, B conversion and stores, loop control, barrier), adding
// the one-time B zeroing of PadZero to its prologue. With PadZero the B ops
// carry isa.SkipPadding: their padding lanes stay idle.
func (b *Builder) staging(p *isa.Program, sg int, c Context, pro []isa.Op) ([]isa.Op, []isa.Op) {
	g := b.Kernel.Geometry
	tl := &p.Tiling
	threads := 32 * g.NSG
	aPasses, bPasses := ceilDiv(tl.AItems(), threads), ceilDiv(tl.BItems(), threads)
	padZero := b.Kernel.Padding == PadZero
	var skip uint8
	if padZero {
		skip = isa.SkipPadding
	}
	var body []isa.Op
	body = append(body, isa.Op{Code: isa.OpBarrier})
	// The B loads do not depend on the A decode; the compiler issues them
	// first so both device latencies overlap.
	for t := 0; t < bPasses; t++ {
		first, _, ok := tl.BItem(sg, 0, t)
		if !ok {
			continue
		}
		if padZero {
			if last := lastBRow(tl, sg, t); last >= c.Tokens {
				pro = append(pro, isa.Op{Code: isa.OpZeroB, N: uint16(t)})
			}
			if first >= c.Tokens {
				continue // every lane of this pass holds padding rows
			}
		}
		body = append(body, isa.Op{Code: isa.OpLoadB, N: uint16(t), C: skip})
	}
	for t := 0; t < aPasses; t++ {
		if _, _, ok := tl.AItem(sg, 0, t); ok {
			body = append(body, isa.Op{Code: isa.OpDequantA, N: uint16(t)}, isa.Op{Code: isa.OpStoreA, N: uint16(t)})
		}
	}
	for _, op := range body {
		if op.Code == isa.OpLoadB {
			body = append(body, isa.Op{Code: isa.OpConvertB, N: op.N, C: op.C}, isa.Op{Code: isa.OpStoreB, N: op.N, C: op.C})
		}
	}
	body = append(body, alu(isa.ClassInt, stepInts, 2), isa.Op{Code: isa.OpBarrier})
	return pro, body
}

// lastBRow returns the token row of the last lane of simdgroup sg that has a
// B work item in pass t (the caller knows lane 0 has one).
func lastBRow(tl *isa.Tiling, sg, t int) int {
	row := 0
	for lane := 0; lane < 32; lane++ {
		if r, _, ok := tl.BItem(sg, lane, t); ok {
			row = r
		}
	}
	return row
}

// simdgroupCompute appends the fragment loads, multiply-accumulates and
// accumulator stores of simdgroup sg, or nothing when the half-tile skip idles it.
func (b *Builder) simdgroupCompute(p *isa.Program, sg int, c Context, pro, body, epi []isa.Op) ([]isa.Op, []isa.Op, []isa.Op) {
	g := b.Kernel.Geometry
	rg, cg := sg%g.SGRows, sg/g.SGRows
	rowsPer, tokPer := g.NR0/g.SGRows, g.NR1/g.SGCols
	nA, nB := rowsPer/8, tokPer/8
	chunks := g.NK / 8
	if b.columnIdle(cg, c.Tokens) {
		p.Skipped.MMA8 += int64(nA * nB * chunks * c.Steps)
		return pro, body, epi
	}
	for i := 0; i < nA*nB; i++ {
		pro = append(pro, isa.Op{Code: isa.OpZeroAcc, A: uint8(i)})
	}
	tl := &p.Tiling
	for ik := 0; ik < chunks; ik++ {
		for i := 0; i < nA; i++ {
			off := tl.AOff + 64*((g.NR0/8)*ik+rg*nA+i)
			body = append(body, isa.Op{Code: isa.OpLoadFrag, A: uint8(i), B: 0, Arg: int32(off)})
		}
		for j := 0; j < nB; j++ {
			off := tl.BOff + 64*((g.NR1/8)*ik+cg*nB+j)
			body = append(body, isa.Op{Code: isa.OpLoadFrag, A: uint8(nA + j), B: 1, Arg: int32(off)})
		}
		for j := 0; j < nB; j++ {
			for i := 0; i < nA; i++ {
				body = append(body, isa.Op{Code: isa.OpMMA, A: uint8(j*nA + i), B: uint8(nA + j), C: uint8(i)})
			}
		}
		body = append(body, alu(isa.ClassInt, chunkInts, 2))
	}
	for j := 0; j < nB; j++ {
		for i := 0; i < nA; i++ {
			off := (cg*tokPer+8*j)*tl.StageStride + rg*rowsPer + 8*i
			epi = append(epi, isa.Op{Code: isa.OpStoreAcc, A: uint8(j*nA + i), Arg: int32(off)})
		}
	}
	return pro, body, epi
}

// declareMatmuls adds the tensor path's matmul2d descriptors: one full-tile
// descriptor, or one per token part of NR1H when the half-skip splits the tile
// (both kinds with the dual-descriptor knob), and marks the ones this tile runs.
func (b *Builder) declareMatmuls(p *isa.Program, usedParts int, c Context) {
	k := b.Kernel
	g := k.Geometry
	tl := &p.Tiling
	right := isa.PackedView(tl.AOff, g.NK, g.NR0)
	bView := func(base, tokens int) isa.View {
		if k.BExtents == ExtentsFixed {
			return isa.PackedView(base, g.NK, tokens)
		}
		return isa.PackedView(base, tokens, g.NK)
	}
	full := isa.Matmul{M: g.NR1, N: g.NR0, K: g.NK, Left: bView(tl.BOff, g.NR1), Right: right}
	parts := g.NR1 / g.NR1H
	half := func(part int) isa.Matmul {
		return isa.Matmul{M: g.NR1H, N: g.NR0, K: g.NK, Left: bView(tl.BOff+part*g.NR1H*g.NK, g.NR1H), Right: right, DestRow: part * g.NR1H}
	}
	perStep := func(mm *isa.Matmul) int64 {
		tiles, kc := mm.Tiles16()
		return int64(tiles * kc * c.Steps)
	}
	switch {
	case k.DualDescriptor:
		full.Used = c.Tokens > g.NR1H
		h := half(0)
		h.Used = !full.Used
		p.Matmuls = append(p.Matmuls, full, h)
		if !full.Used {
			p.Skipped.MMA16 += perStep(&full) - perStep(&h)
		}
	case k.HalfSkip:
		for part := 0; part < parts; part++ {
			h := half(part)
			h.Used = part < usedParts
			if !h.Used {
				p.Skipped.MMA16 += perStep(&h)
				p.Skipped.Matmul2D += int64(c.Steps)
			}
			p.Matmuls = append(p.Matmuls, h)
		}
	default:
		full.Used = true
		p.Matmuls = append(p.Matmuls, full)
	}
}

func loadMeta(n int) isa.Op { return isa.Op{Code: isa.OpLoadMeta, N: uint16(n)} }

// idWords returns how many distinct routing words (hids entries) the lanes of
// simdgroup sg read over the B passes: each thread reads the id of its B row,
// clamped to the tile (kernel-facts 4.2: lr1 = min(tiitg/4, nr1-1) at NK = 32,
// so a simdgroup's 32 lanes read 8 ids).
func idWords(tl *isa.Tiling, sg, passes int) int {
	n := 0
	for p := 0; p < passes; p++ {
		seen := map[int]bool{}
		for l := 0; l < 32; l++ {
			row, _, ok := tl.BItem(sg, l, p)
			if !ok {
				row = tl.NR1 - 1 // a thread past the B items reads the clamped last row's id
			}
			seen[min(row, tl.NR1-1)] = true
		}
		n += len(seen)
	}
	return n
}

func alu(c isa.Class, n, ilp int) isa.Op {
	return isa.Op{Code: isa.OpALU, A: uint8(c), N: uint16(n), B: uint8(ilp)}
}

func roundUp(a, b int) int { return ceilDiv(a, b) * b }
