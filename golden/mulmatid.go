package golden

import (
	"encoding/binary"
	"fmt"
	"math"

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
	// WorstRatio is the largest |emulated - reference| / tolerance over all
	// outputs and runs (pass: <= 1); the reference is the staged one:
	// ref_f16in, ref_bf16in for bf16, or the Metal-form sum (MetalRefs).
	WorstRatio float64
	// WorstDst is the largest |emulated - dst| / bound over all outputs and runs.
	WorstDst float64
	// HalfTileSame reports whether the half-tile variant gave exactly the
	// upstream bits on each path.
	HalfTileSame bool
	// RefsComputed reports whether the references were computed here because
	// the manifest has none.
	RefsComputed bool
	// MetalRefs counts the outputs where the manifest's staged reference
	// (ref_f16in, or ref_bf16in for bf16), summed from ggml's to_float, differs
	// from the one summed from the Metal-form weights (q4_K: the shader's d/16
	// in half); when it is not 0 the emulation is compared with the latter.
	MetalRefs int
	Err       error
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
// evaluated per output from the same half-rounded inputs, in float64. The same
// holds for bf16's bfloat staging (8 + 8 significant bits, exact products) and
// ref_bf16in.
const unitRoundoff = 1.0 / (1 << 24)

// AccumulationTolerance is that bound, (K+1)·u·S·(1 + K·u), for an output
// whose terms' absolute values sum to sumAbs: what an emulated mul_mat_id
// output may differ from ref_f16in by.
func AccumulationTolerance(k int, sumAbs float64) float64 {
	return float64(k+1) * unitRoundoff * sumAbs * (1 + float64(k)*unitRoundoff)
}

// VerifyMulMatID emulates every case of dir/mulmatid on both paths and both
// variants and checks the output against the staged reference within the
// accumulation tolerance (ref_f16in; ref_bf16in for bf16; for a type whose
// Metal-form weights do not stage like ggml's to_float, q4_K, the same sum over
// the Metal-form weights), against ggml's CPU dst within the manifest's bound
// (triangle inequality through ref_f64), and that the half-tile variant gives the
// same bits as upstream. The manifest's references must equal the same sums
// over dequant.CPUDecoder's weights bit for bit. Missing references are computed
// in float64. It returns (nil, nil) when dir has no mulmatid/ folder.
func VerifyMulMatID(dir string) ([]Result, []MulMatIDCheck, error) {
	m, _, err := readPart(dir, "mulmatid", ReadMulMatIDManifest)
	if m == nil || err != nil {
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
	t, dst, err := readCaseTensors(dir, c)
	if err != nil {
		ck.Err = err
		return ck
	}
	ref := Reference(p, t)
	if err := ck.checkCPURefs(dir, p, t); err != nil {
		ck.Err = err
		return ck
	}
	refS, dstBound, err := ck.stagedReference(dir, ref)
	if err != nil {
		ck.Err = err
		return ck
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
			d := math.Abs(float64(v) - float64(refS[i]))
			ck.WorstRatio = worstRatio(ck.WorstRatio, d, tol)
			dd := math.Abs(float64(v) - float64(dst[i]))
			ck.WorstDst = worstRatio(ck.WorstDst, dd, dstBound+tol)
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

// readCaseTensors reads a case's operands (weights, src1, ids) and its
// dst.
func readCaseTensors(dir string, c *MulMatIDCase) (*emulate.Tensors, []float32, error) {
	w, err := c.Src0.Data.Read(dir)
	if err != nil {
		return nil, nil, err
	}
	src1, err := readF32(dir, c.Src1.Data)
	if err != nil {
		return nil, nil, err
	}
	ids, err := readI32(dir, c.IDs.Data)
	if err != nil {
		return nil, nil, err
	}
	dst, err := readF32(dir, c.Dst.Data)
	if err != nil {
		return nil, nil, err
	}
	return &emulate.Tensors{Weights: w, Src1: src1, IDs: ids}, dst, nil
}

func readF32(dir string, d Descriptor) ([]float32, error) {
	return read32(dir, d, "float32", math.Float32frombits)
}

func readI32(dir string, d Descriptor) ([]int32, error) {
	return read32(dir, d, "int32", func(u uint32) int32 { return int32(u) })
}

// read32 reads d's file as little-endian 32-bit words, each converted by
// conv; elem names the element type in the error for a partial word.
func read32[T any](dir string, d Descriptor, elem string, conv func(uint32) T) ([]T, error) {
	raw, err := d.Read(dir)
	if err != nil {
		return nil, err
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of %s", d.File, len(raw), elem)
	}
	out := make([]T, len(raw)/4)
	for i := range out {
		out[i] = conv(binary.LittleEndian.Uint32(raw[4*i:]))
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

// checkCPURefs recomputes the manifest's references from ggml's CPU to_float
// (dequant.CPUDecoder) and requires them bit for bit: ref_f64, ref_f16in and
// ref_bf16in, those the manifest has.
func (ck *MulMatIDCheck) checkCPURefs(dir string, p tile.Problem, t *emulate.Tensors) error {
	c := ck.Case
	if c.RefF64 == nil && c.RefF16In == nil && c.RefBF16In == nil {
		return nil
	}
	cpu := ReferenceWith(p, t, CPUForm)
	for _, r := range []struct {
		field string
		t     *Tensor
		got   []float32
	}{{"ref_f64", c.RefF64, cpu.F64}, {"ref_f16in", c.RefF16In, cpu.F16In}, {"ref_bf16in", c.RefBF16In, cpu.Staged}} {
		if r.t == nil || r.field == "ref_bf16in" && !p.TypeA.StagesBFloat() {
			continue
		}
		want, err := readF32(dir, r.t.Data)
		if err != nil {
			return err
		}
		if n := differing(want, r.got); n > 0 {
			return fmt.Errorf("%s: %d of %d outputs differ from the same sum over ggml's to_float (dequant.CPUDecoder)", r.field, n, len(want))
		}
	}
	return nil
}

// stagedReference returns the reference the emulation is compared with, the
// staged sum of the Metal-form weights (the manifest's file when it holds the
// same bits), and the bound on |reference - dst| (through ref_f64).
func (ck *MulMatIDCheck) stagedReference(dir string, ref References) ([]float32, float64, error) {
	c, st := ck.Case, ck.Case.Stats
	manifest, stat := c.RefF16In, st.MaxAbsRefF16InMinusRefF64
	if c.TypeAType.StagesBFloat() {
		manifest, stat = c.RefBF16In, st.MaxAbsRefBF16InMinusRefF64
	}
	if manifest != nil {
		ms, err := readF32(dir, manifest.Data)
		if err != nil {
			return nil, 0, err
		}
		if ck.MetalRefs = differing(ms, ref.Staged); ck.MetalRefs == 0 {
			// |emu - dst| <= |emu - refs| + |refs - ref64| + |ref64 - dst|
			return ms, st.MaxAbsDstMinusRefF64 + stat, nil
		}
	} else {
		ck.RefsComputed = true
	}
	ref64 := ref.F64
	if c.RefF64 != nil {
		var err error
		if ref64, err = readF32(dir, c.RefF64.Data); err != nil {
			return nil, 0, err
		}
	}
	var worst float64
	for i, v := range ref.Staged {
		worst = max(worst, math.Abs(float64(v)-float64(ref64[i])))
	}
	return ref.Staged, st.MaxAbsDstMinusRefF64 + worst, nil
}

// refName names the reference the emulation was compared with.
func (ck *MulMatIDCheck) refName() string {
	switch {
	case ck.Case == nil:
		return "ref_f16in"
	case ck.MetalRefs > 0 || ck.RefsComputed:
		return "the computed staged reference"
	case ck.Case.TypeAType.StagesBFloat():
		return "ref_bf16in"
	}
	return "ref_f16in"
}

// differing counts the positions where a and b hold different bits.
func differing(a, b []float32) int {
	n := 0
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			n++
		}
	}
	return n
}

// verdict says whether a case passed and why (written so that a NaN ratio,
// which compares false with every bound, fails).
func (ck *MulMatIDCheck) verdict() (bool, string) {
	switch {
	case ck.Err != nil:
		return false, ck.Err.Error()
	case !(ck.WorstRatio <= 1):
		return false, fmt.Sprintf("|emulated - %s| reaches %.3g x the accumulation tolerance", ck.refName(), ck.WorstRatio)
	case !(ck.WorstDst <= 1):
		return false, fmt.Sprintf("|emulated - dst| reaches %.3g x the manifest bound", ck.WorstDst)
	case !ck.HalfTileSame:
		return false, "half-tile variant differs from upstream"
	}
	refs := "manifest references"
	switch {
	case ck.RefsComputed:
		refs = "computed references"
	case ck.MetalRefs > 0:
		refs = fmt.Sprintf("Metal-form references (the manifest's, from ggml's to_float, differ in %d of %d outputs)", ck.MetalRefs, ck.Case.M*ck.Case.NExpertUsed*ck.Case.NTokens)
	case ck.Case != nil && ck.Case.TypeAType.StagesBFloat():
		refs = "manifest references (ref_bf16in)"
	}
	return true, fmt.Sprintf("4 runs (simdgroup, tensor x upstream, halftile), %s: worst error %.3g of tolerance, %.3g of dst bound; half-tile bits identical",
		refs, ck.WorstRatio, ck.WorstDst)
}
