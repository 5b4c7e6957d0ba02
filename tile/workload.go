package tile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// MetalKernel names a Metal matmul kernel llama.cpp's Metal backend
// dispatches. KernelAuto stands for "the kernel llama.cpp picks" (Dispatch).
type MetalKernel uint8

// The matmul kernels.
const (
	KernelAuto     MetalKernel = iota // the one llama.cpp's dispatch rule picks
	KernelMulMV                       // kernel_mul_mv_<type>_f32: MUL_MAT, one token per threadgroup
	KernelMulMVExt                    // kernel_mul_mv_ext: MUL_MAT, 2-8 tokens per threadgroup
	KernelMulMM                       // kernel_mul_mm: MUL_MAT, the mat-mat tile
	KernelMulMVID                     // kernel_mul_mv_id: MUL_MAT_ID, one threadgroup per (token, slot)
	KernelMulMMID                     // kernel_mul_mm_id_map0 + kernel_mul_mm_id: MUL_MAT_ID, the mat-mat tile
	numKernels
)

// kernelNames are the kernels' short names (Metal's without "kernel_").
var kernelNames = [numKernels]string{"auto", "mul_mv", "mul_mv_ext", "mul_mm", "mul_mv_id", "mul_mm_id"}

// String returns the kernel's short name ("mul_mm_id", ...; "auto").
func (k MetalKernel) String() string { return enumName(kernelNames[:], "MetalKernel", int(k)) }

// ParseMetalKernel maps a short name (or "auto") to a kernel.
func ParseMetalKernel(s string) (MetalKernel, error) {
	if i := slices.Index(kernelNames[:], s); i >= 0 {
		return MetalKernel(i), nil
	}
	return 0, fmt.Errorf("unknown kernel %q (allowed: %s)", s, strings.Join(kernelNames[:], ", "))
}

// Op returns the ggml op the kernel computes (KernelAuto: none).
func (k MetalKernel) Op() (Op, bool) {
	switch k {
	case KernelMulMV, KernelMulMVExt, KernelMulMM:
		return OpMulMat, true
	case KernelMulMVID, KernelMulMMID:
		return OpMulMatID, true
	}
	return 0, false
}

// Op is the ggml matmul operation of a workload.
type Op uint8

// The two matmul ops.
const (
	OpMulMatID Op = iota // MUL_MAT_ID: the MoE expert matmul
	OpMulMat             // MUL_MAT: a dense matmul
	numOps
)

var opNames = [numOps]string{"mul_mat_id", "mul_mat"}

// String returns "mul_mat_id" or "mul_mat".
func (o Op) String() string { return enumName(opNames[:], "Op", int(o)) }

// ParseOp maps "mul_mat_id" or "mul_mat" (or the ggml names MUL_MAT_ID,
// MUL_MAT) to an Op.
func ParseOp(s string) (Op, error) {
	if i := slices.Index(opNames[:], strings.ToLower(s)); i >= 0 {
		return Op(i), nil
	}
	return 0, fmt.Errorf("unknown op %q (allowed: %s)", s, strings.Join(opNames[:], ", "))
}

// Workload is one matmul as test-backend-ops and llama.cpp's graphs state it:
// a MUL_MAT_ID (MoE) or a MUL_MAT (Dense).
type Workload struct {
	Op    Op
	MoE   Problem      // Op == OpMulMatID
	Dense DenseProblem // Op == OpMulMat
}

// MoEWorkload returns the MUL_MAT_ID workload of p.
func MoEWorkload(p Problem) Workload { return Workload{Op: OpMulMatID, MoE: p} }

// DenseWorkload returns the MUL_MAT workload of p.
func DenseWorkload(p DenseProblem) Workload { return Workload{Op: OpMulMat, Dense: p} }

// Validate reports the first field outside its allowed range.
func (w Workload) Validate() error {
	switch w.Op {
	case OpMulMatID:
		return w.MoE.Validate()
	case OpMulMat:
		return w.Dense.Validate()
	}
	return fmt.Errorf("op = %d: must be mul_mat_id or mul_mat", w.Op)
}

// String renders the workload as test-backend-ops names its case:
// "MUL_MAT_ID(type_a=...)" or "MUL_MAT(type_a=...)".
func (w Workload) String() string {
	if w.Op == OpMulMat {
		return "MUL_MAT(" + w.Dense.String() + ")"
	}
	return "MUL_MAT_ID(" + w.MoE.String() + ")"
}

// FLOPs returns the floating-point operations test-backend-ops credits the
// case with.
func (w Workload) FLOPs() float64 {
	if w.Op == OpMulMat {
		return w.Dense.FLOPs()
	}
	return w.MoE.FLOPs()
}

// TypeA returns the weight type.
func (w Workload) TypeA() dequant.Type {
	if w.Op == OpMulMat {
		return w.Dense.TypeA
	}
	return w.MoE.TypeA
}

// Dispatch returns the kernel llama.cpp's Metal backend runs for the workload
// (kernel-facts §2.1, §2.2): for MUL_MAT_ID, map0 + mul_mm_id from 32 tokens
// and k >= 64, else mul_mv_id; for MUL_MAT, mul_mv_ext, mul_mm or mul_mv
// (DenseDispatch). Every chip metalsim knows has simdgroup matrices, the
// condition both mat-mat kernels need.
func (w Workload) Dispatch() MetalKernel {
	if w.Op == OpMulMat {
		return DenseDispatch(w.Dense.TypeA.String(), w.Dense.N, w.Dense.K, !w.Dense.HalfB)
	}
	if w.MoE.UsesMulMV() {
		return KernelMulMVID
	}
	return KernelMulMMID
}

// Kernel returns the kernel that runs: forced, or Dispatch's choice for
// KernelAuto. A forced kernel must compute the workload's op and accept its
// shape (CheckKernel).
func (w Workload) Kernel(forced MetalKernel) (MetalKernel, error) {
	if forced == KernelAuto {
		return w.Dispatch(), nil
	}
	return forced, w.CheckKernel(forced)
}

// CheckKernel reports why kernel k cannot run the workload (nil when it
// can): the kernel computes the other op, or the workload breaks one of the
// kernel's own limits (llama.cpp would never dispatch it then).
func (w Workload) CheckKernel(k MetalKernel) error {
	op, ok := k.Op()
	if !ok {
		return fmt.Errorf("kernel %s: not a kernel", k)
	}
	if op != w.Op {
		return fmt.Errorf("kernel %s: computes %s, the workload is %s", k, op, w.Op)
	}
	switch k {
	case KernelMulMV:
		return checkVecActivations(MulMV(w.Dense.TypeA, w.Dense.K, false), w.Dense.TypeA, w.Dense.HalfB)
	case KernelMulMVID:
		return checkVecActivations(MulMV(w.MoE.TypeA, w.MoE.K, true), w.MoE.TypeA, w.MoE.HalfB)
	case KernelMulMVExt:
		v, err := MulMVExt(w.Dense.TypeA, w.Dense.K, w.Dense.N)
		if err == nil {
			err = checkVecActivations(v, w.Dense.TypeA, w.Dense.HalfB)
		}
		return err
	case KernelMulMM:
		if err := checkMMActivations("mul_mm", w.Dense.TypeA, w.Dense.HalfB); err != nil {
			return err
		}
		if nk := DenseGeometry(Simdgroup).NK; w.Dense.K%nk != 0 {
			return fmt.Errorf("mul_mm: k = %d: must be a multiple of %d (the bounds-checked K tail, bc_inp, is not modelled)", w.Dense.K, nk)
		}
	case KernelMulMMID:
		if err := checkMMActivations("mul_mm_id", w.MoE.TypeA, w.MoE.HalfB); err != nil {
			return err
		}
		if w.MoE.K%DefaultGeometry().NK != 0 {
			return fmt.Errorf("mul_mm_id: k = %d: must be a multiple of %d (the bounds-checked K tail is not modelled)", w.MoE.K, DefaultGeometry().NK)
		}
	}
	return nil
}

// checkMMActivations reports a mat-mat kernel that does not exist: bf16
// weights have kernel_mul_mm_bf16_f32 and kernel_mul_mm_id_bf16_f32 only, no
// f16-activation instantiation (ggml-metal.metal L11041-11129).
func checkMMActivations(kernel string, t dequant.Type, halfB bool) error {
	if halfB && t == dequant.BF16 {
		return fmt.Errorf("%s: type_b = f16 with type_a = bf16: no such kernel (bf16 weights take f32 activations only: kernel_%s_bf16_f32)", kernel, kernel)
	}
	return nil
}

// The weight types with a mul_mv_ext kernel and the token counts it takes
// them for (kernel-facts §2.1: ggml-metal-ops.cpp L2340-2368). The iq2/iq3
// types never take it.
var (
	extTypes  = []string{"f32", "f16", "bf16", "q1_0", "q2_0", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "mxfp4", "iq4_nl"}
	extKTypes = []string{"q4_K", "q5_K", "q6_K", "q2_K", "q3_K"}
)

// extTokens returns the token range mul_mv_ext takes a weight type for, or
// ok = false when the type has no mul_mv_ext kernel.
func extTokens(typeA string) (lo, hi int, ok bool) {
	switch {
	case slices.Contains(extTypes, typeA):
		return 2, 8, true
	case slices.Contains(extKTypes, typeA):
		return 4, 8, true
	}
	return 0, 0, false
}

// DenseDispatch applies the host's MUL_MAT kernel choice (kernel-facts §2.1,
// in order) to a weight type (its ggml name), the tokens n (ne11) and k
// (ne00): mul_mv_ext for f32 activations, k % 128 == 0 and the type's token
// range; mul_mm for k >= 64 and n > 8; mul_mv otherwise. It takes the type by
// name, so it also answers for a log row of a type metalsim does not decode.
func DenseDispatch(typeA string, n, k int, f32B bool) MetalKernel {
	if lo, hi, ok := extTokens(typeA); ok && f32B && k%128 == 0 && n >= lo && n <= hi {
		return KernelMulMVExt
	}
	if k >= MinMMK && n > denseMMMinTokens {
		return KernelMulMM
	}
	return KernelMulMV
}

// denseMMMinTokens is ne11_mm_min: mul_mm runs for more tokens than this
// (kernel-facts §2.1).
const denseMMMinTokens = 8

// KernelPath is a Metal kernel with one of its bodies: the mat-mat kernels
// have a simdgroup-matrix and a tensor (matmul2d) body, chosen by the library
// llama.cpp compiles.
type KernelPath struct {
	Kernel MetalKernel
	Path   Path
}

// DispatchRule says which condition of llama.cpp's rule (kernel-facts §2.1,
// §2.2) picks Dispatch's kernel for the workload, as the rule states it (the
// same words for every n it covers): "n < 32 tokens", "f32 activations,
// k % 128 = 0 and 2 <= n <= 8 for q4_0", ...
func (w Workload) DispatchRule() string {
	if w.Op == OpMulMatID {
		switch p := w.MoE; {
		case p.Tokens < MinMMTokens:
			return fmt.Sprintf("n < %d tokens", MinMMTokens)
		case p.K < MinMMK:
			return fmt.Sprintf("k < %d", MinMMK)
		}
		return fmt.Sprintf("n >= %d tokens and k >= %d", MinMMTokens, MinMMK)
	}
	p := w.Dense
	t := p.TypeA.String()
	lo, hi, ext := extTokens(t)
	switch w.Dispatch() {
	case KernelMulMVExt:
		return fmt.Sprintf("f32 activations, k %% 128 = 0 and %d <= n <= %d for %s", lo, hi, t)
	case KernelMulMM:
		return fmt.Sprintf("n > %d tokens and k >= %d", denseMMMinTokens, MinMMK)
	}
	if p.N > denseMMMinTokens {
		return fmt.Sprintf("k < %d", MinMMK)
	}
	why := fmt.Sprintf("n <= %d tokens", denseMMMinTokens)
	switch {
	case !ext:
		return why + fmt.Sprintf(" and %s has no mul_mv_ext", t)
	case p.HalfB:
		return why + " and mul_mv_ext takes f32 activations only"
	case p.K%128 != 0:
		return why + " and mul_mv_ext needs k % 128 = 0"
	}
	return fmt.Sprintf("n < %d: mul_mv_ext takes %d to %d tokens for %s", lo, lo, hi, t)
}

// ForcedNote says, for a kernel forced instead of llama.cpp's choice, what
// llama.cpp runs and why (DispatchRule); "" when kern is that choice.
func (w Workload) ForcedNote(kern MetalKernel) string {
	d := w.Dispatch()
	if kern == d || kern == KernelAuto {
		return ""
	}
	return fmt.Sprintf("kernel %s is forced: llama.cpp runs %s here (%s)", kern, d, w.DispatchRule())
}
