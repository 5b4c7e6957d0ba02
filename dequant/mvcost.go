package dequant

import "fmt"

// The arithmetic of the mat-vec kernels, as cost data. The mat-vec kernels do
// not call the mat-mat dequantizers (ChunkCost): kernel_mul_mv_<type>_f32
// (which kernel_mul_mv_id runs per (token, slot) pair) fuses the decode into a
// dot product with the lane's activations, often pre-scaled or summed once per
// k-step so that the quant codes can be used unshifted (the q4_0 family, the
// K-quants); kernel_mul_mv_ext calls small float4 dequantizers
// (dequantize_<type>_t4, Chunk4Cost) or, for the K-quants, the mat-mat ones.
// Every row below is derived from the kernel's code at ggml d99724f, cited in
// docs/kernel-facts-types.md §2, with the rules of ChunkCost (R1-R9) and these:
//
//	V1 Loads are counted as the kernel writes them: one per scalar or vector
//	   element read, at its type's width (a uint16 qs read is 2 bytes, a float4
//	   16); the loads of a row are those of one k-step of one lane.
//	V2 A product of an activation and a converted code, added to an
//	   accumulator, is one Convert and one FP32 fma; a sum of products is a
//	   chain of fmas (the first a multiply when the sum starts at zero).
//	V3 Work on the activations alone (pre-scaling, block sums, the
//	   coefficients tq2_0 derives) is done once per k-step and lane, whatever
//	   the number of rows: Step. Work that depends on the row's weights is
//	   Row, once per row.
//	V4 Loop-invariant lane constants (masks, shift positions, pointer bases
//	   computed before the k-loop) are not counted; a row's final
//	   sumf[row] += ... is 1 FP32.
//	V5 A threadgroup table read (shmem_f32[idx], svalues + idx) is a load
//	   from Threadgroup memory of the entry's element width.
//	V6 The byte reads of one codebook entry (grid[j] for j = 0..7 or 0..3,
//	   a uint8 pointer into the aligned element, constant or threadgroup)
//	   issue as loads of byteRunBytes bytes (ChunkCost's R10): gridRun.

// Threadgroup is the threadgroup address space: the copies of a lookup table
// some mat-vec kernels make before their k-loop (mxfp4, iq4_nl, iq4_xs, and
// the iq2_xxs, iq2_xs, iq3_xxs and iq3_s grids).
const Threadgroup Space = 2

// MatVecForm selects which of a type's mat-vec kernels a cost describes. Only
// f32, f16 and bf16 have more than one (docs/kernel-geometry.md §3.1).
type MatVecForm uint8

// The mat-vec kernel forms.
const (
	// MatVecMain is kernel_mul_mv_<type>_f32 of a quantized type, and the
	// _4 variant (kernel_mul_mv_<type>_f32_4) of f32, f16 and bf16.
	MatVecMain MatVecForm = iota
	// MatVecPlain is the f32/f16/bf16 variant without a suffix, for
	// ne00 % 4 != 0.
	MatVecPlain
	// MatVecShort is the f32/f16/bf16 _short variant for ne00 < 32: one row
	// per lane, read serially.
	MatVecShort
	numMatVecForms
)

var matVecFormNames = [numMatVecForms]string{"_4", "plain", "_short"}

// String returns "_4" (the main form), "plain" or "_short".
func (f MatVecForm) String() string {
	if f >= numMatVecForms {
		return fmt.Sprintf("MatVecForm(%d)", uint8(f))
	}
	return matVecFormNames[f]
}

// MatVecCost is what one lane of a mat-vec kernel does in one k-step.
type MatVecCost struct {
	// Weights is the weights of one row the lane covers per k-step.
	Weights int
	// Step is the work done once per k-step whatever the rows (V3): the
	// lane's activation loads (Device, "y") and the arithmetic on them.
	// Temps counts the values it keeps live besides the loaded activations.
	Step Cost
	// Row is the work of one row: the lane's weight loads (Device), its
	// lookup-table reads (Threadgroup or Constant), and the dot product of
	// the weights with the activations accumulated into the row's sum.
	// Temps counts the values live during it besides the activations.
	Row Cost
}

// MatVecCosts returns the cost of one k-step of one lane of the type's
// mat-vec kernel in form f. It panics on an invalid Type, and on a form other
// than MatVecMain for a quantized type (which has one kernel).
func MatVecCosts(t Type, f MatVecForm) MatVecCost {
	if !t.Valid() {
		panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
	}
	var c MatVecCost
	switch {
	case f == MatVecMain:
		c = matVecCosts[t]
	case f < numMatVecForms && !t.Quantized():
		c = floatForms[f][t]
	default:
		panic(fmt.Sprintf("dequant: %s has no mat-vec form %s", t, f))
	}
	c.Step.Loads = append([]Load(nil), c.Step.Loads...)
	c.Row.Loads = append([]Load(nil), c.Row.Loads...)
	return c
}

// Chunk4Cost returns the cost of one call of dequantize_<type>_t4, the float4
// dequantizer kernel_mul_mv_ext's float4 form calls per 4 weights (for f32,
// f16 and bf16 a float4 load), and ok = false for the types without one (the
// K-quants' mul_mv_ext calls the mat-mat dequantizer, ChunkCost; the iq types
// other than iq4_nl, and tq2_0, have no mul_mv_ext).
func Chunk4Cost(t Type) (Cost, bool) {
	if !t.Valid() {
		panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
	}
	c := chunk4Costs[t]
	if c.Loads == nil {
		return Cost{}, false
	}
	c.Loads = append([]Load(nil), c.Loads...)
	return c, true
}

func tgl(width, count int, what string) Load { return Load{Threadgroup, width, count, what} }

// mv builds a MatVecCost from its weights, step and row.
func mv(weights int, step, row Cost) MatVecCost {
	return MatVecCost{Weights: weights, Step: step, Row: row}
}

var (
	y4x4 = ld(dev(16, 4, "y")) // 16 activations as four float4
	y4x8 = ld(dev(16, 8, "y")) // 32 activations
	y4x2 = ld(dev(16, 2, "y")) // 8 activations
)

// matVecCosts is the main form of every type (docs/kernel-facts-types.md §2
// derives each row from the kernel's lines).
var matVecCosts = [numTypes]MatVecCost{
	F32:  mv(16, row(y4x4, 0, 0, 0, 0), row(ld(dev(16, 4, "data")), 17, 0, 0, 1)),
	F16:  mv(16, row(y4x4, 0, 0, 0, 0), row(ld(dev(8, 4, "data")), 17, 0, 0, 1)),
	BF16: mv(16, row(y4x4, 0, 0, 0, 0), row(ld(dev(8, 4, "data")), 17, 16, 0, 1)),
	Q4_0: mv(16, row(y4x4, 29, 0, 0, 2), row(ld(dHalf, dev(2, 4, "qs")), 22, 16, 16, 7)),
	Q4_1: mv(16, row(y4x4, 29, 0, 0, 2), row(ld(dHalf, dev(2, 1, "m"), dev(2, 4, "qs")), 22, 16, 16, 7)),
	Q5_0: mv(16, row(y4x4, 29, 0, 0, 2), row(ld(dHalf, dev(4, 1, "qh"), dev(2, 4, "qs")), 22, 96, 16, 8)),
	Q5_1: mv(16, row(y4x4, 29, 0, 0, 2), row(ld(dHalf, dev(2, 1, "m"), dev(4, 1, "qh"), dev(2, 4, "qs")), 22, 96, 16, 8)),
	Q8_0: mv(8, row(y4x2, 0, 0, 0, 0), row(ld(dev(1, 8, "qs"), dHalf), 9, 0, 8, 6)),
	Q1_0: mv(16, row(y4x4, 16, 0, 0, 1), row(ld(dHalf, dev(1, 2, "qs")), 19, 48, 0, 3)),
	Q2_0: mv(16, row(y4x4, 16, 0, 0, 1), row(ld(dHalf, dev(1, 4, "qs")), 36, 96, 0, 4)),
	MXFP4: mv(16, row(y4x4, 0, 0, 0, 0),
		row(ld(dev(1, 1, "e"), dev(1, 8, "qs"), tgl(4, 16, "kvalues")), 29, 19, 0, 21)),
	IQ4_NL: mv(16, row(y4x4, 0, 0, 0, 0),
		row(ld(dHalf, dev(2, 4, "qs"), tgl(4, 16, "kvalues")), 25, 26, 0, 13)),
	IQ4_XS: mv(16, row(y4x4, 0, 0, 0, 0),
		row(ld(dHalf, dev(2, 1, "scales_h"), dev(1, 1, "scales_l"), dev(4, 2, "qs"), tgl(4, 16, "kvalues")), 26, 27, 1, 13)),
	Q2_K: mv(32, row(y4x8, 32, 0, 0, 4),
		row(ld(dHalf, dev(2, 1, "dmin"), dev(1, 4, "scales"), dev(2, 4, "qs")), 54, 40, 40, 13)),
	Q3_K: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(2, 4, "scales"), dev(2, 8, "qs"), dev(2, 8, "hmask")), 80, 144, 36, 17)),
	Q4_K: mv(32, row(y4x8, 32, 0, 0, 4),
		row(ld(dHalf, dev(2, 1, "dmin"), dev(2, 3, "scales"), dev(2, 8, "qs")), 52, 50, 40, 17)),
	Q5_K: mv(32, row(y4x8, 32, 0, 0, 4),
		row(ld(dHalf, dev(2, 1, "dmin"), dev(2, 3, "scales"), dev(1, 16, "qs"), dev(1, 8, "qh")), 84, 146, 40, 25)),
	Q6_K: mv(16, row(y4x4, 0, 0, 0, 0),
		row(ld(dHalf, dev(1, 4, "scales"), dev(1, 8, "ql"), dev(1, 4, "qh")), 22, 76, 20, 13)),
	TQ2_0: mv(32, row(y4x8, 56, 0, 0, 20), row(ld(dHalf, dev(1, 8, "qs")), 82, 0, 8, 10)),
	IQ2_XXS: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(1, 4, "qs"), dev(2, 2, "qs"), gridRun(Threadgroup, 32), tgl(1, 4, "ksigns")), 67, 103, 33, 10)),
	IQ2_XS: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(1, 1, "scales"), dev(2, 4, "qs"), gridRun(Threadgroup, 32), tgl(1, 4, "ksigns")), 70, 106, 34, 10)),
	IQ2_S: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(1, 1, "scales"), dev(1, 1, "qh"), dev(1, 4, "qs"), dev(1, 4, "signs"), gridRun(Constant, 32)), 70, 110, 34, 10)),
	IQ3_XXS: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(2, 2, "qs"), dev(1, 8, "qs"), gridRun(Threadgroup, 32), tgl(1, 4, "ksigns")), 68, 103, 33, 10)),
	IQ3_S: mv(32, row(y4x8, 0, 0, 0, 0),
		row(ld(dHalf, dev(1, 1, "scales"), dev(1, 1, "qh"), dev(1, 8, "qs"), dev(1, 4, "signs"), gridRun(Threadgroup, 32)), 67, 123, 33, 10)),
	IQ1_S: mv(32, row(y4x8, 32, 0, 0, 1),
		row(ld(dHalf, dev(1, 4, "qs"), dev(2, 1, "qh"), gridRun(Constant, 16)), 36, 50, 33, 9)),
	IQ1_M: mv(32, row(y4x8, 32, 0, 0, 4),
		row(ld(dev(2, 5, "scales"), dev(1, 4, "qs"), dev(1, 2, "qh"), gridRun(Constant, 16)), 42, 69, 34, 10)),
}

// floatForms are the plain and _short forms of f32, f16 and bf16.
var floatForms = [numMatVecForms][numTypes]MatVecCost{
	MatVecPlain: {
		F32:  mv(8, row(ld(dev(4, 8, "y")), 0, 0, 0, 0), row(ld(dev(4, 8, "data")), 9, 0, 0, 1)),
		F16:  mv(8, row(ld(dev(4, 8, "y")), 0, 0, 0, 0), row(ld(dev(2, 8, "data")), 9, 0, 0, 1)),
		BF16: mv(8, row(ld(dev(4, 8, "y")), 0, 0, 0, 0), row(ld(dev(2, 8, "data")), 9, 8, 0, 1)),
	},
	MatVecShort: {
		F32:  mv(16, row(ld(dev(4, 16, "y")), 0, 0, 0, 0), row(ld(dev(4, 16, "data")), 16, 0, 0, 1)),
		F16:  mv(16, row(ld(dev(4, 16, "y")), 0, 0, 0, 0), row(ld(dev(2, 16, "data")), 16, 0, 0, 1)),
		BF16: mv(16, row(ld(dev(4, 16, "y")), 0, 0, 0, 0), row(ld(dev(2, 16, "data")), 16, 16, 0, 1)),
	},
}

// kvalues4 is the four float levels a t4 dequantizer reads from constant memory.
var kvalues4 = cst(4, 4, "kvalues")

// chunk4Costs is one call of dequantize_<type>_t4 (docs/kernel-facts-types.md
// §2.3 derives each row).
var chunk4Costs = [numTypes]Cost{
	F32:    row(ld(dev(16, 1, "data")), 0, 0, 0, 0),
	F16:    row(ld(dev(8, 1, "data")), 0, 0, 0, 0),
	BF16:   row(ld(dev(8, 1, "data")), 0, 4, 0, 0),
	Q1_0:   row(ld(dHalf, dev(1, 1, "qs")), 1, 17, 0, 2),
	Q2_0:   row(ld(dHalf, dev(1, 1, "qs")), 8, 4, 4, 2),
	Q4_0:   row(ld(dHalf, dev(2, 2, "qs")), 7, 9, 4, 5),
	Q4_1:   row(ld(dHalf, dev(2, 1, "m"), dev(2, 2, "qs")), 6, 9, 4, 5),
	Q5_0:   row(ld(dHalf, dev(4, 1, "qh"), dev(2, 2, "qs")), 5, 38, 4, 6),
	Q5_1:   row(ld(dHalf, dev(2, 1, "m"), dev(4, 1, "qh"), dev(2, 2, "qs")), 4, 38, 4, 6),
	Q8_0:   row(ld(dHalf, dev(4, 1, "qs")), 4, 0, 4, 3),
	MXFP4:  row(ld(dev(1, 1, "e"), dev(1, 4, "qs"), kvalues4), 4, 10, 0, 4),
	IQ4_NL: row(ld(dHalf, dev(2, 2, "qs"), kvalues4), 4, 11, 0, 3),
}
