package emulate

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Tensors are the operands of one MUL_MAT_ID for the emulator.
type Tensors struct {
	// Weights holds src0: Experts x M rows of K weights in TypeA blocks, rows
	// contiguous, experts contiguous (ggml layout).
	Weights []byte
	// Src1 holds the activations: Tokens x SrcRows rows of K values (f32; for an
	// f16 problem every value must be a binary16 value).
	Src1 []float32
	// IDs holds the routing: ids[t*Used+s] = expert of slot s of token t.
	IDs []int32
}

// Check reports the first operand whose size does not match the problem.
func (t *Tensors) Check(p tile.Problem) error {
	rb, err := p.TypeA.RowBytes(p.K)
	if err != nil {
		return err
	}
	if want := p.Experts * p.M * rb; len(t.Weights) != want {
		return fmt.Errorf("weights: %d bytes, want n_mats*m*row_bytes = %d*%d*%d = %d", len(t.Weights), p.Experts, p.M, rb, want)
	}
	if want := p.Tokens * p.SrcRows() * p.K; len(t.Src1) != want {
		return fmt.Errorf("activations: %d values, want n*ne11*k = %d*%d*%d = %d", len(t.Src1), p.Tokens, p.SrcRows(), p.K, want)
	}
	if want := p.Tokens * p.Used; len(t.IDs) != want {
		return fmt.Errorf("ids: %d values, want n*n_used = %d", len(t.IDs), want)
	}
	return nil
}

// Result is the output of a functional emulation.
type Result struct {
	Dst      []float32 // dst[(t*Used+s)*M + r]
	Counters tile.Counters
	// MACs is the multiply-accumulates the kernel executed: its matrix ops'
	// (8x8x8 and 16x16x16, padding rows included, skipped half-tiles not)
	// for mul_mm_id and mul_mm; one per product for the mat-vec kernels,
	// whose lanes multiply each weight by each token's activation once and
	// compute no padding.
	MACs float64
}

// matrixMACs returns the multiply-accumulates of the matrix ops counted in c.
func matrixMACs(c tile.Counters) float64 {
	return float64(c.Work.MMA8)*8*8*8 + float64(c.Work.MMA16)*16*16*16
}

// MulMatID runs kernel_mul_mm_id for values: the routing map, then every
// threadgroup of the grid executes its program on a Machine bound to its expert,
// row tile and routed tokens. Threadgroups write disjoint outputs, so the result
// is the same bits for any number of workers (workers <= 0 uses GOMAXPROCS).
func MulMatID(p tile.Problem, k tile.Kernel, t *Tensors, workers int) (*Result, error) {
	if err := t.Check(p); err != nil {
		return nil, err
	}
	rm, err := tile.Map0(p, t.IDs)
	if err != nil {
		return nil, err
	}
	plan, err := tile.NewPlan(p, k, rm.TPE)
	if err != nil {
		return nil, err
	}
	b, err := tile.NewBuilder(p, k)
	if err != nil {
		return nil, err
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	dst := make([]float32, p.Tokens*p.Used*p.M)
	tiles := plan.ActiveTiles()
	newMem := func() *tgMemory {
		return &tgMemory{w: t.Weights, rowBytes: rb, layout: p.TypeA.Layout(), src1: t.Src1, k: p.K,
			srcRows: p.SrcRows(), used: p.Used, dst: dst, m: p.M}
	}
	err = eachTG(len(tiles), workers, newMem, func(mem *tgMemory, i int) *isa.Program {
		tl := &tiles[i]
		mem.expertOff = tl.Z * p.M * rb
		mem.r0 = tl.Row0
		mem.codes = rm.Rows[tl.Z][tl.Token0:]
		return b.Program(tl.Context)
	})
	if err != nil {
		return nil, err
	}
	c := tile.CountPlan(plan, b)
	return &Result{Dst: dst, Counters: c, MACs: matrixMACs(c)}, nil
}

// tgMemory binds device memory to one threadgroup (isa.Memory).
type tgMemory struct {
	w         []byte
	rowBytes  int
	layout    dequant.Layout
	src1      []float32
	k         int
	srcRows   int
	used      int
	dst       []float32
	m         int
	expertOff int
	r0        int
	codes     []int32
}

func (m *tgMemory) WeightBlock(row, k0 int) ([]byte, int) {
	bw, bb := m.layout.BlockWeights, m.layout.BlockBytes
	off := m.expertOff + (m.r0+row)*m.rowBytes + k0/bw*bb
	return m.w[off : off+bb : off+bb], k0 % bw / 16
}

func (m *tgMemory) Activations(token, k0 int, out *[8]float32) {
	code := int(m.codes[token])
	t, s := code/m.used, code%m.used
	off := (t*m.srcRows+s%m.srcRows)*m.k + k0
	*out = [8]float32(m.src1[off : off+8])
}

func (m *tgMemory) StoreRow(token int, vals []float32) {
	code := int(m.codes[token])
	off := code*m.m + m.r0
	copy(m.dst[off:off+len(vals)], vals)
}
