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
	run := RunInfo{Chip: chip, Cores: int(chip.Cores.Value), Problem: p, Kernel: k, Seed: seed, Plan: plan,
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
