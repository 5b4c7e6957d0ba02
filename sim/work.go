package sim

import (
	"fmt"
	"math"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Work is what a run will simulate, estimated before it runs from the grid's
// size and the instruction counts of its programs: an upper bound of the
// threadgroups the engines dispatch and of the instructions map0 and the
// detailed engine issue (every threadgroup a full tile unless it exits
// early). It leaves out the fast engine's core-mix measurements, which are
// simulated instruction by instruction too: each composition of k-loop
// classes a core meets is measured for a few k-steps, and for more once the
// run's use of it pays for them (engine/mixes.go), so their cost follows the
// compositions the routing and the timing produce, which no count of the
// grid bounds short of every multiset of classes; a Simulator measures each
// composition once for all its runs (docs/performance.md, "Bounded work",
// gives their size on the shapes measured). The counts are floats: an
// adversarial shape's would overflow an int64.
type Work struct {
	Threadgroups float64 // threadgroups dispatched over every draw: the fast engine's events
	Instructions float64 // simdgroup instructions issued one by one: map0's, and the grid's on the detailed engine (not the fast engine's mix measurements)
	// Observed marks a detailed run with a listener (Observe: a trace
	// recorder), whose instructions cost more.
	Observed bool
}

// Add returns the sum of two estimates.
func (w Work) Add(o Work) Work {
	return Work{w.Threadgroups + o.Threadgroups, w.Instructions + o.Instructions, w.Observed || o.Observed}
}

// The cost of the engines' steps in instructions issued by the detailed
// engine (about 15 ns each on one core of the 2-core reference machine): a
// fast-engine threadgroup event about 95 ns, an instruction with a trace
// recorder listening about 40 ns (docs/performance.md, "Bounded work").
const (
	threadgroupUnits = 6
	observedUnits    = 3
)

// Units weighs the work in instruction-equivalents: an instruction issued by
// the detailed engine is one unit (three with a listener), a threadgroup six.
func (w Work) Units() float64 {
	per := 1.0
	if w.Observed {
		per = observedUnits
	}
	return threadgroupUnits*w.Threadgroups + per*w.Instructions
}

// String renders the estimate for a message.
func (w Work) String() string {
	how := "issued one by one"
	if w.Observed {
		how = "issued one by one and recorded"
	}
	return fmt.Sprintf("%.3g units: %.3g threadgroups over every draw, %.3g instructions %s", w.Units(), w.Threadgroups, w.Instructions, how)
}

// Observe returns the work of Observe, a detailed run with a listener, given
// the detailed work of one draw of the dispatch (w) and, when untilUs > 0,
// the GPU time after which the listener stops the run: each scheduler of
// each core issues at most one instruction per dispatch interval, and each
// threadgroup issues at least one.
func (w Work) Observe(chip *chips.Chip, untilUs float64) Work {
	w.Observed = true
	if untilUs > 0 {
		peak := untilUs * chip.ClockMHz.Value * chip.Cores.Value * chip.Schedulers.Value / chip.DispatchInterval.Value
		w.Threadgroups, w.Instructions = min(w.Threadgroups, peak), min(w.Instructions, peak)
	}
	return w
}

// DefaultMaxWork is the work a run may take when Options.MaxWork is 0: about
// 10 s of one core of the 2-core reference machine, so that the largest run
// accepted by default finishes within a minute even when the machine is
// loaded, and the detailed engine still takes the calibration shape at
// n = 512 with 4 draws (5.2e8) (docs/performance.md, "Bounded work").
const DefaultMaxWork = 6e8

// WorkError is the error of a run whose estimated work is past the bound.
type WorkError struct {
	Work Work
	Max  float64
}

// Error returns the estimate, the bound it is past and the size of a unit;
// the CLI adds the --max-work that accepts the run (Accepting).
func (e *WorkError) Error() string {
	return fmt.Sprintf("estimated work %s; past the bound of %.3g units (a unit is about 15 ns of one core)", e.Work, e.Max)
}

// Accepting returns the least bound of two significant digits that
// accepts the run: its estimate rounded up.
func (e *WorkError) Accepting() float64 {
	u := e.Work.Units()
	d := math.Pow(10, math.Floor(math.Log10(u))-1)
	return math.Ceil(u/d) * d
}

// CheckWork returns a *WorkError when w is past opt's bound (Options.MaxWork,
// or DefaultMaxWork).
func CheckWork(w Work, opt Options) error {
	max := opt.MaxWork
	if max <= 0 {
		max = DefaultMaxWork
	}
	if w.Units() > max {
		return &WorkError{Work: w, Max: max}
	}
	return nil
}

// Estimate returns the work RunWorkload(w, k, forced, chip, opt) would do,
// without running it.
func (s *Simulator) Estimate(w tile.Workload, k tile.Kernel, forced tile.MetalKernel, chip *chips.Chip, opt Options) (Work, error) {
	if err := w.Validate(); err != nil {
		return Work{}, err
	}
	kern, err := w.Kernel(forced)
	if err != nil {
		return Work{}, err
	}
	opt = opt.withDefaults()
	switch kern {
	case tile.KernelMulMMID:
		return s.estimateMulMMID(w.MoE, k, opt)
	case tile.KernelMulMVID:
		return s.estimateMulMVID(w.MoE, opt)
	}
	g, err := s.DenseGrid(w.Dense, kern, k, chip)
	if err != nil {
		return Work{}, err
	}
	return gridWork(float64(g.Launched), float64(g.Launched), g.Shape, nil, 1, opt.Engine), nil
}

// EstimateRun returns the work Run(p, k, chip, opt) would do (map0 and
// mul_mm_id, at any n), without running it.
func (s *Simulator) EstimateRun(p tile.Problem, k tile.Kernel, opt Options) (Work, error) {
	return s.estimateMulMMID(p, k, opt.withDefaults())
}

// gridWork estimates draws dispatches of launched threadgroups, active of
// which run a program no longer than the longest of progs and the others
// exit (running exit; nil: every threadgroup is active).
func gridWork(launched, active float64, progs []*isa.Program, exit *isa.Program, draws int, kind Engine) Work {
	w := Work{Threadgroups: launched * float64(draws)}
	if kind == Detailed {
		var longest int64
		for _, p := range progs {
			longest = max(longest, p.Counts().Instructions)
		}
		per := active * float64(longest)
		if exit != nil {
			per += (launched - active) * float64(exit.Counts().Instructions)
		}
		w.Instructions = per * float64(draws)
	}
	return w
}

// estimateMulMMID is the work of Run: map0 on the detailed engine, and
// draws dispatches of the mul_mm_id grid. Active tiles are bounded without a
// routing: each expert's token tiles cover its tokens, n·n_used in all, plus
// one partial tile per expert.
func (s *Simulator) estimateMulMMID(p tile.Problem, k tile.Kernel, opt Options) (Work, error) {
	b, err := s.builder(p, k)
	if err != nil {
		return Work{}, err
	}
	full := make([]int32, p.Experts)
	for e := range full {
		full[e] = int32(p.Tokens)
	}
	plan, err := tile.NewPlan(p, k, full)
	if err != nil {
		return Work{}, err
	}
	launched := float64(plan.Grid[0]) * float64(plan.Grid[1]) * float64(plan.Grid[2])
	tokenTiles := min(float64(p.Experts)*float64(plan.Grid[0]), math.Ceil(float64(p.Tokens)*float64(p.Used)/float64(k.NR1))+float64(p.Experts))
	active := min(launched, float64(plan.Grid[1])*tokenTiles)
	exit := b.Program(tile.Context{Steps: p.K / k.NK})
	w := gridWork(launched, active, b.ShapePrograms(), exit, opt.Draws, opt.Engine)
	m0, err := tile.Map0Program(p)
	if err != nil {
		return Work{}, err
	}
	return w.Add(Work{Threadgroups: 1, Instructions: float64(m0.Counts().Instructions)}), nil
}

// estimateMulMVID is the work of RunMulMVID: draws dispatches of a
// threadgroup per row block and routed (token, slot) pair.
func (s *Simulator) estimateMulMVID(p tile.Problem, opt Options) (Work, error) {
	if err := p.Validate(); err != nil {
		return Work{}, err
	}
	b, err := s.vecBuilder(tile.MulMV(p.TypeA, p.K, true), p.TypeA, p.HalfB, p.K)
	if err != nil {
		return Work{}, err
	}
	R := b.Kernel.RowsPerTG()
	launched := float64(ceilDiv(p.M, R)) * float64(p.Tokens) * float64(p.Used)
	prog := b.Program(b.Context(min(R, p.M), 1))
	return gridWork(launched, launched, []*isa.Program{prog}, nil, opt.Draws, opt.Engine), nil
}
