package dequant

import "fmt"

// Space is the address space a load reads.
type Space uint8

// Address spaces of the loads a dequantizer issues.
const (
	// Device is device (global) memory: the weight blocks.
	Device Space = iota
	// Constant is Metal's constant address space: the codebook grids and
	// ksigns_iq2xs.
	Constant
)

// String returns "device" or "constant".
func (s Space) String() string {
	switch s {
	case Device:
		return "device"
	case Constant:
		return "constant"
	}
	return fmt.Sprintf("Space(%d)", uint8(s))
}

// Load is a group of Count identical loads of Width bytes each that one lane
// issues from one address space.
type Load struct {
	Space Space
	Width int    // bytes per load
	Count int    // number of loads
	What  string // the field or table read: "d", "qs", "qh", "scales", "signs", "grid", "ksigns", "data"
}

// Bytes returns Width * Count.
func (l Load) Bytes() int { return l.Width * l.Count }

// Cost is what decoding ONE 16-value chunk costs ONE lane. Under SIMT each count
// is also the number of simdgroup instructions the 32 lanes issue together.
type Cost struct {
	Loads   []Load
	FP32    int // floating-point arithmetic: mul, fma (counted once), add, sub; the few half-precision scale ops of q4_0 are counted here too
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
// strategy s (only the iq types depend on s). It panics on an invalid Type or
// Strategy. The returned Loads slice is fresh; callers may keep or modify it.
//
// The counts come from the Metal dequantize_<type> functions (kernel-facts §7.2,
// §7.4) and the WordReads variant (§6.1), under these rules:
//
//	R1 One count per scalar operation of ONE call, after common-subexpression
//	   elimination and constant folding. kmask_iq2xs[i] has a compile-time index
//	   once the 8-iteration loops are unrolled: it folds to an immediate, so it
//	   costs 0 loads (upstream reads are not certain to fold, kernel-facts §7.4).
//	R2 a*b + c is one FP32 fma.
//	R3 Address arithmetic (base + index*size + constant) is folded into the load
//	   addressing and not counted; il>>1 (ib32) and il&1 (h) of the 256-weight
//	   types are counted (2 Int) because they also feed shifts.
//	R4 (x >> s) & m, and taking byte k of a register, is one bitfield extract
//	   (1 Int); computing a runtime position (16h, 14h, 4h, +7, +8) is 1 Int.
//	R5 A sign `signs & kmask[i] ? -1.f : 1.f` is and + compare + select (3 Int)
//	   and applying it is 1 FP32 multiply; the magnitude dl*grid[i] is a u8->float
//	   convert and 1 FP32 multiply. So every iq weight costs 2 FP32, 3 Int, 1 Convert.
//	R6 Convert counts integer -> float conversions only: the 16 quant values and
//	   the integer sub-scale of the iq types (1). Apple GPU ALU instructions read
//	   and write 16-bit register halves directly, converting half <-> float as
//	   part of the operation (DJ, apple-gpu.md §2.2 note): the fp16 scale d costs
//	   nothing to widen and the 16 results are written as half by the fma or
//	   multiply that produces them.
//	R7 WordReads adds one extract per grid byte (16) and, per ksigns lookup it
//	   replaces, k | (popcount(k)&1)<<7 = popcount, and, shift, or (4 Int); it
//	   reads the same 16 grid bytes as 4 uint32 words instead of 16 uint8 loads.
//	R8 Temps: peak 32-bit registers besides the 16 outputs, with all loads of
//	   the chunk issued before first use; 8/16-bit loaded values take a 16-bit
//	   register half each (two per 32-bit register); each output's own temporaries
//	   live in the output register; iq types need 1 scratch for the ±1.
//
//	type     strat  loads (device | constant)                 FP32 Int Conv Temps
//	f32      both   4x16B data (float4x4)                      16    0   0   0
//	f16      both   2x16B data (half4x4)                        0    0   0   0
//	q4_0     both   2B d, 8x2B qs                              19   20  16   8
//	q8_0     both   2B d, 4x4B qs (packed_char4)               16    0  16   9
//	iq2_xxs  bytes  2B d, 4x2B qs | 16x1B grid, 2x1B ksigns    35   63  17  11
//	iq2_xxs  words  2B d, 4x2B qs | 4x4B grid                  35   87  17   7
//	iq2_xs   bytes  2B d, 1B scales, 2x2B qs | 16x1B grid, 2x1B ksigns
//	                                                           35   56  17  11
//	iq2_xs   words  2B d, 1B scales, 2x2B qs | 4x4B grid       35   80  17   7
//	iq2_s    bytes  2B d, 2x1B qs, 2x1B signs, 1B qh, 1B scales | 16x1B grid
//	                                                           35   59  17  11
//	iq2_s    words  (same device loads) | 4x4B grid            35   75  17   7
//	iq3_xxs  bytes  2B d, 4x1B qs, 2x2B qs(signs+scale) | 16x1B grid, 2x1B ksigns
//	                                                           35   57  17  11
//	iq3_xxs  words  (same device loads) | 4x4B grid            35   81  17   7
//	iq3_s    bytes  2B d, 4x1B qs, 1B qh, 2x1B signs, 1B scales | 16x1B grid
//	                                                           33   69  17  11
//	iq3_s    words  (same device loads) | 4x4B grid            33   85  17   7
//
// How each count was obtained (ByteReads; WordReads = ByteReads + R7):
//
//	f32    FP32 16 moves writing half (one per value), Int 0, Convert 0. Loads: the float4x4 is read
//	       as 4 float4 loads, 16 B being the widest per-lane load (4 x 32-bit
//	       registers). Temps 0: the loaded registers are the outputs.
//	f16    dequantize_f16 assigns a half4x4 to a half4x4: no arithmetic and no
//	       conversion at all (half in, half out; the widening in this package's
//	       Decoder is only the emulator's representation). 2 x 16 B loads (same
//	       width argument as f32). Temps 0.
//	q4_0   FP32 19 = d/16 in half (1) + d1/256 (1) + -8*d in half (1) + 16 fma
//	       (d1*x+md, d2*x+md). Int 20 = il != 0 (1) + select d1 (1) + select
//	       mask0 (1) + mask0<<8 (1) + 16 ands. Convert 16 ushort->float. Temps 8 = 8 uint16 qs (4) +
//	       d1, d2, md (3) + mask0/mask1 as two 16-bit halves (1).
//	q8_0   FP32 16 muls. Int 0: a packed_char4 load yields 4 int8 in 16-bit
//	       registers (the load format converts), no extract. Convert 16 int8->float. Temps 9 = 16 int8 (8) + d (1).
//	iq2_xxs FP32 35 = dl: 0.5+x, d*, *0.25 (3) + 16 x 2 (R5). Int 63 = ib32, h (2)
//	       + two 32-bit words from 4 uint16: 2 x (shift, or) (4) + s>>28 (1) + grid
//	       indices: 16h, extract, +8, extract (4) + sign indices: 14h, extract,
//	       +7, extract (4) + 16 x 3 (R5). Convert 17 = s>>28, 16.
//	       Temps 11 = dl + 16 grid bytes (8) + 2 sign bytes (1) + scratch.
//	       Words: Int 63 + 16 + 2 x 4 = 87; Temps 7 = dl + 4 words + signs + scratch.
//	iq2_xs FP32 35 (as iq2_xxs). Int 56 = ib32, h (2) + scale nibble: 4h, extract
//	       (2) + q & 511 (2) + q >> 9 (2) + 48. Convert 17. Temps 11.
//	       Words: Int 56 + 16 + 8 = 80; Temps 7.
//	iq2_s  FP32 35. Int 59 = ib32, h (2) + qh' = qh >> 4h: 4h, shift (2) + scale
//	       extract (1; 4h shared) + 2 indices x (shift, and 0x300, or) (6) + 48.
//	       Convert 17. Temps 11 (the 2 sign bytes come from device memory).
//	       Words: Int 59 + 16 = 75 (no ksigns to replace); Temps 7.
//	iq3_xxs FP32 35 (dl = d*(0.5+x)*0.5). Int 57 = ib32, h (2) + one word from 2
//	       uint16: shift, or (2) + a>>28 (1) + sign indices: 14h, extract, +7,
//	       extract (4) + 48 (grid indices are loaded bytes: 0). Convert 17.
//	       Temps 11. Words: Int 57 + 16 + 8 = 81; Temps 7.
//	iq3_s  FP32 33 = d * float(1 + 2*sc) (1) + 32. Int 69 = ib32, h (2) + qh':
//	       4h, shift (2) + scale: ib32&1, *4, extract, *2, +1 (5) + 4 indices x
//	       (shift, and 256, or) (12) + 48. Convert 17. Temps 11.
//	       Words: Int 69 + 16 = 85; Temps 7.
func ChunkCost(t Type, s Strategy) Cost {
	if s >= numStrategies {
		panic(fmt.Sprintf("dequant: invalid Strategy(%d)", uint8(s)))
	}
	words := s == WordReads && t.Codebook()
	dev := func(width, count int, what string) Load { return Load{Device, width, count, what} }
	d := dev(2, 1, "d")
	// iq grids: 16 bytes per chunk, as 16 uint8 or 4 uint32 loads.
	grid := Load{Constant, 1, 16, "grid"}
	if words {
		grid = Load{Constant, 4, 4, "grid"}
	}
	ksigns := Load{Constant, 1, 2, "ksigns"}
	// iq cost: 35 FP32 (33 for iq3_s), 17 Convert; Int and Temps per type.
	iq := func(fp32, intBytes, extraWords int, loads ...Load) Cost {
		c := Cost{Loads: loads, FP32: fp32, Int: intBytes, Convert: 17, Temps: 11}
		if words {
			c.Int += extraWords
			c.Temps = 7
		}
		return c
	}
	withKsigns := func(loads ...Load) []Load {
		if words {
			return loads
		}
		return append(loads, ksigns)
	}
	switch t {
	case F32:
		return Cost{Loads: []Load{dev(16, 4, "data")}, FP32: 16}
	case F16:
		return Cost{Loads: []Load{dev(16, 2, "data")}}
	case Q4_0:
		return Cost{Loads: []Load{d, dev(2, 8, "qs")}, FP32: 19, Int: 20, Convert: 16, Temps: 8}
	case Q8_0:
		return Cost{Loads: []Load{d, dev(4, 4, "qs")}, FP32: 16, Convert: 16, Temps: 9}
	case IQ2_XXS:
		return iq(35, 63, 16+8, withKsigns(d, dev(2, 4, "qs"), grid)...)
	case IQ2_XS:
		return iq(35, 56, 16+8, withKsigns(d, dev(1, 1, "scales"), dev(2, 2, "qs"), grid)...)
	case IQ2_S:
		return iq(35, 59, 16, d, dev(1, 2, "qs"), dev(1, 2, "signs"), dev(1, 1, "qh"), dev(1, 1, "scales"), grid)
	case IQ3_XXS:
		return iq(35, 57, 16+8, withKsigns(d, dev(1, 4, "qs"), dev(2, 2, "qs"), grid)...)
	case IQ3_S:
		return iq(33, 69, 16, d, dev(1, 4, "qs"), dev(1, 1, "qh"), dev(1, 2, "signs"), dev(1, 1, "scales"), grid)
	}
	panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
}
