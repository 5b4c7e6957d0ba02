package isa

import (
	"fmt"
	"strings"
)

// Code identifies an operation of the op table.
type Code uint8

// The simdgroup-level operations of the mat-mat kernels. Each is one row of the
// op table (Table): its operands, its functional semantics for the emulator, its
// expansion into timing instructions, and its register footprint.
const (
	OpALU       Code = iota // generic ALU group: A = Class, N = count, B = ILP (address arithmetic, loop control, compares)
	OpLoadMeta              // N device loads of one 4-byte routing word per lane (tpe, ids); Arg: distinct bytes, if not one word per load
	OpZeroAcc               // fill accumulator A with zeros (make_filled_simdgroup_matrix)
	OpDequantA              // each lane decodes its 16-weight chunk of A work item N (device + constant loads, ALU)
	OpStoreA                // each lane stores its 16 decoded weights of A work item N as half into the A tile
	OpLoadB                 // each lane loads the 8 activations of B work item N from device memory
	OpConvertB              // each lane converts its 8 activations to half
	OpStoreB                // each lane stores its 8 halves of B work item N into the B tile (one 16-byte store)
	OpZeroB                 // lanes whose B row of work item N is padding store zeros (once, before the k-loop)
	OpBarrier               // threadgroup_barrier(mem_threadgroup)
	OpLoadFrag              // simdgroup_load of an 8x8 half fragment: A = fragment register, B = tile (0 = A tile, 1 = B tile), Arg = half offset
	OpMMA                   // simdgroup_multiply_accumulate: acc[A] = frag[B] x frag[C] + acc[A] (8x8x8, half in, float32 chain)
	OpStoreAcc              // simdgroup_store of accumulator A (8x8 float) into the staging buffer at float offset Arg
	OpMatmul2D              // matmul2d run() of descriptor A on cooperative tensor A: this simdgroup's share of 16x16x16 MMAs
	OpStoreCoop             // this simdgroup's share of cooperative tensor A stored into the staging buffer
	OpScatter               // tile token row N of the staging buffer written to its dst row (ids re-read, float4 stores)
	OpMem                   // timing-only memory group: A = Class, B = Stream, N = count, Arg = bytes per instruction

	// Ops of the kernels besides mul_mm_id (mat-vec lanes, dense mul_mm
	// epilogues, matmul2d on device memory); their semantics are in vec.go.

	OpVZero        // lane accumulators A..A+N-1 := 0
	OpLoadVec      // each lane loads its activations of token slot N for this k-step (float32, not rounded)
	OpDequantW     // each lane decodes chunk C of its row slot B in float32 (mat-vec: weights are not rounded to half)
	OpFMAVec       // lane accumulator A += the lane's 16 weights · activations of token slot B, chunk C (float4-style partial sums)
	OpSimdSum      // simd_sum of lane accumulators A..A+N-1 over each group of Vec.LanesPerRow lanes
	OpStoreVec     // group leaders store accumulators A..A+N-1 to dst (valid rows and tokens)
	OpStorePartial // lane 0 stores accumulators A..A+N-1 as this simdgroup's partial sums in threadgroup memory
	OpReduceStore  // the partial sums of every simdgroup added in simdgroup order and stored to dst (N outputs)
	OpStoreAccDev  // simdgroup_store of accumulator A straight to dst at tile offset Arg (token*StageStride + row)
	OpCopyOut      // the staged output tile copied to dst by simdgroup 0, one lane per token row
	OpMatmul2DDev  // matmul2d run() of descriptor A with the left operand read from device memory
	OpStoreCoopDev // this simdgroup's share of coop[A] stored straight to dst (bounded by the tile's rows and tokens)
	NumCodes       // number of op codes (not an op)
)

// Info is one row of the op table.
type Info struct {
	Name     string // mnemonic used in dumps and docs
	Operands string // meaning of the Op fields
	Doc      string // one-line semantics
	Phase    Phase  // what the op is part of, for traces
	exec     func(m *Machine, sg int, op Op)
	expand   func(p *Program, sg int, op Op, out []Inst) []Inst
	regs     func(p *Program, op Op) Footprint
}

// Op is one operation in a simdgroup's program.
type Op struct {
	Code    Code
	A, B, C uint8
	N       uint16
	Arg     int32
}

// String renders the op for program dumps.
func (o Op) String() string {
	if o.Code >= NumCodes {
		return fmt.Sprintf("Op(%d)", o.Code)
	}
	return fmt.Sprintf("%s a=%d b=%d c=%d n=%d arg=%d", table[o.Code].Name, o.A, o.B, o.C, o.N, o.Arg)
}

// Info returns the table row of c.
func (c Code) Info() Info { return table[c] }

// String returns the op mnemonic.
func (c Code) String() string {
	if c >= NumCodes {
		return fmt.Sprintf("Code(%d)", uint8(c))
	}
	return table[c].Name
}

// table is the single description of every op; the emulator, the timing
// expansion, the register count and the generated docs/isa.md all read it.
var table [NumCodes]Info

func init() {
	table = [NumCodes]Info{
		OpALU: {"alu", "A=class N=count B=ILP C=extra wait mask", "N generic instructions of class A (no architectural effect in the emulator)", PhaseSetup,
			nil, expandALU, noRegs},
		OpLoadMeta: {"load_meta", "N=loads Arg=distinct bytes", "N device loads of a 4-byte routing word per lane; Arg > 0: the distinct bytes the lanes read (their own ids), else one word per load (all lanes read it)", PhaseSetup,
			nil, expandLoadMeta, noRegs},
		OpZeroAcc: {"zero_acc", "A=accumulator", "accumulator A := 0", PhaseSetup,
			execZeroAcc, expandZeroAcc, accRegs},
		OpDequantA: {"dequant_a", "N=A work item", "each lane reads its block bytes and decodes one 16-weight chunk in float32", PhaseStage,
			execDequantA, expandDequantA, dequantRegs},
		OpStoreA: {"store_a", "N=A work item", "each lane stores its 16 weights, rounded to half, into the A tile", PhaseStage,
			execStoreA, expandStoreA, noRegs},
		OpLoadB: {"load_b", "N=B work item", "each lane loads 8 activations of its (clamped) token row", PhaseStage,
			execLoadB, expandLoadB, loadBRegs},
		OpConvertB: {"convert_b", "N=B work item", "each lane rounds its 8 activations to half", PhaseStage,
			execConvertB, expandConvertB, noRegs},
		OpStoreB: {"store_b", "N=B work item", "each lane stores its 8 halves into the B tile", PhaseStage,
			execStoreB, expandStoreB, noRegs},
		OpZeroB: {"zero_b", "N=B work item", "lanes whose token row is padding store 8 zero halves", PhaseSetup,
			execZeroB, expandZeroB, noRegs},
		OpBarrier: {"barrier", "", "threadgroup_barrier(mem_threadgroup)", PhaseStage,
			nil, expandBarrier, noRegs},
		OpLoadFrag: {"load_frag", "A=fragment B=tile(0 A,1 B) Arg=half offset", "simdgroup_load of an 8x8 half fragment (stride 8)", PhaseCompute,
			execLoadFrag, expandLoadFrag, fragRegs},
		OpMMA: {"mma8", "A=acc B=left frag C=right frag", "acc[A] += frag[B] x frag[C], 8x8x8, float32 chain in k order", PhaseCompute,
			execMMA, expandMMA, accRegs},
		OpStoreAcc: {"store_acc", "A=acc Arg=float offset", "simdgroup_store of acc[A] into the staging buffer", PhaseStore,
			execStoreAcc, expandStoreAcc, noRegs},
		OpMatmul2D: {"matmul2d", "A=descriptor", "this simdgroup's share of matmul2d run(left, right, coop[A]) in 16x16x16 MMAs", PhaseCompute,
			execMatmul2D, expandMatmul2D, matmulRegs},
		OpStoreCoop: {"store_coop", "A=descriptor", "this simdgroup's share of coop[A] stored into the staging buffer", PhaseStore,
			execStoreCoop, expandStoreCoop, noRegs},
		OpScatter: {"scatter", "N=tile token row", "staging row N written to dst (ids re-read, float4 stores)", PhaseStore,
			execScatter, expandScatter, noRegs},
		OpMem: {"mem", "A=class B=stream N=count Arg=bytes", "N memory instructions of class A for kernels whose values the emulator computes elsewhere (map0)", PhaseSetup,
			nil, expandMem, noRegs},
		OpVZero: {"vzero", "A=first accumulator N=count", "lane accumulators A..A+N-1 := 0", PhaseSetup,
			execVZero, expandVZero, vzeroRegs},
		OpLoadVec: {"load_vec", "N=token slot", "each lane loads its 16 or 32 activations of the token for this k-step, as float32", PhaseStage,
			execLoadVec, expandLoadVec, loadVecRegs},
		OpDequantW: {"dequant_w", "B=row slot C=chunk", "each lane decodes its 16-weight chunk of the row in float32 (kept in float32, not rounded to half)", PhaseStage,
			execDequantW, expandDequantW, dequantWRegs},
		OpFMAVec: {"fma_vec", "A=accumulator B=token slot C=chunk", "acc[A] += ((s0+s1)+(s2+s3)), s_j = float32 chain of w_i·y_i over i = j mod 4 (20 fp32)", PhaseCompute,
			execFMAVec, expandFMAVec, noRegs},
		OpSimdSum: {"simd_sum", "A=first accumulator N=count", "pairwise tree sum of each accumulator over each group of Vec.LanesPerRow lanes (shuffle + add per level)", PhaseCompute,
			execSimdSum, expandSimdSum, noRegs},
		OpStoreVec: {"store_vec", "A=first accumulator N=count", "group leader lanes store the sums of accumulators A..A+N-1 (row slot a/NR1, token a%NR1) to dst", PhaseStore,
			execStoreVec, expandStoreVec, noRegs},
		OpStorePartial: {"store_partial", "A=first accumulator N=count", "lane 0 stores the simdgroup's sums into threadgroup memory at sg*N + i", PhaseStore,
			execStorePartial, expandStorePartial, noRegs},
		OpReduceStore: {"reduce_store", "A=first accumulator N=count", "output i = Σ over simdgroups s (in order) of partial s*N + i, stored to dst", PhaseStore,
			execReduceStore, expandReduceStore, noRegs},
		OpStoreAccDev: {"store_acc_dev", "A=acc Arg=token*StageStride+row", "simdgroup_store of acc[A] (8x8 float) straight to dst", PhaseStore,
			execStoreAccDev, expandStoreAccDev, noRegs},
		OpCopyOut: {"copy_out", "", "simdgroup 0: lane j < tokens copies staging row j (rows floats: float4 stores, scalar tail) to dst", PhaseStore,
			execCopyOut, expandCopyOut, noRegs},
		OpMatmul2DDev: {"matmul2d_dev", "A=descriptor", "this simdgroup's share of matmul2d run(left from device memory, right from the A tile, coop[A])", PhaseCompute,
			execMatmul2DDev, expandMatmul2DDev, matmulDevRegs},
		OpStoreCoopDev: {"store_coop_dev", "A=descriptor", "this simdgroup's share of coop[A] stored straight to dst (rows and tokens of the tile only)", PhaseStore,
			execStoreCoopDev, expandStoreCoopDev, noRegs},
	}
}

// TableMarkdown renders the op table as a Markdown table (docs/isa.md is made
// from it by `simrun isa`).
func TableMarkdown() string {
	var b strings.Builder
	b.WriteString("| op | operands | semantics | phase |\n|---|---|---|---|\n")
	for _, in := range table {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", in.Name, in.Operands, in.Doc, in.Phase)
	}
	return b.String()
}
