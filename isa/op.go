package isa

import "fmt"

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
	OpVecPrep      // the lane's per-step arithmetic on its activations (pre-scaling, block sums; timing only)
	OpLoadW        // each lane loads and decodes its weights of row slot B for this k-step (float32, not rounded to half)
	OpDotW         // kernel_mul_mv's fused dot: row slot B's accumulators += the lane's weights · activations of each token slot
	OpDequantW     // mul_mv_ext: the arithmetic of decoding piece C of row slot B (timing only; load_w holds the values)
	OpFMAVec       // mul_mv_ext: row slot B's accumulators += piece C of the lane's weights · each token slot's activations
	OpSimdSum      // simd_sum of lane accumulators A..A+N-1 over each group of Vec.LanesPerRow lanes
	OpStoreVec     // group leaders store accumulators A..A+N-1 to dst (valid rows and tokens)
	OpStorePartial // lane 0 stores accumulators A..A+N-1 as this simdgroup's partial sums in threadgroup memory
	OpReduceStore  // every simdgroup sums the simdgroups' partial sums; simdgroup 0 stores them to dst (N outputs)
	OpStoreAccDev  // simdgroup_store of accumulator A straight to dst at tile offset Arg (token*StageStride + row)
	OpCopyOut      // the staged output tile copied to dst by simdgroup 0, one lane per token row
	OpMatmul2DDev  // matmul2d run() of descriptor A with the left operand read from device memory
	OpStoreCoopDev // this simdgroup's share of coop[A] stored straight to dst (bounded by the tile's rows and tokens)
	NumCodes       // number of op codes (not an op)
)

// Info is one row of the op table: everything about an op. The emulator
// (exec), the timing expansion (expand), the register count (regs), the
// machine-state sizing (state), the work counters (count) and the generated
// docs/isa.md all read the row; nothing else switches on op codes.
type Info struct {
	Name     string // mnemonic used in dumps and docs
	Operands string // meaning of the Op fields
	Doc      string // one-line semantics
	Phase    Phase  // what the op is part of, for traces
	// Timing says in words what expand produces (docs/isa.md shows it next to
	// an expansion rendered from a real program).
	Timing string
	// Descriptor: Op.A names a matmul2d descriptor of Program.Matmuls.
	Descriptor bool
	exec       func(m *Machine, sg int, op Op)
	expand     func(p *Program, sg int, op Op, out []Inst) []Inst
	regs       func(p *Program, op Op) Footprint
	state      func(op Op, s *stateSize)      // the machine state the op addresses (nil: none)
	count      func(op Op, sg int, c *Counts) // the op's work counters, once per execution (nil: none)
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
		OpALU: {Name: "alu", Operands: "A=class N=count B=ILP C=extra wait mask", Phase: PhaseSetup,
			Doc:    "N generic instructions of class A (no architectural effect in the emulator)",
			Timing: "one group of N class-A instructions in B chains, after the previous group's result and the waits in C",
			expand: expandALU, regs: noRegs},
		OpLoadMeta: {Name: "load_meta", Operands: "N=loads Arg=distinct bytes", Phase: PhaseSetup,
			Doc:    "N device loads of a 4-byte routing word per lane; Arg > 0: the distinct bytes the lanes read (their own ids), else one word per load (all lanes read it)",
			Timing: "N dev_load of 128 B (meta stream), all in flight; distinct bytes Arg or 4 per load",
			expand: expandLoadMeta, regs: noRegs},
		OpZeroAcc: {Name: "zero_acc", Operands: "A=accumulator", Phase: PhaseSetup,
			Doc:    "accumulator A := 0",
			Timing: "2 int moves (an 8x8 float fragment is 2 registers per lane)",
			exec:   execZeroAcc, expand: expandZeroAcc, regs: accRegs, state: accState},
		OpDequantA: {Name: "dequant_a", Operands: "N=A work item", Phase: PhaseStage,
			Doc:    "each lane reads its block bytes and decodes one 16-weight chunk in float32",
			Timing: "the type's chunk cost (dequant.ChunkCost): its device loads (weights stream, the simdgroup's distinct chunks as new bytes), codebook const_loads after them, then int, fp32 and convert groups in 4 chains; nothing when no lane has an item",
			exec:   execDequantA, expand: expandDequantA, regs: dequantRegs, count: countDequant},
		OpStoreA: {Name: "store_a", Operands: "N=A work item", Phase: PhaseStage,
			Doc:    "each lane stores its 16 weights, rounded to half, into the A tile",
			Timing: "16 tg_store of 64 B (scalar half stores), after the decode",
			exec:   execStoreA, expand: expandStoreA, regs: noRegs},
		OpLoadB: {Name: "load_b", Operands: "N=B work item C=1: padding rows skip", Phase: PhaseStage,
			Doc:    "each lane loads 8 activations of its (clamped) token row; with C = 1 lanes whose row is padding (zeroed once) do not",
			Timing: "1 dev_load of 32 B per lane (16 B for f16; activations stream, the distinct clamped rows as new bytes); nothing when no lane is active",
			exec:   execLoadB, expand: expandLoadB, regs: loadBRegs, state: bPassState},
		OpConvertB: {Name: "convert_b", Operands: "N=B work item C=1: padding rows skip", Phase: PhaseStage,
			Doc:    "each lane rounds its 8 activations to half",
			Timing: "8 fp32 moves with a half destination, after the load (none for f16 activations)",
			exec:   execConvertB, expand: expandConvertB, regs: noRegs, state: bPassState},
		OpStoreB: {Name: "store_b", Operands: "N=B work item C=1: padding rows skip", Phase: PhaseStage,
			Doc:    "each lane stores its 8 halves into the B tile",
			Timing: "1 tg_store of 16 B per lane, after the load and conversion",
			exec:   execStoreB, expand: expandStoreB, regs: noRegs, state: bPassState},
		OpZeroB: {Name: "zero_b", Operands: "N=B work item", Phase: PhaseSetup,
			Doc:    "lanes whose token row is padding store 8 zero halves",
			Timing: "1 tg_store of 16 B per lane",
			exec:   execZeroB, expand: expandZeroB, regs: noRegs},
		OpBarrier: {Name: "barrier", Phase: PhaseStage,
			Doc:    "threadgroup_barrier(mem_threadgroup)",
			Timing: "1 barrier: the simdgroup waits until every simdgroup of the threadgroup has arrived",
			expand: expandBarrier, regs: noRegs, count: countBarrier},
		OpLoadFrag: {Name: "load_frag", Operands: "A=fragment B=tile(0 A,1 B) Arg=half offset", Phase: PhaseCompute,
			Doc:    "simdgroup_load of an 8x8 half fragment (stride 8)",
			Timing: "1 tg_load of 128 B",
			exec:   execLoadFrag, expand: expandLoadFrag, regs: fragRegs, state: fragState, count: countFragLoad},
		OpMMA: {Name: "mma8", Operands: "A=acc B=left frag C=right frag", Phase: PhaseCompute,
			Doc:    "acc[A] += frag[B] x frag[C], 8x8x8, float32 chain in k order",
			Timing: "1 mma8, after the fragment loads",
			exec:   execMMA, expand: expandMMA, regs: accRegs, state: mmaState, count: countMMA8},
		OpStoreAcc: {Name: "store_acc", Operands: "A=acc Arg=float offset", Phase: PhaseStore,
			Doc:    "simdgroup_store of acc[A] into the staging buffer",
			Timing: "1 tg_store of 256 B, after the last MMA",
			exec:   execStoreAcc, expand: expandStoreAcc, regs: noRegs, state: accState},
		OpMatmul2D: {Name: "matmul2d", Operands: "A=descriptor", Phase: PhaseCompute, Descriptor: true,
			Doc:    "this simdgroup's share of matmul2d run(left, right, coop[A]) in 16x16x16 MMAs",
			Timing: "per 16-deep k chunk: 2 tg_load of 256 B per distinct left and right 16x16 fragment of the simdgroup's output tiles, then one mma16 per output tile (chained to the previous chunk)",
			exec:   execMatmul2D, expand: expandMatmul2D, regs: matmulRegs, count: countMatmul2D},
		OpStoreCoop: {Name: "store_coop", Operands: "A=descriptor", Phase: PhaseStore, Descriptor: true,
			Doc:    "this simdgroup's share of coop[A] stored into the staging buffer",
			Timing: "2 tg_store of 512 B per output tile the simdgroup owns",
			exec:   execStoreCoop, expand: expandStoreCoop, regs: noRegs},
		OpScatter: {Name: "scatter", Operands: "N=tile token row", Phase: PhaseStore,
			Doc:    "staging row N written to dst (ids re-read, float4 stores)",
			Timing: "1 dev_load of the id (meta), 4 int, then the row's float4 passes of 32 lanes and a scalar tail: a tg_load and a dev_store (output stream) each",
			exec:   execScatter, expand: expandScatter, regs: noRegs},
		OpMem: {Name: "mem", Operands: "A=class B=stream N=count Arg=bytes", Phase: PhaseSetup,
			Doc:    "N memory instructions of class A for kernels whose values the emulator computes elsewhere (map0)",
			Timing: "one group of N class-A instructions of Arg bytes on stream B, all in flight; distinct bytes 4 per instruction (Arg per instruction for codebook copies)",
			expand: expandMem, regs: noRegs},
		OpVZero: {Name: "vzero", Operands: "A=first accumulator N=count", Phase: PhaseSetup,
			Doc:    "lane accumulators A..A+N-1 := 0",
			Timing: "N int moves, independent",
			exec:   execVZero, expand: expandVZero, regs: vzeroRegs, state: laneAccRangeState},
		OpLoadVec: {Name: "load_vec", Operands: "N=token slot", Phase: PhaseStage,
			Doc:    "each lane loads its activations of the token for this k-step, as float32",
			Timing: "the kernel's activation loads (kernel_mul_mv: dequant.MatVecCosts' step loads; mul_mv_ext: a float4 per 4 weights; activations stream, the distinct k offsets as new bytes); nothing when every lane is past K",
			exec:   execLoadVec, expand: expandLoadVec, regs: loadVecRegs, state: tokenSlotState},
		OpVecPrep: {Name: "vec_prep", Phase: PhaseStage,
			Doc:    "no architectural effect: the kernel's per-step arithmetic on its activations (pre-scaling, block sums), which the emulator's unscaled products make unnecessary",
			Timing: "the step arithmetic of dequant.MatVecCosts: int, convert and fp32 groups in 4 chains, after the activation loads",
			expand: expandVecPrep, regs: vecPrepRegs},
		OpLoadW: {Name: "load_w", Operands: "B=row slot C=16-weight chunks per lane", Phase: PhaseStage,
			Doc:    "each lane reads and decodes its weights of the row in float32 (kernel_mul_mv: ggml's to_float values; mul_mv_ext: the Metal dequantizer's, not rounded to half)",
			Timing: "the row's device loads (kernel_mul_mv: dequant.MatVecCosts' row loads; mul_mv_ext: the dequantizer's per piece; weights stream, the row's distinct bytes as new bytes), issued before any arithmetic of the step",
			exec:   execLoadW, expand: expandLoadW, regs: loadWRegs, state: rowSlotState, count: countLoadW},
		OpDotW: {Name: "dot_w", Operands: "B=row slot", Phase: PhaseStage,
			Doc:    "acc[B*NR1+t] += ((s0+s1)+(s2+s3)) for every token slot t, s_j = float32 chain of w_i·y_i over i = j mod 4",
			Timing: "the row's table reads (tg_load or const_load) after its weights, then the row arithmetic of dequant.MatVecCosts: int, convert and fp32 groups in 4 chains",
			exec:   execDotW, expand: expandDotW, regs: dotWRegs, state: fmaVecState},
		OpDequantW: {Name: "dequant_w", Operands: "B=row slot C=piece", Phase: PhaseStage,
			Doc:    "no architectural effect: the arithmetic of decoding piece C (load_w holds the values)",
			Timing: "the piece's dequantizer cost (dequant.Chunk4Cost in the float4 form, dequant.ChunkCost in the float4x4 form): its constant-table reads, then int, convert and fp32 groups in 4 chains",
			expand: expandDequantW, regs: dequantWRegs},
		OpFMAVec: {Name: "fma_vec", Operands: "B=row slot C=piece", Phase: PhaseCompute,
			Doc:    "acc[B*NR1+t] += the dot of piece C of the lane's weights with token slot t's activations, for every t (chains as dot_w)",
			Timing: "per token one float4 dot and its add (5 fp32, the tokens in parallel chains); float4x4: four dots (16 fp32 in 4 chains per token) and 4 adds",
			exec:   execFMAVec, expand: expandFMAVec, regs: noRegs, state: fmaVecState},
		OpSimdSum: {Name: "simd_sum", Operands: "A=first accumulator N=count", Phase: PhaseCompute,
			Doc:    "pairwise tree sum of each accumulator over each group of Vec.LanesPerRow lanes (shuffle + add per level)",
			Timing: "per tree level: 2N int (a shuffle as two dependent instructions) and N fp32 adds",
			exec:   execSimdSum, expand: expandSimdSum, regs: noRegs, state: laneAccRangeState},
		OpStoreVec: {Name: "store_vec", Operands: "A=first accumulator N=count", Phase: PhaseStore,
			Doc:    "group leader lanes store the sums of accumulators A..A+N-1 (row slot a/NR1, token a%NR1) to dst",
			Timing: "N dev_store of 4 B per lane group (output stream, the valid outputs as bytes)",
			exec:   execStoreVec, expand: expandStoreVec, regs: noRegs, state: laneAccRangeState},
		OpStorePartial: {Name: "store_partial", Operands: "A=first accumulator N=count", Phase: PhaseStore,
			Doc:    "lane 0 stores the simdgroup's sums into threadgroup memory at sg*N + i",
			Timing: "N tg_store of 4 B",
			exec:   execStorePartial, expand: expandStorePartial, regs: noRegs, state: laneAccRangeState},
		OpReduceStore: {Name: "reduce_store", Operands: "A=first accumulator N=count", Phase: PhaseStore,
			Doc:    "simdgroup 0: output i = Σ over simdgroups s (in order) of partial s*N + i, stored to dst (N outputs); the others compute the same and store nothing",
			Timing: "N tg_load of 128 B (a lane per partial-sum slot), a 5-level simd_sum tree per output; simdgroup 0 then one dev_store of the valid outputs",
			exec:   execReduceStore, expand: expandReduceStore, regs: noRegs, state: laneAccRangeState},
		OpStoreAccDev: {Name: "store_acc_dev", Operands: "A=acc Arg=token*StageStride+row", Phase: PhaseStore,
			Doc:    "simdgroup_store of acc[A] (8x8 float) straight to dst",
			Timing: "1 dev_store of 256 B (output stream, the block's valid outputs as bytes)",
			exec:   execStoreAccDev, expand: expandStoreAccDev, regs: noRegs, state: accState},
		OpCopyOut: {Name: "copy_out", Phase: PhaseStore,
			Doc:    "simdgroup 0: lane j < tokens copies staging row j (rows floats: float4 stores, scalar tail) to dst",
			Timing: "Rows/4 float4 and Rows%4 scalar copies: a tg_load and a dev_store each, one lane per token",
			exec:   execCopyOut, expand: expandCopyOut, regs: noRegs},
		OpMatmul2DDev: {Name: "matmul2d_dev", Operands: "A=descriptor", Phase: PhaseCompute, Descriptor: true,
			Doc:    "this simdgroup's share of matmul2d run(left from device memory, right from the A tile, coop[A])",
			Timing: "per 16-deep k chunk: 2 dev_load per left fragment (activations stream, an even share of the fragments' valid bytes), 2 tg_load of 256 B per right fragment, one mma16 per output tile",
			exec:   execMatmul2DDev, expand: expandMatmul2DDev, regs: matmulDevRegs, count: countMatmul2D},
		OpStoreCoopDev: {Name: "store_coop_dev", Operands: "A=descriptor", Phase: PhaseStore, Descriptor: true,
			Doc:    "this simdgroup's share of coop[A] stored straight to dst (rows and tokens of the tile only)",
			Timing: "2 dev_store of 512 B per output tile the simdgroup owns (output stream, the tiles' valid outputs as bytes)",
			exec:   execStoreCoopDev, expand: expandStoreCoopDev, regs: noRegs},
	}
}
