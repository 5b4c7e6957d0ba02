package dequant

import (
	"math"
	"math/bits"
)

// HalfFromFloat32 rounds f to IEEE-754 binary16 and returns its bit pattern, as
// ggml_fp32_to_fp16 does: round to nearest, ties to even (also into and out of
// the subnormal range); magnitudes that round above 65504 become ±inf; every NaN
// becomes 0x7e00 with the sign of f.
func HalfFromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 // unbiased exponent of a normal float (meaningless for exp == 0, handled below)
	if e > 15 {
		return sign | 0x7c00
	}
	if e >= -14 {
		// Normal half: keep 10 of the 23 mantissa bits. A carry out of the
		// mantissa increments the exponent, and from 0x7bff lands on inf: both right.
		h := uint16(e+15)<<10 | uint16(mant>>13)
		rem := mant & 0x1fff
		if rem > 0x1000 || rem == 0x1000 && h&1 != 0 {
			h++
		}
		return sign | h
	}
	if exp == 0 {
		// Float subnormals (< 2^-126) are far below half's smallest subnormal 2^-24.
		return sign
	}
	// Subnormal half: value = m * 2^(e-23) with the implicit bit restored; the
	// half's unit is 2^-24, so keep m >> s with s = -1 - e (s >= 14).
	m := uint64(mant | 0x800000)
	s := uint(-1 - e)
	if s > 25 {
		return sign
	}
	h := m >> s
	rem := m & (1<<s - 1)
	half := uint64(1) << (s - 1)
	if rem > half || rem == half && h&1 != 0 {
		h++
	}
	return sign | uint16(h)
}

// Float32FromHalf widens the binary16 pattern h to float32 exactly. Infinities
// stay infinite; a NaN keeps its sign, gets the quiet bit set and its 10-bit
// payload shifted left by 13 (ggml's fp16→fp32, golden tables/fp16_to_fp32.txt).
func Float32FromHalf(h uint16) float32 {
	if e := h & 0x7c00; e != 0 && e != 0x7c00 {
		// Normal: rebias the exponent by 127-15 = 112 and widen the mantissa.
		return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)+112<<10)<<13)
	}
	return float32FromHalfSpecial(h)
}

// float32FromHalfSpecial widens zeros, subnormals, infinities and NaNs (kept out
// of Float32FromHalf so that the common path inlines).
func float32FromHalfSpecial(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	mant := uint32(h & 0x3ff)
	switch {
	case h&0x7c00 != 0: // exponent 31
		if mant == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: mant * 2^-24 with the leading one at bit p (0..9) becomes
	// 1.f * 2^(p-24): float exponent field p-24+127.
	p := uint32(31 - bits.LeadingZeros32(mant))
	return math.Float32frombits(sign | (p+103)<<23 | (mant<<(23-p))&0x7fffff)
}

// RoundHalf rounds f to the nearest binary16 value (HalfFromFloat32) and returns
// it widened back to float32: the value a Metal kernel stores when it writes f
// into a half.
//
// Values whose result is a normal half are rounded in place on the float32 bit
// pattern (round to nearest even at bit 13, the carry moving into the exponent
// when the mantissa overflows); everything else (zero, subnormal results,
// overflow, infinities, NaN) takes the exact conversion path. The emulator calls
// this for every staged value, so the fast path matters.
func RoundHalf(f float32) float32 {
	b := math.Float32bits(f)
	e := b >> 23 & 0xff
	// 113 <= e <= 141: |f| in [2^-14, 2^15), whose rounding stays a normal half
	// unless it carries to 2^16 (checked below)
	if e >= 113 && e <= 141 {
		r := b + 0xfff + (b >> 13 & 1)
		r &^= 0x1fff
		return math.Float32frombits(r)
	}
	return Float32FromHalf(HalfFromFloat32(f))
}

// BF16FromFloat32 rounds f to bfloat16 (the upper half of a binary32) and returns
// its bit pattern, as ggml_compute_fp32_to_bf16 does (ggml-impl.h L611–624 at
// ggml d99724f): round to nearest, ties to even, by adding 0x7fff plus the lowest
// kept bit (finite values that round past the largest bfloat become ±inf); a NaN
// keeps its sign and top payload bits and is made quiet (bit 6 set).
func BF16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b >> 16 & 1)) >> 16)
}

// Float32FromBF16 widens the bfloat16 pattern h to float32 exactly: the 16 bits
// become the upper half of the binary32 (ggml_compute_bf16_to_fp32), so every
// NaN keeps its sign and payload.
func Float32FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 rounds f to the nearest bfloat16 value (BF16FromFloat32) and returns
// it widened back to float32: the value the bf16 mat-mat kernels store when they
// stage f as bfloat.
func RoundBF16(f float32) float32 { return Float32FromBF16(BF16FromFloat32(f)) }
