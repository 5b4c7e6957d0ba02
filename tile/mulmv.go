package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// The mat-vec kernels: kernel_mul_mv_<type>_f32 (MUL_MAT with few tokens),
// kernel_mul_mv_id (MUL_MAT_ID with n < 32 tokens or k < 64; the same body run
// per (token, slot) pair on the pair's expert, kernel-facts §2.2) and
// kernel_mul_mv_ext (mulmvext.go). The documents give their grids, not their
// instruction-level bodies; these programs are designed from what is known, and
// every assumption is listed here (and in docs/model.md, "Other kernels").
//
// What is documented (kernel-facts):
//   - mul_mv_id grid (ceil(ne01/(nr0*nsg)), 1, ne20*ne21), threads (32, nsg, 1),
//     one threadgroup per (token, slot) computing nr0*nsg rows of its expert;
//     for F32/F16/BF16/Q8_0 the grid is (ceil(ne01/nr0), 1, ne20*ne21), i.e. a
//     threadgroup computes nr0 rows whatever its nsg (§2.2).
//   - iq mat-vec kernels: N_R0 = 4 rows per simdgroup; each lane takes one
//     32-weight sub-block per row (ix = lane), so for k < 1024 lanes idle
//     (§12 items 2-3; the lane-splitting fix of PRs #28086/#28692 is newer than
//     the ggml HEAD this model follows and is not modelled); the iq kernels copy
//     their codebooks into threadgroup memory (§7.4 note: iq3_xxs 256·4+128,
//     iq2_xxs 256·8+128, iq2_xs 512·8+128, iq3_s 512·4 bytes).
//
// Assumptions (not in the documents):
//   - Every simdgroup reduces dot products of weight rows with token vectors in
//     float32: its lanes split K, each lane accumulating its own partial sums,
//     then simd_sum. Weights are dequantized per lane with the same dequantizer
//     cost data as the mat-mat kernels (dequant.ChunkCost, one call per
//     16-weight chunk) and kept in float32; activations stay float32 (not
//     rounded to half).
//   - A lane takes one 16-weight chunk per row and k-step (iq types: two
//     chunks, its 32-weight sub-block), so a k-step covers 32·16 = 512 weights
//     of K per simdgroup (iq: 1024).
//   - q4_0: nr0 = 4 rows per simdgroup, nsg = 2 (8 rows per threadgroup). The
//     general grid form of §2.2 with the iq types' N_R0 = 4; nsg = 2 is a
//     choice.
//   - f32, f16, q8_0: nr0 = 2 rows per threadgroup; the nsg simdgroups split K
//     (what the grid form ceil(ne01/nr0) implies: nsg does not divide the rows)
//     and add their partial sums through threadgroup memory, simdgroup 0
//     storing the result. nsg = min(4, ceil(k/512)) so that no simdgroup is
//     without work. Both numbers are choices.
//   - iq types: nr0 = 4 (documented), nsg = 2 (a choice); iq2_s (whose 8 KiB
//     grid the document's list of threadgroup copies omits) reads its codebook
//     from constant memory. The copy is a prologue of constant loads and
//     threadgroup stores split over the threads, then a barrier; codebook reads
//     in the decode become threadgroup loads.
//   - Per lane and chunk the 16 products form four independent 4-term float32
//     chains (a float4-style dot), combined pairwise and added to the
//     accumulator: 20 fp32 instructions, ILP 4 (fma_vec).
//   - simd_sum is a 5-level tree of shuffle + add; a shuffle is timed as two
//     dependent integer instructions (PT-MB: throughput 2, latency ~4 on M1).
//   - Rows past M in the last row block and token slots past N (mul_mv_ext)
//     re-read the last valid row or token and are computed and dropped, as the
//     mat-mat kernels clamp (§3.7).
//   - vecSetupInts, vecStepInts, idInts: bookkeeping estimates (below).
//   - The activations of a k-step are loaded before the weights (all token
//     slots), the weights row by row: decode, then products.
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
	Name          string // "mul_mv", "mul_mv_id" or "mul_mv_ext"
	NSG           int    // simdgroups per threadgroup
	LanesPerRow   int    // lanes splitting one row's K (32; nxpsg for mul_mv_ext)
	RowsPerGroup  int    // rows each lane group computes (nr0 for mul_mv; 1 for mul_mv_ext)
	ChunksPerLane int    // 16-weight chunks a lane takes per row and k-step
	Tokens        int    // token slots per threadgroup (r1ptg for mul_mv_ext, 1 otherwise)
	KSplit        bool   // the simdgroups share the rows and split K
	TableBytes    int    // codebook copy in threadgroup memory (0: none)
	ID            bool   // mul_mv_id: the prologue reads the pair's expert id
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
	s := v.LanesPerRow * 16 * v.ChunksPerLane
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
	case v.RowsPerGroup < 1 || v.ChunksPerLane < 1 || v.ChunksPerLane > 2:
		return fmt.Errorf("mat-vec kernel %s: rows per group = %d, chunks per lane = %d: must be >= 1 and in [1, 2]", v.Name, v.RowsPerGroup, v.ChunksPerLane)
	case v.Tokens < 1 || v.Tokens > 8:
		return fmt.Errorf("mat-vec kernel %s: tokens = %d: must be in [1, 8]", v.Name, v.Tokens)
	case v.RowsPerGroup*v.Tokens > 255:
		return fmt.Errorf("mat-vec kernel %s: %d accumulators: at most 255", v.Name, v.RowsPerGroup*v.Tokens)
	}
	return nil
}

// MulMV returns the mat-vec geometry of a weight type (see the assumptions
// above) for a reduction length k; id selects kernel_mul_mv_id.
func MulMV(t dequant.Type, k int, id bool) VecKernel {
	name := "mul_mv"
	if id {
		name = "mul_mv_id"
	}
	v := VecKernel{Name: name, NSG: 2, LanesPerRow: 32, RowsPerGroup: 4, ChunksPerLane: 1, Tokens: 1, ID: id}
	switch t {
	case dequant.F32, dequant.F16, dequant.Q8_0:
		v.RowsPerGroup, v.KSplit = 2, true
		v.NSG = min(4, max(1, ceilDiv(k, 32*16)))
	case dequant.IQ2_XXS, dequant.IQ2_XS, dequant.IQ2_S, dequant.IQ3_XXS, dequant.IQ3_S:
		v.ChunksPerLane = 2
		v.TableBytes = iqTable(t).bytes()
	}
	return v
}

// table is a codebook the iq mat-vec kernels copy into threadgroup memory.
type table struct {
	entries, width int // grid entries and their bytes
	signs          int // ksigns_iq2xs bytes (128) or 0
}

func (t table) bytes() int { return t.entries*t.width + t.signs }

// iqTable returns the threadgroup copy of a type (kernel-facts §7.4 note);
// iq2_s has none.
func iqTable(t dequant.Type) table {
	switch t {
	case dequant.IQ2_XXS:
		return table{256, 8, 128}
	case dequant.IQ2_XS:
		return table{512, 8, 128}
	case dequant.IQ3_XXS:
		return table{256, 4, 128}
	case dequant.IQ3_S:
		return table{512, 4, 0}
	}
	return table{}
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

func (b *VecBuilder) build(c Context) *isa.Program {
	v := b.Kernel
	threads := 32 * v.NSG
	nacc := v.RowsPerGroup * v.Tokens
	tgMem := v.TableBytes
	if v.KSplit {
		tgMem = max(tgMem, 4*v.NSG*nacc)
	}
	p := newProgram(fmt.Sprintf("%s %s rows=%d tokens=%d steps=%d", v.Name, b.typeA, c.Rows, c.Tokens, c.Steps), v.NSG, c.Steps, tgMem)
	p.Tiling = isa.Tiling{
		NR0: v.RowsPerTG(), NR1: v.Tokens, NK: v.Span(), Rows: c.Rows, Tokens: c.Tokens, Threads: threads,
		StageStride: nacc, TypeA: b.typeA, Strategy: dequant.ByteReads, HalfB: b.halfB,
		RowBytesPerStep: float64(b.rowBytes) * float64(v.Span()) / float64(b.k),
		Vec: isa.VecGeom{K: b.k, LanesPerRow: v.LanesPerRow, RowsPerGroup: v.RowsPerGroup, ChunksPerLane: v.ChunksPerLane,
			KSplit: v.KSplit, CodebookTG: v.TableBytes > 0, RowBytes: b.rowBytes},
	}
	if v.KSplit {
		p.Tiling.StageFloats = v.NSG * nacc
	}
	for sg := 0; sg < v.NSG; sg++ {
		var pro []isa.Op
		if v.ID {
			pro = append(pro, loadMeta(1), alu(isa.ClassInt, idInts, 2))
		}
		if v.TableBytes > 0 {
			pro = append(pro, tableCopy(iqTable(b.typeA), threads)...)
		}
		pro = append(pro, alu(isa.ClassInt, vecSetupInts, 4), isa.Op{Code: isa.OpVZero, A: 0, N: uint16(nacc)})
		var body []isa.Op
		for t := 0; t < v.Tokens; t++ {
			body = append(body, isa.Op{Code: isa.OpLoadVec, N: uint16(t)})
		}
		for r := 0; r < v.RowsPerGroup; r++ {
			for ch := 0; ch < v.ChunksPerLane; ch++ {
				body = append(body, isa.Op{Code: isa.OpDequantW, B: uint8(r), C: uint8(ch)})
				for t := 0; t < v.Tokens; t++ {
					body = append(body, isa.Op{Code: isa.OpFMAVec, A: uint8(r*v.Tokens + t), B: uint8(t), C: uint8(ch)})
				}
			}
		}
		body = append(body, alu(isa.ClassInt, vecStepInts, 2))
		epi := []isa.Op{{Code: isa.OpSimdSum, A: 0, N: uint16(nacc)}}
		if v.KSplit {
			epi = append(epi, isa.Op{Code: isa.OpStorePartial, A: 0, N: uint16(nacc)}, isa.Op{Code: isa.OpBarrier})
			if sg == 0 {
				epi = append(epi, isa.Op{Code: isa.OpReduceStore, A: 0, N: uint16(nacc)})
			}
		} else {
			epi = append(epi, isa.Op{Code: isa.OpStoreVec, A: 0, N: uint16(nacc)})
		}
		p.Prologue[sg], p.Body[sg], p.Epilogue[sg] = pro, body, epi
	}
	return p
}

// tableCopy is the prologue that copies a codebook into threadgroup memory: the
// threads split the grid entries (and the 128 sign bytes), each copying its
// share with constant loads and threadgroup stores, then a barrier.
func tableCopy(t table, threads int) []isa.Op {
	mem := func(c isa.Class, s isa.Stream, n, bytes int, wait isa.Wait) isa.Op {
		return isa.Op{Code: isa.OpMem, A: uint8(c), B: uint8(s), N: uint16(n), Arg: int32(bytes), C: uint8(wait)}
	}
	var ops []isa.Op
	for _, part := range []struct{ n, w int }{{t.entries, t.width}, {t.signs, 1}} {
		if part.n == 0 {
			continue
		}
		per := ceilDiv(part.n, threads)
		ops = append(ops,
			mem(isa.ClassConstLoad, isa.StreamCodebook, per, 32*part.w, 0),
			mem(isa.ClassTGStore, isa.StreamNone, per, 32*part.w, isa.WaitDevice))
	}
	return append(ops, isa.Op{Code: isa.OpBarrier})
}
