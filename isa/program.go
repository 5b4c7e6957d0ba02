package isa

import (
	"fmt"
	"maps"
	"slices"

	"github.com/metalsim/metalsim/dequant"
)

// Layout is how a staged tile lies in threadgroup memory.
type Layout uint8

// Tile layouts of the two kernel paths.
const (
	// Blocked8 stores the tile as 8x8 blocks for simdgroup_load. A tile: block
	// (NR0/8)*(k/8) + row/8, element 8*(k%8) + row%8 (K-major inside a block).
	// B tile: block (NR1/8)*(k/8) + token/8, element 8*(token%8) + k%8.
	Blocked8 Layout = iota
	// RowMajor stores element (row, k) at row*NK + k (the tensor path).
	RowMajor
)

// Tiling is what the op semantics need to place values: the tile geometry, the
// rows and tokens actually present, and where the tiles live in threadgroup memory.
type Tiling struct {
	NR0, NR1, NK int          // tile extents: weight rows, tokens, k per step
	Rows, Tokens int          // valid rows (nr0) and tokens (nr1) of this tile
	Threads      int          // threads per threadgroup (32 x simdgroups)
	Layout       Layout       // layout of both staged tiles
	AOff, BOff   int          // half offsets of the A and B tiles in threadgroup memory
	TGHalves     int          // size of the half-addressed threadgroup memory
	StageStride  int          // floats per staging row (one row per token)
	StageFloats  int          // size of the float staging buffer
	TypeA        dequant.Type // weight type
	Strategy     dequant.Strategy
	HalfB        bool // src1 is f16 (no conversion, 16-byte loads)
	// RowBytesPerStep is the number of weight bytes of one row consumed per k-step
	// (NK weights); the timing engine derives cache-line crossings from it.
	RowBytesPerStep float64
	// Vec is the lane geometry of mat-vec programs (zero for the mat-mat kernels).
	Vec VecGeom
}

// AItems returns the number of A work items (16 weights each) per k-step.
func (t *Tiling) AItems() int { return t.NR0 * t.NK / 16 }

// BItems returns the number of B work items (8 activations each) per k-step.
func (t *Tiling) BItems() int { return t.NR1 * t.NK / 8 }

// AItem returns the A work item lane of simdgroup sg handles in staging pass
// pass: its tile row and 16-weight chunk within the k-step (ok = false when
// the lane has none).
func (t *Tiling) AItem(sg, lane, pass int) (row, chunk int, ok bool) {
	return t.workItem(sg, lane, pass, t.NR0, t.NK/16)
}

// BItem returns the B work item lane of simdgroup sg handles in staging pass
// pass: its tile token row and 8-activation chunk within the k-step.
func (t *Tiling) BItem(sg, lane, pass int) (row, chunk int, ok bool) {
	return t.workItem(sg, lane, pass, t.NR1, t.NK/8)
}

// workItem is the one lane -> work-item mapping of the staging loops: the
// threads of a threadgroup take items in thread order, Threads items per pass,
// each row's chunks consecutive (kernel-facts §3.4: thread tiitg of pass t
// takes item tiitg + t·threads).
func (t *Tiling) workItem(sg, lane, pass, rows, perRow int) (row, chunk int, ok bool) {
	item := 32*sg + lane + pass*t.Threads
	if item >= rows*perRow {
		return 0, 0, false
	}
	return item / perRow, item % perRow, true
}

// SkipPadding in Op.C of load_b, convert_b and store_b: lanes whose token row
// lies past the tile's tokens do nothing (the padding rows were zeroed once,
// before the k-loop, by zero_b).
const SkipPadding = 1

// View is a two-dimensional tensor view over threadgroup memory (a tensor_inline):
// element (i0, i1) lies at half offset Base + i0*S0 + i1*S1 and exists only for
// i0 < D0, i1 < D1 (D0 is the innermost extent, as in Metal's dextents).
type View struct {
	Base, D0, D1, S0, S1 int
}

// PackedView returns the view Metal builds from dextents(d0, d1) with default
// (packed) strides {1, d0}.
func PackedView(base, d0, d1 int) View { return View{Base: base, D0: d0, D1: d1, S0: 1, S1: d0} }

// At returns element (i0, i1) of the view, or 0 outside its extents.
func (v View) At(mem []float32, i0, i1 int) float32 {
	if i0 < 0 || i1 < 0 || i0 >= v.D0 || i1 >= v.D1 {
		return 0
	}
	return mem[v.Base+i0*v.S0+i1*v.S1]
}

// Matmul is one matmul2d descriptor with its operands: C(MxN) += Left(MxK) x
// Right(NxK)^T, Left = the B tile (tokens x k), Right = the A tile (rows x k,
// transpose_right = true), destination a cooperative tensor stored to staging
// rows DestRow.. after the loop.
type Matmul struct {
	M, N, K     int
	Left, Right View
	DestRow     int // first staging row (token) the result is stored to; matmul2d_dev: the first tile token of its left operand
	Used        bool
	// Relaxed is matmul2d's relaxed_precision: float operands are truncated to
	// 10 mantissa bits before they are multiplied (apple-gpu.md §6.1).
	Relaxed bool
}

// Tiles16 returns the number of 16x16 output tiles and 16-deep k chunks.
func (mm *Matmul) Tiles16() (tiles, kChunks int) {
	return ceilDiv(mm.M, 16) * ceilDiv(mm.N, 16), ceilDiv(mm.K, 16)
}

// Program is the op stream of one threadgroup of one tile context: per simdgroup a
// prologue, a loop body executed Steps times (one k-step each) and an epilogue.
// Streams are data-independent: they depend on the tile context only, so timing
// caches them by that key.
type Program struct {
	Name     string
	Tiling   Tiling
	NSG      int
	Prologue [][]Op // per simdgroup
	Body     [][]Op
	Epilogue [][]Op
	Steps    int
	Matmuls  []Matmul // descriptors referenced by OpMatmul2D / OpStoreCoop (all live for the whole loop)
	// BaseRegs is the number of 32-bit registers per thread for addressing and
	// control (pointers, loop counters, thread ids), set by the builder.
	BaseRegs int
	// TGMemBytes is the threadgroup memory the kernel declares.
	TGMemBytes int
	// Skipped counts the work the variant left out compared with computing the
	// whole tile (half-tile skip).
	Skipped Counts
	// Exit marks an early-exit threadgroup (its tile starts past the expert's tokens).
	Exit bool

	timing *Timing
}

// Section names a part of a program.
type Section uint8

// The three sections of a program.
const (
	SecPrologue Section = iota
	SecBody
	SecEpilogue
	NumSections
)

// Ops returns the op list of simdgroup sg in section s.
func (p *Program) Ops(s Section, sg int) []Op {
	switch s {
	case SecPrologue:
		return p.Prologue[sg]
	case SecBody:
		return p.Body[sg]
	default:
		return p.Epilogue[sg]
	}
}

// Validate checks the structural rules the emulator and the timing engine rely on:
// every simdgroup has the same number of barriers in each section, and operand
// indices are in range.
func (p *Program) Validate() error {
	if p.NSG <= 0 || len(p.Prologue) != p.NSG || len(p.Body) != p.NSG || len(p.Epilogue) != p.NSG {
		return fmt.Errorf("program %s: simdgroups = %d but sections have %d/%d/%d streams", p.Name, p.NSG, len(p.Prologue), len(p.Body), len(p.Epilogue))
	}
	for s := SecPrologue; s < NumSections; s++ {
		want := -1
		for sg := 0; sg < p.NSG; sg++ {
			n := 0
			for _, op := range p.Ops(s, sg) {
				if op.Code >= NumCodes {
					return fmt.Errorf("program %s: unknown op code %d", p.Name, op.Code)
				}
				if op.Code == OpBarrier {
					n++
				}
				if table[op.Code].Descriptor && int(op.A) >= len(p.Matmuls) {
					return fmt.Errorf("program %s: matmul2d descriptor %d of %d", p.Name, op.A, len(p.Matmuls))
				}
			}
			if want >= 0 && n != want {
				return fmt.Errorf("program %s: section %d: simdgroup %d has %d barriers, simdgroup 0 has %d", p.Name, s, sg, n, want)
			}
			want = n
		}
	}
	return nil
}

// Footprint is the register use of one op's result, in 32-bit registers per thread.
type Footprint struct {
	Regs       int
	Persistent bool   // lives for the whole threadgroup (accumulators, cooperative tensors)
	Key        int    // ops writing the same Key share the registers (e.g. the same accumulator)
	Use        RegUse // what a transient footprint holds (Registers' breakdown of Transient)
}

// RegUse is what transient registers hold.
type RegUse uint8

// Transient register uses.
const (
	UseDequant     RegUse = iota // dequantized weights and the dequantizer's temporaries
	UseActivations               // activation (B) values on their way to threadgroup memory, or a mat-vec lane's
	UseFragments                 // A/B operand fragments of the MMAs or matmul2d chunks
	numRegUses
)

// Registers is the per-thread register use of a program, derived from its ops.
type Registers struct {
	Base         int // addressing and control
	Accumulators int // accumulators: 8x8 float fragments (2 each), mat-vec lane partial sums (1 each)
	Cooperative  int // cooperative tensors of every declared matmul2d descriptor
	Transient    int // the largest set of short-lived values (dequant outputs, activations, fragments)
	// Dequant, Activations and Fragments split Transient by what it holds
	// (RegUse), in the phase where it peaks.
	Dequant, Activations, Fragments int
	Total                           int
}

// AccumulatorFloats returns the accumulator floats held per thread (2 registers
// per 8x8 float fragment = 2 floats; cooperative tensors 1 float per register).
func (r Registers) AccumulatorFloats() int { return r.Accumulators + r.Cooperative }

// Registers derives the register use per thread from the program's ops: the
// base, all persistent values (accumulators, cooperative tensors of every
// declared descriptor), and the largest phase of transient values.
func (p *Program) Registers() Registers {
	r := Registers{Base: p.BaseRegs}
	for i := range p.Matmuls {
		mm := &p.Matmuls[i]
		r.Cooperative += ceilDiv(mm.M*mm.N, p.Tiling.Threads)
	}
	for sg := 0; sg < p.NSG; sg++ {
		acc := map[int]int{} // persistent registers by key
		for s := SecPrologue; s < NumSections; s++ {
			type held struct {
				regs int
				use  RegUse
			}
			phase := map[Phase]map[int]held{}
			for _, op := range p.Ops(s, sg) {
				f := table[op.Code].regs(p, op)
				if f.Regs == 0 {
					continue
				}
				if f.Persistent {
					acc[f.Key] = max(acc[f.Key], f.Regs)
					continue
				}
				ph := table[op.Code].Phase
				if phase[ph] == nil {
					phase[ph] = map[int]held{}
				}
				phase[ph][f.Key] = held{f.Regs, f.Use}
			}
			// phases in order, so a tie for the peak splits the same way
			for _, ph := range slices.Sorted(maps.Keys(phase)) {
				var by [numRegUses]int
				sum := 0
				for _, v := range phase[ph] {
					by[v.use] += v.regs
					sum += v.regs
				}
				if sum > r.Transient {
					r.Transient = sum
					r.Dequant, r.Activations, r.Fragments = by[UseDequant], by[UseActivations], by[UseFragments]
				}
			}
		}
		sum := 0
		for _, v := range acc {
			sum += v
		}
		r.Accumulators = max(r.Accumulators, sum)
	}
	r.Total = r.Base + r.Accumulators + r.Cooperative + r.Transient
	return r
}

// Counts are the work counters of a program run (or a sum of runs).
type Counts struct {
	MMA8          int64 // simdgroup 8x8x8 multiply-accumulates
	MMA16         int64 // 16x16x16 tensor MMAs
	Matmul2D      int64 // matmul2d run() calls (per threadgroup, not per simdgroup)
	FragLoads     int64 // simdgroup_load of 8x8 fragments
	Barriers      int64 // threadgroup barriers (per threadgroup)
	HalfTiles     int64 // token half-tiles (parts of NR1H tokens); meaningful in Program.Skipped
	DequantChunks int64 // 16-weight chunks decoded (lane level)
	// Loads by address space and width (lane-level loads).
	CodebookLoads map[int]int64 // constant-memory loads by width in bytes
	DeviceBytes   [NumStreams]int64
	TGBytes       int64 // threadgroup-memory bytes loaded and stored
	Instructions  int64 // simdgroup instructions
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.MMA8 += o.MMA8
	c.MMA16 += o.MMA16
	c.Matmul2D += o.Matmul2D
	c.FragLoads += o.FragLoads
	c.Barriers += o.Barriers
	c.HalfTiles += o.HalfTiles
	c.DequantChunks += o.DequantChunks
	for w, n := range o.CodebookLoads {
		if c.CodebookLoads == nil {
			c.CodebookLoads = map[int]int64{}
		}
		c.CodebookLoads[w] += n
	}
	for i := range c.DeviceBytes {
		c.DeviceBytes[i] += o.DeviceBytes[i]
	}
	c.TGBytes += o.TGBytes
	c.Instructions += o.Instructions
}

// Scale multiplies every counter by k.
func (c Counts) Scale(k int64) Counts {
	out := c
	out.MMA8 *= k
	out.MMA16 *= k
	out.Matmul2D *= k
	out.FragLoads *= k
	out.Barriers *= k
	out.HalfTiles *= k
	out.DequantChunks *= k
	out.CodebookLoads = nil
	for w, n := range c.CodebookLoads {
		if out.CodebookLoads == nil {
			out.CodebookLoads = map[int]int64{}
		}
		out.CodebookLoads[w] = n * k
	}
	for i := range out.DeviceBytes {
		out.DeviceBytes[i] *= k
	}
	out.TGBytes *= k
	out.Instructions *= k
	return out
}

// Counts returns the work of one run of the program (prologue, Steps bodies,
// epilogue, all simdgroups), derived from its ops and their timing expansion
// as the program reads (every matmul2d call gathers its operands; a chip with
// matmul2d_regather = 0 issues fewer), without the accumulate adds, which a
// chip issues only with matmul2d_accumulate_adds = 1.
func (p *Program) Counts() Counts {
	t := p.Timing()
	var c Counts
	for s := SecPrologue; s < NumSections; s++ {
		var sec Counts
		for sg := 0; sg < p.NSG; sg++ {
			for _, op := range p.Ops(s, sg) {
				if f := table[op.Code].count; f != nil {
					f(op, sg, &sec)
				}
			}
			for i := range t.Insts[s][sg] {
				in := &t.Insts[s][sg][i]
				if in.Accumulate {
					continue // the chip decides whether they are issued (matmul2d_accumulate_adds)
				}
				sec.Instructions += int64(in.Count)
				if f := classes[in.Class].count; f != nil {
					f(in, &sec)
				}
			}
		}
		if s == SecBody {
			sec = sec.Scale(int64(p.Steps))
		}
		c.Add(sec)
	}
	return c
}

// Timing is a program expanded into timing instructions, per section and simdgroup.
type Timing struct {
	Insts [NumSections][][]Inst
}

// Timing returns the program's timing instruction streams (computed once).
func (p *Program) Timing() *Timing {
	if p.timing != nil {
		return p.timing
	}
	t := &Timing{}
	for s := SecPrologue; s < NumSections; s++ {
		t.Insts[s] = make([][]Inst, p.NSG)
		for sg := 0; sg < p.NSG; sg++ {
			var out []Inst
			for _, op := range p.Ops(s, sg) {
				n := len(out)
				out = table[op.Code].expand(p, sg, op, out)
				for i := n; i < len(out); i++ {
					out[i].Phase = table[op.Code].Phase
				}
			}
			t.Insts[s][sg] = merge(out)
		}
	}
	p.timing = t
	return t
}

// merge joins adjacent groups that can issue as one (same class, stream and width,
// no wait in the second), so the engine walks fewer, larger groups.
func merge(in []Inst) []Inst {
	out := in[:0:0]
	for _, x := range in {
		if n := len(out); n > 0 {
			y := &out[n-1]
			// x may join y when it waits for nothing y did not already wait for and
			// does not depend on y's results: its chains then run beside y's.
			if y.Class == x.Class && y.Stream == x.Stream && y.Bytes == x.Bytes && y.Phase == x.Phase &&
				y.Sectors == x.Sectors && y.BankWords == x.BankWords && y.Regather == x.Regather && y.Accumulate == x.Accumulate && !x.CallStart && !y.CallStart &&
				x.Wait&^y.Wait == 0 && x.Wait&WaitALU == 0 &&
				y.Class != ClassBarrier && int(y.Count)+int(x.Count) < 1<<15 {
				y.Count += x.Count
				y.Unique += x.Unique
				y.ILP = uint8(min(255, int(y.ILP)+int(x.ILP), int(y.Count)))
				continue
			}
		}
		out = append(out, x)
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
