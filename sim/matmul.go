package sim

import (
	"fmt"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// Timing of the kernels besides mul_mm_id: kernel_mul_mv_id (MUL_MAT_ID with
// few tokens or short rows) and the dense MUL_MAT kernels (kernel_mul_mm on
// either path, kernel_mul_mv, kernel_mul_mv_ext). Each is one dispatch, built
// as a Grid of the same programs the emulator runs and timed by RunGrid; the
// prediction adds one dispatch_overhead_us.
//
// Weight reuse across threadgroups: a threadgroup whose weights an earlier
// threadgroup of the dispatch read no more than the SLC's size of weight
// traffic ago finds them in the SLC (its grid entry is marked repeat, as for
// mul_mm_id's neighbouring token tiles). mul_mv_id: the (token, slot) pairs of
// one expert, the traffic between them counted as whole experts per pair
// (an upper bound on the distinct bytes in between); dense mat-vec kernels: the
// next token (block) re-reads the whole matrix, which is a repeat when the
// matrix fits the SLC; mul_mm: later token tiles of a row tile, as mul_mm_id.

type vecKey struct {
	v     tile.VecKernel
	typeA dequant.Type
	halfB bool
	k     int
}

type mmKey struct {
	p tile.DenseProblem
	k tile.Kernel
}

// vecBuilder returns the (shared) builder of a mat-vec kernel.
func (s *Simulator) vecBuilder(v tile.VecKernel, typeA dequant.Type, halfB bool, k int) (*tile.VecBuilder, error) {
	return memo(&s.mu, s.vecs, vecKey{v, typeA, halfB, k}, func() (*tile.VecBuilder, error) { return tile.NewVecBuilder(v, typeA, halfB, k) })
}

// denseVecBuilder returns the (shared) builder of the mat-vec kernel kern
// for a dense problem.
func (s *Simulator) denseVecBuilder(p tile.DenseProblem, kern tile.MetalKernel) (*tile.VecBuilder, error) {
	v, err := tile.DenseVecKernel(p, kern)
	if err != nil {
		return nil, err
	}
	return s.vecBuilder(v, p.TypeA, p.HalfB, p.K)
}

// mmBuilder returns the (shared) builder of the dense kernel_mul_mm with
// kernel k's variant and path.
func (s *Simulator) mmBuilder(p tile.DenseProblem, k tile.Kernel) (*tile.MMBuilder, error) {
	return memo(&s.mu, s.mms, mmKey{p, k}, func() (*tile.MMBuilder, error) { return tile.NewMMVariantBuilder(p, k) })
}

// MulMVIDGrid returns the kernel_mul_mv_id dispatch of a problem for one
// routing (ids[t*Used+s]): grid (row blocks, 1, pairs), x fastest.
func (s *Simulator) MulMVIDGrid(p tile.Problem, ids []int32, chip *chips.Chip) (*Grid, *tile.VecBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if len(ids) != p.Tokens*p.Used {
		return nil, nil, fmt.Errorf("ids: %d values, want n*n_used = %d", len(ids), p.Tokens*p.Used)
	}
	b, err := s.vecBuilder(tile.MulMV(p.TypeA, p.K, true), p.TypeA, p.HalfB, p.K)
	if err != nil {
		return nil, nil, err
	}
	R := b.Kernel.RowsPerTG()
	gx := ceilDiv(p.M, R)
	pairs := p.Tokens * p.Used
	rb, _ := p.TypeA.RowBytes(p.K)
	expertBytes := float64(p.M) * float64(rb)
	repeat := make([]bool, pairs)
	last := map[int32]int{}
	for z, e := range ids {
		if e < 0 || int(e) >= p.Experts {
			return nil, nil, fmt.Errorf("ids[%d][%d] = %d: expert must be in [0, %d)", z/p.Used, z%p.Used, e, p.Experts)
		}
		if prev, ok := last[e]; ok && float64(z-prev)*expertBytes <= chip.SLCBytes.Value {
			repeat[z] = true
		}
		last[e] = z
	}
	progs := make([]*isa.Program, gx)
	for x := range progs {
		progs[x] = b.Program(b.Context(min(R, p.M-x*R), 1))
	}
	g := &Grid{
		Kernel:   vecKey{b.Kernel, p.TypeA, p.HalfB, p.K},
		Shape:    []*isa.Program{progs[0]},
		Launched: gx * pairs,
		ActReuse: gx,
		TG: func(i int) (*isa.Program, bool) {
			return progs[i%gx], repeat[i/gx]
		},
	}
	return g, b, nil
}

// DenseGrid returns the dispatch of kernel kern (mul_mm, mul_mv or
// mul_mv_ext) for a MUL_MAT, with one z plane per matmul of a batched
// problem; mul_mm runs kernel k's variant on its path.
func (s *Simulator) DenseGrid(p tile.DenseProblem, kern tile.MetalKernel, k tile.Kernel, chip *chips.Chip) (*Grid, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := tile.DenseWorkload(p).CheckKernel(kern); err != nil {
		return nil, err
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	// a batched problem's z planes run one after the other; a plane whose
	// weight matrix the previous plane read (a broadcast batch) finds it in
	// the SLC when it fits
	fits := float64(p.M)*float64(rb) <= chip.SLCBytes.Value
	planeRepeat := func(z int) bool { return z%p.PerMatrix() != 0 && fits }
	if kern == tile.KernelMulMM {
		b, err := s.mmBuilder(p, k)
		if err != nil {
			return nil, err
		}
		g := b.Grid()
		plane := g[0] * g[1]
		tg := b.Threadgroups()
		return &Grid{
			TiledWeights: true,
			Kernel:       mmKey{p, b.Kernel},
			Shape:        b.ShapePrograms(),
			Launched:     plane * g[2],
			ActReuse:     g[1],
			TG: func(i int) (*isa.Program, bool) {
				prog, rep := tg(i % plane)
				return prog, rep || planeRepeat(i/plane)
			},
		}, nil
	}
	vb, err := s.denseVecBuilder(p, kern)
	if err != nil {
		return nil, err
	}
	R, T := vb.Kernel.RowsPerTG(), vb.Kernel.Tokens
	gx, gy := ceilDiv(p.M, R), ceilDiv(p.N, T)
	plane := gx * gy
	// the next token block re-reads the whole matrix: from the SLC if it fits
	progs := make([]*isa.Program, 0, 4)
	ctx := func(x, y int) tile.Context { return vb.Context(min(R, p.M-x*R), min(T, p.N-y*T)) }
	for _, c := range []tile.Context{ctx(0, 0), ctx(gx-1, 0), ctx(0, gy-1), ctx(gx-1, gy-1)} {
		progs = append(progs, vb.Program(c))
	}
	return &Grid{
		Kernel:   vecKey{vb.Kernel, p.TypeA, p.HalfB, p.K},
		Shape:    progs[:1],
		Launched: plane * p.Batches(),
		ActReuse: gx,
		TG: func(i int) (*isa.Program, bool) {
			z, in := i/plane, i%plane
			x, y := in%gx, in/gx
			j := 0
			if x == gx-1 {
				j++
			}
			if y == gy-1 {
				j += 2
			}
			return progs[j], y > 0 && fits || planeRepeat(z)
		},
	}, nil
}

// RunMulMVID predicts the time of one MUL_MAT_ID that the host runs as
// kernel_mul_mv_id (n < 32 tokens or k < 64): the mean over routing draws of
// the dispatch, plus one dispatch boundary (no map0).
func (s *Simulator) RunMulMVID(p tile.Problem, chip *chips.Chip, opt Options) (*Result, error) {
	start := time.Now()
	opt = opt.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	w, err := s.estimateMulMVID(p, opt)
	if err == nil {
		err = CheckWork(w, opt)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Problem: p, KernelName: "mul_mv_id", Chip: chip.Name, Engine: opt.Engine, Draws: opt.Draws}
	mean := drawMean{res: res}
	err = s.runDraws(&mean, chip, func(d int) (*Grid, tile.Counters, error) {
		ids, err := routing.IDs(opt.Routing, p, opt.Seed+uint64(d))
		if err != nil {
			return nil, tile.Counters{}, err
		}
		g, _, err := s.MulMVIDGrid(p, ids, chip)
		if err != nil {
			return nil, tile.Counters{}, err
		}
		return g, countGrid(g), nil
	})
	if err != nil {
		return nil, err
	}
	finish(res, p.FLOPs(), chip, 1, start, opt.Totals)
	return res, nil
}

// RunWorkload predicts the time of one matmul op on a chip: the kernel
// llama.cpp dispatches for it (tile.Workload.Dispatch), or forced instead
// (tile.KernelAuto: no forcing), with kernel k's variant and path where the
// kernel that runs has them (mul_mm_id and mul_mm; the knob table's Applies
// column, tile.Knob, says which kernels and paths take each knob).
func (s *Simulator) RunWorkload(w tile.Workload, k tile.Kernel, forced tile.MetalKernel, chip *chips.Chip, opt Options) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	kern, err := w.Kernel(forced)
	if err != nil {
		return nil, err
	}
	switch kern {
	case tile.KernelMulMMID:
		return s.Run(w.MoE, k, chip, opt)
	case tile.KernelMulMVID:
		return s.RunMulMVID(w.MoE, chip, opt)
	}
	return s.runDense(w.Dense, kern, k, chip, opt)
}

// runDense predicts the time of one MUL_MAT run as kernel kern, plus one
// dispatch boundary. The dispatch does not depend on a routing, so it is
// timed once.
func (s *Simulator) runDense(p tile.DenseProblem, kern tile.MetalKernel, k tile.Kernel, chip *chips.Chip, opt Options) (*Result, error) {
	start := time.Now()
	opt = opt.withDefaults()
	g, err := s.DenseGrid(p, kern, k, chip)
	if err != nil {
		return nil, err
	}
	if err := CheckWork(gridWork(float64(g.Launched), float64(g.Launched), g.Shape, nil, 1, opt.Engine), opt); err != nil {
		return nil, err
	}
	res := &Result{Dense: p, KernelName: kern.String(), Chip: chip.Name, Engine: opt.Engine, Draws: 1}
	if kern == tile.KernelMulMM {
		res.Kernel = tile.DenseKernelFor(k)
	}
	res.Counters = countGrid(g)
	res.Sim.Represented = res.Counters.Work.Instructions
	gr, err := s.RunGrid(g, chip, res.Engine)
	if err != nil {
		return nil, err
	}
	res.CoreBusyUs, res.Occupancy, res.Registers = gr.CoreBusyUs, gr.Occupancy, gr.Registers
	res.Sim.Instructions, res.Sim.Events = gr.Instructions, gr.Events
	res.KernelCycles, res.IdleSGCycles, res.Utilization = gr.Cycles, gr.IdleSGCycles, gr.Utilization
	res.LevelBytes, res.DRAMBytes = gr.LevelBytes, gr.DRAMBytes
	finish(res, p.FLOPs(), chip, 1, start, opt.Totals)
	return res, nil
}

// DefaultPath returns the kernel_mul_mm body llama.cpp compiles on a chip: the
// tensor path where the chip has it enabled by default, else simdgroup.
func DefaultPath(chip *chips.Chip) tile.Path {
	if chip.TensorPath {
		return tile.Tensor
	}
	return tile.Simdgroup
}

// finish fills the derived fields of a result: its time is the kernel, map0
// (Map0Us, zero for kernels without it) and dispatches dependent dispatch
// boundaries, and counts the run in tot.
func finish(res *Result, flops float64, chip *chips.Chip, dispatches int, start time.Time, tot *Totals) {
	res.KernelUs = res.KernelCycles / chip.ClockMHz.Value
	res.OverheadUs = float64(dispatches) * chip.DispatchOverheadUs.Value
	res.TotalUs = res.KernelUs + res.Map0Us + res.OverheadUs
	res.TFLOPS = flops / (res.TotalUs * 1e-6) / 1e12
	res.Limit = limiter(res.Utilization, res.Counters.Work.MMA8 > 0)
	res.Sim.Wall = time.Since(start)
	tot.add(res)
}

// countGrid sums the program counts of every threadgroup of a grid.
func countGrid(g *Grid) tile.Counters {
	return tile.CountPrograms(g.Launched, func(i int) *isa.Program {
		p, _ := g.TG(i)
		return p
	})
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
