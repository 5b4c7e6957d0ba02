package engine

import (
	"fmt"
	"sync"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/engine/lattice"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Kind selects how the chip is simulated.
type Kind uint8

// The two timing engines. Both run the same programs on the same core model.
const (
	// Fast: threadgroup-level events over the chip; each core's throughput for a
	// mix of resident threadgroups is measured once, instruction by instruction,
	// and cached.
	Fast Kind = iota
	// Detailed: every simdgroup instruction of every threadgroup on every core,
	// in one global time order (for validation and timelines).
	Detailed
)

// String returns "fast" or "detailed".
func (e Kind) String() string {
	if e == Detailed {
		return "detailed"
	}
	return "fast"
}

// ParseKind maps "fast" or "detailed" to a Kind.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "fast":
		return Fast, nil
	case "detailed":
		return Detailed, nil
	}
	return 0, fmt.Errorf("unknown engine %q (allowed: fast, detailed)", s)
}

// Utilization is the mean busy fraction of each resource while threadgroups ran.
type Utilization = utilization

// Caches is what runs on the engines share and keep: per chip and kernel the
// occupancy and the programs' memory patterns, per core model (chips with
// equal per-core models share them) and occupancy the measured core mixes,
// and the coarse measurements' core models. It is safe for concurrent use;
// results do not depend on the order of runs.
type Caches struct {
	mu     sync.Mutex
	shared map[shareKey]*shared
	caches map[string]*coreCache // by model.mixKey
	models map[modelKey]*model
	keeper *coreKeeper
}

// NewCaches returns empty caches.
func NewCaches() *Caches {
	return &Caches{shared: map[shareKey]*shared{}, caches: map[string]*coreCache{}, models: map[modelKey]*model{}, keeper: newCoreKeeper()}
}

type shareKey struct {
	chip   *chips.Chip
	kernel any
}

// modelKey identifies a chip's core model for a kernel's access pattern:
// whether weights are read as tiles sets its DRAM rate.
type modelKey struct {
	chip  *chips.Chip
	tiled bool
}

// shared is what the runs of one kernel on one chip share: the model and the
// measured core mixes (those of the chip's cache for the kernel's occupancy),
// the programs' memory patterns (all safe for concurrent use) and the
// occupancy.
type shared struct {
	m    *model
	cc   *coreCache
	occ  chips.Occupancy
	regs isa.Registers
	mems memTable
}

type memKey struct {
	prog     *isa.Program
	actReuse int
}

// Grid is one compute dispatch as the timing engines consume it: the
// threadgroups in dispatch order, each with its program.
type Grid struct {
	// Kernel is a comparable key of the kernel and its operand types: grids
	// with equal keys on one chip share programs, memory patterns and the
	// occupancy (measured core mixes are shared by content, across kernels).
	Kernel any
	// Shape holds the programs whose registers and threadgroup memory set the
	// occupancy: the compiled kernel has one register count, the largest of
	// its branches.
	Shape    []*isa.Program
	Launched int
	// TG returns threadgroup i's program and whether its weights were just read
	// by a neighbouring threadgroup (so they come from a cache). It may keep a
	// memo, so a grid is used by one goroutine at a time.
	TG func(i int) (prog *isa.Program, repeat bool)
	// ActReuse is how many threadgroups read the same activation rows.
	ActReuse int
	// Loop, if set, maps a program to the program whose k-loop stands for it
	// in core-mix measurements (fewer distinct loops, fewer mixes to measure);
	// DRAM traffic and overheads stay the program's own.
	Loop func(*isa.Program) *isa.Program
	// TiledWeights says the kernel reads weights as tiles (the mm kernels),
	// which achieve the chip's tiled_dram_efficiency of its DRAM bandwidth;
	// grids with equal Kernel keys must agree on it.
	TiledWeights bool
	// WeightBytes is the dispatch's whole weight tensor (0: not known). A
	// tensor of at most the chip's slc_resident_bytes stays in the SLC from
	// one run of the node to the next (test-backend-ops replays it), so every
	// threadgroup reads its weights from there (docs/model.md §2, "Memory").
	WeightBytes float64
	// ExactMixes measures every core-mix composition the fast engine meets
	// itself, none interpolated on the composition lattice (lattice.MinWaves):
	// the reference the lattice's approximation is checked against.
	ExactMixes bool
}

// PlanGrid returns the grid of a mul_mm_id plan with builder b's programs;
// key is the grid's Kernel key (builders of equal keys make equal programs).
func PlanGrid(plan *tile.Plan, b *tile.Builder, key any) *Grid {
	return &Grid{
		TiledWeights: true,
		Kernel:       key,
		Shape:        b.ShapePrograms(),
		Launched:     plan.Launched(),
		ActReuse:     plan.Grid[1],
		TG:           plan.Threadgroups(b),
		Loop:         b.LoopProgram,
		WeightBytes:  plan.WeightBytes(),
	}
}

// GridResult is the timing of one dispatch.
type GridResult struct {
	LevelBytes   [4]float64 // device bytes per memory level (LevelNames)
	DRAMBytes    float64    // bytes moved over the DRAM channel
	Cycles       float64
	Us           float64
	IdleSGCycles float64
	Utilization  Utilization
	CoreBusyUs   []float64 // per core: when its last threadgroup finished
	Occupancy    chips.Occupancy
	Registers    isa.Registers
	Instructions int64 // simdgroup instructions simulated in detail
	Events       int64 // threadgroup-level events (fast engine)
}

// share returns the state shared by grids of one kernel on one chip, deriving
// the occupancy from the grid's shape programs.
func (s *Caches) share(g *Grid, chip *chips.Chip) (*shared, error) {
	key := shareKey{chip, g.Kernel}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.shared[key]; ok {
		return sh, nil
	}
	if len(g.Shape) == 0 {
		return nil, fmt.Errorf("grid of %v: no shape program", g.Kernel)
	}
	shape := tile.ShapeOf(g.Shape)
	regs := shape.Registers
	occ, err := chips.OccupancyFor(chip, shape.Threads, regs.Total, shape.TGMemoryBytes)
	if err != nil {
		return nil, err
	}
	mk := modelKey{chip, g.TiledWeights}
	m := s.models[mk]
	if m == nil {
		m = newModel(chip, g.TiledWeights)
		s.models[mk] = m
	}
	ck := m.mixKey(occ.TGsPerCore)
	cc := s.caches[ck]
	if cc == nil {
		cc = newCoreCache(m, occ.TGsPerCore)
		cc.keeper = s.keeper
		s.caches[ck] = cc
	}
	sh := &shared{m: m, cc: cc, occ: occ, regs: regs}
	s.shared[key] = sh
	return sh, nil
}

// Run times one dispatch on a chip with the chosen engine, counting its
// threadgroups as they are dispatched in p (nil: no counting; the caller has
// counted them in p's total, Progress.Begin).
func (s *Caches) Run(g *Grid, chip *chips.Chip, engine Kind, p *Progress) (*GridResult, error) {
	sh, err := s.share(g, chip)
	if err != nil {
		return nil, err
	}
	res := &GridResult{Occupancy: sh.occ, Registers: sh.regs}
	cores := int(chip.Cores.Value)
	src := newGridSource(g, sh)
	src.progress = p
	defer p.end(src.len())
	var busy []float64
	switch engine {
	case Detailed:
		dr := runDetailed(sh.m, src, cores, sh.occ.TGsPerCore, nil, nil)
		res.Cycles, res.IdleSGCycles, res.Utilization, busy = dr.cycles, dr.idleSG, dr.util, dr.busy
		res.LevelBytes, res.DRAMBytes = dr.levels, dr.dram
		res.Instructions += dr.instr
	default:
		src.view.lattice = !g.ExactMixes && src.len() >= lattice.MinWaves*cores*sh.occ.TGsPerCore
		fr := runFast(src.view, src, cores, sh.occ.TGsPerCore, sh.m.dramBPC/chip.Cores.Value)
		res.Cycles, res.IdleSGCycles, res.Utilization, busy = fr.cycles, fr.idleSG, fr.util, fr.busy
		res.LevelBytes, res.DRAMBytes = fr.levels, fr.traffic
		res.Events = fr.events
	}
	res.Instructions += src.view.instr
	res.Us = res.Cycles / chip.ClockMHz.Value
	for _, b := range busy {
		res.CoreBusyUs = append(res.CoreBusyUs, b/chip.ClockMHz.Value)
	}
	return res, nil
}

// gridSource adapts a grid to the engines. It remembers the class ids and
// memory patterns it looked up, so a run locks the shared tables once per
// program, not once per threadgroup.
type gridSource struct {
	g         *Grid
	view      *cacheView
	mems      *memTable
	classes   map[tgKey]int // this grid's classes: its memory patterns and k-loops are fixed per program
	local     map[*isa.Program]*progMem
	shapeSigs []string // loop-body signatures of g.Shape, computed on demand
	last      tgKey    // the key class looked up last, and its id
	lastID    int
	progress  *Progress // counts the dispatched threadgroups, or nil
	resident  bool      // the weights stay in the SLC between runs (Grid.WeightBytes)
}

// tgKey is what tells a grid's threadgroups apart for timing: the program and
// whether its weights come from a cache (within one grid the rest of a class,
// its memory pattern and k-loop, follows from the program).
type tgKey struct {
	prog   *isa.Program
	repeat bool
}

func newGridSource(g *Grid, sh *shared) *gridSource {
	return &gridSource{g: g, view: newCacheView(sh.cc), mems: &sh.mems,
		classes: map[tgKey]int{}, local: map[*isa.Program]*progMem{}, shapeSigs: make([]string, len(g.Shape)),
		resident: g.WeightBytes > 0 && g.WeightBytes <= sh.m.chip.SLCResidentBytes.Value}
}

func (g *gridSource) len() int { return g.g.Launched }

func (g *gridSource) context(i int) (*isa.Program, bool, *progMem) {
	g.progress.dispatched(i)
	prog, repeat := g.g.TG(i)
	return prog, repeat || g.resident, g.mem(prog)
}

func (g *gridSource) class(i int) int {
	g.progress.dispatched(i)
	prog, rep := g.g.TG(i)
	rep = rep || g.resident
	k := tgKey{prog, rep}
	if k == g.last {
		return g.lastID // runs of early exits, of a row tile's token tiles
	}
	if id, ok := g.classes[k]; ok {
		g.last, g.lastID = k, id
		return id
	}
	mem := g.mem(prog)
	loop, loopMem := prog, mem
	if g.g.Loop != nil {
		loop = g.g.Loop(prog)
		loopMem = g.mem(loop)
	} else if sp := g.standIn(prog, mem); sp != nil {
		loop, loopMem = sp, g.mem(sp)
	}
	id, n := g.view.cc.class(prog, rep, mem, loop, loopMem)
	g.view.instr += n
	g.classes[k] = id
	return id
}

// standIn returns, for a grid without a Loop map, the shape program whose
// k-loop stands for prog's in core mixes: one with the same loop body and
// weight-line pattern (an edge tile whose loop times like the interior
// tile's), or nil when prog's own loop must be measured. The choice depends
// on the grid alone, never on which tiles a run met first.
func (g *gridSource) standIn(prog *isa.Program, mem *progMem) *isa.Program {
	if prog.Exit {
		return nil
	}
	var sig string
	for i, sp := range g.g.Shape {
		if sp == prog {
			return nil
		}
		if sp.Exit || !mem.sameLines(g.mem(sp)) {
			continue
		}
		if sig == "" {
			sig = sectionSignature(prog, isa.SecBody, false)
		}
		if g.shapeSigs[i] == "" {
			g.shapeSigs[i] = sectionSignature(sp, isa.SecBody, false)
		}
		if g.shapeSigs[i] == sig {
			return sp
		}
	}
	return nil
}

func (g *gridSource) mem(prog *isa.Program) *progMem {
	if mem, ok := g.local[prog]; ok {
		return mem
	}
	mem := g.mems.get(prog, g.g.ActReuse)
	g.local[prog] = mem
	return mem
}

// memTable holds the memory patterns of a kernel's programs (one per program
// and activation reuse, so equal patterns are one object). Safe for
// concurrent use.
type memTable struct {
	mu sync.Mutex
	m  map[memKey]*progMem
}

func (t *memTable) get(prog *isa.Program, actReuse int) *progMem {
	key := memKey{prog, actReuse}
	t.mu.Lock()
	defer t.mu.Unlock()
	mem := t.m[key]
	if mem == nil {
		mem = newProgMem(prog, actReuse)
		if t.m == nil {
			t.m = map[memKey]*progMem{}
		}
		t.m[key] = mem
	}
	return mem
}

// Observe runs a dispatch on the detailed engine with lis listening: it
// completes run with what the engine knows (the DRAM channel's bandwidth, the
// state the listener may ask for), tells lis Begin, runs, and tells End. The
// run times exactly like Run on the detailed engine; a listener may stop it
// early (TGFinish), and the result then covers the part simulated.
func (s *Caches) Observe(g *Grid, chip *chips.Chip, lis Listener, run RunInfo) (*GridResult, error) {
	sh, err := s.share(g, chip)
	if err != nil {
		return nil, err
	}
	sink := &listenerSink{l: lis}
	run.DRAMBytesPerCycle, run.State = sh.m.dramBPC, sink
	if err := lis.Begin(run); err != nil {
		return nil, err
	}
	dr := runDetailed(sh.m, newGridSource(g, sh), run.Cores, sh.occ.TGsPerCore, lis, sink)
	lis.End()
	res := &GridResult{Occupancy: sh.occ, Registers: sh.regs, Cycles: dr.cycles, IdleSGCycles: dr.idleSG,
		Utilization: dr.util, Instructions: dr.instr, Us: dr.cycles / chip.ClockMHz.Value}
	for _, b := range dr.busy {
		res.CoreBusyUs = append(res.CoreBusyUs, b/chip.ClockMHz.Value)
	}
	return res, nil
}
