package golden

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/tile"
)

// MulMatIDRun is one emulated kernel of a case: a path and a variant.
type MulMatIDRun struct {
	Path    tile.Path
	Variant tile.Variant
}

// MulMatIDRuns are the kernels VerifyMulMatID emulates for every case: both
// paths, upstream and half-tile.
func MulMatIDRuns() []MulMatIDRun {
	return []MulMatIDRun{
		{tile.Simdgroup, tile.Upstream()}, {tile.Simdgroup, tile.HalfTile()},
		{tile.Tensor, tile.Upstream()}, {tile.Tensor, tile.HalfTile()},
	}
}

// MulMatIDCheck is the outcome of one case on every run.
type MulMatIDCheck struct {
	Case *MulMatIDCase
	// WorstRatio is the largest |emulated - ref_f16in| / tolerance over all
	// outputs and runs (pass: <= 1).
	WorstRatio float64
	// WorstDst is the largest |emulated - dst| / bound over all outputs and runs.
	WorstDst float64
	// HalfTileSame reports whether the half-tile variant gave exactly the
	// upstream bits on each path.
	HalfTileSame bool
	// RefsComputed reports whether the references were computed here because
	// the manifest has none.
	RefsComputed bool
	Err          error
}

// The accumulation tolerance. Every product h(w)·h(b) of two half values is
// exact in float32 (11 + 11 significant bits), so the emulated output is a
// float32 sum of K exact terms in some order (the simdgroup path's k-ordered
// chain, or the tensor unit's pair/quad tree). Any such order performs K-1
// roundings, each on a partial sum no larger than S = Σ|h(w)·h(b)|, so
// |emulated - exact| <= (K-1)·u·S·(1 + K·u) with u = 2^-24 (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §4.2). ref_f16in is the exact sum
// (float64, error <= K·2^-53·S) rounded once to float32 (<= u·|exact| <= u·S).
// Together: |emulated - ref_f16in| <= (K+1)·u·S·(1 + K·u). The bound is
// evaluated per output from the same half-rounded inputs, in float64.
const unitRoundoff = 1.0 / (1 << 24)

// AccumulationTolerance is that bound, (K+1)·u·S·(1 + K·u), for an output
// whose terms' absolute values sum to sumAbs: what an emulated mul_mat_id
// output may differ from ref_f16in by.
func AccumulationTolerance(k int, sumAbs float64) float64 {
	return float64(k+1) * unitRoundoff * sumAbs * (1 + float64(k)*unitRoundoff)
}

// VerifyMulMatID emulates every case of dir/mulmatid on both paths and both
// variants and checks the output against ref_f16in within the accumulation
// tolerance, against ggml's CPU dst within the manifest's bound (triangle
// inequality through ref_f64), and that the half-tile variant gives the same bits
// as upstream. Missing references are computed in float64. It returns (nil, nil)
// when dir has no mulmatid/ folder.
func VerifyMulMatID(dir string) ([]Result, []MulMatIDCheck, error) {
	mdir := filepath.Join(dir, "mulmatid")
	ok, err := dirExists(mdir)
	if err != nil || !ok {
		return nil, nil, err
	}
	m, err := ReadMulMatIDManifest(mdir)
	if err != nil {
		return nil, nil, err
	}
	var results []Result
	var checks []MulMatIDCheck
	for i := range m.Cases {
		c := &m.Cases[i]
		ck := CheckMulMatIDCase(m.Dir, c)
		checks = append(checks, ck)
		r := Result{Set: "mulmatid", Name: c.Name}
		r.Pass, r.Detail = ck.verdict()
		results = append(results, r)
	}
	return results, checks, nil
}

// CheckMulMatIDCase emulates one case (dir is the mulmatid folder).
func CheckMulMatIDCase(dir string, c *MulMatIDCase) MulMatIDCheck {
	ck := MulMatIDCheck{Case: c, HalfTileSame: true}
	p := tile.Problem{Experts: c.NExpert, Used: c.NExpertUsed, M: c.M, K: c.K, Tokens: c.NTokens,
		Broadcast: c.Src1NE1 == 1 && c.NExpertUsed > 1, TypeA: c.TypeAType}
	w, err := c.Src0.Data.Read(dir)
	if err != nil {
		ck.Err = err
		return ck
	}
	src1, err := readF32(dir, c.Src1.Data)
	if err != nil {
		ck.Err = err
		return ck
	}
	ids, err := readI32(dir, c.IDs.Data)
	if err != nil {
		ck.Err = err
		return ck
	}
	dst, err := readF32(dir, c.Dst.Data)
	if err != nil {
		ck.Err = err
		return ck
	}
	t := &emulate.Tensors{Weights: w, Src1: src1, IDs: ids}
	ref := Reference(p, t)
	refh := ref.F16In
	if c.RefF16In != nil {
		if refh, err = readF32(dir, c.RefF16In.Data); err != nil {
			ck.Err = err
			return ck
		}
	} else {
		ck.RefsComputed = true
	}
	var dstBound float64
	if c.Stats != nil {
		// |emu - dst| <= |emu - refh| + |refh - ref64| + |ref64 - dst|
		dstBound = c.Stats.MaxAbsDstMinusRefF64 + c.Stats.MaxAbsRefF16InMinusRefF64
	}
	up := map[tile.Path][]float32{}
	for _, run := range MulMatIDRuns() {
		res, err := emulate.MulMatID(p, tile.Kernel{Variant: run.Variant, Path: run.Path}, t, 0)
		if err != nil {
			ck.Err = fmt.Errorf("%s/%s: %w", run.Path, run.Variant.Name, err)
			return ck
		}
		for i, v := range res.Dst {
			tol := AccumulationTolerance(p.K, ref.SumAbs[i])
			d := math.Abs(float64(v) - float64(refh[i]))
			ck.WorstRatio = worstRatio(ck.WorstRatio, d, tol)
			if dstBound > 0 || c.Stats != nil {
				dd := math.Abs(float64(v) - float64(dst[i]))
				ck.WorstDst = worstRatio(ck.WorstDst, dd, dstBound+tol)
			}
		}
		if prev, ok := up[run.Path]; ok {
			for i := range prev {
				if math.Float32bits(prev[i]) != math.Float32bits(res.Dst[i]) {
					ck.HalfTileSame = false
					break
				}
			}
		} else {
			up[run.Path] = res.Dst
		}
	}
	return ck
}

// References are the float64 references of a problem, computed from the Metal
// dequantizers (dequant, byte reads): F64 sums to_float(w)·b, F16In sums
// h(to_float(w))·h(b) with h = rounding to half, both rounded once to float32;
// SumAbs holds Σ|h(w)·h(b)| per output for the tolerance.
type References struct {
	F64, F16In []float32
	SumAbs     []float64
}

// Reference computes the references of a problem in float64, output order
// dst[(t*Used+s)*M + r]. Each expert row is decoded once for all the pairs
// routed to its expert, and experts are spread over GOMAXPROCS goroutines;
// every output is one k-ordered sum, so the result does not depend on either.
func Reference(p tile.Problem, t *emulate.Tensors) References {
	rb, _ := p.TypeA.RowBytes(p.K)
	l := p.TypeA.Layout()
	n := p.Tokens * p.Used * p.M
	out := References{F64: make([]float32, n), F16In: make([]float32, n), SumAbs: make([]float64, n)}
	// activations, and activations rounded to half, per source row
	srcRows := p.Tokens * p.SrcRows()
	b64 := make([]float64, srcRows*p.K)
	bH := make([]float64, srcRows*p.K)
	for i, v := range t.Src1[:srcRows*p.K] {
		b64[i], bH[i] = float64(v), float64(dequant.RoundHalf(v))
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
			dec := dequant.Decoder(p.TypeA, dequant.ByteReads)
			var chunk [16]float32
			w64 := make([]float64, p.K)
			wH := make([]float64, p.K)
			for e := w; e < p.Experts; e += workers {
				if len(pairs[e]) == 0 {
					continue
				}
				for r := 0; r < p.M; r++ {
					base := (e*p.M + r) * rb
					for k0 := 0; k0 < p.K; k0 += 16 {
						blk := t.Weights[base+k0/l.BlockWeights*l.BlockBytes:][:l.BlockBytes]
						dec(blk, k0%l.BlockWeights/16, &chunk)
						for i, v := range chunk {
							w64[k0+i], wH[k0+i] = float64(v), float64(dequant.RoundHalf(v))
						}
					}
					for _, pair := range pairs[e] {
						tok, s := pair/p.Used, pair%p.Used
						src := (tok*p.SrcRows() + s%p.SrcRows()) * p.K
						b, bh := b64[src:][:p.K], bH[src:][:p.K]
						var s64, sh, sa float64
						for k := range w64 {
							s64 += w64[k] * b[k]
							h := wH[k] * bh[k]
							sh += h
							sa += math.Abs(h)
						}
						o := pair*p.M + r
						out.F64[o], out.F16In[o], out.SumAbs[o] = float32(s64), float32(sh), sa
					}
				}
			}
		}(w)
	}
	wg.Wait()
	return out
}

func readF32(dir string, d Descriptor) ([]float32, error) {
	raw, err := d.Read(dir)
	if err != nil {
		return nil, err
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of float32", d.File, len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

func readI32(dir string, d Descriptor) ([]int32, error) {
	raw, err := d.Read(dir)
	if err != nil {
		return nil, err
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of int32", d.File, len(raw))
	}
	out := make([]int32, len(raw)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// worstRatio returns the larger of worst and d as a fraction of bound: a
// difference over a zero bound, or a NaN on either side of it (NaN or an
// infinity in an output or a reference), is past any bound (+Inf). math.Max
// would carry a NaN along, and a NaN compares false with every bound.
func worstRatio(worst, d, bound float64) float64 {
	switch {
	case math.IsNaN(d) || math.IsNaN(bound):
		return math.Inf(1)
	case bound > 0:
		return max(worst, d/bound)
	case d > 0:
		return math.Inf(1)
	}
	return worst
}

// verdict says whether a case passed and why (written so that a NaN ratio,
// which compares false with every bound, fails).
func (ck *MulMatIDCheck) verdict() (bool, string) {
	switch {
	case ck.Err != nil:
		return false, ck.Err.Error()
	case !(ck.WorstRatio <= 1):
		return false, fmt.Sprintf("|emulated - ref_f16in| reaches %.3g x the accumulation tolerance", ck.WorstRatio)
	case !(ck.WorstDst <= 1):
		return false, fmt.Sprintf("|emulated - dst| reaches %.3g x the manifest bound", ck.WorstDst)
	case !ck.HalfTileSame:
		return false, "half-tile variant differs from upstream"
	}
	refs := "manifest references"
	if ck.RefsComputed {
		refs = "computed references"
	}
	return true, fmt.Sprintf("4 runs (simdgroup, tensor x upstream, halftile), %s: worst error %.3g of tolerance, %.3g of dst bound; half-tile bits identical",
		refs, ck.WorstRatio, ck.WorstDst)
}
