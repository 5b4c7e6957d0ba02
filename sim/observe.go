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
	sh, err := s.share(g, chip)
	if err != nil {
		return nil, err
	}
	cores := int(chip.Cores.Value)
	sink := &listenerSink{l: lis}
	run := RunInfo{Chip: chip, Cores: cores, Problem: p, Kernel: k, Seed: seed, Plan: plan,
		Program: func(id int) *isa.Program {
			prog, _ := g.TG(id)
			return prog
		},
		DRAMBytesPerCycle: sh.m.dramBPC, State: sink}
	if err := lis.Begin(run); err != nil {
		return nil, err
	}
	dr := runDetailed(sh.m, newGridSource(g, sh), cores, sh.occ.TGsPerCore, lis, sink)
	lis.End()
	res := &GridResult{Occupancy: sh.occ, Registers: sh.regs, Cycles: dr.cycles, IdleSGCycles: dr.idleSG,
		Utilization: dr.util, Instructions: dr.instr, Us: dr.cycles / chip.ClockMHz.Value}
	for _, b := range dr.busy {
		res.CoreBusyUs = append(res.CoreBusyUs, b/chip.ClockMHz.Value)
	}
	return res, nil
}
