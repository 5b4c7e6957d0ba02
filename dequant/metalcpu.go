package dequant

import (
	"encoding/binary"
	"math"
)

// MetalDifference says how a Metal-form value (Decoder) relates to ggml's CPU
// value (CPUDecoder) of the same weight: docs/kernel-facts-types.md §1.1 (and
// K7.2 of docs/kernel-facts.md for q4_0), read from ggml d99724f.
type MetalDifference uint8

const (
	// BitExact: the same 32 bits.
	BitExact MetalDifference = iota
	// ZeroSign: Metal +0 where the CPU has -0. The shaders of q4_0, q5_0, q3_K,
	// q6_K, iq1_s and iq1_m add a precomputed offset term (scale times code plus
	// -offset times scale) where the CPU multiplies the scale by (code - offset),
	// so an exact zero comes out +0 whatever the signs.
	ZeroSign
	// ScaleStep: a scale step the shader does in half precision (q4_0's and
	// q4_1's d/16 and q4_0's -8d, q4_K's d/16 for the high nibbles, q5_0's -16d)
	// or through e8m0's +inf (mxfp4, e = 255) is inexact for this block, and the
	// value equals an independent float64 model of the shader's formula.
	ScaleStep
	// Unexplained: none of the above; a bug in one of the two forms.
	Unexplained
)

// String returns "bit-exact", "sign of zero", "scale step" or "unexplained".
func (d MetalDifference) String() string {
	switch d {
	case BitExact:
		return "bit-exact"
	case ZeroSign:
		return "sign of zero"
	case ScaleStep:
		return "scale step"
	}
	return "unexplained"
}

// zeroSignTypes are the types whose shader adds an offset term (ZeroSign).
var zeroSignTypes = [numTypes]bool{Q4_0: true, Q5_0: true, Q3_K: true, Q6_K: true, IQ1_S: true, IQ1_M: true}

// metalModel computes, in float64 with explicit half roundings, the shader's
// value of weight 16*il + j of a block, and whether the chunk's scale steps are
// exact (then the value equals the CPU's, zero signs aside, and the model is not
// consulted).
type metalModel func(b []byte, il, j int) (v float32, exact bool)

var metalModels = [numTypes]metalModel{Q4_0: modelQ4_0, Q4_1: modelQ4_1, Q4_K: modelQ4K, Q5_0: modelQ5_0, MXFP4: modelMXFP4}

// CompareMetal classifies metal, the Metal-form value of weight 16*il + j of
// block (a block of t), against cpu, ggml's CPU value of the same weight.
func CompareMetal(t Type, block []byte, il, j int, metal, cpu float32) MetalDifference {
	mb, cb := math.Float32bits(metal), math.Float32bits(cpu)
	if mb == cb {
		return BitExact
	}
	if model := metalModels[t]; model != nil {
		v, exact := model(block, il, j)
		if !exact {
			if vb := math.Float32bits(v); vb == mb || v != v && metal != metal {
				return ScaleStep
			}
			return Unexplained
		}
	}
	if zeroSignTypes[t] && cpu == 0 && mb == 0 {
		return ZeroSign
	}
	return Unexplained
}

// roundHalf64 rounds x to binary16 (nearest, ties to even; above 65504 to
// ±inf) in float64 arithmetic, independently of HalfFromFloat32's bit
// manipulation.
func roundHalf64(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	a := math.Abs(x)
	quantum := 0x1p-24
	if a >= 0x1p-14 {
		_, e := math.Frexp(a)
		quantum = math.Ldexp(1, e-11)
	}
	r := math.RoundToEven(a/quantum) * quantum
	if r > 65504 {
		r = math.Inf(1)
	}
	return math.Copysign(r, x)
}

func half64(b []byte, off int) float64 {
	return float64(Float32FromHalf(binary.LittleEndian.Uint16(b[off:])))
}

// nibble returns nibble il of byte off of b.
func nibble(b []byte, off, il int) int { return int(b[off] >> (4 * il) & 15) }

// The float64 sums below are exact (both terms are multiples of 2^-28 far below
// 2^24), so the float32 conversion is the single rounding the shader's float32
// arithmetic performs.

// modelQ4_0: half(d/16) * 16q + half(-8d) for il = 1, d*q + half(-8d) for il = 0.
func modelQ4_0(b []byte, il, j int) (float32, bool) {
	d := half64(b, 0)
	d1, x := d, float64(nibble(b, 2+j, il))
	if il == 1 {
		d1, x = roundHalf64(d/16), 16*x
	}
	md := roundHalf64(-8 * d)
	return float32(d1*x + md), !math.IsInf(md, 0) && (il == 0 || d1 == d/16)
}

// modelQ4_1: 16q * half(d/16) + m for il = 1.
func modelQ4_1(b []byte, il, j int) (float32, bool) {
	d, m := half64(b, 0), half64(b, 2)
	d1, x := d, float64(nibble(b, 4+j, il))
	if il == 1 {
		d1, x = roundHalf64(d/16), 16*x
	}
	return float32(d1*x + m), il == 0 || d1 == d/16
}

// modelQ4K: half(d/16) * sc * 16q - dmin * mn for the high nibbles (il%4 >= 2).
func modelQ4K(b []byte, il, j int) (float32, bool) {
	c, hi := il/4, il&3 >= 2
	sc, mn := cpuScaleMinK4(2*c+btoi(hi), b[4:16])
	d, dmin := half64(b, 0), half64(b, 2)
	q := int(b[16+32*c+16*(il&1)+j])
	x := float64(q & 15)
	if hi {
		d, x = roundHalf64(d/16), float64(q&0xF0)
	}
	exact := !hi || d == half64(b, 0)/16
	return float32(d*float64(sc)*x - dmin*float64(mn)), exact
}

// modelQ5_0: d * code + half(-16d) (the half product overflows for |d| > 4094).
func modelQ5_0(b []byte, il, j int) (float32, bool) {
	d := half64(b, 0)
	x0, x1 := q5Fifth(b, 2, 6, j)
	x := float64(x0)
	if il == 1 {
		x = float64(x1)
	}
	md := roundHalf64(-16 * d)
	return float32(d*x + md), !math.IsInf(md, 0)
}

// modelMXFP4: 2^(e-127) * E2M1 value; the scale is +inf for e = 255, which makes
// inf * 0 = NaN for the two zero codes.
func modelMXFP4(b []byte, il, j int) (float32, bool) {
	e := int(b[0])
	v := float64(kvaluesMXFP4[nibble(b, 1+j, il)]) / 2
	if e == 255 {
		return float32(math.Inf(1) * v), false
	}
	return float32(math.Ldexp(v, e-127)), true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
