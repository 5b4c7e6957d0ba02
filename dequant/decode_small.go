package dequant

import "math"

// The block types of 32 to 128 weights besides q4_0/q8_0: Metal's
// dequantize_<type> (ggml-metal.metal at ggml d99724f; line ranges per function
// below). The shader computes each value in float32 (a few scale steps in half)
// and the kernel stores it as half; these functions return the float32 value.
// Every product below is exact in float32, so a fused multiply-add could not
// change a result; the float32() conversions only keep Go from fusing.

// kvaluesIQ4NLF is the shader's kvalues_iq4nl_f (L46–48): kvalues_iq4nl as floats.
var kvaluesIQ4NLF = floatTable(kvaluesIQ4NL, 1)

// kvaluesMXFP4F is the shader's kvalues_mxfp4_f (L50–52): the E2M1 values, half
// of kvalues_mxfp4; entry 8 is +0 (written as the integer -0 in the shader).
var kvaluesMXFP4F = floatTable(kvaluesMXFP4, 2)

func floatTable(t [16]int8, div float32) [16]float32 {
	var f [16]float32
	for i, v := range t {
		f[i] = float32(v) / div
	}
	return f
}

// canonicalNaN is the NaN the Metal-form decoders write where the shader's
// arithmetic makes one (inf * 0): the quiet NaN 0x7fc00000, the same on every
// platform (Go's float multiply returns the host's default NaN, whose sign
// differs between amd64 and arm64).
const canonicalNaN = 0x7fc00000

// decodeQ4_1 is dequantize_q4_1 (L499–516): as q4_0 without the -8 offset, plus
// the block minimum m; for il = 1 the scale is half(d/16), rounded in half:
//
//	out[2i]   = float(qs[i] & mask0) * d1        + m
//	out[2i+1] = float(qs[i] & mask1) * (d1/256)  + m
func decodeQ4_1(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q4_1, il))
	}
	b = b[:20:20]
	d1, mask0 := halfAt(b, 0), uint16(0x000F)
	if il != 0 {
		d1, mask0 = roundedHalf(d1/16), 0x00F0
	}
	d2 := d1 / 256
	m := halfAt(b, 2)
	mask1 := mask0 << 8
	for i := 0; i < 8; i++ {
		q := devU16(b, 4+2*i)
		out[2*i] = float32(float32(q&mask0)*d1) + m
		out[2*i+1] = float32(float32(q&mask1)*d2) + m
	}
}

// q5Codes returns the 16 five-bit codes of chunk il of a q5_0/q5_1 block whose
// qh word is at qhOff and qs at qsOff, as dequantize_q5_0/_q5_1 (L533–563,
// L595–625) assemble them: the nibble il of byte j of qs, with bit 16*il + j of
// qh as the fifth bit.
func q5Codes(b []byte, il, qhOff, qsOff int) [16]int32 {
	qh := devU32(b, qhOff)
	mask, xmv, ghmv, ghbk := uint16(0x000F), 0, 0, 4
	if il != 0 {
		mask, xmv, ghmv, ghbk = 0x00F0, 4, 12, 0
	}
	var x [16]int32
	for i := 0; i < 8; i++ {
		q := devU16(b, qsOff+2*i)
		xh0 := uint8(qh >> (ghmv + 2*i) << ghbk & 0x10)
		xh1 := uint8(qh >> (ghmv + 2*i + 1) << ghbk & 0x10)
		x[2*i] = int32(q&mask>>xmv) | int32(xh0)
		x[2*i+1] = int32(q>>8&mask>>xmv) | int32(xh1)
	}
	return x
}

// decodeQ5_0 is dequantize_q5_0 (L533–563): d times the unsigned 5-bit code plus
// md = half(-16*d), computed in half (it overflows to -inf*sign(d) for |d| > 4094).
func decodeQ5_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q5_0, il))
	}
	b = b[:22:22]
	d := halfAt(b, 0)
	md := roundedHalf(-16 * d)
	x := q5Codes(b, il, 2, 6)
	for i, c := range x {
		out[i] = float32(d*float32(c)) + md
	}
}

// decodeQ5_1 is dequantize_q5_1 (L595–625): d times the 5-bit code plus m.
func decodeQ5_1(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q5_1, il))
	}
	b = b[:24:24]
	d, m := halfAt(b, 0), halfAt(b, 2)
	x := q5Codes(b, il, 4, 8)
	for i, c := range x {
		out[i] = float32(d*float32(c)) + m
	}
}

// decodeQ1_0 is dequantize_q1_0 (L123–154): bytes qs[2il], qs[2il+1]; weight i
// is +d if bit i%8 of byte i/8 is set, else -d (a sign flip, so d = +0 gives -0).
func decodeQ1_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 7 {
		panic(badChunk(Q1_0, il))
	}
	b = b[:18:18]
	d := halfAt(b, 0)
	negD := -d
	for k := 0; k < 2; k++ {
		q := devU8(b, 2+2*il+k)
		for i := 0; i < 8; i++ {
			v := negD
			if q>>i&1 != 0 {
				v = d
			}
			out[8*k+i] = v
		}
	}
}

// decodeQ2_0 is dequantize_q2_0 (L173–190): bytes qs[4il .. 4il+3], four 2-bit
// codes each, (float(code) - 1) * d.
func decodeQ2_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 3 {
		panic(badChunk(Q2_0, il))
	}
	b = b[:18:18]
	d := halfAt(b, 0)
	for k := 0; k < 4; k++ {
		q := devU8(b, 2+4*il+k)
		for j := 0; j < 4; j++ {
			out[4*k+j] = (float32(q>>(2*j)&3) - 1) * d
		}
	}
}

// decodeMXFP4 is dequantize_mxfp4 (L679–692): d = e8m0_to_fp32(e) (L66–76:
// 2^(e-127); e = 0 the subnormal 2^-127, e = 255 +inf) times the E2M1 value of
// nibble il of byte i, read from the constant table kvalues_mxfp4_f.
func decodeMXFP4(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(MXFP4, il))
	}
	b = b[:17:17]
	e := devU8(b, 0)
	d := math.Float32frombits(e8m0ToFP32[e])
	shr := 4 * uint(il)
	for i := 0; i < 16; i++ {
		out[i] = d * fromConstF32(&kvaluesMXFP4F[devU8(b, 1+i)>>shr&15])
	}
	if e == 0xff { // d = +inf: the zero codes give inf * 0
		for i, v := range out {
			if v != v {
				out[i] = math.Float32frombits(canonicalNaN)
			}
		}
	}
}

// iq4Chunk writes d times kvalues_iq4nl_f[nibble sh/4 of byte i] for the 16
// bytes given as four little-endian words (iq4_nl and iq4_xs, L1002–1048).
func iq4Chunk(out *[16]float32, d float32, w [4]uint32, sh uint) {
	for r, v := range w {
		a := v >> sh & 0x0f0f0f0f
		for k := 0; k < 4; k++ {
			out[4*r+k] = d * fromConstF32(&kvaluesIQ4NLF[a>>(8*k)&15])
		}
	}
}

// decodeIQ4NL is dequantize_iq4_nl (L1002–1015): the 8 uint16 of qs read in
// pairs, nibble il of byte i, d times the level.
func decodeIQ4NL(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(IQ4_NL, il))
	}
	b = b[:18:18]
	d := halfAt(b, 0)
	var w [4]uint32
	for r := range w {
		w[r] = uint32(devU16(b, 2+4*r)) | uint32(devU16(b, 4+4*r))<<16
	}
	iq4Chunk(out, d, w, 4*uint(il))
}
