package tile

import "github.com/metalsim/metalsim/isa"

// Shape is what a kernel asks of a core: threads per threadgroup, the
// registers per thread its programs need and its threadgroup memory.
type Shape struct {
	Threads       int
	Registers     isa.Registers
	TGMemoryBytes int
}

// ShapeOf returns the shape of a kernel whose branches are progs (at least
// one): the compiled kernel has one register count, that of its largest
// branch, and declares the largest threadgroup memory of any.
func ShapeOf(progs []*isa.Program) Shape {
	s := Shape{Threads: progs[0].Tiling.Threads, Registers: progs[0].Registers(), TGMemoryBytes: progs[0].TGMemBytes}
	for _, p := range progs[1:] {
		if r := p.Registers(); r.Total > s.Registers.Total {
			s.Registers = r
		}
		s.TGMemoryBytes = max(s.TGMemoryBytes, p.TGMemBytes)
	}
	return s
}

// KernelShape returns the shape of kernel k for a problem's operand types
// (only the types and k of p matter, the latter for the k-steps).
func KernelShape(p Problem, k Kernel) (Shape, error) {
	if err := checkSteps(p, k); err != nil {
		return Shape{}, err
	}
	b, err := NewBuilder(p, k)
	if err != nil {
		return Shape{}, err
	}
	return b.Shape(), nil
}
