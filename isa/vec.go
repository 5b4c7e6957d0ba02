package isa

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// Ops of the mat-vec kernels (kernel_mul_mv, kernel_mul_mv_id,
// kernel_mul_mv_ext), whose lanes each reduce part of a dot product in
// float32. Each function is one column of the op table (op.go).
// VecGeom is the lane geometry of a mat-vec program. A simdgroup's 32 lanes form
// 32/LanesPerRow groups; each group computes RowsPerGroup weight rows for the
// threadgroup's NR1 token slots, its LanesPerRow lanes splitting K. In a k-step
// lane j of a group takes ChunksPerLane consecutive 16-weight chunks starting at
// k = step·NK + j·16·ChunksPerLane (+ the simdgroup's share when KSplit).
type VecGeom struct {
	K             int  // reduction length; a lane whose chunk starts at or past K idles
	LanesPerRow   int  // lanes splitting one row's K (32, or nxpsg for mul_mv_ext)
	RowsPerGroup  int  // rows each lane group computes
	ChunksPerLane int  // 16-weight chunks a lane takes per row and k-step (2: one 32-weight sub-block)
	KSplit        bool // the simdgroups share the rows and split K; partial sums meet in threadgroup memory
	CodebookTG    bool // codebook reads go to the copy the kernel made in threadgroup memory
	RowBytes      int  // bytes of one weight row
}

// DeviceMemory is the device memory of kernels that read activations and write
// results directly, besides what Memory gives: activation vectors at any k, and
// single outputs. Tokens and rows are tile-local; the emulator binds it.
type DeviceMemory interface {
	Memory
	// Vector loads len(out) activations k0, k0+1, ... of tile token `token`
	// (a valid token) as float32.
	Vector(token, k0 int, out []float32)
	// Store writes the output of tile row `row` for tile token `token` (both
	// valid).
	Store(row, token int, v float32)
}

// extState is the functional state the ops of this file add to a Machine,
// sized by NewMachine from the program's ops (the op table's state column).
type extState struct {
	sgs  []vecSG
	left []float32 // matmul2d_dev: the left operand of the current k-step
	tmp  []float32
}

// vecSG is the per-lane state of one simdgroup of a mat-vec program.
type vecSG struct {
	acc [][32]float32     // lane accumulators
	y   [][32][32]float32 // activations per token slot and lane
	w   [32][16]float32   // the decoded chunk of each lane
}

func (m *Machine) vec(sg int) *vecSG { return &m.ext.sgs[sg] }

func (m *Machine) dev() DeviceMemory {
	d, ok := m.Mem.(DeviceMemory)
	if !ok {
		panic(fmt.Sprintf("isa: %s: the bound memory %T is not a DeviceMemory", m, m.Mem)) // a binding bug
	}
	return d
}

// lane geometry

func (t *Tiling) vecLanes() int   { return max(1, t.Vec.LanesPerRow) }
func (t *Tiling) vecPerLane() int { return 16 * max(1, t.Vec.ChunksPerLane) }

// vecRow returns the threadgroup row of row slot r of lane's group in
// simdgroup sg.
func (t *Tiling) vecRow(sg, lane, r int) int {
	v := &t.Vec
	row := (lane/t.vecLanes())*v.RowsPerGroup + r
	if !v.KSplit {
		row += sg * (32 / t.vecLanes()) * v.RowsPerGroup
	}
	return row
}

// vecOff returns the k offset inside a k-step of chunk c of lane in simdgroup sg.
func (t *Tiling) vecOff(sg, lane, c int) int {
	per := t.vecPerLane()
	off := (lane%t.vecLanes())*per + 16*c
	if t.Vec.KSplit {
		off += sg * t.vecLanes() * per
	}
	return off
}

// vecK returns the first k of chunk c of lane in simdgroup sg at a k-step.
func (t *Tiling) vecK(sg, lane, c, step int) int { return step*t.NK + t.vecOff(sg, lane, c) }

// vecCover returns, averaged over the program's k-steps, how many distinct
// (row, k) 16-weight chunks (rows: distinct clamped rows of row slot r; r < 0:
// k offsets only) simdgroup sg's lanes take for chunk c.
func vecCover(p *Program, sg, r, c int) float64 {
	tl := &p.Tiling
	steps := max(1, p.Steps)
	total := 0
	for s := 0; s < steps; s++ {
		seen := map[[2]int]bool{}
		for lane := 0; lane < lanes; lane++ {
			k := tl.vecK(sg, lane, c, s)
			if k >= tl.Vec.K {
				continue
			}
			row := -1
			if r >= 0 {
				row = min(tl.vecRow(sg, lane, r), tl.Rows-1)
			}
			seen[[2]int{row, k}] = true
		}
		total += len(seen)
	}
	return float64(total) / float64(steps)
}

func actBytes(tl *Tiling) int {
	if tl.HalfB {
		return 2
	}
	return 4
}

// semantics

func execVZero(m *Machine, sg int, op Op) {
	st := m.vec(sg)
	for a := int(op.A); a < int(op.A)+int(op.N); a++ {
		st.acc[a] = [32]float32{}
	}
}

func execLoadVec(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	d := m.dev()
	tok := min(int(op.N), tl.Tokens-1) // padding token slots re-read the last token
	per := tl.vecPerLane()
	for lane := 0; lane < lanes; lane++ {
		k := tl.vecK(sg, lane, 0, m.Step)
		if k >= tl.Vec.K {
			continue
		}
		d.Vector(tok, k, st.y[op.N][lane][:min(per, tl.Vec.K-k)])
	}
}

func execDequantW(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	for lane := 0; lane < lanes; lane++ {
		k := tl.vecK(sg, lane, int(op.C), m.Step)
		if k >= tl.Vec.K {
			continue
		}
		row := min(tl.vecRow(sg, lane, int(op.B)), tl.Rows-1) // rows past M re-read the last row
		block, il := m.Mem.WeightBlock(row, k)
		m.dec(block, il, &st.w[lane])
	}
}

// execFMAVec adds a lane's 16 products to its accumulator: four float32 chains
// s_j = w_j·y_j + w_{j+4}·y_{j+4} + ... (i = j mod 4, in k order), then
// acc + ((s0 + s1) + (s2 + s3)). Every product is rounded to float32 before it
// is added (explicit conversions: Go may not fuse them), as Metal does unless
// it contracts to fma; the tolerance of the tests covers both.
func execFMAVec(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	c := int(op.C)
	y := &st.y[op.B]
	for lane := 0; lane < lanes; lane++ {
		if tl.vecK(sg, lane, c, m.Step) >= tl.Vec.K {
			continue
		}
		w := &st.w[lane]
		yy := (*[16]float32)(y[lane][16*c : 16*c+16])
		var s [4]float32
		for j := 0; j < 4; j++ {
			v := float32(w[j] * yy[j])
			v += float32(w[j+4] * yy[j+4])
			v += float32(w[j+8] * yy[j+8])
			v += float32(w[j+12] * yy[j+12])
			s[j] = v
		}
		st.acc[op.A][lane] += (s[0] + s[1]) + (s[2] + s[3])
	}
}

// execSimdSum reduces each accumulator over each group of L lanes as a pairwise
// tree (lane l += lane l + L/2, then + L/4, ...), leaving the sum in the
// group's first lane. The order inside simd_sum is not documented; the tests'
// tolerance holds for any order.
func execSimdSum(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	L := tl.vecLanes()
	for a := int(op.A); a < int(op.A)+int(op.N); a++ {
		v := &st.acc[a]
		for g := 0; g < lanes; g += L {
			for d := L / 2; d >= 1; d /= 2 {
				for l := 0; l < d; l++ {
					v[g+l] += v[g+l+d]
				}
			}
		}
	}
}

func execStoreVec(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	d := m.dev()
	L := tl.vecLanes()
	for a := int(op.A); a < int(op.A)+int(op.N); a++ {
		r, t := a/tl.NR1, a%tl.NR1
		if t >= tl.Tokens {
			continue
		}
		for g := 0; g < lanes; g += L {
			if row := tl.vecRow(sg, g, r); row < tl.Rows {
				d.Store(row, t, st.acc[a][g])
			}
		}
	}
}

func execStorePartial(m *Machine, sg int, op Op) {
	st := m.vec(sg)
	n := int(op.N)
	for i := 0; i < n; i++ {
		m.Stage[sg*n+i] = st.acc[int(op.A)+i][0]
	}
}

func execReduceStore(m *Machine, _ int, op Op) {
	tl := &m.P.Tiling
	d := m.dev()
	n := int(op.N)
	for i := 0; i < n; i++ {
		v := m.Stage[i]
		for s := 1; s < m.P.NSG; s++ {
			v += m.Stage[s*n+i]
		}
		a := int(op.A) + i
		r, t := a/tl.NR1, a%tl.NR1
		if row := tl.vecRow(0, 0, r); row < tl.Rows && t < tl.Tokens {
			d.Store(row, t, v)
		}
	}
}

func u8(n int) uint8   { return uint8(min(max(n, 1), 255)) }
func u16(n int) uint16 { return uint16(min(max(n, 0), 1<<15)) }

func expandVZero(_ *Program, _ int, op Op, out []Inst) []Inst {
	if op.N == 0 {
		return out
	}
	return append(out, Inst{Class: ClassInt, Count: op.N, ILP: u8(int(op.N))})
}

func vzeroRegs(_ *Program, op Op) Footprint {
	return Footprint{Regs: int(op.N), Persistent: true, Key: 1000 + int(op.A)}
}

func expandLoadVec(p *Program, sg int, _ Op, out []Inst) []Inst {
	tl := &p.Tiling
	offs := vecCover(p, sg, -1, 0)
	if offs == 0 {
		return out
	}
	eb := actBytes(tl)
	n := tl.vecPerLane() * eb / 16 // 16-byte loads per lane
	return append(out, Inst{Class: ClassDevLoad, Count: u16(n), ILP: u8(n), Stream: StreamActivations,
		Bytes: lanes * 16, Unique: uint32(offs*float64(tl.vecPerLane()*eb) + 0.5)})
}

func loadVecRegs(p *Program, op Op) Footprint {
	return Footprint{Regs: p.Tiling.vecPerLane() * actBytes(&p.Tiling) / 4, Key: 400 + int(op.N), Use: UseActivations}
}

func expandDequantW(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	chunks := vecCover(p, sg, int(op.B), int(op.C))
	if chunks == 0 {
		return out
	}
	cost := dequant.ChunkCost(tl.TypeA, tl.Strategy)
	unique := uint32(chunks*float64(tl.Vec.RowBytes)*16/float64(tl.Vec.K) + 0.5)
	first := true
	aluWait := WaitDevice
	for _, l := range cost.Loads {
		in := Inst{Count: uint16(l.Count), ILP: u8(l.Count), Bytes: uint32(lanes * l.Width)}
		switch {
		case l.Space == dequant.Device:
			in.Class, in.Stream = ClassDevLoad, StreamWeights
			if first {
				in.Unique, first = unique, false
			}
		case tl.Vec.CodebookTG:
			// the kernel copied the tables to threadgroup memory (kernel-facts
			// §7.4): a gather served by its busiest bank
			in.Class, in.Wait = ClassTGLoad, WaitDevice
			in.BankWords = float32(tableGather(tl, dequant.RowPattern, l.What).BankWords)
			aluWait |= WaitTG
		default:
			in.Class, in.Stream, in.Wait = ClassConstLoad, StreamCodebook, WaitDevice
			in.Sectors = float32(tableGather(tl, dequant.RowPattern, l.What).Sectors)
		}
		out = append(out, in)
	}
	for _, a := range []struct {
		c Class
		n int
	}{{ClassInt, cost.Int}, {ClassFP32, cost.FP32}, {ClassConvert, cost.Convert}} {
		if a.n == 0 {
			continue
		}
		// the decode does not depend on the previous row's products: its first
		// group waits for its data only
		out = append(out, Inst{Class: a.c, Count: uint16(a.n), ILP: 4, Wait: aluWait})
		aluWait = WaitALU
	}
	return out
}

func dequantWRegs(p *Program, _ Op) Footprint {
	cost := dequant.ChunkCost(p.Tiling.TypeA, p.Tiling.Strategy)
	return Footprint{Regs: 16 + cost.Temps, Key: 1, Use: UseDequant}
}

func expandFMAVec(p *Program, sg int, op Op, out []Inst) []Inst {
	if vecCover(p, sg, -1, int(op.C)) == 0 {
		return out
	}
	return append(out,
		Inst{Class: ClassFP32, Count: 16, ILP: 4, Wait: WaitDevice | WaitALU}, // four 4-term chains
		Inst{Class: ClassFP32, Count: 2, ILP: 2, Wait: WaitALU},               // s0+s1, s2+s3
		Inst{Class: ClassFP32, Count: 2, ILP: 1, Wait: WaitALU})               // their sum, + acc
}

func expandSimdSum(p *Program, _ int, op Op, out []Inst) []Inst {
	n := int(op.N)
	if n == 0 {
		return out
	}
	// per tree level one shuffle (modelled as two dependent integer
	// instructions: PT-MB measures simd shuffles at throughput 2, latency ~4 on
	// M1) and one fp32 add, for every accumulator
	for d := p.Tiling.vecLanes() / 2; d >= 1; d /= 2 {
		out = append(out,
			Inst{Class: ClassInt, Count: u16(2 * n), ILP: u8(n), Wait: WaitALU},
			Inst{Class: ClassFP32, Count: u16(n), ILP: u8(n), Wait: WaitALU})
	}
	return out
}

// validOutputs counts the outputs of accumulators a0..a0+n-1 of simdgroup sg
// that lie in the tile's valid rows and tokens (one per lane group).
func validOutputs(p *Program, sg, a0, n int) int {
	tl := &p.Tiling
	c := 0
	for a := a0; a < a0+n; a++ {
		r, t := a/tl.NR1, a%tl.NR1
		if t >= tl.Tokens {
			continue
		}
		for g := 0; g < lanes; g += tl.vecLanes() {
			if tl.vecRow(sg, g, r) < tl.Rows {
				c++
			}
		}
	}
	return c
}

func expandStoreVec(p *Program, sg int, op Op, out []Inst) []Inst {
	v := validOutputs(p, sg, int(op.A), int(op.N))
	if v == 0 {
		return out
	}
	groups := lanes / p.Tiling.vecLanes()
	return append(out, Inst{Class: ClassDevStore, Count: op.N, ILP: u8(int(op.N)), Wait: WaitALU, Stream: StreamOutput,
		Bytes: uint32(4 * groups), Unique: uint32(4 * v)})
}

func expandStorePartial(_ *Program, _ int, op Op, out []Inst) []Inst {
	return append(out, Inst{Class: ClassTGStore, Count: op.N, ILP: u8(int(op.N)), Wait: WaitALU, Bytes: 4})
}

func expandReduceStore(p *Program, _ int, op Op, out []Inst) []Inst {
	n := int(op.N)
	out = append(out, Inst{Class: ClassTGLoad, Count: u16(p.NSG), ILP: u8(p.NSG), Bytes: uint32(4 * n)})
	if p.NSG > 1 {
		out = append(out, Inst{Class: ClassFP32, Count: u16(p.NSG - 1), ILP: 1, Wait: WaitTG | WaitALU})
	}
	if v := validOutputs(p, 0, int(op.A), n); v > 0 {
		out = append(out, Inst{Class: ClassDevStore, Count: 1, ILP: 1, Wait: WaitTG | WaitALU, Stream: StreamOutput,
			Bytes: uint32(4 * n), Unique: uint32(4 * v)})
	}
	return out
}
