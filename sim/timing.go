package sim

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/metalsim/metalsim/dequant"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Engine selects how the chip is simulated.
type Engine uint8

// The two timing engines. Both run the same programs on the same core model.
const (
	// Fast: threadgroup-level events over the chip; each core's throughput for a
	// mix of resident threadgroups is measured once, instruction by instruction,
	// and cached.
	Fast Engine = iota
	// Detailed: every simdgroup instruction of every threadgroup on every core,
	// in one global time order (for validation and timelines).
	Detailed
)

// String returns "fast" or "detailed".
func (e Engine) String() string {
	if e == Detailed {
		return "detailed"
	}
	return "fast"
}

// ParseEngine maps "fast" or "detailed" to an Engine.
func ParseEngine(s string) (Engine, error) {
	switch s {
	case "fast":
		return Fast, nil
	case "detailed":
		return Detailed, nil
	}
	return 0, fmt.Errorf("unknown engine %q (allowed: fast, detailed)", s)
}

// Routing draws tokens-per-expert counts for timing (no ids needed).
type Routing interface {
	Counts(p tile.Problem, seed uint64) ([]int32, error)
	Name() string
}

// UniformRouting draws n_used distinct experts per token uniformly, as
// test-backend-ops does.
type UniformRouting struct{}

// Counts implements Routing.
func (UniformRouting) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return tile.UniformCounts(p, seed), nil
}

// Name implements Routing.
func (UniformRouting) Name() string { return "uniform" }

// Options control a timing run.
type Options struct {
	Engine  Engine
	Draws   int     // routing draws averaged (the calibration harness redraws ids every run); default 4
	Seed    uint64  // seed of the first draw; default 1
	Routing Routing // default UniformRouting
}

func (o Options) withDefaults() Options {
	if o.Draws <= 0 {
		o.Draws = 4
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Routing == nil {
		o.Routing = UniformRouting{}
	}
	return o
}

// Limiter names in a speed-of-light vocabulary.
const (
	LimitMatrix   = "ALU: matrix (simdgroup MMA on the FMA pipes)"
	LimitALU      = "ALU: issue"
	LimitConvert  = "ALU: conversions (integer/complex pipe)"
	LimitTensor   = "tensor unit (neural accelerator)"
	LimitTGMem    = "threadgroup memory bandwidth"
	LimitL1       = "L1 / load bandwidth"
	LimitDRAM     = "DRAM bandwidth"
	LimitLatency  = "latency (occupancy-bound: resident simdgroups cannot hide memory and barrier latency)"
	LimitDispatch = "threadgroup launch (early-exit threadgroups)"
)

// Result is a timing prediction for one MUL_MAT_ID.
type Result struct {
	Problem tile.Problem
	Kernel  tile.Kernel
	Chip    string
	Engine  Engine
	Draws   int

	KernelCycles float64 // mul_mm_id makespan, mean over draws
	KernelUs     float64 // mul_mm_id
	Map0Us       float64 // map0 kernel
	OverheadUs   float64 // dependent dispatch boundaries (map0 and mul_mm_id)
	TotalUs      float64 // what test-backend-ops reports per run

	Occupancy   Occupancy
	Registers   isa.Registers
	Counters    Counters // of the first routing draw
	Utilization Utilization
	Limiter     string

	CoreBusyUs   []float64 // per core: last threadgroup finished, first draw
	IdleSGCycles float64   // simdgroup-cycles spent waiting at barriers, mean over draws
	TFLOPS       float64   // test-backend-ops FLOPs / TotalUs

	Sim SimStats
}

// Utilization is the mean busy fraction of each resource while threadgroups ran.
type Utilization = utilization

// SimStats is what the simulation itself cost.
type SimStats struct {
	Instructions int64         // simdgroup instructions the core model issued
	Represented  int64         // simdgroup instructions of the whole grid (all draws)
	Events       int64         // threadgroup-level events (fast engine)
	Wall         time.Duration // wall time of the run
}

// Simulator runs timing predictions and keeps what runs can share: the program
// builders and the measured core mixes, per chip, kernel and operand types. It is
// safe for concurrent use; results do not depend on the order of runs.
type Simulator struct {
	mu     sync.Mutex
	shared map[shareKey]*shared
}

type shareKey struct {
	chip   *Chip
	kernel tile.Kernel
	typeA  dequant.Type
	halfB  bool
	k      int
}

type shared struct {
	mu   sync.Mutex
	b    *tile.Builder
	m    *model
	cc   *coreCache
	occ  Occupancy
	regs isa.Registers
	mems map[memKey]*progMem
}

type memKey struct {
	prog     *isa.Program
	actReuse int
}

// NewSimulator returns an empty simulator.
func NewSimulator() *Simulator { return &Simulator{shared: map[shareKey]*shared{}} }

// Simulate predicts the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip with
// a fresh Simulator.
func Simulate(p tile.Problem, k tile.Kernel, chip *Chip, opt Options) (*Result, error) {
	return NewSimulator().Run(p, k, chip, opt)
}

// share returns the shared state of a chip, kernel and operand types.
func (s *Simulator) share(p tile.Problem, k tile.Kernel, chip *Chip) (*shared, error) {
	key := shareKey{chip, k, p.TypeA, p.HalfB, p.K}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.shared[key]; ok {
		return sh, nil
	}
	b, err := tile.NewBuilder(p, k)
	if err != nil {
		return nil, err
	}
	// registers: the compiled kernel has one count, the largest of its branches
	steps := p.K / k.NK
	full := b.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1, Steps: steps})
	half := b.Program(tile.Context{Rows: k.NR0, Tokens: min(k.NR1H, k.NR1), Steps: steps})
	regs := full.Registers()
	if r := half.Registers(); r.Total > regs.Total {
		regs = r
	}
	occ, err := OccupancyFor(chip, full.Tiling.Threads, regs.Total, full.TGMemBytes)
	if err != nil {
		return nil, err
	}
	m := newModel(chip)
	sh := &shared{b: b, m: m, cc: newCoreCache(m, occ.TGsPerCore), occ: occ, regs: regs, mems: map[memKey]*progMem{}}
	s.shared[key] = sh
	return sh, nil
}

// Run predicts the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip.
func (s *Simulator) Run(p tile.Problem, k tile.Kernel, chip *Chip, opt Options) (*Result, error) {
	start := time.Now()
	opt = opt.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sh, err := s.share(p, k, chip)
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	b, m, cc, occ := sh.b, sh.m, sh.cc, sh.occ
	res := &Result{Problem: p, Kernel: k, Chip: chip.Name, Engine: opt.Engine, Draws: opt.Draws, Occupancy: occ, Registers: sh.regs}
	cores := int(chip.Cores.Value)
	instr0 := cc.simInstr
	var sumCycles, sumIdle float64
	var util utilization
	for d := 0; d < opt.Draws; d++ {
		tpe, err := opt.Routing.Counts(p, opt.Seed+uint64(d))
		if err != nil {
			return nil, err
		}
		plan, err := tile.NewPlan(p, k, tpe)
		if err != nil {
			return nil, err
		}
		counters := CountPlan(plan, b)
		res.Sim.Represented += counters.Work.Instructions
		if d == 0 {
			res.Counters = counters
		}
		src := &gridSource{plan: plan, b: b, cc: cc, mems: sh.mems, actReuse: plan.Grid[1]}
		var cyc, idle float64
		var u utilization
		var busy []float64
		switch opt.Engine {
		case Detailed:
			dr := runDetailed(m, src, cores, occ.TGsPerCore, nil)
			cyc, idle, u, busy = dr.cycles, dr.idleSG, dr.util, dr.busy
			res.Sim.Instructions += dr.instr
		default:
			fr := runFast(cc, src, cores, occ.TGsPerCore)
			cyc, idle, u, busy = fr.cycles, fr.idleSG, fr.util, fr.busy
			res.Sim.Events += fr.events
		}
		if d == 0 {
			for _, b := range busy {
				res.CoreBusyUs = append(res.CoreBusyUs, b/chip.ClockMHz.Value)
			}
		}
		sumCycles += cyc
		sumIdle += idle
		util.addScaled(u, 1/float64(opt.Draws))
	}
	res.Sim.Instructions += cc.simInstr - instr0
	res.KernelCycles = sumCycles / float64(opt.Draws)
	res.IdleSGCycles = sumIdle / float64(opt.Draws)
	res.Utilization = util
	res.KernelUs = res.KernelCycles / chip.ClockMHz.Value
	m0, err := map0Us(p, m)
	if err != nil {
		return nil, err
	}
	res.Sim.Instructions += m0.instr
	res.Map0Us = m0.us
	res.OverheadUs = 2 * chip.DispatchOverheadUs.Value
	res.TotalUs = res.KernelUs + res.Map0Us + res.OverheadUs
	res.TFLOPS = p.FLOPs() / (res.TotalUs * 1e-6) / 1e12
	res.Limiter = limiter(res)
	res.Sim.Wall = time.Since(start)
	return res, nil
}

type map0Result struct {
	us    float64
	instr int64
}

// map0Us times the map0 kernel: one threadgroup alone on one core.
func map0Us(p tile.Problem, m *model) (map0Result, error) {
	prog, err := tile.Map0Program(p)
	if err != nil {
		return map0Result{}, err
	}
	cs := newCoreSim(m)
	cs.addTG(prog, &progMem{actReuse: 1}, m.launch, false, false, 0, 0)
	cs.run(math.MaxInt64)
	return map0Result{us: float64(cs.tgs[0].finish) / m.chip.ClockMHz.Value, instr: issued(cs)}, nil
}

// limiter names what bounds the run: the busiest resource if it is nearly
// saturated, else latency (too few resident simdgroups to hide it).
func limiter(r *Result) string {
	u := r.Utilization
	best, name := u.Issue, LimitALU
	for _, c := range []struct {
		v    float64
		name string
	}{{u.FMA, LimitMatrix}, {u.IC, LimitConvert}, {u.Tensor, LimitTensor}, {u.TGMem, LimitTGMem}, {u.L1, LimitL1}, {u.DRAM, LimitDRAM}} {
		if c.v > best {
			best, name = c.v, c.name
		}
	}
	if name == LimitMatrix && r.Counters.Work.MMA8 == 0 {
		name = LimitALU
	}
	if best < 0.75 {
		return LimitLatency
	}
	return name
}

// gridSource adapts a plan to the engines.
type gridSource struct {
	plan     *tile.Plan
	b        *tile.Builder
	cc       *coreCache
	mems     map[memKey]*progMem
	actReuse int
}

func (g *gridSource) len() int { return g.plan.Launched() }

func (g *gridSource) context(i int) (*isa.Program, bool, *progMem) {
	ctx := g.plan.Context(g.plan.Coords(i))
	prog := g.b.Program(ctx)
	key := memKey{prog, g.actReuse}
	mem := g.mems[key]
	if mem == nil {
		mem = newProgMem(prog, g.actReuse)
		g.mems[key] = mem
	}
	return prog, ctx.Repeat, mem
}

func (g *gridSource) class(i int) int {
	prog, rep, mem := g.context(i)
	return g.cc.class(prog, rep, mem)
}
