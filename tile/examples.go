package tile

import (
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// ExamplePrograms returns one program of each kernel metalsim builds, on
// small problems, for documentation: together they hold every op of the op
// table at least once (docs/isa.md renders each op's timing expansion from the
// first program that has it). The mul_mm_id tiles hold 5 of 32 tokens, so the
// half-skip, B padding and scatter show; the dense mul_mm has an edge tile
// and, on the simdgroup path, a full one.
func ExamplePrograms() []*isa.Program {
	moe := Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 64, TypeA: dequant.IQ2_XS}
	dense := DenseProblem{M: 100, N: 40, K: 256, TypeA: dequant.Q4_0}
	var out []*isa.Program
	ctx := Context{Rows: 64, Tokens: 5, Steps: 8}
	for _, k := range []Kernel{{Variant: Upstream(), Path: Simdgroup}, {Variant: HalfTile(), Path: Simdgroup}, {Variant: HalfTile(), Path: Tensor}} {
		b, err := NewBuilder(moe, k)
		if err != nil {
			panic("tile: example kernel: " + err.Error()) // a bug in the fixed examples
		}
		out = append(out, b.Program(ctx))
	}
	for _, path := range []Path{Simdgroup, Tensor} {
		b, err := NewMMBuilder(dense, path)
		if err != nil {
			panic("tile: example mul_mm: " + err.Error())
		}
		// an edge tile (bc_out: staged stores) and, on the simdgroup path, a
		// full one (direct stores)
		out = append(out, b.Program(Context{Rows: 36, Tokens: 8, Steps: b.Steps()}))
		if path == Simdgroup {
			out = append(out, b.Program(Context{Rows: 64, Tokens: 32, Steps: b.Steps()}))
		}
	}
	ext, err := MulMVExt(dequant.Q4_0, 1024, 4)
	if err != nil {
		panic("tile: example mul_mv_ext: " + err.Error())
	}
	for _, v := range []struct {
		kern  VecKernel
		typeA dequant.Type
	}{{MulMV(dequant.Q8_0, 1024, false), dequant.Q8_0}, {MulMV(dequant.IQ2_XS, 1024, true), dequant.IQ2_XS}, {ext, dequant.Q4_0}} {
		b, err := NewVecBuilder(v.kern, v.typeA, false, 1024)
		if err != nil {
			panic("tile: example mat-vec: " + err.Error())
		}
		out = append(out, b.Program(b.Context(v.kern.RowsPerTG(), 1)))
	}
	m0, err := Map0Program(moe)
	if err != nil {
		panic("tile: example map0: " + err.Error())
	}
	return append(out, m0)
}
