package tile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// kernel_mul_mv_ext (kernel-facts §2.1, docs/kernel-geometry.md §4): MUL_MAT
// with 2 <= n <= 8 f32 activation rows, k % 128 == 0, for the types that have
// it (OPS L2340-2368). Grid (ceil(ne01/r0ptg), ceil(ne11/r1ptg), 1), threads
// (32, nsg = 2, 1) (OPS L2377-2439); nxpsg = 16 lanes per row if k % 256 == 0
// and n < 3, else 8; r0ptg = (32/nxpsg)·2 rows per threadgroup; r1ptg = 2 for
// n = 2, 3 for n in {3, 6}, 4 for {4, 7, 8}, 5 for 5. A simdgroup holds
// 32/nxpsg lane groups, one row each, and every group computes its row for
// r1ptg tokens, its nxpsg lanes splitting K. Two forms (MTL L3982-4191): the
// float4 one (kernel_mul_mv_ext_q4_f32_impl, the 12 types with a
// dequantize_<type>_t4) takes four float4 chunks per lane and k-step, nxpsg
// chunks apart, decodes all four and then dots each with every token's
// activations; the float4x4 one (kernel_mul_mv_ext_q4x4_f32_impl, the
// K-quants) takes one 16-weight chunk per lane and step through the mat-mat
// dequantizer. Either way a lane covers 16 weights of its row per step
// (k-step = 16·nxpsg weights; k % 128 == 0, and % 256 for nxpsg = 16, make
// every step full); the group's partial sums meet in a log2(nxpsg)-level
// shuffle-down tree and its first lane stores the r1ptg outputs.

// extPieceInts is the bookkeeping of one chunk of mul_mv_ext: the chunk index
// advanced by nxpsg, compared with the chunks per block, and the block pointer
// and index wrapped (MTL L4031-4037, if-converted): an add, a compare, a
// shift, an and and a select of the pointer.
const extPieceInts = 5

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
	form := isa.VecExt4
	if slices.Contains(extKTypes, t.String()) {
		form = isa.VecExt16
	}
	return VecKernel{Name: "mul_mv_ext", Metal: fmt.Sprintf("kernel_mul_mv_ext_%s_f32_r1_%d", t, r1ptg), Form: form,
		NSG: 2, LanesPerRow: nxpsg, RowsPerGroup: 1, WeightsPerLane: 16, Tokens: r1ptg}, nil
}
