package dequant

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"
)

func TestHalfFromFloat32Cases(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"+0", 0, 0x0000},
		{"-0", float32(math.Copysign(0, -1)), 0x8000},
		{"1", 1, 0x3c00},
		{"-2", -2, 0xc000},
		{"max half", 65504, 0x7bff},
		{"below overflow tie", 65519.996, 0x7bff},
		{"overflow tie rounds to inf", 65520, 0x7c00},
		{"big", 1e10, 0x7c00},
		{"-big", -1e10, 0xfc00},
		{"+inf", float32(math.Inf(1)), 0x7c00},
		{"-inf", float32(math.Inf(-1)), 0xfc00},
		{"NaN", math.Float32frombits(0x7fc00001), 0x7e00},
		{"-NaN", math.Float32frombits(0xffa00000), 0xfe00},
		{"signalling NaN", math.Float32frombits(0x7f800001), 0x7e00},
		{"min normal", 0x1p-14, 0x0400},
		{"max subnormal", 0x3ffp-24, 0x03ff},
		{"min subnormal", 0x1p-24, 0x0001},
		{"half of min subnormal ties to 0", 0x1p-25, 0x0000},
		{"just above half of min subnormal", math.Nextafter32(0x1p-25, 1), 0x0001},
		{"1.5 min subnormal ties to even (2)", 0x3p-25, 0x0002},
		{"2.5 min subnormal ties to even (2)", 0x5p-25, 0x0002},
		{"float subnormal", math.Float32frombits(1), 0x0000},
		{"-float subnormal", -math.Float32frombits(1), 0x8000},
		{"1 + 2^-11 ties to even (1)", 1 + 0x1p-11, 0x3c00},
		{"1 + 3*2^-11 ties to even (1+2^-9)", 1 + 0x3p-11, 0x3c02},
		{"subnormal-normal boundary rounds up", 0x1p-14 - 0x1p-26, 0x0400},
		{"one third", 1.0 / 3, 0x3555},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HalfFromFloat32(tc.in); got != tc.want {
				t.Errorf("HalfFromFloat32(%g = %#08x) = %#04x, want %#04x", tc.in, math.Float32bits(tc.in), got, tc.want)
			}
		})
	}
}

// TestHalfFromFloat32Golden checks ggml's own fp32 -> fp16 and fp32 -> bf16
// results (the conversion entries of both golden copies).
func TestHalfFromFloat32Golden(t *testing.T) {
	seen := 0
	for _, set := range testSets {
		for _, e := range readTestManifest(t, set) {
			if e.Variant != "conversion" {
				continue
			}
			seen++
			dir := filepath.Join(set, "dequant")
			in := float32s(readTestFile(t, dir, e.InputF32))
			conv, outDesc := HalfFromFloat32, e.OutputF16
			if e.OutputBF16 != nil {
				conv, outDesc = BF16FromFloat32, e.OutputBF16
			}
			out := readTestFile(t, dir, outDesc)
			if len(in) != e.Count || len(out) != 2*e.Count {
				t.Fatalf("%s: %d inputs, %d output bytes, count %d", e.Name, len(in), len(out), e.Count)
			}
			bad := 0
			for i, f := range in {
				want := binary.LittleEndian.Uint16(out[2*i:])
				if got := conv(f); got != want {
					if bad++; bad <= 10 {
						t.Errorf("%s[%d]: conversion of %#08x = %#04x, want %#04x", e.Name, i, math.Float32bits(f), got, want)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d conversions differ", e.Name, bad, len(in))
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d conversion entries in the test manifests, want 2 (fp32_to_fp16, fp32_to_bf16)", seen)
	}
}

// widenDirect is an independent formula for binary16 -> binary32.
func widenDirect(h uint16) uint32 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&31), float64(h&0x3ff)
	switch {
	case e == 31 && m == 0:
		return math.Float32bits(float32(math.Inf(int(sign))))
	case e == 31:
		return uint32(h&0x8000)<<16 | 0x7fc00000 | uint32(h&0x3ff)<<13
	case e == 0:
		return math.Float32bits(float32(sign * math.Ldexp(m, -24)))
	}
	return math.Float32bits(float32(sign * math.Ldexp(1024+m, e-25)))
}

func TestFloat32FromHalfAll(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := math.Float32bits(Float32FromHalf(h))
		if want := widenDirect(h); got != want {
			t.Fatalf("Float32FromHalf(%#04x) = %#08x, want %#08x", h, got, want)
		}
		// Every non-NaN half survives the round trip.
		if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
			if back := HalfFromFloat32(Float32FromHalf(h)); back != h {
				t.Fatalf("HalfFromFloat32(Float32FromHalf(%#04x)) = %#04x", h, back)
			}
		}
	}
}

// TestHalfFromFloat32Exhaustive compares, for every 2^16-th float32 pattern
// plus neighbourhoods of every half boundary, against rounding in float64.
func TestHalfFromFloat32Exhaustive(t *testing.T) {
	check := func(b uint32) {
		f := math.Float32frombits(b)
		got := HalfFromFloat32(f)
		if f != f {
			if got&0x7fff != 0x7e00 || got&0x8000 != uint16(b>>16)&0x8000 {
				t.Fatalf("HalfFromFloat32(NaN %#08x) = %#04x", b, got)
			}
			return
		}
		want := float32(roundHalf64(float64(f)))
		if math.Float32bits(Float32FromHalf(got)) != math.Float32bits(want) {
			t.Fatalf("HalfFromFloat32(%#08x = %g) = %#04x, float64 rounding gives %g", b, f, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 1 << 16 {
		check(uint32(b))
	}
	for h := uint32(0); h < 0x7c00; h++ {
		c := math.Float32bits(Float32FromHalf(uint16(h)))
		for _, s := range []uint32{0, 0x80000000} {
			for d := uint32(0); d < 4; d++ {
				check((c | s) + d)
				check((c | s) - d)
				check((c | s) + 1<<12 - d) // around the midpoint to the next half
				check((c | s) + 1<<12 + d)
			}
		}
	}
}

func TestRoundHalf(t *testing.T) {
	tests := []struct{ in, want float32 }{
		{1, 1},
		{0.1, 0.0999755859375},
		{70000, float32(math.Inf(1))},
		{-1e-9, float32(math.Copysign(0, -1))},
	}
	for _, tc := range tests {
		if got := RoundHalf(tc.in); math.Float32bits(got) != math.Float32bits(tc.want) {
			t.Errorf("RoundHalf(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

// TestRoundHalfFastPath compares the in-place rounding with the exact
// conversion on every float32 whose exponent takes the fast path near the half
// boundaries (every half value, its neighbours and midpoints) and on random bits.
func TestRoundHalfFastPath(t *testing.T) {
	slow := func(f float32) float32 { return Float32FromHalf(HalfFromFloat32(f)) }
	check := func(b uint32) {
		f := math.Float32frombits(b)
		if got, want := RoundHalf(f), slow(f); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("RoundHalf(%#08x = %g) = %#08x, want %#08x", b, f, math.Float32bits(got), math.Float32bits(want))
		}
	}
	for h := uint32(0); h < 1<<16; h++ {
		c := math.Float32bits(Float32FromHalf(uint16(h)))
		for _, d := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff} {
			check(c + d)
			check(c - d)
		}
	}
	rng := uint64(88172645463325252)
	for i := 0; i < 1<<22; i++ {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		check(uint32(rng))
	}
}

// TestBF16FromFloat32 checks hand-picked cases of ggml_compute_fp32_to_bf16's
// rule (the golden conversion entry checks 512 more).
func TestBF16FromFloat32(t *testing.T) {
	tests := []struct {
		in   uint32 // float32 bits
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x80000000, 0x8000}, // -0
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // max float rounds to inf
		{0x00000001, 0x0000}, // the smallest subnormal rounds to +0
		{0x7f800001, 0x7fc0}, // signalling NaN made quiet
		{0xffa00000, 0xffe0}, // negative NaN keeps sign and payload, quiet bit set
	}
	for _, tc := range tests {
		f := math.Float32frombits(tc.in)
		if got := BF16FromFloat32(f); got != tc.want {
			t.Errorf("BF16FromFloat32(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
		if got := math.Float32bits(Float32FromBF16(tc.want)); got != uint32(tc.want)<<16 {
			t.Errorf("Float32FromBF16(%#04x) = %#08x", tc.want, got)
		}
	}
}
