package dequant

import "fmt"

// Space is the address space a load reads.
type Space uint8

// Address spaces of the loads a dequantizer issues.
const (
	// Device is device (global) memory: the weight blocks.
	Device Space = iota
	// Constant is Metal's constant address space: the codebook grids,
	// ksigns_iq2xs and the shader's float level tables (kvalues_*_f).
	Constant
)

// String returns "device", "constant" or "threadgroup".
func (s Space) String() string {
	switch s {
	case Device:
		return "device"
	case Constant:
		return "constant"
	case Threadgroup:
		return "threadgroup"
	}
	return fmt.Sprintf("Space(%d)", uint8(s))
}

// Load is a group of Count identical loads of Width bytes each that one lane
// issues from one address space.
type Load struct {
	Space Space
	Width int    // bytes per load
	Count int    // number of loads
	What  string // the field or table read: "d", "m", "qs", "qh", "scales", "signs", "grid", "ksigns", "kvalues", "data", ...
}

// Bytes returns Width * Count.
func (l Load) Bytes() int { return l.Width * l.Count }

// Cost is what decoding ONE 16-value chunk costs ONE lane. Under SIMT each count
// is also the number of simdgroup instructions the 32 lanes issue together.
type Cost struct {
	Loads   []Load
	FP32    int // floating-point arithmetic: mul, fma (counted once), add, sub, negate; the few half-precision scale ops (q4_0, q4_1, q4_K, q5_0) are counted here too
	Int     int // integer / logic: and, or, shift, add, mul, compare, select, bitfield/byte extract, popcount
	Convert int // int->float conversions (half<->float ride on operand and destination sizes: free)
	Temps   int // 32-bit registers the decode keeps live besides its 16 float outputs
}

// BytesFrom returns the bytes loaded from space sp.
func (c Cost) BytesFrom(sp Space) int {
	n := 0
	for _, l := range c.Loads {
		if l.Space == sp {
			n += l.Bytes()
		}
	}
	return n
}

// LoadsFrom returns the number of load instructions issued to space sp.
func (c Cost) LoadsFrom(sp Space) int {
	n := 0
	for _, l := range c.Loads {
		if l.Space == sp {
			n += l.Count
		}
	}
	return n
}

// ChunkCost returns what decoding one 16-value chunk of t costs one lane with
// strategy s (only the iq2/iq3 types depend on s). It panics on an invalid Type
// or Strategy. The returned Loads slice is fresh; callers may keep or modify it.
//
// The counts come from the Metal dequantize_<type> functions (ggml-metal.metal at
// ggml d99724f; docs/kernel-facts.md K7.2, K7.4) and the WordReads variant (K6.1). The
// derivation of every row is in docs/kernel-facts-types.md §1.3, which also
// holds the table (a test renders it from ChunkCost and compares). The loads
// are not restated by hand anywhere else: a test runs a load-counting copy of
// every decoder on every chunk and requires, per address space and width, the
// largest count over the chunks to equal ChunkCost's (q4_K and q5_K read 2 scale
// bytes for il < 8 and 3 for il >= 8: ChunkCost gives the 3 the shader's code
// holds). The ALU counts follow these rules:
//
//	R1 One count per scalar operation of ONE call, after common-subexpression
//	   elimination and constant folding. kmask_iq2xs[i] has a compile-time index
//	   once the 8-iteration loops are unrolled: it folds to an immediate, so it
//	   costs 0 loads (upstream reads are not certain to fold, kernel-facts.md K7.4).
//	   A read with a runtime index that differs from the other reads of the same
//	   field (iq1_m's sc[ib32/2]) is a load of its own.
//	R2 a*b + c is one FP32 fma; (a - b) * c is two operations.
//	R3 Address arithmetic (base + index*size + constant) is folded into the load
//	   addressing and not counted; il>>1 (ib32) and il&1 (h) of the 256-weight
//	   types are counted (2 Int) because they also feed shifts.
//	R4 (x >> s) & m, and taking byte k of a register, is one bitfield extract
//	   (1 Int); computing a runtime position (16h, 14h, 4h, +7, +8) is 1 Int.
//	R5 A sign `signs & kmask[i] ? -1.f : 1.f` (and q1_0's bit test) is and +
//	   compare + select (3 Int) and applying it is 1 FP32 multiply; the magnitude
//	   dl*grid[i] is a u8->float convert and 1 FP32 multiply. So every iq2/iq3
//	   weight costs 2 FP32, 3 Int, 1 Convert.
//	R6 Convert counts integer -> float conversions only: the quant values and the
//	   integer sub-scales. Apple GPU ALU instructions read and write 16-bit
//	   register halves directly, converting half <-> float as part of the
//	   operation (DJ in docs/sources.md, kernel-facts.md G2): the fp16 scale d costs nothing to
//	   widen and the 16 results are written as half by the fma, multiply or select
//	   that produces them. Float table values (kvalues_*_f) need no conversion.
//	R7 WordReads adds one extract per grid byte (16) and, per ksigns lookup it
//	   replaces, k | (popcount(k)&1)<<7 = popcount, and, shift, or (4 Int); it
//	   reads the 16 grid bytes as 4 uint32 words.
//	R10 The byte reads of one codebook entry (a uint8 pointer into an aligned
//	   uint64 or uint32 element, bytes 0..7 or 0..3 in an unrolled loop) are
//	   adjacent and issue as loads of byteRunBytes zero-extended bytes each
//	   (load.go): an 8-byte iq2 entry as 2 loads, a 4-byte iq3 or iq1 entry
//	   as 1, so ByteReads reads the 16 grid bytes of a chunk in 4 loads too,
//	   without the extracts. ksigns (1 byte per lookup) stays a 1-byte load.
//	R8 Temps: peak 32-bit registers besides the 16 outputs, with all loads of
//	   the chunk issued before first use; 8/16-bit loaded values take a 16-bit
//	   register half each (two per 32-bit register); each output's own temporaries
//	   (its table value, its masked code) live in the output register; iq2/iq3
//	   types need 1 scratch for the ±1.
//	R9 A ternary on il is if-converted: both arms are counted, plus 1 compare and
//	   1 select; nested ternaries on the same il share their compares.
func ChunkCost(t Type, s Strategy) Cost {
	if s >= numStrategies {
		panic(fmt.Sprintf("dequant: invalid Strategy(%d)", uint8(s)))
	}
	if !t.Valid() {
		panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
	}
	r := chunkCosts[t]
	if s == WordReads && t.Codebook() {
		r = wordCosts[t]
	}
	c := r
	c.Loads = append([]Load(nil), r.Loads...)
	return c
}

// Load constructors for the cost table.
func dev(width, count int, what string) Load { return Load{Device, width, count, what} }
func cst(width, count int, what string) Load { return Load{Constant, width, count, what} }

// gridRun is the loads of n codebook bytes that one lane reads from space sp
// as runs of adjacent bytes of 4- or 8-byte entries: n / byteRunBytes loads
// of byteRunBytes bytes (R10).
func gridRun(sp Space, n int) Load { return Load{sp, byteRunBytes, n / byteRunBytes, "grid"} }

// row builds a table row: loads, then FP32, Int, Convert, Temps.
func row(loads []Load, fp32, integer, conv, temps int) Cost {
	return Cost{Loads: loads, FP32: fp32, Int: integer, Convert: conv, Temps: temps}
}

// ld lists loads.
func ld(l ...Load) []Load { return l }

var (
	dHalf      = dev(2, 1, "d")
	gridBytes  = gridRun(Constant, 16) // R10: 2 entries of 8 bytes or 4 of 4
	gridBytes8 = gridRun(Constant, 8)  // iq1: 2 entries of 4 bytes, a nibble pair each
	gridWords  = cst(4, 4, "grid")
	ksigns2    = cst(1, 2, "ksigns")
	kvalues16  = cst(4, 16, "kvalues")
)

// chunkCosts is the ByteReads cost of every type (docs/kernel-facts-types.md
// §1.3 derives each row).
var chunkCosts = [numTypes]Cost{
	F32:     row(ld(dev(16, 4, "data")), 16, 0, 0, 0),
	F16:     row(ld(dev(16, 2, "data")), 0, 0, 0, 0),
	BF16:    row(ld(dev(16, 2, "data")), 0, 0, 0, 0),
	Q4_0:    row(ld(dHalf, dev(2, 8, "qs")), 19, 20, 16, 8),
	Q8_0:    row(ld(dHalf, dev(4, 4, "qs")), 16, 0, 16, 9),
	IQ2_XXS: row(ld(dHalf, dev(2, 4, "qs"), gridBytes, ksigns2), 35, 63, 17, 11),
	IQ2_XS:  row(ld(dHalf, dev(1, 1, "scales"), dev(2, 2, "qs"), gridBytes, ksigns2), 35, 56, 17, 11),
	IQ2_S:   row(ld(dHalf, dev(1, 2, "qs"), dev(1, 2, "signs"), dev(1, 1, "qh"), dev(1, 1, "scales"), gridBytes), 35, 59, 17, 11),
	IQ3_XXS: row(ld(dHalf, dev(1, 4, "qs"), dev(2, 2, "qs"), gridBytes, ksigns2), 35, 57, 17, 11),
	IQ3_S:   row(ld(dHalf, dev(1, 4, "qs"), dev(1, 1, "qh"), dev(1, 2, "signs"), dev(1, 1, "scales"), gridBytes), 33, 69, 17, 11),
	Q4_1:    row(ld(dHalf, dev(2, 1, "m"), dev(2, 8, "qs")), 18, 20, 16, 8),
	Q5_0:    row(ld(dHalf, dev(4, 1, "qh"), dev(2, 8, "qs")), 17, 125, 16, 8),
	Q5_1:    row(ld(dHalf, dev(2, 1, "m"), dev(4, 1, "qh"), dev(2, 8, "qs")), 16, 125, 16, 8),
	Q1_0:    row(ld(dHalf, dev(1, 2, "qs")), 1, 48, 0, 2),
	Q2_0:    row(ld(dHalf, dev(1, 4, "qs")), 32, 16, 16, 3),
	MXFP4:   row(ld(dev(1, 1, "e"), dev(1, 16, "qs"), kvalues16), 16, 21, 0, 10),
	IQ4_NL:  row(ld(dHalf, dev(2, 8, "qs"), kvalues16), 16, 33, 0, 5),
	Q2_K:    row(ld(dHalf, dev(2, 1, "dmin"), dev(1, 1, "scales"), dev(1, 16, "qs")), 19, 28, 18, 12),
	Q3_K:    row(ld(dHalf, dev(1, 2, "scales"), dev(1, 16, "qs"), dev(1, 16, "hmask")), 23, 95, 17, 20),
	Q4_K:    row(ld(dHalf, dev(2, 1, "dmin"), dev(1, 3, "scales"), dev(1, 16, "qs")), 19, 36, 18, 13),
	Q5_K:    row(ld(dHalf, dev(2, 1, "dmin"), dev(1, 3, "scales"), dev(1, 16, "qs"), dev(1, 16, "qh")), 35, 87, 18, 22),
	Q6_K:    row(ld(dHalf, dev(1, 1, "scales"), dev(2, 8, "ql"), dev(2, 8, "qh")), 21, 68, 17, 17),
	TQ2_0:   row(ld(dHalf, dev(1, 16, "qs")), 16, 37, 16, 9),
	IQ1_S:   row(ld(dHalf, dev(2, 1, "qh"), dev(1, 2, "qs"), gridBytes8), 18, 32, 17, 7),
	IQ1_M:   row(ld(dev(2, 5, "scales"), dev(1, 2, "qs"), dev(1, 1, "qh"), gridBytes8), 19, 46, 17, 7),
	IQ4_XS:  row(ld(dHalf, dev(2, 1, "scales_h"), dev(1, 1, "scales_l"), dev(4, 4, "qs"), kvalues16), 17, 35, 1, 6),
}

// wordCosts is the WordReads cost of the five codebook types (R7).
var wordCosts = [numTypes]Cost{
	IQ2_XXS: row(ld(dHalf, dev(2, 4, "qs"), gridWords), 35, 63+16+8, 17, 7),
	IQ2_XS:  row(ld(dHalf, dev(1, 1, "scales"), dev(2, 2, "qs"), gridWords), 35, 56+16+8, 17, 7),
	IQ2_S:   row(ld(dHalf, dev(1, 2, "qs"), dev(1, 2, "signs"), dev(1, 1, "qh"), dev(1, 1, "scales"), gridWords), 35, 59+16, 17, 7),
	IQ3_XXS: row(ld(dHalf, dev(1, 4, "qs"), dev(2, 2, "qs"), gridWords), 35, 57+16+8, 17, 7),
	IQ3_S:   row(ld(dHalf, dev(1, 4, "qs"), dev(1, 1, "qh"), dev(1, 2, "signs"), dev(1, 1, "scales"), gridWords), 33, 69+16, 17, 7),
}
