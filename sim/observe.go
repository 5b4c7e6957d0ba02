package sim

import (
	"errors"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// Observe runs the mul_mm_id dispatch of a problem, with the uniform routing
// of seed, on the detailed engine with lis listening (trace.Recorder keeps a
// timeline). The listener may stop the run early (TGFinish); the result then
// covers the part simulated. Observing never changes the timing: a run to the
// end gives the cycles RunGrid gives on the detailed engine.
func (s *Simulator) Observe(p tile.Problem, k tile.Kernel, chip *chips.Chip, seed uint64, lis Listener) (*GridResult, error) {
	if lis == nil {
		return nil, errors.New("observe: nil listener")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	tpe, err := routing.Uniform{}.Counts(p, seed)
	if err != nil {
		return nil, err
	}
	g, plan, _, err := s.MulMMIDGrid(p, k, tpe)
	if err != nil {
		return nil, err
	}
	run := RunInfo{Chip: chip, Cores: int(chip.Cores.Value), Problem: p, Kernel: k, Seed: seed, Plan: plan, Metal: tile.KernelMulMMID,
		Program: func(id int) *isa.Program {
			prog, _ := g.TG(id)
			return prog
		}}
	res, err := s.eng.Observe(g, chip, lis, run)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ObserveWorkload runs, on the detailed engine with lis listening, the
// dispatch of the kernel workload w runs as (tile.Workload.Kernel: llama.cpp's
// choice, or forced), with kernel k's variant and path where that kernel takes
// them and, for a MUL_MAT_ID, the uniform routing of seed; mul_mm_id runs as
// Observe runs it. It returns the kernel that ran. A mat-vec threadgroup's
// grid position is its token x, row block y and expert z (mul_mv_id: the
// expert of its (token, slot) pair; a batched MUL_MAT's: its plane's weight
// matrix).
func (s *Simulator) ObserveWorkload(w tile.Workload, k tile.Kernel, forced tile.MetalKernel, chip *chips.Chip, seed uint64, lis Listener) (*GridResult, tile.MetalKernel, error) {
	if err := w.Validate(); err != nil {
		return nil, 0, err
	}
	kern, err := w.Kernel(forced)
	if err != nil {
		return nil, kern, err
	}
	if kern == tile.KernelMulMMID {
		res, err := s.Observe(w.MoE, k, chip, seed, lis)
		return res, kern, err
	}
	if lis == nil {
		return nil, kern, errors.New("observe: nil listener")
	}
	run := RunInfo{Chip: chip, Cores: int(chip.Cores.Value), Problem: w.MoE, Dense: w.Dense, Metal: kern, Seed: seed}
	var g *Grid
	if kern == tile.KernelMulMVID {
		p := w.MoE
		ids, err := routing.IDs(routing.Uniform{}, p, seed)
		if err != nil {
			return nil, kern, err
		}
		var b *tile.VecBuilder
		if g, b, err = s.MulMVIDGrid(p, ids, chip); err != nil {
			return nil, kern, err
		}
		R := b.Kernel.RowsPerTG()
		gx := ceilDiv(p.M, R)
		run.Tile = func(id int) (int, int, int, tile.Context) {
			x, pair := id%gx, id/gx
			return pair / p.Used, x, int(ids[pair]), b.Context(min(R, p.M-x*R), 1)
		}
	} else {
		p := w.Dense
		if g, err = s.DenseGrid(p, kern, k, chip); err != nil {
			return nil, kern, err
		}
		var tiles []tile.DenseTile
		nr0, nr1 := 0, 0
		if kern == tile.KernelMulMM {
			b, err := s.mmBuilder(p, k)
			if err != nil {
				return nil, kern, err
			}
			tiles, run.Kernel = b.Tiles(), b.Kernel
			nr0, nr1 = b.TileShape()
		} else {
			b, err := s.denseVecBuilder(p, kern)
			if err != nil {
				return nil, kern, err
			}
			tiles, nr0, nr1 = b.Tiles(p.M, p.N), b.Kernel.RowsPerTG(), b.Kernel.Tokens
		}
		run.Tile = func(id int) (int, int, int, tile.Context) { // z: the plane's weight matrix
			t := tiles[id%len(tiles)]
			return t.Token0 / nr1, t.Row0 / nr0, id / len(tiles) / p.PerMatrix(), t.Context
		}
	}
	run.Program = func(id int) *isa.Program {
		prog, _ := g.TG(id)
		return prog
	}
	res, err := s.eng.Observe(g, chip, lis, run)
	return res, kern, err
}
