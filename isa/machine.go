package isa

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// Memory is the device memory one threadgroup reads and writes, bound by the
// emulator to the threadgroup's expert, row tile and routed tokens.
type Memory interface {
	// WeightBlock returns the block holding weight k0 of tile row `row` (already
	// clamped to the valid rows) and the 16-weight chunk index of k0 in it.
	WeightBlock(row, k0 int) (block []byte, il int)
	// Activations loads the 8 activations k0..k0+7 of tile token row `token`
	// (already clamped to the valid tokens) as float32.
	Activations(token, k0 int, out *[8]float32)
	// StoreRow writes vals as the outputs of tile token row `token` for tile rows
	// 0..len(vals)-1.
	StoreRow(token int, vals []float32)
}

// Machine is the functional state of one threadgroup: threadgroup memory (in
// half-precision slots, values kept as float32), the float staging buffer,
// per-simdgroup fragment registers and per-lane registers, and the cooperative
// tensors. One Machine is reused for many threadgroups of the same program.
type Machine struct {
	P     *Program
	Mem   Memory
	Step  int       // current k-step (0-based), set by the driver before each body
	TG    []float32 // threadgroup memory, half slots
	Stage []float32 // float staging buffer
	sgs   []sgState
	coop  [][]float32
	dec   dequant.ChunkFunc
	ext   extState // lane state of the mat-vec and device-operand ops (vec.go)
}

type sgState struct {
	frag  [][64]float32
	acc   [][64]float32
	laneA [32][16]float32
	laneB [][32][8]float32 // one per B pass: a simdgroup loads all its passes before it stores any
}

// NewMachine allocates the state a program needs.
func NewMachine(p *Program) (*Machine, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	m := &Machine{
		P:     p,
		TG:    make([]float32, p.Tiling.TGHalves),
		Stage: make([]float32, p.Tiling.StageFloats),
		sgs:   make([]sgState, p.NSG),
		dec:   dequant.Decoder(p.Tiling.TypeA, p.Tiling.Strategy),
	}
	st := programState(p)
	for i := range m.sgs {
		m.sgs[i].frag = make([][64]float32, st.frags)
		m.sgs[i].acc = make([][64]float32, st.accs)
		m.sgs[i].laneB = make([][32][8]float32, st.bPasses)
	}
	m.ext.sgs = make([]vecSG, p.NSG)
	for i := range m.ext.sgs {
		m.ext.sgs[i].acc = make([][32]float32, st.laneAccs)
		m.ext.sgs[i].y = make([][32][32]float32, st.tokenSlots)
		m.ext.sgs[i].w = make([][32][32]float32, st.rowSlots)
	}
	m.ext.dec = vecDecoder(p)
	m.coop = make([][]float32, len(p.Matmuls))
	for i, mm := range p.Matmuls {
		m.coop[i] = make([]float32, mm.M*mm.N)
	}
	return m, nil
}

// Reset clears every register, cooperative tensor and memory of the machine, so a
// new threadgroup starts from the state a real launch would not guarantee either
// (the kernel initialises what it reads; clearing makes stale reads visible as 0).
func (m *Machine) Reset() {
	clear(m.TG)
	clear(m.Stage)
	for i := range m.sgs {
		for j := range m.sgs[i].acc {
			m.sgs[i].acc[j] = [64]float32{}
		}
	}
	for _, c := range m.coop {
		clear(c)
	}
}

// Exec runs one op of simdgroup sg.
func (m *Machine) Exec(sg int, op Op) {
	if f := table[op.Code].exec; f != nil {
		f(m, sg, op)
	}
}

// Run executes the whole program for the bound memory: prologue, Steps bodies and
// epilogue, simdgroup by simdgroup between threadgroup barriers (the kernels are
// race-free, so this order gives the values any interleaving would).
func (m *Machine) Run() {
	p := m.P
	m.Step = 0
	m.runSection(SecPrologue)
	for s := 0; s < p.Steps; s++ {
		m.Step = s
		m.runSection(SecBody)
	}
	m.runSection(SecEpilogue)
}

func (m *Machine) runSection(sec Section) {
	p := m.P
	var pos [8]int
	var cur []int
	if p.NSG <= len(pos) {
		cur = pos[:p.NSG]
	} else {
		cur = make([]int, p.NSG)
	}
	for {
		done := true
		for sg := 0; sg < p.NSG; sg++ {
			ops := p.Ops(sec, sg)
			i := cur[sg]
			for i < len(ops) && ops[i].Code != OpBarrier {
				m.Exec(sg, ops[i])
				i++
			}
			if i < len(ops) {
				i++ // step over the barrier
				done = false
			}
			cur[sg] = i
		}
		if done {
			return
		}
	}
}

// lane geometry: Tiling.AItem and BItem (program.go) map a lane to its work item

func (t *Tiling) aPos(row, k int) int {
	if t.Layout == Blocked8 {
		return t.AOff + 64*((t.NR0/8)*(k/8)+row/8) + 8*(k%8) + row%8
	}
	return t.AOff + row*t.NK + k
}

func (t *Tiling) bPos(tok, k int) int {
	if t.Layout == Blocked8 {
		return t.BOff + 64*((t.NR1/8)*(k/8)+tok/8) + 8*(tok%8) + k%8
	}
	return t.BOff + tok*t.NK + k
}

func execZeroAcc(m *Machine, sg int, op Op) { m.sgs[sg].acc[op.A] = [64]float32{} }

func execDequantA(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := &m.sgs[sg]
	for lane := 0; lane < 32; lane++ {
		row, kc, ok := tl.AItem(sg, lane, int(op.N))
		if !ok {
			continue
		}
		block, il := m.Mem.WeightBlock(min(row, tl.Rows-1), m.Step*tl.NK+16*kc)
		m.dec(block, il, &st.laneA[lane])
	}
}

func execStoreA(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := &m.sgs[sg]
	bf := tl.TypeA.StagesBFloat()
	for lane := 0; lane < 32; lane++ {
		row, kc, ok := tl.AItem(sg, lane, int(op.N))
		if !ok {
			continue
		}
		v := &st.laneA[lane]
		stageValues(bf, v[:])
		if tl.Layout != Blocked8 {
			copy(m.TG[tl.aPos(row, 16*kc):][:16], v[:])
			continue
		}
		// the 16 values of a chunk span two 8-wide k blocks: element i goes to
		// aPos(row, 16kc+i) = base + 64*(NR0/8)*(i/8) + 8*(i%8)
		base := tl.aPos(row, 16*kc)
		next := 64 * (tl.NR0 / 8)
		for i := 0; i < 8; i++ {
			m.TG[base+8*i] = v[i]
			m.TG[base+next+8*i] = v[8+i]
		}
	}
}

// eachBLane calls f for each lane of simdgroup sg that stages a B row this
// step, with the row and the lane's 8-wide k chunk: with SkipPadding in op.C,
// padding rows (zeroed once) are not staged.
func (m *Machine) eachBLane(sg int, op Op, f func(lane, row, kc int)) {
	for lane := 0; lane < 32; lane++ {
		row, kc, ok := m.P.Tiling.BItem(sg, lane, int(op.N))
		if ok && (op.C&SkipPadding == 0 || row < m.P.Tiling.Tokens) {
			f(lane, row, kc)
		}
	}
}

func execLoadB(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := &m.sgs[sg]
	m.eachBLane(sg, op, func(lane, row, kc int) {
		m.Mem.Activations(min(row, tl.Tokens-1), m.Step*tl.NK+8*kc, &st.laneB[op.N][lane])
	})
}

func execConvertB(m *Machine, sg int, op Op) {
	st := &m.sgs[sg]
	bf := m.P.Tiling.TypeA.StagesBFloat()
	m.eachBLane(sg, op, func(lane, _, _ int) {
		stageValues(bf, st.laneB[op.N][lane][:])
	})
}

// stageValues rounds vals in place as the mat-mat kernels store operands in
// threadgroup memory: to half, or to bfloat for bf16 weights
// (dequant.Type.RoundStaged, with the type's test out of the loop).
func stageValues(bf bool, vals []float32) {
	if bf {
		for i, v := range vals {
			vals[i] = dequant.RoundBF16(v)
		}
		return
	}
	for i, v := range vals {
		vals[i] = dequant.RoundHalf(v)
	}
}

func execStoreB(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := &m.sgs[sg]
	m.eachBLane(sg, op, func(lane, row, kc int) {
		for i, v := range &st.laneB[op.N][lane] {
			m.TG[tl.bPos(row, 8*kc+i)] = v
		}
	})
}

func execZeroB(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	for lane := 0; lane < 32; lane++ {
		row, kc, ok := tl.BItem(sg, lane, int(op.N))
		if !ok || row < tl.Tokens {
			continue
		}
		for i := 0; i < 8; i++ {
			m.TG[tl.bPos(row, 8*kc+i)] = 0
		}
	}
}

func execLoadFrag(m *Machine, sg int, op Op) {
	base := int(op.Arg)
	m.sgs[sg].frag[op.A] = [64]float32(m.TG[base : base+64])
}

func execMMA(m *Machine, sg int, op Op) {
	st := &m.sgs[sg]
	MMA8(&st.acc[op.A], &st.frag[op.B], &st.frag[op.C])
}

// MMA8 is simdgroup_multiply_accumulate on 8x8 fragments: c(u, r) += Σ_k
// b(u, k)·a(k, r), evaluated as a float32 chain in k order with c first (the
// legacy Apple MMA numerics, apple-gpu.md §5). Products of half values are exact
// in float32, so fused or unfused evaluation gives the same bits.
func MMA8(c, b, a *[64]float32) {
	for u := 0; u < 8; u++ {
		bu := (*[8]float32)(b[u*8 : u*8+8])
		b0, b1, b2, b3, b4, b5, b6, b7 := bu[0], bu[1], bu[2], bu[3], bu[4], bu[5], bu[6], bu[7]
		cu := (*[8]float32)(c[u*8 : u*8+8])
		for r := 0; r < 8; r++ {
			acc := cu[r]
			acc += float32(b0 * a[r])
			acc += float32(b1 * a[8+r])
			acc += float32(b2 * a[16+r])
			acc += float32(b3 * a[24+r])
			acc += float32(b4 * a[32+r])
			acc += float32(b5 * a[40+r])
			acc += float32(b6 * a[48+r])
			acc += float32(b7 * a[56+r])
			cu[r] = acc
		}
	}
}

func execStoreAcc(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	acc := &m.sgs[sg].acc[op.A]
	base := int(op.Arg)
	for u := 0; u < 8; u++ {
		copy(m.Stage[base+u*tl.StageStride:base+u*tl.StageStride+8], acc[u*8:u*8+8])
	}
}

// ownedTiles calls f for every 16x16 output tile of mm that simdgroup sg computes
// (tiles are dealt round-robin: tile t belongs to simdgroup t mod NSG).
func ownedTiles(mm *Matmul, nsg, sg int, f func(mt, nt int)) {
	tn := ceilDiv(mm.N, 16)
	tiles, _ := mm.Tiles16()
	for t := sg; t < tiles; t += nsg {
		f(t/tn, t%tn)
	}
}

func execMatmul2D(m *Machine, sg int, op Op) {
	mm := &m.P.Matmuls[op.A]
	c := m.coop[op.A]
	ownedTiles(mm, m.P.NSG, sg, func(mt, nt int) {
		for mi := mt * 16; mi < min(mt*16+16, mm.M); mi++ {
			for ni := nt * 16; ni < min(nt*16+16, mm.N); ni++ {
				c[mi*mm.N+ni] += dot16Chain(m.TG, mm, mi, ni)
			}
		}
	})
}

// dot16Chain evaluates one output of a matmul2d run on the M5 tensor unit
// (apple-gpu.md §6.3): per 16-deep chunk, exact products summed in pairs with one
// rounding (p_i), pairs i and i+4 added (q_j), then the running sum (from zero)
// plus q0..q3 in order; the caller adds the old C afterwards with one fp32 add
// (multiply_accumulate mode).
func dot16Chain(tg []float32, mm *Matmul, mi, ni int) float32 {
	return dot16(tg, tg, mm, mi, ni)
}

// dot16 is dot16Chain with the left operand's view over lmem and the right
// operand's over rmem (matmul2d_dev reads the left operand from device memory).
func dot16(lmem, rmem []float32, mm *Matmul, mi, ni int) float32 {
	var t float32
	for k0 := 0; k0 < mm.K; k0 += 16 {
		var p [8]float32
		for i := 0; i < 8; i++ {
			k := k0 + 2*i
			l0, r0 := mm.Left.At(lmem, k, mi), mm.Right.At(rmem, k, ni)
			l1, r1 := mm.Left.At(lmem, k+1, mi), mm.Right.At(rmem, k+1, ni)
			if k >= mm.K {
				l0, r0 = 0, 0
			}
			if k+1 >= mm.K {
				l1, r1 = 0, 0
			}
			p[i] = float32(l0*r0) + float32(l1*r1)
		}
		for j := 0; j < 4; j++ {
			t += p[j] + p[j+4]
		}
	}
	return t
}

func execStoreCoop(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	mm := &m.P.Matmuls[op.A]
	c := m.coop[op.A]
	ownedTiles(mm, m.P.NSG, sg, func(mt, nt int) {
		for mi := mt * 16; mi < min(mt*16+16, mm.M); mi++ {
			row := mm.DestRow + mi
			if row >= tl.NR1 {
				continue
			}
			for ni := nt * 16; ni < min(nt*16+16, mm.N, tl.StageStride); ni++ {
				m.Stage[row*tl.StageStride+ni] = c[mi*mm.N+ni]
			}
		}
	})
}

func execScatter(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	j := int(op.N)
	if j >= tl.Tokens {
		return
	}
	m.Mem.StoreRow(j, m.Stage[j*tl.StageStride:j*tl.StageStride+tl.Rows])
}

// String describes the machine's program for error messages.
func (m *Machine) String() string { return fmt.Sprintf("machine(%s)", m.P.Name) }
