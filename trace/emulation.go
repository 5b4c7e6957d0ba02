package trace

import (
	"fmt"
	"io"
	"math"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// EmulationError is how far an emulated dst is from its float64 references
// (golden.Reference).
type EmulationError struct {
	MaxAbsF64 float64 // max |dst - ref_f64|: what the staging costs
	// MaxAbsStaged is max |dst - Ref|, Ref the reference of the operands as
	// the kernel stages them: ref_f16in, for bf16 weights ref_bf16in.
	MaxAbsStaged float64
	Ref          string // "ref_f16in", "ref_bf16in" or "ref_kernel" (CompareDense)
	// Worst is the largest |dst - Ref| in units of the float32 accumulation
	// bound (golden.AccumulationTolerance): at most 1 when the values are
	// right; infinite for a nonzero value where every product is zero, NaN
	// for a NaN.
	Worst float64
	// Operands says what ref_kernel multiplies when Ref is CompareDense's
	// ref_kernel.
	Operands string
}

// CompareEmulation measures dst, a mul_mat_id output with reduction length k,
// against its references; bf16 says whether the weights are bf16 (whose
// kernels stage both operands as bfloat).
func CompareEmulation(k int, dst []float32, ref golden.References, bf16 bool) EmulationError {
	e := EmulationError{Ref: "ref_f16in"}
	if bf16 {
		e.Ref = "ref_bf16in"
	}
	for i, v := range dst {
		e.MaxAbsF64 = math.Max(e.MaxAbsF64, math.Abs(float64(v)-float64(ref.F64[i])))
		d := math.Abs(float64(v) - float64(ref.Staged[i]))
		e.MaxAbsStaged = math.Max(e.MaxAbsStaged, d)
		switch tol := golden.AccumulationTolerance(k, ref.SumAbs[i]); {
		case tol > 0:
			e.Worst = math.Max(e.Worst, d/tol) // a NaN stays NaN
		case d != 0: // every product is zero, so the exact sum is: any other value is wrong
			e.Worst = math.Inf(1)
		}
	}
	return e
}

// WriteEmulation prints an emulation under its title: the counters, the error
// against the references and the multiply-accumulates the kernel executed
// (emulate.Result.MACs), which it returns.
func WriteEmulation(w io.Writer, em *Emulation) (float64, error) {
	c, e := em.Result.Counters, em.Error
	fmt.Fprintln(w, em.Title)
	fmt.Fprintln(w, "counters:")
	if err := WriteCounters(w, c); err != nil {
		return 0, err
	}
	fmt.Fprintln(w, "error:")
	fmt.Fprintf(w, "  max |dst - ref_f64|     %.4g   (float64 sum of float32 weights x activations: what the kernel's staging and float32 sums cost)\n", e.MaxAbsF64)
	if e.Operands != "" {
		fmt.Fprintf(w, "  max |dst - ref_kernel|  %.4g   (%s; %.3g x the kernel's float32 bound)\n", e.MaxAbsStaged, e.Operands, e.Worst)
	} else {
		fmt.Fprintf(w, "  max |dst - %s|   %.4g   (%.3g x the float32 accumulation bound (K+1)·u·Σ|w·b|·(1+K·u), u = 2^-24)\n", e.Ref, e.MaxAbsStaged, e.Worst)
	}
	macs := em.Result.MACs
	_, err := fmt.Fprintf(w, "emulated %.3g MACs (padding included, skipped work not)\n", macs)
	return macs, err
}

// CompareDense measures dst[j*M + i], the output of dense kernel kern on path
// for operands t, against float64 references: ref_f64, the sum of the float32
// weights and activations, and ref_kernel, the sum of the operands as the
// kernel multiplies them (mul_mm: both staged to half, bfloat for bf16, as
// mul_mm_id stages them; on the tensor path the activations instead truncated
// to 10 mantissa bits by relaxed_precision; the mat-vec kernels: float32 both),
// each rounded once to float32. Worst is |dst - ref_kernel| in units of the
// kernel's bound, S = Σ|w·y| of those operands and u = 2^-24: mul_mm's
// products are exact in float32 (11 significant bits each), so the bound is
// golden.AccumulationTolerance's (K+1)·u·S·(1 + K·u); a mat-vec term passes
// through its product's rounding (or an fma's) and at most K-1 additions,
// whatever tree the kernel sums in, and the reference adds at most
// 2u + u², so γ_{K+2}·S with γ_n = n·u/(1 - n·u) (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §3.1, §4.2, Lemma 3.3).
func CompareDense(p tile.DenseProblem, kern tile.MetalKernel, path tile.Path, t *emulate.DenseTensors, dst []float32) EmulationError {
	same := func(v float32) float32 { return v }
	wf, yf := same, same
	tol := func(s float64) float64 { n := float64(p.K + 2); return n * u / (1 - n*u) * s }
	if kern == tile.KernelMulMM {
		wf, yf = p.TypeA.RoundStaged, p.TypeA.RoundStaged
		if path == tile.Tensor {
			yf = isa.Truncate10
		}
		tol = func(s float64) float64 { return golden.AccumulationTolerance(p.K, s) }
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	l := p.TypeA.Layout()
	dec := dequant.Decoder(p.TypeA, dequant.ByteReads)
	w := make([]float32, p.K)
	var chunk [16]float32
	e := EmulationError{Ref: "ref_kernel", Operands: "operands as the kernel multiplies them"}
	for i := 0; i < p.M; i++ {
		for k0 := 0; k0 < p.K; k0 += 16 {
			dec(t.Weights[i*rb+k0/l.BlockWeights*l.BlockBytes:][:l.BlockBytes], k0%l.BlockWeights/16, &chunk)
			copy(w[k0:], chunk[:])
		}
		for j := 0; j < p.N; j++ {
			y := t.Src1[j*p.K:][:p.K]
			var exact, kernel, s float64
			for k, v := range w {
				exact += float64(v) * float64(y[k])
				term := float64(wf(v)) * float64(yf(y[k]))
				kernel += term
				s += math.Abs(term)
			}
			got := float64(dst[j*p.M+i])
			e.MaxAbsF64 = math.Max(e.MaxAbsF64, math.Abs(got-float64(float32(exact))))
			d := math.Abs(got - float64(float32(kernel)))
			e.MaxAbsStaged = math.Max(e.MaxAbsStaged, d)
			switch b := tol(s); {
			case b > 0:
				e.Worst = math.Max(e.Worst, d/b) // a NaN stays NaN
			case d != 0:
				e.Worst = math.Inf(1)
			}
		}
	}
	return e
}

// u is the float32 unit roundoff.
const u = 1.0 / (1 << 24)

// CompareMulMVID measures dst[(t*Used+s)*M + r], a kernel_mul_mv_id output,
// against the references of CompareDense's mat-vec kernels, pair by pair:
// pair (t, s) multiplies expert ids[t][s]'s weights with src1 row
// t*ne11 + s%ne11.
func CompareMulMVID(p tile.Problem, t *emulate.Tensors, dst []float32) EmulationError {
	rb, _ := p.TypeA.RowBytes(p.K)
	var e EmulationError
	for z := 0; z < p.Tokens*p.Used; z++ {
		tok, s, ex := z/p.Used, z%p.Used, int(t.IDs[z])
		row := (tok*p.SrcRows() + s%p.SrcRows()) * p.K
		pe := CompareDense(tile.DenseProblem{M: p.M, N: 1, K: p.K, TypeA: p.TypeA}, tile.KernelMulMVID, tile.Simdgroup,
			&emulate.DenseTensors{Weights: t.Weights[ex*p.M*rb:][:p.M*rb], Src1: t.Src1[row:][:p.K]}, dst[z*p.M:][:p.M])
		e.MaxAbsF64, e.MaxAbsStaged, e.Ref, e.Operands = math.Max(e.MaxAbsF64, pe.MaxAbsF64), math.Max(e.MaxAbsStaged, pe.MaxAbsStaged), pe.Ref, pe.Operands
		if pe.Worst > e.Worst || math.IsNaN(pe.Worst) {
			e.Worst = pe.Worst
		}
	}
	return e
}

// Emulation is one emulated run and its error against the references.
type Emulation struct {
	Result *emulate.Result
	Error  EmulationError
	Title  string // the workload, the kernel and the seed, as WriteEmulation heads it
}

// Emulate runs workload w for values as kernel kern, with kernel k's variant
// and path where kern takes them, on random operands of seed (a MUL_MAT_ID's
// uniform routing too), and measures the output against its references:
// golden.Reference's for mul_mm_id (CompareEmulation), CompareMulMVID's and
// CompareDense's for the others. It refuses a workload whose operands and
// references would not fit in MaxEmulateBytes (CheckEmulateMemory).
func Emulate(w tile.Workload, kern tile.MetalKernel, k tile.Kernel, seed uint64, workers int) (*Emulation, error) {
	if err := CheckEmulateMemory(w); err != nil {
		return nil, err
	}
	if d := w.Dense; w.Op == tile.OpMulMat && d.Batches() > 1 {
		return nil, fmt.Errorf("problem: bs (batch) = %d, nr (broadcast) = %d: the emulator runs one matmul (bs = nr = 1)", d.Matrices(), d.PerMatrix())
	}
	p := asMoE(w)
	em := &Emulation{Title: fmt.Sprintf("%s, kernel %s, seed %d", w, kern, seed)}
	switch kern {
	case tile.KernelMulMMID:
		em.Title = fmt.Sprintf("%s, %s path, variant %s, seed %d", p, k.Path, k.Name, seed)
	case tile.KernelMulMM:
		em.Title = fmt.Sprintf("%s, kernel mul_mm, %s path, variant %s, seed %d", w, k.Path, k.Name, seed)
	}
	var err error
	switch kern {
	case tile.KernelMulMMID:
		t := emulate.RandomTensors(p, seed)
		if em.Result, err = emulate.MulMatID(p, k, t, workers); err == nil {
			em.Error = CompareEmulation(p.K, em.Result.Dst, golden.Reference(p, t), p.TypeA.StagesBFloat())
		}
	case tile.KernelMulMVID:
		t := emulate.RandomTensors(p, seed)
		if em.Result, err = emulate.MulMVID(p, t, workers); err == nil {
			em.Error = CompareMulMVID(p, t, em.Result.Dst)
		}
	default:
		t := emulate.RandomDenseTensors(w.Dense, seed)
		if em.Result, err = emulate.Dense(w.Dense, kern, k, t, workers); err == nil {
			em.Error = CompareDense(w.Dense, kern, k.Path, t, em.Result.Dst)
		}
	}
	return em, err
}

// MaxEmulateBytes bounds the memory Emulate holds: every operand, the output
// and the references at once.
const MaxEmulateBytes = 8 << 30

// asMoE returns a workload as a MUL_MAT_ID: a MUL_MAT's operands are one
// expert's, one slot per token.
func asMoE(w tile.Workload) tile.Problem {
	if w.Op == tile.OpMulMat {
		d := w.Dense
		return tile.Problem{Experts: 1, Used: 1, M: d.M, K: d.K, Tokens: d.N, TypeA: d.TypeA, HalfB: d.HalfB}
	}
	return w.MoE
}

// CheckEmulateMemory refuses a workload whose operands, output and
// references would not fit in MaxEmulateBytes, instead of letting the
// allocation crash the process.
func CheckEmulateMemory(w tile.Workload) error {
	p := asMoE(w)
	rb, err := p.TypeA.RowBytes(p.K)
	if err != nil {
		return err
	}
	weights := float64(p.Experts) * float64(p.M) * float64(rb)
	// an activation is a float32 operand and two float64 copies in the
	// reference (golden.Reference: exact and half-rounded), 20 bytes in all
	acts := float64(p.Tokens) * float64(p.SrcRows()) * float64(p.K) * (4 + 8 + 8)
	slots := float64(p.Tokens) * float64(p.Used)
	outs := slots*float64(p.M)*(4+4+4+8) + slots*4 // dst, the two references and their bound; ids
	total := weights + acts + outs
	if total <= MaxEmulateBytes {
		return nil
	}
	return fmt.Errorf("%.3g GB in memory: weights %.3g GB (n_mats x m x k), activations %.3g GB (n x n_used x k, or n x k with b = 1, x 20 bytes: the operand and the reference's two float64 copies), "+
		"output and references %.3g GB (n x n_used x m); emulate holds them at once and allows at most %d GiB",
		total/1e9, weights/1e9, acts/1e9, outs/1e9, MaxEmulateBytes>>30)
}
