package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// The mat-vec kernels: kernel_mul_mv_<type>_f32 (MUL_MAT with few tokens),
// kernel_mul_mv_id (MUL_MAT_ID with n < 32 tokens or k < 64: the same body
// run per (token, slot) pair on the pair's expert, kernel-facts §2.2) and
// kernel_mul_mv_ext (mulmvext.go). Their geometry per weight type is the host's
// (mvgeom.go: MatVecGeometry); what a lane computes per k-step is the kernel's
// own arithmetic as cost data (dequant.MatVecCosts, isa/vec.go).
//
// A simdgroup's k-step: the lane's activation loads (load_vec), the weight
// loads of each of its rows (load_w, all issued before any arithmetic), the
// per-step arithmetic on the activations (vec_prep), then each row's fused
// decode and dot (dot_w); loop control (vecStepInts). The epilogue is
// simd_sum per row and the group leader's store; in the K-splitting kernels
// (f32, f16, bf16, q8_0) helper_mv_reduce_and_write (ggml-metal.metal
// L3552-3592): simdgroup 0 zeroes the partial-sum slots, simd_sum, barrier,
// lane 0 writes its simdgroup's sums, barrier, every simdgroup sums the slots
// with a simd_sum, simdgroup 0 stores. A kernel with a threadgroup table
// copies it in its prologue, each thread its slice, then a barrier.
//
// Assumptions (not in the sources):
//   - The weight loads of a step's rows are issued before its arithmetic: they
//     depend on nothing the arithmetic computes (the rows' pointers are set up
//     before the loop), and the compiler schedules loads first. The next
//     step's loads are not issued before this step's arithmetic (no software
//     pipelining across iterations of the k-loop).
//   - simd_sum is a 5-level tree of shuffle + add; a shuffle is timed as two
//     dependent integer instructions (PT-MB: throughput 2, latency ~4 on M1).
//   - Rows past M in the last row block and token slots past N (mul_mv_ext)
//     are computed on clamped addresses and dropped at the store (the kernels
//     read rows past the tensor unguarded, docs/kernel-geometry.md §3).
//   - vecSetupInts, vecStepInts, idInts: bookkeeping estimates (below).
const (
	// vecSetupInts: thread, simdgroup and row indices, the lane's k offset and
	// 64-bit pointers to the weights, activations and dst.
	vecSetupInts = 12
	// vecStepInts: per k-step pointer advances, loop compare and branch.
	vecStepInts = 4
	// idInts: mul_mv_id's token and slot from the threadgroup index (a division
	// and a modulo by ne20, emulated in software) and the expert's offset.
	idInts = 8
)

// VecKernel is the geometry of a mat-vec kernel for one weight type: the
// threadgroup's simdgroups, how their lanes split K and rows, and how many
// tokens each threadgroup computes.
type VecKernel struct {
	Name   string             // "mul_mv", "mul_mv_id" or "mul_mv_ext"
	Metal  string             // the Metal kernel (with f32 activations)
	Form   isa.VecForm        // the fused dot (mul_mv, mul_mv_id) or a mul_mv_ext form
	MVForm dequant.MatVecForm // the f32/f16/bf16 variant of mul_mv
	NSG    int                // simdgroups per threadgroup
	// LanesPerRow is the lanes splitting one row's K: 32 (all lanes of a
	// simdgroup share its rows), nxpsg for mul_mv_ext, 1 for _short.
	LanesPerRow    int
	RowsPerGroup   int  // rows each lane group computes (nr0 for mul_mv; 1 for mul_mv_ext)
	WeightsPerLane int  // weights of a row a lane takes per k-step
	Tokens         int  // token slots per threadgroup (r1ptg for mul_mv_ext, 1 otherwise)
	KSplit         bool // the simdgroups share the rows and split K
	Table          TableCopy
	SMem           int  // threadgroup memory the pipeline declares
	ID             bool // mul_mv_id: the prologue reads the pair's expert id
}

// RowsPerTG returns the weight rows a threadgroup computes.
func (v VecKernel) RowsPerTG() int {
	r := (32 / v.LanesPerRow) * v.RowsPerGroup
	if !v.KSplit {
		r *= v.NSG
	}
	return r
}

// Span returns the K a threadgroup's row advances per k-step.
func (v VecKernel) Span() int {
	s := v.LanesPerRow * v.WeightsPerLane
	if v.KSplit {
		s *= v.NSG
	}
	return s
}

// Validate checks the geometry's structural rules.
func (v VecKernel) Validate() error {
	switch {
	case v.NSG < 1 || 32*v.NSG > MaxThreadsPerTG:
		return fmt.Errorf("mat-vec kernel %s: simdgroups = %d: must be in [1, %d]", v.Name, v.NSG, MaxThreadsPerTG/32)
	case v.LanesPerRow < 1 || v.LanesPerRow > 32 || 32%v.LanesPerRow != 0 || v.LanesPerRow&(v.LanesPerRow-1) != 0:
		return fmt.Errorf("mat-vec kernel %s: lanes per row = %d: must be a power of two dividing 32", v.Name, v.LanesPerRow)
	case v.RowsPerGroup < 1:
		return fmt.Errorf("mat-vec kernel %s: rows per group = %d: must be >= 1", v.Name, v.RowsPerGroup)
	case v.WeightsPerLane < 4 || v.WeightsPerLane > 32 || v.WeightsPerLane%4 != 0:
		return fmt.Errorf("mat-vec kernel %s: weights per lane = %d: must be a multiple of 4 in [4, 32]", v.Name, v.WeightsPerLane)
	case v.Tokens < 1 || v.Tokens > 8:
		return fmt.Errorf("mat-vec kernel %s: tokens = %d: must be in [1, 8]", v.Name, v.Tokens)
	case v.RowsPerGroup*v.Tokens > 255:
		return fmt.Errorf("mat-vec kernel %s: %d accumulators: at most 255", v.Name, v.RowsPerGroup*v.Tokens)
	case v.Form == isa.VecDot && v.Tokens != 1:
		return fmt.Errorf("mat-vec kernel %s: tokens = %d: the fused-dot kernels take one token per threadgroup", v.Name, v.Tokens)
	}
	return nil
}

// MulMV returns the mat-vec geometry the host builds for a weight type
// (MatVecGeometry) and reduction length k; id selects kernel_mul_mv_id.
func MulMV(t dequant.Type, k int, id bool) VecKernel {
	g := MatVecGeometry(t, k, id)
	v := VecKernel{Name: "mul_mv", Metal: g.MetalName("f32"), Form: isa.VecDot, MVForm: g.Form, NSG: g.Simdgroups(k),
		LanesPerRow: 32, RowsPerGroup: g.NR0, WeightsPerLane: g.WeightsPerLane, Tokens: 1, KSplit: g.KSplit,
		Table: g.Table, SMem: g.SMem, ID: id}
	if g.Form == dequant.MatVecShort {
		v.LanesPerRow, v.RowsPerGroup = 1, 1 // one row per lane
	}
	if id {
		v.Name = "mul_mv_id"
		v.Metal = "kernel_mul_mv_id_" + v.Metal[len("kernel_mul_mv_"):]
	}
	return v
}

// checkVecActivations reports a mat-vec kernel that does not exist for f16
// activations: mul_mv has one only for f16 weights (kernel_mul_mv_f16_f16 and
// its _4 and _short variants, ggml-metal.metal L4399-4404, L4523-4528,
// L4612-4617), mul_mv_id and mul_mv_ext none (L11277-11313, L4222-4307).
func checkVecActivations(v VecKernel, t dequant.Type, halfB bool) error {
	if !halfB || (v.Name == "mul_mv" && t == dequant.F16) {
		return nil
	}
	return fmt.Errorf("%s: type_b = f16 with type_a = %s: no such kernel (f16 activations have a mat-vec kernel only in mul_mv, for f16 weights: kernel_mul_mv_f16_f16)", v.Name, t)
}

// VecBuilder makes the programs of one mat-vec kernel for one weight type,
// activation type and K, and caches them by context (Rows = valid rows of the
// threadgroup, Tokens = valid token slots, Steps = k-steps). It is safe for
// concurrent use; returned programs are immutable.
type VecBuilder struct {
	Kernel   VecKernel
	typeA    dequant.Type
	halfB    bool
	k        int
	rowBytes int

	progs programCache
}

// NewVecBuilder validates the kernel for the operand types and K.
func NewVecBuilder(v VecKernel, typeA dequant.Type, halfB bool, k int) (*VecBuilder, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	if !typeA.Valid() {
		return nil, fmt.Errorf("type_a = %d: unknown type", typeA)
	}
	if k < 1 || k > MaxDim {
		return nil, fmt.Errorf("k = %d: must be in [1, %d]", k, MaxDim)
	}
	rb, err := typeA.RowBytes(k)
	if err != nil {
		return nil, err
	}
	if err := checkVecActivations(v, typeA, halfB); err != nil {
		return nil, err
	}
	return &VecBuilder{Kernel: v, typeA: typeA, halfB: halfB, k: k, rowBytes: rb}, nil
}

// Steps returns the k-steps of a row: ceil(k / span).
func (b *VecBuilder) Steps() int { return ceilDiv(b.k, b.Kernel.Span()) }

// Context returns the context of a threadgroup whose block holds rows valid
// rows and tokens valid token slots.
func (b *VecBuilder) Context(rows, tokens int) Context {
	return Context{Rows: rows, Tokens: tokens, Steps: b.Steps()}
}

// Program returns the (cached) program of a context; Repeat does not change it.
func (b *VecBuilder) Program(c Context) *isa.Program {
	return b.progs.get(c, "mat-vec", b.build)
}

// pieces returns the decode pieces of a lane's weights per row and step
// (mul_mv_ext: float4 chunks, or one float4x4).
func (b *VecBuilder) pieces() int {
	if b.Kernel.Form == isa.VecExt4 {
		return b.Kernel.WeightsPerLane / 4
	}
	return max(1, b.Kernel.WeightsPerLane/16)
}

func (b *VecBuilder) build(c Context) *isa.Program {
	v := b.Kernel
	threads := 32 * v.NSG
	nacc := v.RowsPerGroup * v.Tokens
	tgMem := v.SMem
	if v.KSplit {
		tgMem = max(tgMem, 4*lanesPerSG*nacc)
	}
	p := newProgram(fmt.Sprintf("%s %s rows=%d tokens=%d steps=%d", v.Name, b.typeA, c.Rows, c.Tokens, c.Steps), v.NSG, c.Steps, tgMem)
	p.Tiling = isa.Tiling{
		NR0: v.RowsPerTG(), NR1: v.Tokens, NK: v.Span(), Rows: c.Rows, Tokens: c.Tokens, Threads: threads,
		StageStride: nacc, TypeA: b.typeA, Strategy: dequant.ByteReads, HalfB: b.halfB,
		RowBytesPerStep: float64(b.rowBytes) * float64(v.Span()) / float64(b.k),
		Vec: isa.VecGeom{K: b.k, LanesPerRow: v.LanesPerRow, RowsPerGroup: v.RowsPerGroup, WeightsPerLane: v.WeightsPerLane,
			KSplit: v.KSplit, Form: v.Form, MVForm: v.MVForm, RowBytes: b.rowBytes},
	}
	if v.KSplit {
		p.Tiling.StageFloats = v.NSG * nacc
	}
	chunks := uint8(max(1, v.WeightsPerLane/16))
	for sg := 0; sg < v.NSG; sg++ {
		var pro []isa.Op
		if v.ID {
			pro = append(pro, loadMeta(1), alu(isa.ClassInt, idInts, 2))
		}
		if v.Table.Where == TableThreadgroup {
			pro = append(pro, tableCopy(v.Table)...)
		}
		pro = append(pro, alu(isa.ClassInt, vecSetupInts, 4), isa.Op{Code: isa.OpVZero, A: 0, N: uint16(nacc)})
		var body []isa.Op
		for t := 0; t < v.Tokens; t++ {
			body = append(body, isa.Op{Code: isa.OpLoadVec, N: uint16(t)})
		}
		for r := 0; r < v.RowsPerGroup; r++ {
			body = append(body, isa.Op{Code: isa.OpLoadW, B: uint8(r), C: chunks})
		}
		if v.Form == isa.VecDot {
			body = append(body, isa.Op{Code: isa.OpVecPrep})
			for r := 0; r < v.RowsPerGroup; r++ {
				body = append(body, isa.Op{Code: isa.OpDotW, B: uint8(r)})
			}
			body = append(body, alu(isa.ClassInt, vecStepInts, 2))
		} else {
			for r := 0; r < v.RowsPerGroup; r++ {
				for pc := 0; pc < b.pieces(); pc++ {
					body = append(body, isa.Op{Code: isa.OpDequantW, B: uint8(r), C: uint8(pc)})
				}
				for pc := 0; pc < b.pieces(); pc++ {
					body = append(body, isa.Op{Code: isa.OpFMAVec, B: uint8(r), C: uint8(pc)})
				}
			}
			body = append(body, alu(isa.ClassInt, extPieceInts*b.pieces()+2+v.Tokens, 2))
		}
		p.Prologue[sg], p.Body[sg], p.Epilogue[sg] = pro, body, b.epilogue(sg, nacc)
	}
	return p
}

// lanesPerSG is the lanes of a simdgroup (the partial-sum slots of a row in
// helper_mv_reduce_and_write).
const lanesPerSG = 32

// epilogue returns simdgroup sg's reduction and store (see the top of the
// file).
func (b *VecBuilder) epilogue(sg, nacc int) []isa.Op {
	if !b.Kernel.KSplit {
		return []isa.Op{{Code: isa.OpSimdSum, A: 0, N: uint16(nacc)}, {Code: isa.OpStoreVec, A: 0, N: uint16(nacc)}}
	}
	var epi []isa.Op
	if sg == 0 {
		// the partial-sum slots zeroed: a float per lane and row
		epi = append(epi, isa.Op{Code: isa.OpMem, A: uint8(isa.ClassTGStore), N: uint16(nacc), Arg: 4 * lanesPerSG})
	}
	return append(epi,
		isa.Op{Code: isa.OpSimdSum, A: 0, N: uint16(nacc)},
		isa.Op{Code: isa.OpBarrier},
		isa.Op{Code: isa.OpStorePartial, A: 0, N: uint16(nacc)},
		isa.Op{Code: isa.OpBarrier},
		isa.Op{Code: isa.OpReduceStore, A: 0, N: uint16(nacc)})
}

// tableCopy is the prologue that copies a lookup table into threadgroup
// memory: each thread copies its slice of entries (and of the 128 sign bytes)
// with constant loads and threadgroup stores, then a barrier.
func tableCopy(t TableCopy) []isa.Op {
	mem := func(c isa.Class, s isa.Stream, n, bytes int, wait isa.Wait) isa.Op {
		return isa.Op{Code: isa.OpMem, A: uint8(c), B: uint8(s), N: uint16(n), Arg: int32(bytes), C: uint8(wait)}
	}
	var ops []isa.Op
	for _, part := range []struct{ n, w int }{{t.EntriesPerLane, t.EntryBytes}, {t.SignsPerLane, 1}} {
		if part.n == 0 {
			continue
		}
		ops = append(ops,
			mem(isa.ClassConstLoad, isa.StreamCodebook, part.n, lanesPerSG*part.w, 0),
			mem(isa.ClassTGStore, isa.StreamNone, part.n, lanesPerSG*part.w, isa.WaitDevice))
	}
	return append(ops, isa.Op{Code: isa.OpBarrier})
}
