package engine

import (
	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Listener receives the detailed engine's events, in global time order
// (cycles from the dispatch start). Views of a run (timelines, counter
// tracks, future CPI stacks) implement it; they read what the engine tells
// them and never change the run: an observed run times exactly like an
// unobserved one. A run without a listener pays one nil check per
// threadgroup launch and finish and nothing per instruction.
type Listener interface {
	// Begin is told what runs before the first event; an error stops the
	// run before it starts.
	Begin(run RunInfo) error
	// Issue: simdgroup sg of the threadgroup in slot of core issued one
	// instruction of group in (in section sec) at cycle t; coreDRAMBytes is
	// what the core has moved over the DRAM channel so far.
	Issue(core, slot, sg int, sec isa.Section, in *isa.Inst, t int64, coreDRAMBytes float64)
	// Barrier: the simdgroup waited at a threadgroup barrier from cycle
	// from until its release at cycle to.
	Barrier(core, slot, sg int, from, to int64)
	// TGStart: threadgroup tg (its dispatch index) of nsg simdgroups started
	// in slot of core at cycle t.
	TGStart(core, slot, tg, nsg int, t int64)
	// TGFinish: the threadgroup in slot of core finished at cycle t; true
	// stops the run there.
	TGFinish(core, slot int, t int64) (stop bool)
	// End is told once, after the last event (the dispatch's end or where a
	// TGFinish stopped the run); State still answers.
	End()
}

// RunInfo describes an observed run to its listener.
type RunInfo struct {
	Chip    *chips.Chip
	Cores   int // the chip's cores
	Problem tile.Problem
	Kernel  tile.Kernel
	Seed    uint64     // the routing draw's seed
	Plan    *tile.Plan // the dispatch's grid and tiles (mul_mm_id)
	// Dense is the MUL_MAT problem of a dense kernel's run (Problem is zero
	// then), Metal the Metal kernel that runs.
	Dense tile.DenseProblem
	Metal tile.MetalKernel
	// Tile returns threadgroup id's grid position (token tile x, row tile y,
	// expert z) and tile context, for the kernels without a Plan.
	Tile func(id int) (x, y, z int, c tile.Context)
	// Program returns threadgroup id's program.
	Program func(id int) *isa.Program
	// DRAMBytesPerCycle is the chip-wide DRAM channel's bandwidth for this
	// kernel's reads, in bytes per cycle.
	DRAMBytesPerCycle float64
	// State answers what the cores hold at the time of the event being told.
	State EngineState
}

// EngineState is what a listener may ask of the engine during an event.
type EngineState interface {
	// Slots returns how many threadgroup slots core has had so far.
	Slots(core int) int
	// Live reports whether slot of core holds a running threadgroup.
	Live(core, slot int) bool
	// Simdgroup returns where simdgroup sg of the threadgroup in slot is:
	// running, waiting at a barrier (since cycle waitFrom) or done.
	Simdgroup(core, slot, sg int) (state SGState, waitFrom int64)
}

// SGState says where a simdgroup is.
type SGState uint8

// The simdgroup states.
const (
	SGRunning SGState = iota
	SGAtBarrier
	SGDone
)

// WholeCycles rounds a cycle count up to whole cycles, as the core model does
// (it cannot use a result before the cycle it is ready in).
func WholeCycles(x float64) int64 { return cyc(x) }

// listenerSink adapts a Listener to the core model's issue and barrier hooks
// and answers its EngineState questions from the cores.
type listenerSink struct {
	l     Listener
	cores []*coreSim
}

func (s *listenerSink) issue(c *coreSim, sg *sgRun, in *isa.Inst, t int64) {
	s.l.Issue(c.index, int(sg.tg), int(sg.sg), sg.sec, in, t, c.stats.dramBytes)
}

func (s *listenerSink) barrier(c *coreSim, sg *sgRun, from, to int64) {
	s.l.Barrier(c.index, int(sg.tg), int(sg.sg), from, to)
}

// Slots implements EngineState.
func (s *listenerSink) Slots(core int) int { return len(s.cores[core].tgs) }

// Live implements EngineState.
func (s *listenerSink) Live(core, slot int) bool {
	c := s.cores[core]
	return slot < len(c.tgs) && c.tgs[slot].live
}

// Simdgroup implements EngineState.
func (s *listenerSink) Simdgroup(core, slot, sg int) (SGState, int64) {
	c := s.cores[core]
	r := &c.sgs[c.tgs[slot].first+int32(sg)]
	switch r.state {
	case sgBarrier:
		return SGAtBarrier, r.waitFrom
	case sgRunning:
		return SGRunning, 0
	}
	return SGDone, 0
}
