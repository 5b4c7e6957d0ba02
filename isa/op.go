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
	OpLoadMeta              // N device loads of one 4-byte routing word per lane (tpe, ids)
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
	NumCodes                // number of op codes (not an op)
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
		OpLoadMeta: {"load_meta", "N=loads", "N device loads of a 4-byte routing word per lane", PhaseSetup,
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
