package golden

import (
	"math"
	"runtime"
	"sync"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/tile"
)

// DecodeForm selects the dequantizer a reference decodes the weights with.
type DecodeForm uint8

const (
	// MetalForm is dequant.Decoder (byte reads): the weights the kernel stages.
	MetalForm DecodeForm = iota
	// CPUForm is dequant.CPUDecoder: ggml's to_float, what the golden sets'
	// ref_* files were summed from.
	CPUForm
)

// References are the float64 references of a problem: F64 sums w·b, F16In sums
// h(w)·h(b) with h = rounding to half, Staged sums s(w)·s(b) with s the kernel's
// staging rounding (Type.RoundStaged: half, for bf16 bfloat; Staged is F16In
// for every other type), each rounded once to float32; SumAbs holds Σ|s(w)·s(b)|
// per output for the tolerance. w is the weights as the chosen DecodeForm
// decodes them.
type References struct {
	F64, F16In, Staged []float32
	SumAbs             []float64
}

// Reference computes the references of a problem from the Metal-form
// dequantizers (ReferenceWith MetalForm).
func Reference(p tile.Problem, t *emulate.Tensors) References { return ReferenceWith(p, t, MetalForm) }

// ReferenceWith computes the references of a problem in float64 with the
// weights decoded in form, output order dst[(t*Used+s)*M + r]. Each expert row
// is decoded once for all the pairs routed to its expert, and experts are spread
// over GOMAXPROCS goroutines; every output is one k-ordered sum, so the result
// does not depend on either.
func ReferenceWith(p tile.Problem, t *emulate.Tensors, form DecodeForm) References {
	rb, _ := p.TypeA.RowBytes(p.K)
	bf := p.TypeA.StagesBFloat()
	n := p.Tokens * p.Used * p.M
	out := References{F64: make([]float32, n), F16In: make([]float32, n), SumAbs: make([]float64, n)}
	out.Staged = out.F16In
	if bf {
		out.Staged = make([]float32, n)
	}
	// activations, rounded to half and staged, per source row
	srcRows := p.Tokens * p.SrcRows()
	b64 := make([]float64, srcRows*p.K)
	bH := make([]float64, srcRows*p.K)
	bS := bH
	if bf {
		bS = make([]float64, srcRows*p.K)
	}
	for i, v := range t.Src1[:srcRows*p.K] {
		b64[i], bH[i], bS[i] = float64(v), float64(dequant.RoundHalf(v)), float64(p.TypeA.RoundStaged(v))
	}
	pairs := make([][]int, p.Experts) // (token, slot) pairs by expert
	for pair, e := range t.IDs[:p.Tokens*p.Used] {
		pairs[e] = append(pairs[e], pair)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), p.Experts))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			decodeRow := rowDecoder(p.TypeA, form, p.K)
			w32 := make([]float32, p.K)
			w64 := make([]float64, p.K)
			wH := make([]float64, p.K)
			wS := wH
			if bf {
				wS = make([]float64, p.K)
			}
			for e := w; e < p.Experts; e += workers {
				if len(pairs[e]) == 0 {
					continue
				}
				for r := 0; r < p.M; r++ {
					decodeRow(t.Weights[(e*p.M+r)*rb:][:rb], w32)
					for k, v := range w32 {
						w64[k], wH[k], wS[k] = float64(v), float64(dequant.RoundHalf(v)), float64(p.TypeA.RoundStaged(v))
					}
					for _, pair := range pairs[e] {
						tok, s := pair/p.Used, pair%p.Used
						src := (tok*p.SrcRows() + s%p.SrcRows()) * p.K
						b, bh, bs := b64[src:][:p.K], bH[src:][:p.K], bS[src:][:p.K]
						var s64, sh, ss, sa float64
						for k := range w64 {
							s64 += w64[k] * b[k]
							h := wH[k] * bh[k]
							sh += h
							if bf {
								h = wS[k] * bs[k]
								ss += h
							}
							sa += math.Abs(h)
						}
						o := pair*p.M + r
						out.F64[o], out.F16In[o], out.SumAbs[o] = float32(s64), float32(sh), sa
						if bf {
							out.Staged[o] = float32(ss)
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	return out
}

// rowDecoder returns a function decoding one row of k weights of type t (rb
// bytes) in form.
func rowDecoder(t dequant.Type, form DecodeForm, k int) func(row []byte, out []float32) {
	l := t.Layout()
	if form == CPUForm {
		dec := dequant.CPUDecoder(t)
		return func(row []byte, out []float32) {
			for b := 0; b < k/l.BlockWeights; b++ {
				dec(row[b*l.BlockBytes:][:l.BlockBytes], out[b*l.BlockWeights:])
			}
		}
	}
	dec := dequant.Decoder(t, dequant.ByteReads)
	return func(row []byte, out []float32) {
		for k0 := 0; k0 < k; k0 += 16 {
			dec(row[k0/l.BlockWeights*l.BlockBytes:][:l.BlockBytes], k0%l.BlockWeights/16, (*[16]float32)(out[k0:]))
		}
	}
}
