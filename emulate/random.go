package emulate

import (
	"math"
	"math/rand/v2"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// RandomTensors makes deterministic operands for a problem: f16, bf16 and f32
// weights and the activations uniform in [-1, 1); quantized blocks of random
// bytes whose scale fields are set where the type's layout puts them
// (scaleFields) to values that keep every weight finite: an fp16 scale in
// [2^-8, 2^-4), an fp16 min of either sign in the same range, mxfp4's E8M0
// byte for 2^-8 .. 2^-5; and the uniform distinct routing test-backend-ops
// draws.
func RandomTensors(p tile.Problem, seed uint64) *Tensors {
	rng := rand.New(rand.NewPCG(seed, 0x74656e73))
	rb, _ := p.TypeA.RowBytes(p.K)
	w := make([]byte, p.Experts*p.M*rb)
	switch p.TypeA {
	case dequant.F32:
		for off := 0; off+3 < len(w); off += 4 {
			b := math.Float32bits(float32(rng.Float64()*2 - 1))
			w[off], w[off+1], w[off+2], w[off+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
		}
	case dequant.F16, dequant.BF16:
		for off := 0; off+1 < len(w); off += 2 {
			v := float32(rng.Float64()*2 - 1)
			h := dequant.HalfFromFloat32(v)
			if p.TypeA == dequant.BF16 {
				h = dequant.BF16FromFloat32(v)
			}
			w[off], w[off+1] = byte(h), byte(h>>8)
		}
	default:
		for i := range w {
			w[i] = byte(rng.Uint32())
		}
		sf := scaleFields(p.TypeA)
		bb := p.TypeA.Layout().BlockBytes
		for off := 0; off < len(w); off += bb {
			sf.write(w[off:off+bb], rng)
		}
	}
	src1 := make([]float32, p.Tokens*p.SrcRows()*p.K)
	for i := range src1 {
		v := float32(rng.Float64()*2 - 1)
		if p.HalfB {
			v = dequant.RoundHalf(v)
		}
		src1[i] = v
	}
	return &Tensors{Weights: w, Src1: src1, IDs: routing.UniformIDs(p, seed)}
}

// blockScales are the scale fields of a quantized block: byte offsets of the
// fp16 scale d and of the fp16 mins (none: -1), mxfp4's E8M0 byte, iq1_m's
// scale split over the top nibbles of its four scale words.
type blockScales struct {
	d, min   int
	e8m0     bool
	splitAt  int // iq1_m: the scales[8] field read as four uint16 (0: none)
	hasSplit bool
}

// scaleFields returns where a type's block keeps its scales (ggml-common.h at
// ggml d99724f, as docs/kernel-facts-types.md §1.1 lists them).
func scaleFields(t dequant.Type) blockScales {
	switch t {
	case dequant.Q4_1, dequant.Q5_1, dequant.Q4_K, dequant.Q5_K:
		return blockScales{d: 0, min: 2} // d, m (q4_1, q5_1) or dmin (q4_K, q5_K)
	case dequant.Q2_K:
		return blockScales{d: 80, min: 82}
	case dequant.Q3_K:
		return blockScales{d: 108, min: -1}
	case dequant.Q6_K:
		return blockScales{d: 208, min: -1}
	case dequant.TQ2_0:
		return blockScales{d: 64, min: -1}
	case dequant.MXFP4:
		return blockScales{d: -1, min: -1, e8m0: true}
	case dequant.IQ1_M:
		return blockScales{d: -1, min: -1, splitAt: 48, hasSplit: true}
	}
	return blockScales{d: 0, min: -1} // d first: q4_0, q5_0, q8_0, q1_0, q2_0, iq1_s, iq2/iq3, iq4_nl, iq4_xs
}

// scale draws an fp16 value in [2^-8, 2^-4).
func scale(rng *rand.Rand) uint16 {
	return dequant.HalfFromFloat32(float32(math.Ldexp(1+rng.Float64(), -8+rng.IntN(4))))
}

func put16(b []byte, off int, h uint16) { b[off], b[off+1] = byte(h), byte(h>>8) }

// write sets one block's scale fields.
func (s blockScales) write(b []byte, rng *rand.Rand) {
	switch {
	case s.e8m0:
		b[0] = byte(127 - 8 + rng.IntN(4)) // 2^(e-127) in the shader: 2^-8 .. 2^-5
		return
	case s.hasSplit:
		h := scale(rng)
		for i := 0; i < 4; i++ { // nibble i of the fp16 scale in the top nibble of word i
			o := s.splitAt + 2*i
			w := uint16(b[o]) | uint16(b[o+1])<<8
			put16(b, o, w&0x0fff|(h>>(4*i)&0xf)<<12)
		}
		return
	}
	put16(b, s.d, scale(rng))
	if s.min >= 0 {
		m := scale(rng)
		if rng.IntN(2) == 1 {
			m |= 0x8000
		}
		put16(b, s.min, m)
	}
}
