package tile

import (
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// kernel_mul_mv_ext (kernel-facts §2.1): MUL_MAT with 2 <= n <= 8 f32
// activation rows, k % 128 == 0, for the types that have it. Documented: grid
// (ceil(ne01/r0ptg), ceil(ne11/r1ptg), 1), threads (32, nsg = 2, 1); nxpsg = 16
// lanes per row if k % 256 == 0 and n < 3, else 8; r0ptg = (32/nxpsg)·2 rows per
// threadgroup; r1ptg = 2 for n = 2, 3 for n in {3, 6}, 4 for {4, 7, 8}, 5 for 5.
// So a simdgroup holds 32/nxpsg lane groups, one row each, and every group
// computes its row for r1ptg tokens, its nxpsg lanes splitting K.
//
// Assumptions: a lane takes one 16-weight chunk per k-step (k-step = nxpsg·16
// weights; the documented k % 128 == 0, and % 256 for nxpsg = 16, make every
// step full), decodes it once with the dequantizer and multiplies it with each
// token's 16 activations (the r1ptg activation loads of a step are issued
// first); the group's partial sums meet in a log2(nxpsg)-level shuffle tree and
// the group's first lane stores the r1ptg outputs. The rest is as in mulmv.go.

// MulMVExt returns the mul_mv_ext geometry for n tokens, or an error naming the
// rule the problem breaks.
func MulMVExt(t dequant.Type, k, n int) (VecKernel, error) {
	lo, hi, ok := extTokens(t.String())
	if !ok {
		return VecKernel{}, fmt.Errorf("mul_mv_ext: type_a = %s: no mul_mv_ext kernel (types %s; %s for 4 to 8 tokens)", t,
			strings.Join(extTypes, ", "), strings.Join(extKTypes, ", "))
	}
	if k%128 != 0 {
		return VecKernel{}, fmt.Errorf("mul_mv_ext: k = %d: must be a multiple of 128", k)
	}
	if n < lo || n > hi {
		return VecKernel{}, fmt.Errorf("mul_mv_ext: n = %d: must be in [%d, %d] for type_a = %s", n, lo, hi, t)
	}
	nxpsg := 8
	if k%256 == 0 && n < 3 {
		nxpsg = 16
	}
	r1ptg := map[int]int{2: 2, 3: 3, 6: 3, 4: 4, 7: 4, 8: 4, 5: 5}[n]
	return VecKernel{Name: "mul_mv_ext", NSG: 2, LanesPerRow: nxpsg, RowsPerGroup: 1, ChunksPerLane: 1, Tokens: r1ptg}, nil
}
