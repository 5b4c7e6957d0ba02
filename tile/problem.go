// Package tile describes the mul_mm_id kernels: the MoE problem, the routing map
// (what kernel_mul_mm_id_map0 builds), tile geometry and variant knobs, the grid
// of threadgroups with their tile contexts, and the per-threadgroup program
// builders for the simdgroup-matrix path and the tensor (matmul2d) path. It does
// not simulate time.
package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// Problem is one MUL_MAT_ID operation (test-backend-ops names in brackets):
// dst[t][s][r] = Σ_k W[ids[t][s]][r][k] · src1[t][s % SrcRows][k].
type Problem struct {
	Experts   int          // ne02 [n_mats]: experts holding weights
	Used      int          // ne20 [n_used]: experts used per token
	M         int          // ne01 [m]: weight rows per expert (dst rows)
	K         int          // ne00 [k]: reduction length
	Tokens    int          // ne21 [n]: tokens
	Broadcast bool         // [b=1]: every slot of a token reads the same src1 row (ne11 = 1)
	TypeA     dequant.Type // [type_a]: weight type
	HalfB     bool         // [type_b=f16]: activations are f16 instead of f32
}

// HeadlineProblem is the headline experiment's shape at tokens tokens: the
// 128-expert top-8 q4_0 MUL_MAT_ID perf shape of test-backend-ops (m = 768,
// k = 2048, f32 activations) that the calibration sets measure, and simrun's
// default shape.
func HeadlineProblem(tokens int) Problem {
	return Problem{Experts: 128, Used: 8, M: 768, K: 2048, Tokens: tokens, TypeA: dequant.Q4_0}
}

// Limits on problem sizes: large enough for any real model, small enough that
// index arithmetic cannot overflow.
const (
	MaxExperts = 4096
	MaxDim     = 1 << 20
	MaxTokens  = 1 << 24
)

// SrcRows returns ne11, the src1 rows per token (1 when broadcast, else Used).
func (p Problem) SrcRows() int {
	if p.Broadcast {
		return 1
	}
	return p.Used
}

// Validate reports the first field outside its allowed range.
func (p Problem) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("problem: %s = %d: must be in [%d, %d]", name, v, lo, hi)
		}
		return nil
	}
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"n_mats (experts)", p.Experts, 1, MaxExperts},
		{"n_used (experts per token)", p.Used, 1, p.Experts},
		{"m (rows)", p.M, 1, MaxDim},
		{"k", p.K, 1, MaxDim},
		{"n (tokens)", p.Tokens, 1, MaxTokens},
	} {
		if err := check(c.name, c.v, c.lo, c.hi); err != nil {
			return err
		}
	}
	return checkWeights(p.TypeA, p.K)
}

// checkWeights checks a problem's weight type and that a row of k weights
// holds whole blocks of it.
func checkWeights(t dequant.Type, k int) error {
	if !t.Valid() {
		return fmt.Errorf("problem: type_a = %d: unknown type", t)
	}
	if _, err := t.RowBytes(k); err != nil {
		return fmt.Errorf("problem: %w", err)
	}
	return nil
}

// String renders the problem in test-backend-ops' vars syntax.
func (p Problem) String() string {
	tb, b := ActivationName(p.HalfB), 0
	if p.Broadcast {
		b = 1
	}
	return fmt.Sprintf("type_a=%s,type_b=%s,n_mats=%d,n_used=%d,b=%d,m=%d,n=%d,k=%d",
		p.TypeA, tb, p.Experts, p.Used, b, p.M, p.Tokens, p.K)
}

// FLOPs returns the floating-point operations test-backend-ops credits the case
// with: 2·m·k·n·n_used, independent of routing and padding.
func (p Problem) FLOPs() float64 {
	return 2 * float64(p.M) * float64(p.K) * float64(p.Tokens) * float64(p.Used)
}

// UsesMulMV reports whether llama.cpp runs kernel_mul_mv_id instead of
// kernel_mul_mm_id for the problem: the mat-mat kernel needs k >= 64 and at
// least 32 tokens (kernel-facts 2.2). It is the host's rule, the one place
// metalsim writes it.
func (p Problem) UsesMulMV() bool { return p.Tokens < MinMMTokens || p.K < MinMMK }

// The host's thresholds for the mat-mat MUL_MAT_ID kernel (kernel-facts 2.2).
const (
	MinMMTokens = 32 // ne21
	MinMMK      = 64 // ne00
)
