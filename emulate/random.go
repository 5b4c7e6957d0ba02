package emulate

import (
	"math"
	"math/rand/v2"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// RandomTensors makes deterministic operands for a problem: random weight blocks
// whose fp16 scale d (the first two bytes of every quantized block) lies in
// [2^-8, 2^-4), f16/f32 weights and activations uniform in [-1, 1), and the
// uniform distinct routing test-backend-ops draws.
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
	case dequant.F16:
		for off := 0; off+1 < len(w); off += 2 {
			h := dequant.HalfFromFloat32(float32(rng.Float64()*2 - 1))
			w[off], w[off+1] = byte(h), byte(h>>8)
		}
	default:
		for i := range w {
			w[i] = byte(rng.Uint32())
		}
		bb := p.TypeA.Layout().BlockBytes
		for off := 0; off < len(w); off += bb {
			h := dequant.HalfFromFloat32(float32(math.Ldexp(1+rng.Float64(), -8+rng.IntN(4))))
			w[off], w[off+1] = byte(h), byte(h>>8)
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
