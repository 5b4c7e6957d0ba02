package emulate

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// DenseTensors are the operands of one MUL_MAT for the emulator.
type DenseTensors struct {
	// Weights holds src0: M rows of K weights in TypeA blocks, rows contiguous.
	Weights []byte
	// Src1 holds the activations: N rows of K values (f32; for an f16 problem
	// every value must be a binary16 value).
	Src1 []float32
}

// Check reports the first operand whose size does not match the problem.
func (t *DenseTensors) Check(p tile.DenseProblem) error {
	if err := p.Validate(); err != nil {
		return err
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	if want := p.M * rb; len(t.Weights) != want {
		return fmt.Errorf("weights: %d bytes, want m*row_bytes = %d*%d = %d", len(t.Weights), p.M, rb, want)
	}
	if want := p.N * p.K; len(t.Src1) != want {
		return fmt.Errorf("activations: %d values, want n*k = %d*%d = %d", len(t.Src1), p.N, p.K, want)
	}
	return nil
}

// RandomDenseTensors makes deterministic operands for a MUL_MAT, drawn like
// RandomTensors' (one expert, one slot per token).
func RandomDenseTensors(p tile.DenseProblem, seed uint64) *DenseTensors {
	t := RandomTensors(tile.Problem{Experts: 1, Used: 1, M: p.M, K: p.K, Tokens: p.N, TypeA: p.TypeA, HalfB: p.HalfB}, seed)
	return &DenseTensors{Weights: t.Weights, Src1: t.Src1}
}

// MulMat runs, for values, the kernel the host picks for a MUL_MAT
// (tile.Workload.Dispatch) with the upstream tile; path selects
// kernel_mul_mm's body. dst[j*M + i].
func MulMat(p tile.DenseProblem, path tile.Path, t *DenseTensors, workers int) (*Result, error) {
	return Dense(p, tile.DenseWorkload(p).Dispatch(), tile.Kernel{Variant: tile.Upstream(), Path: path}, t, workers)
}

// Dense runs one dense kernel for values, whatever the host would pick (the
// kernel's own limits still apply: mul_mv_ext's types and n, mul_mm's k);
// mul_mm runs kernel k's variant on its path.
func Dense(p tile.DenseProblem, kern tile.MetalKernel, k tile.Kernel, t *DenseTensors, workers int) (*Result, error) {
	if err := t.Check(p); err != nil {
		return nil, err
	}
	if err := tile.DenseWorkload(p).CheckKernel(kern); err != nil {
		return nil, err
	}
	jobs, err := denseJobs(p, kern, k)
	if err != nil {
		return nil, err
	}
	dst := make([]float32, p.N*p.M)
	rb, _ := p.TypeA.RowBytes(p.K)
	mem := func() *devMemory {
		return &devMemory{w: t.Weights, rowBytes: rb, layout: p.TypeA.Layout(), src1: t.Src1, k: p.K, dst: dst, m: p.M}
	}
	if err := runJobs(jobs, mem, workers); err != nil {
		return nil, err
	}
	r := &Result{Dst: dst, Counters: countJobs(jobs), MACs: float64(p.M) * float64(p.N) * float64(p.K)}
	if kern == tile.KernelMulMM {
		r.MACs = matrixMACs(r.Counters)
	}
	return r, nil
}

// MulMVID runs kernel_mul_mv_id for values: one threadgroup per row
// block and (token, slot) pair, on the pair's expert. dst[(t*Used+s)*M + r].
func MulMVID(p tile.Problem, t *Tensors, workers int) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := t.Check(p); err != nil {
		return nil, err
	}
	for i, e := range t.IDs {
		if e < 0 || int(e) >= p.Experts {
			return nil, fmt.Errorf("ids[%d][%d] = %d: expert must be in [0, %d)", i/p.Used, i%p.Used, e, p.Experts)
		}
	}
	b, err := tile.NewVecBuilder(tile.MulMV(p.TypeA, p.K, true), p.TypeA, p.HalfB, p.K)
	if err != nil {
		return nil, err
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	blocks := b.Tiles(p.M, 1) // the row blocks of one (token, slot) pair
	var jobs []tgJob
	for z := 0; z < p.Tokens*p.Used; z++ {
		e, tok, s := int(t.IDs[z]), z/p.Used, z%p.Used
		for _, tl := range blocks {
			jobs = append(jobs, tgJob{prog: b.Program(tl.Context),
				wOff: (e*p.M + tl.Row0) * rb, r0: tl.Row0, src: []int{tok*p.SrcRows() + s%p.SrcRows()}, out: []int{z}})
		}
	}
	dst := make([]float32, p.Tokens*p.Used*p.M)
	mem := func() *devMemory {
		return &devMemory{w: t.Weights, rowBytes: rb, layout: p.TypeA.Layout(), src1: t.Src1, k: p.K, dst: dst, m: p.M}
	}
	if err := runJobs(jobs, mem, workers); err != nil {
		return nil, err
	}
	return &Result{Dst: dst, Counters: countJobs(jobs), MACs: float64(p.Tokens) * float64(p.Used) * float64(p.M) * float64(p.K)}, nil
}

// tgJob is one threadgroup to emulate: its program and its binding.
type tgJob struct {
	prog *isa.Program
	wOff int   // byte offset of the tile's row 0 in the weights
	r0   int   // the tile's first dst row
	src  []int // src1 row of each tile token
	out  []int // dst row (an M-vector index) of each tile token
}

// denseJobs lays out the threadgroups of a dense kernel in dispatch order.
func denseJobs(p tile.DenseProblem, kern tile.MetalKernel, k tile.Kernel) ([]tgJob, error) {
	rb, err := p.TypeA.RowBytes(p.K)
	if err != nil {
		return nil, err
	}
	// the activation (and dst) rows of a tile's tokens
	rowsOf := func(first, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = first + i
		}
		return out
	}
	var tiles []tile.DenseTile
	switch kern {
	case tile.KernelMulMM:
		b, err := tile.NewMMVariantBuilder(p, k)
		if err != nil {
			return nil, err
		}
		tiles = b.Tiles()
		jobs := make([]tgJob, len(tiles))
		for i, tl := range tiles {
			toks := rowsOf(tl.Token0, tl.Tokens)
			jobs[i] = tgJob{prog: b.Program(tl.Context), wOff: tl.Row0 * rb, r0: tl.Row0, src: toks, out: toks}
		}
		return jobs, nil
	}
	b, err := tile.NewDenseVecBuilder(p, kern)
	if err != nil {
		return nil, err
	}
	tiles = b.Tiles(p.M, p.N)
	jobs := make([]tgJob, len(tiles))
	for i, tl := range tiles {
		toks := rowsOf(tl.Token0, tl.Tokens)
		jobs[i] = tgJob{prog: b.Program(tl.Context), wOff: tl.Row0 * rb, r0: tl.Row0, src: toks, out: toks}
	}
	return jobs, nil
}

// runJobs emulates the threadgroups on workers goroutines (<= 0: GOMAXPROCS).
// Threadgroups write disjoint outputs, so the result does not depend on the
// number of workers.
func runJobs(jobs []tgJob, newMem func() *devMemory, workers int) error {
	return eachTG(len(jobs), workers, newMem, func(mem *devMemory, i int) *isa.Program {
		j := &jobs[i]
		mem.wOff, mem.r0, mem.src, mem.out = j.wOff, j.r0, j.src, j.out
		return j.prog
	})
}

// eachTG runs threadgroups 0..n-1 for values on workers goroutines (<= 0:
// GOMAXPROCS), threadgroup i on worker i % workers. Each worker has its own
// memory binding (newMem) and one Machine per program; bind points the
// worker's memory at threadgroup i and returns its program. Threadgroups must
// write disjoint outputs: then the result is the same bits for any number of
// workers.
func eachTG[M isa.Memory](n, workers int, newMem func() M, bind func(mem M, i int) *isa.Program) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			machines := map[*isa.Program]*isa.Machine{}
			mem := newMem()
			for i := w; i < n; i += workers {
				prog := bind(mem, i)
				m := machines[prog]
				if m == nil {
					if m, errs[w] = isa.NewMachine(prog); errs[w] != nil {
						return
					}
					m.Mem = mem
					machines[prog] = m
				}
				m.Reset()
				m.Run()
			}
		}(w)
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// countJobs sums the program counts of the threadgroups.
func countJobs(jobs []tgJob) tile.Counters {
	return tile.CountPrograms(len(jobs), func(i int) *isa.Program { return jobs[i].prog })
}

// devMemory binds device memory to one threadgroup of the kernels that address
// activation rows and dst rows directly (isa.DeviceMemory).
type devMemory struct {
	w        []byte
	rowBytes int
	layout   dequant.Layout
	src1     []float32
	k        int
	dst      []float32
	m        int
	wOff     int
	r0       int
	src, out []int
}

func (m *devMemory) WeightBlock(row, k0 int) ([]byte, int) {
	bw, bb := m.layout.BlockWeights, m.layout.BlockBytes
	off := m.wOff + row*m.rowBytes + k0/bw*bb
	return m.w[off : off+bb : off+bb], k0 % bw / 16
}

func (m *devMemory) Activations(token, k0 int, out *[8]float32) { m.Vector(token, k0, out[:]) }

func (m *devMemory) Vector(token, k0 int, out []float32) {
	copy(out, m.src1[m.src[token]*m.k+k0:][:len(out)])
}

func (m *devMemory) StoreRow(token int, vals []float32) {
	copy(m.dst[m.out[token]*m.m+m.r0:], vals)
}

func (m *devMemory) Store(row, token int, v float32) { m.dst[m.out[token]*m.m+m.r0+row] = v }
