package dequant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// ChunkFunc decodes chunk il of one block: out[i] = weight 16*il + i of the
// block, in float32, computed exactly as the Metal dequantize_<type> function
// computes it before the conversion to half (the caller rounds to half, or for
// bf16 to bfloat, see Type.RoundStaged).
//
// block must hold exactly the type's Layout().BlockBytes bytes (a shorter slice
// panics); any byte content is accepted (NaN or infinite scales just propagate).
// il must lie in [0, Type.Chunks()); other values panic. A ChunkFunc does not
// allocate and keeps no state, so it is safe for concurrent use.
type ChunkFunc func(block []byte, il int, out *[16]float32)

// Decoder returns the chunk decoder of t using strategy s: the function the
// mat-mat kernels instantiate for t (kernel_mul_mm_<t>_f32 and
// kernel_mul_mm_id_<t>_f32, ggml-metal.metal L11041–11118 at ggml d99724f), in
// its formulation. Only the five iq2/iq3 (codebook) types have two code paths;
// for the other types both strategies return the same function. Decoder panics
// on an invalid Type or Strategy.
func Decoder(t Type, s Strategy) ChunkFunc {
	if s >= numStrategies {
		panic(fmt.Sprintf("dequant: invalid Strategy(%d)", uint8(s)))
	}
	words := s == WordReads
	switch t {
	case F32:
		return decodeF32
	case F16:
		return decodeF16
	case BF16:
		return decodeBF16
	case Q4_0:
		return decodeQ4_0
	case Q8_0:
		return decodeQ8_0
	case IQ2_XXS:
		return pick(words, decodeIQ2XXSWords, decodeIQ2XXSBytes)
	case IQ2_XS:
		return pick(words, decodeIQ2XSWords, decodeIQ2XSBytes)
	case IQ2_S:
		return pick(words, decodeIQ2SWords, decodeIQ2SBytes)
	case IQ3_XXS:
		return pick(words, decodeIQ3XXSWords, decodeIQ3XXSBytes)
	case IQ3_S:
		return pick(words, decodeIQ3SWords, decodeIQ3SBytes)
	case Q4_1:
		return decodeQ4_1
	case Q5_0:
		return decodeQ5_0
	case Q5_1:
		return decodeQ5_1
	case Q1_0:
		return decodeQ1_0
	case Q2_0:
		return decodeQ2_0
	case MXFP4:
		return decodeMXFP4
	case IQ4_NL:
		return decodeIQ4NL
	case Q2_K:
		return decodeQ2K
	case Q3_K:
		return decodeQ3K
	case Q4_K:
		return decodeQ4K
	case Q5_K:
		return decodeQ5K
	case Q6_K:
		return decodeQ6K
	case TQ2_0:
		return decodeTQ2_0
	case IQ4_XS:
		return decodeIQ4XS
	case IQ1_S:
		return decodeIQ1S
	case IQ1_M:
		return decodeIQ1M
	}
	panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
}

func pick(words bool, w, b ChunkFunc) ChunkFunc {
	if words {
		return w
	}
	return b
}

// badChunk is the panic value for an il outside [0, t.Chunks()).
func badChunk(t Type, il int) string {
	return fmt.Sprintf("dequant: %s chunk index il = %d out of range [0, %d)", t, il, t.Chunks())
}

// halfAt widens the fp16 at b[off:] (a block scale), read with one 2-byte load.
func halfAt(b []byte, off int) float32 { return Float32FromHalf(devU16(b, off)) }

// roundedHalf is the shader's `h op` for a half operand h: the exact float32
// result f of the operation rounded once to half (what Metal computes in half
// precision, e.g. `xb->d / 16.h`), widened back to float32.
func roundedHalf(f float32) float32 { return Float32FromHalf(HalfFromFloat32(f)) }

// signed returns v * (bit != 0 ? -1 : 1) as Metal's `v * (signs & kmask ? -1.f : 1.f)`:
// for every non-NaN v multiplying by -1 is exactly flipping the sign bit (so +0
// becomes -0), which is what this does without a branch. (For a NaN the sign
// bit is flipped too; both strategies share this helper, so they agree.)
func signed(v float32, bit uint8) float32 {
	nz := uint32(bit) | -uint32(bit) // bit 31 set iff bit != 0
	return math.Float32frombits(math.Float32bits(v) ^ nz&0x80000000)
}

// parity7 is the WordReads replacement for ksigns_iq2xs[k] (k < 128): the seven
// stored sign bits plus an 8th bit that makes the count of set bits even.
func parity7(k uint32) uint8 {
	return uint8(k | uint32(bits.OnesCount32(k)&1)<<7)
}

// ---- passthrough types ----------------------------------------------------

// decodeF32 is dequantize_f32 (L91–94): the float4x4 read as 4 float4 loads.
func decodeF32(b []byte, il int, out *[16]float32) {
	if il != 0 {
		panic(badChunk(F32, il))
	}
	b = b[:64:64]
	for r := 0; r < 4; r++ {
		w := devU128(b, 16*r)
		for i := 0; i < 4; i++ {
			out[4*r+i] = math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
		}
	}
}

// decodeF16 is dequantize_f16 (L101–104): the half4x4 read as 2 16-byte loads.
func decodeF16(b []byte, il int, out *[16]float32) {
	if il != 0 {
		panic(badChunk(F16, il))
	}
	b = b[:32:32]
	w0, w1 := devU128(b, 0), devU128(b, 16)
	for i := 0; i < 8; i++ {
		out[i] = Float32FromHalf(binary.LittleEndian.Uint16(w0[2*i:]))
		out[8+i] = Float32FromHalf(binary.LittleEndian.Uint16(w1[2*i:]))
	}
}

// decodeBF16 is dequantize_bf16 (L112–115): the bfloat4x4 read as 2 16-byte
// loads, no arithmetic (the bf16 kernels stage the values as bfloat, unchanged).
func decodeBF16(b []byte, il int, out *[16]float32) {
	if il != 0 {
		panic(badChunk(BF16, il))
	}
	b = b[:32:32]
	w0, w1 := devU128(b, 0), devU128(b, 16)
	for i := 0; i < 8; i++ {
		out[i] = Float32FromBF16(binary.LittleEndian.Uint16(w0[2*i:]))
		out[8+i] = Float32FromBF16(binary.LittleEndian.Uint16(w1[2*i:]))
	}
}

// ---- q4_0, q8_0 -------------------------------------------------------------

// decodeQ4_0 is Metal's dequantize_q4_0 (L206–223), not ggml's CPU formula. The
// scale arithmetic happens in half: d1 = il ? half(d/16) : d, md = half(-8*d);
// then for each of the 8 uint16 words of qs, masked with mask0 = il ? 0x00F0 :
// 0x000F (low byte) and mask1 = mask0<<8 (high byte):
//
//	out[2i]   = d1       * float(qs[i] & mask0) + md
//	out[2i+1] = (d1/256) * float(qs[i] & mask1) + md
//
// The products are exact, so a fused multiply-add gives the same result; the
// float32() conversions below only keep Go from fusing on some platforms.
func decodeQ4_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q4_0, il))
	}
	b = b[:18:18]
	d := halfAt(b, 0)
	d1, mask0 := d, uint16(0x000F)
	if il != 0 {
		// d/16 is exact in float32; rounding it once is the half division.
		d1, mask0 = roundedHalf(d/16), 0x00F0
	}
	d2 := d1 / 256
	md := roundedHalf(-8 * d)
	mask1 := mask0 << 8
	for i := 0; i < 8; i++ {
		q := devU16(b, 2+2*i)
		out[2*i] = float32(d1*float32(q&mask0)) + md
		out[2*i+1] = float32(d2*float32(q&mask1)) + md
	}
}

// decodeQ8_0 is Metal's dequantize_q8_0 (L657–669): 4 packed_char4 loads at
// qs + 16*il, float(qs[16*il + i]) * d.
func decodeQ8_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q8_0, il))
	}
	b = b[:34:34]
	d := halfAt(b, 0)
	q := b[2+16*il:][:16] // the 16 bytes of the chunk
	for r := 0; r < 4; r++ {
		for i, v := range devBytes4(q, 4*r) {
			out[4*r+i] = float32(int8(v)) * d
		}
	}
}
