package isa

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// Ops of the mat-vec kernels (kernel_mul_mv, kernel_mul_mv_id,
// kernel_mul_mv_ext), whose lanes each reduce part of a dot product in
// float32. Each function is one column of the op table (op.go).
//
// What a lane computes per k-step comes from the kernels' own arithmetic as
// cost data: kernel_mul_mv's fused decode-and-dot (dequant.MatVecCosts: the
// activation loads and their pre-scaling once per step, the weight loads and
// the dot once per row), kernel_mul_mv_ext's float4 dequantizers
// (dequant.Chunk4Cost) or, for the K-quants, the mat-mat dequantizer
// (dequant.ChunkCost). The weight loads of every row of a step are issued
// before any arithmetic (load_w before dot_w or dequant_w): the loads do not
// depend on the arithmetic, and the compiler schedules them first.
//
// For values the emulator does not reproduce the kernels' formulation (their
// pre-scaled activations and block sums); it multiplies the weights the kernel
// multiplies by the activations in float32: for kernel_mul_mv ggml's CPU
// to_float (dequant.CPUChunkDecoder: the mat-vec kernels compute their scales
// in float32, without the mat-mat dequantizers' half-precision steps), for
// kernel_mul_mv_ext the Metal dequantizers' float32 values (dequant.Decoder,
// not rounded to half).

// VecForm is how a mat-vec program's lanes get their weights.
type VecForm uint8

// The mat-vec forms.
const (
	// VecDot is kernel_mul_mv (and kernel_mul_mv_id): the type's fused
	// decode and dot (dequant.MatVecCosts).
	VecDot VecForm = iota
	// VecExt4 is kernel_mul_mv_ext's float4 form: dequantize_<type>_t4 per
	// 4 weights (dequant.Chunk4Cost), then a float4 dot per token.
	VecExt4
	// VecExt16 is kernel_mul_mv_ext's float4x4 form (the K-quants): the
	// mat-mat dequantizer per 16 weights (dequant.ChunkCost), then four
	// float4 dots per token.
	VecExt16
)

// VecGeom is the lane geometry of a mat-vec program. A simdgroup's 32 lanes
// form 32/LanesPerRow groups; each group computes RowsPerGroup weight rows for
// the threadgroup's NR1 token slots, its LanesPerRow lanes splitting K. In a
// k-step lane j of a group takes WeightsPerLane consecutive weights of each of
// its rows starting at k = step·NK + j·WeightsPerLane (+ the simdgroup's share
// when KSplit). (The kernels spread a lane's weights differently over the
// block; what a lane reads and computes is the cost data's, and for values only
// which lane takes which weights changes, not the sum.)
type VecGeom struct {
	K              int  // reduction length; a lane whose weights start at or past K idles
	LanesPerRow    int  // lanes splitting one row's K (32, nxpsg for mul_mv_ext, 1 for _short)
	RowsPerGroup   int  // rows each lane group computes
	WeightsPerLane int  // weights of a row a lane takes per k-step
	KSplit         bool // the simdgroups share the rows and split K; partial sums meet in threadgroup memory
	Form           VecForm
	MVForm         dequant.MatVecForm // VecDot: the kernel variant of the float types
	RowBytes       int                // bytes of one weight row
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
	dec  dequant.ChunkFunc // the weights the mat-vec kernel multiplies
}

// vecSG is the per-lane state of one simdgroup of a mat-vec program.
type vecSG struct {
	acc [][32]float32     // lane accumulators
	y   [][32][32]float32 // activations per token slot and lane
	w   [][32][32]float32 // the decoded weights per row slot and lane
}

func (m *Machine) vec(sg int) *vecSG { return &m.ext.sgs[sg] }

func (m *Machine) dev() DeviceMemory {
	d, ok := m.Mem.(DeviceMemory)
	if !ok {
		panic(fmt.Sprintf("isa: %s: the bound memory %T is not a DeviceMemory", m, m.Mem)) // a binding bug
	}
	return d
}

// vecDecoder returns the chunk decoder of a program's mat-vec weights (nil
// for programs without mat-vec ops).
func vecDecoder(p *Program) dequant.ChunkFunc {
	if p.Tiling.Vec.LanesPerRow == 0 {
		return nil
	}
	if p.Tiling.Vec.Form == VecDot {
		return dequant.CPUChunkDecoder(p.Tiling.TypeA)
	}
	return dequant.Decoder(p.Tiling.TypeA, p.Tiling.Strategy)
}

// lane geometry

func (t *Tiling) vecLanes() int { return max(1, t.Vec.LanesPerRow) }
func (t *Tiling) vecW() int     { return max(1, t.Vec.WeightsPerLane) }

// vecPiece returns the weights of one decode piece: 4 in the float4 form,
// else up to 16 (one dequantizer chunk).
func (t *Tiling) vecPiece() int {
	if t.Vec.Form == VecExt4 {
		return 4
	}
	return min(16, t.vecW())
}

// vecPieces returns the pieces of a lane's weights per row and k-step.
func (t *Tiling) vecPieces() int { return ceilDiv(t.vecW(), t.vecPiece()) }

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

// vecK returns the first k of lane's weights in simdgroup sg at a k-step.
func (t *Tiling) vecK(sg, lane, step int) int {
	off := (lane % t.vecLanes()) * t.vecW()
	if t.Vec.KSplit {
		off += sg * t.vecLanes() * t.vecW()
	}
	return step*t.NK + off
}

// vecCover returns, averaged over the program's k-steps, how many distinct
// (row, k) weights (rows: the distinct clamped rows of row slot r; r < 0: k
// offsets only) simdgroup sg's lanes take in a step.
func vecCover(p *Program, sg, r int) float64 {
	tl := &p.Tiling
	steps := max(1, p.Steps)
	total := 0
	for s := 0; s < steps; s++ {
		seen := map[[2]int]bool{}
		for lane := 0; lane < lanes; lane++ {
			k := tl.vecK(sg, lane, s)
			if k >= tl.Vec.K {
				continue
			}
			row := -1
			if r >= 0 {
				row = min(tl.vecRow(sg, lane, r), tl.Rows-1)
			}
			if key := [2]int{row, k}; !seen[key] {
				seen[key] = true
				total += min(tl.vecW(), tl.Vec.K-k)
			}
		}
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
	for lane := 0; lane < lanes; lane++ {
		k := tl.vecK(sg, lane, m.Step)
		if k >= tl.Vec.K {
			continue
		}
		d.Vector(tok, k, st.y[op.N][lane][:min(tl.vecW(), tl.Vec.K-k)])
	}
}

// execLoadW decodes each lane's weights of row slot B, piece by piece: a
// piece of p weights at k is taken from the 16-weight chunk holding k.
func execLoadW(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	piece := tl.vecPiece()
	var chunk [16]float32
	for lane := 0; lane < lanes; lane++ {
		k0 := tl.vecK(sg, lane, m.Step)
		row := min(tl.vecRow(sg, lane, int(op.B)), tl.Rows-1) // rows past M re-read the last row
		w := &st.w[op.B][lane]
		for i := 0; i < tl.vecW() && k0+i < tl.Vec.K; i += piece {
			k := k0 + i
			block, il := m.Mem.WeightBlock(row, k-k%16)
			m.ext.dec(block, il, &chunk)
			copy(w[i:i+piece], chunk[k%16:])
		}
	}
}

// dot adds Σ w_i·y_i over the n weights to acc: four float32 chains s_j over
// i = j mod 4 in k order, then acc + ((s0 + s1) + (s2 + s3)). Every product is
// rounded to float32 before it is added (explicit conversions: Go may not fuse
// them), as Metal does unless it contracts to fma; the tolerance of the tests
// covers both.
func dot(acc float32, w, y []float32) float32 {
	var s [4]float32
	for i := range w {
		s[i%4] += float32(w[i] * y[i])
	}
	return acc + ((s[0] + s[1]) + (s[2] + s[3]))
}

// execDotW adds each lane's dot of its weights of row slot B with every token
// slot's activations to the row's accumulators (kernel_mul_mv's fused dot).
func execDotW(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	r := int(op.B)
	for lane := 0; lane < lanes; lane++ {
		k := tl.vecK(sg, lane, m.Step)
		if k >= tl.Vec.K {
			continue
		}
		n := min(tl.vecW(), tl.Vec.K-k)
		for t := 0; t < tl.NR1; t++ {
			a := &st.acc[r*tl.NR1+t][lane]
			*a = dot(*a, st.w[r][lane][:n], st.y[t][lane][:n])
		}
	}
}

// execFMAVec adds, for every token slot t, the dot of piece C of each lane's
// weights of row slot B with the token's activations to accumulator
// B·NR1 + t (kernel_mul_mv_ext's per-token dots).
func execFMAVec(m *Machine, sg int, op Op) {
	tl := &m.P.Tiling
	st := m.vec(sg)
	r, piece := int(op.B), tl.vecPiece()
	i := int(op.C) * piece
	for lane := 0; lane < lanes; lane++ {
		k := tl.vecK(sg, lane, m.Step) + i
		if k >= tl.Vec.K {
			continue
		}
		n := min(piece, tl.Vec.K-k)
		for t := 0; t < tl.NR1; t++ {
			a := &st.acc[r*tl.NR1+t][lane]
			*a = dot(*a, st.w[r][lane][i:i+n], st.y[t][lane][i:i+n])
		}
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

// execReduceStore: simdgroup 0 adds the partial sums of every simdgroup in
// simdgroup order and stores them (the others compute the same sums and
// store nothing).
func execReduceStore(m *Machine, sg int, op Op) {
	if sg != 0 {
		return
	}
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

// timing expansion and registers

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

// vecStepCost is the per-step cost of a VecDot program's lanes.
func vecStepCost(tl *Tiling) dequant.Cost {
	return dequant.MatVecCosts(tl.TypeA, tl.Vec.MVForm).Step
}

// vecActLoads returns the activation loads of one token per lane and step:
// VecDot the kernel's (dequant.MatVecCosts), the mul_mv_ext forms one float4
// per 4 weights.
func vecActLoads(tl *Tiling) []dequant.Load {
	if tl.Vec.Form == VecDot {
		return vecStepCost(tl).Loads
	}
	return []dequant.Load{{Space: dequant.Device, Width: 16, Count: tl.vecW() / 4, What: "y"}}
}

func expandLoadVec(p *Program, sg int, _ Op, out []Inst) []Inst {
	tl := &p.Tiling
	offs := vecCover(p, sg, -1)
	if offs == 0 {
		return out
	}
	eb := actBytes(tl)
	first := true
	for _, l := range vecActLoads(tl) {
		w := l.Width * eb / 4 // f16 activations (kernel_mul_mv_f16_f16): half the bytes
		in := Inst{Class: ClassDevLoad, Count: uint16(l.Count), ILP: u8(l.Count), Stream: StreamActivations, Bytes: uint32(lanes * w)}
		if first {
			in.Unique, first = uint32(offs*float64(eb)+0.5), false
		}
		out = append(out, in)
	}
	return out
}

func loadVecRegs(p *Program, op Op) Footprint {
	return Footprint{Regs: p.Tiling.vecW() * actBytes(&p.Tiling) / 4, Key: 400 + int(op.N), Use: UseActivations}
}

func expandVecPrep(p *Program, sg int, _ Op, out []Inst) []Inst {
	tl := &p.Tiling
	if vecCover(p, sg, -1) == 0 {
		return out
	}
	c := vecStepCost(tl)
	return appendALU(out, c, WaitDevice)
}

func vecPrepRegs(p *Program, _ Op) Footprint {
	return Footprint{Regs: vecStepCost(&p.Tiling).Temps, Key: 3, Use: UseActivations}
}

// appendALU appends a cost's integer, conversion and fp32 groups in 4 chains
// (the order of their dependences: codes extracted, converted, multiplied),
// the first waiting for wait, the others for the previous group.
func appendALU(out []Inst, c dequant.Cost, wait Wait) []Inst {
	for _, a := range []struct {
		c Class
		n int
	}{{ClassInt, c.Int}, {ClassConvert, c.Convert}, {ClassFP32, c.FP32}} {
		if a.n == 0 {
			continue
		}
		out = append(out, Inst{Class: a.c, Count: uint16(a.n), ILP: 4, Wait: wait})
		wait = WaitALU
	}
	return out
}

// vecPieceCost returns the cost of decoding one piece in a mul_mv_ext form.
func vecPieceCost(tl *Tiling) dequant.Cost {
	if tl.Vec.Form == VecExt4 {
		c, _ := dequant.Chunk4Cost(tl.TypeA)
		return c
	}
	return dequant.ChunkCost(tl.TypeA, tl.Strategy)
}

// vecRowLoads returns a lane's loads of one row per k-step: VecDot the
// kernel's row cost, the mul_mv_ext forms the dequantizer's per piece.
func vecRowLoads(tl *Tiling) []dequant.Load {
	if tl.Vec.Form == VecDot {
		return dequant.MatVecCosts(tl.TypeA, tl.Vec.MVForm).Row.Loads
	}
	ls := vecPieceCost(tl).Loads
	for i := range ls {
		ls[i].Count *= tl.vecPieces()
	}
	return ls
}

func expandLoadW(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	w := vecCover(p, sg, int(op.B))
	if w == 0 {
		return out
	}
	unique := uint32(w*float64(tl.Vec.RowBytes)/float64(tl.Vec.K) + 0.5)
	first := true
	for _, l := range vecRowLoads(tl) {
		if l.Space != dequant.Device {
			continue
		}
		in := Inst{Class: ClassDevLoad, Count: uint16(l.Count), ILP: u8(l.Count), Bytes: uint32(lanes * l.Width), Stream: StreamWeights}
		if first {
			in.Unique, first = unique, false
		}
		out = append(out, in)
	}
	return out
}

func loadWRegs(p *Program, op Op) Footprint {
	n := 0
	for _, l := range vecRowLoads(&p.Tiling) {
		if l.Space == dequant.Device {
			n += l.Count * max(2, l.Width) // 8- and 16-bit values take a register half
		}
	}
	return Footprint{Regs: ceilDiv(n, 4), Key: 500 + int(op.B), Use: UseDequant}
}

// appendTables appends the table reads of a cost (threadgroup or constant
// memory) after the weights they are indexed by, and returns the wait of the
// arithmetic that follows. A read is a per-lane gather in the mat-vec lane
// pattern (dequant.RowPattern) under strategy s: a threadgroup copy served by
// its busiest bank, a constant table by the sectors the lanes touch.
func appendTables(out []Inst, tl *Tiling, s dequant.Strategy, ls []dequant.Load) ([]Inst, Wait) {
	wait := WaitDevice
	for _, l := range ls {
		in := Inst{Count: uint16(l.Count), ILP: u8(l.Count), Bytes: uint32(lanes * l.Width), Wait: WaitDevice}
		g, _ := dequant.TableGather(tl.TypeA, s, dequant.RowPattern, l.What)
		switch l.Space {
		case dequant.Threadgroup:
			in.Class, in.BankWords = ClassTGLoad, float32(g.BankWords)
			wait |= WaitTG
		case dequant.Constant:
			in.Class, in.Stream, in.Sectors = ClassConstLoad, StreamCodebook, float32(g.Sectors)
		default:
			continue
		}
		out = append(out, in)
	}
	return out, wait
}

func expandDotW(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	if vecCover(p, sg, int(op.B)) == 0 {
		return out
	}
	c := dequant.MatVecCosts(tl.TypeA, tl.Vec.MVForm).Row
	out, wait := appendTables(out, tl, dequant.ByteReads, c.Loads) // the kernels read their tables by bytes
	// the row's dot does not depend on the previous row's: its first group
	// waits for its data only
	return appendALU(out, c, wait)
}

func dotWRegs(p *Program, _ Op) Footprint {
	return Footprint{Regs: dequant.MatVecCosts(p.Tiling.TypeA, p.Tiling.Vec.MVForm).Row.Temps, Key: 2, Use: UseDequant}
}

func expandDequantW(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	if vecCover(p, sg, int(op.B)) == 0 {
		return out
	}
	c := vecPieceCost(tl)
	out, wait := appendTables(out, tl, tl.Strategy, c.Loads)
	return appendALU(out, c, wait)
}

func dequantWRegs(p *Program, op Op) Footprint {
	tl := &p.Tiling
	return Footprint{Regs: tl.vecPiece() + vecPieceCost(tl).Temps, Key: 600 + int(op.C), Use: UseDequant}
}

func expandFMAVec(p *Program, sg int, op Op, out []Inst) []Inst {
	tl := &p.Tiling
	if vecCover(p, sg, -1) == 0 {
		return out
	}
	t := tl.NR1
	if tl.Vec.Form == VecExt16 {
		// per token four independent float4 dots (4 fp32 each), their 3
		// adds and the add into the sum
		return append(out,
			Inst{Class: ClassFP32, Count: u16(16 * t), ILP: u8(4 * t), Wait: WaitDevice | WaitALU},
			Inst{Class: ClassFP32, Count: u16(4 * t), ILP: u8(t), Wait: WaitALU})
	}
	// per token one float4 dot (4 dependent fp32) and the add into the sum;
	// the tokens' dots are independent
	return append(out, Inst{Class: ClassFP32, Count: u16(5 * t), ILP: u8(t), Wait: WaitDevice | WaitALU})
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

// expandReduceStore: every simdgroup reads the N rows' 32 partial-sum slots
// (one float per lane) and sums them with a simd_sum; simdgroup 0 stores.
func expandReduceStore(p *Program, sg int, op Op, out []Inst) []Inst {
	n := int(op.N)
	out = append(out, Inst{Class: ClassTGLoad, Count: u16(n), ILP: u8(n), Bytes: 4 * lanes})
	wait := WaitTG
	for d := lanes / 2; d >= 1; d /= 2 {
		out = append(out,
			Inst{Class: ClassInt, Count: u16(2 * n), ILP: u8(n), Wait: wait | WaitALU},
			Inst{Class: ClassFP32, Count: u16(n), ILP: u8(n), Wait: WaitALU})
		wait = 0
	}
	if v := validOutputs(p, 0, int(op.A), n); sg == 0 && v > 0 {
		out = append(out, Inst{Class: ClassDevStore, Count: 1, ILP: 1, Wait: WaitALU, Stream: StreamOutput,
			Bytes: uint32(4 * n), Unique: uint32(4 * v)})
	}
	return out
}

// countLoadW counts the 16-weight chunks the lanes decode: C per lane (a
// lane's weights of one row in 16-weight chunks, at least one).
func countLoadW(op Op, _ int, c *Counts) { c.DequantChunks += lanes * int64(max(1, op.C)) }
