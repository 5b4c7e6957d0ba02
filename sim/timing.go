package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
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

// Options control a timing run.
type Options struct {
	Engine  Engine
	Draws   int             // routing draws averaged (the calibration harness redraws ids every run); default 4
	Seed    uint64          // seed of the first draw; default 1
	Routing routing.Routing // default routing.Uniform
	// Totals, if set, adds up what every run given these options simulated
	// (a command's closing rate line).
	Totals *Totals
}

// Totals adds up the simulation cost of runs and the GPU time they simulated,
// for a command's rate line (trace.WriteRates). It is safe for concurrent use.
type Totals struct {
	mu        sync.Mutex
	stats     SimStats
	gpuUs     float64
	gpuCycles float64
}

// add counts one finished run (nil t: nothing to count).
func (t *Totals) add(r *Result) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Instructions += r.Sim.Instructions
	t.stats.Represented += r.Sim.Represented
	t.stats.Events += r.Sim.Events
	t.stats.Wall += r.Sim.Wall
	t.gpuUs += r.KernelUs * float64(r.Draws)
	t.gpuCycles += r.KernelCycles * float64(r.Draws)
}

// Read returns the totals so far: simulation statistics (Wall is the runs'
// wall times summed: concurrent runs overlap) and the GPU time simulated, every
// routing draw of every dispatch timed, in µs and cycles.
func (t *Totals) Read() (stats SimStats, gpuUs, gpuCycles float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats, t.gpuUs, t.gpuCycles
}

func (o Options) withDefaults() Options {
	if o.Draws <= 0 {
		o.Draws = 4
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Routing == nil {
		o.Routing = routing.Uniform{}
	}
	return o
}

// Result is a timing prediction for one MUL_MAT_ID (Run, RunMulMVID) or one
// MUL_MAT (RunWorkload).
type Result struct {
	Problem tile.Problem // the MUL_MAT_ID problem (zero for MUL_MAT)
	// Dense is the MUL_MAT problem (zero for MUL_MAT_ID).
	Dense tile.DenseProblem
	// KernelName is the Metal kernel timed: mul_mm_id, mul_mv_id, mul_mm,
	// mul_mv or mul_mv_ext.
	KernelName string
	Kernel     tile.Kernel // mul_mm_id: variant and path; mul_mm: the path
	Chip       string
	Engine     Engine
	Draws      int

	KernelCycles float64 // makespan of mul_mm_id (or of the other kernels' one dispatch), mean over draws
	KernelUs     float64 // the same in µs
	Map0Us       float64 // map0 kernel (mul_mm_id only)
	OverheadUs   float64 // dependent dispatch boundaries (map0 and mul_mm_id; one for the other kernels)
	TotalUs      float64 // what test-backend-ops reports per run

	Occupancy   chips.Occupancy
	Registers   isa.Registers
	Counters    tile.Counters // of the first routing draw
	Utilization Utilization
	Limit       Limiter // what bounds the run
	Limiter     string  // Limit.String(), for writers that take the long name as text

	CoreBusyUs   []float64 // per core: last threadgroup finished, first draw
	IdleSGCycles float64   // simdgroup-cycles spent waiting at barriers, mean over draws
	// LevelBytes is the distinct device bytes requested by loads, by the
	// memory level that served them (LevelNames: L1, L2, SLC, DRAM), mean over
	// draws. A weight line's first touch counts at DRAM; the bytes moved over
	// the DRAM channel are DRAMBytes.
	LevelBytes [4]float64
	// DRAMBytes is the bytes the dispatch moves over the DRAM channel, mean
	// over draws: each weight byte's first read (not a tile a neighbouring
	// threadgroup just read), the share of the activations that misses the
	// caches, and the stores. (The fast engine's DRAM utilisation comes from
	// its k-loops' demand, the bandwidth it models, so it can differ from
	// DRAMBytes / (cycles × bandwidth) by the prologue and store bytes.)
	DRAMBytes float64
	TFLOPS    float64 // test-backend-ops FLOPs / TotalUs

	Sim SimStats
}

// Utilization is the mean busy fraction of each resource while threadgroups ran.
type Utilization = utilization

// SimStats is what the simulation itself cost. Unlike the rest of a Result it
// depends on what ran before and alongside: a mix another run of the same
// Simulator measured first costs this run nothing.
type SimStats struct {
	Instructions int64         // simdgroup instructions the core model issued for this run
	Represented  int64         // simdgroup instructions of the whole grid (all draws)
	Events       int64         // threadgroup-level events (fast engine)
	Wall         time.Duration // wall time of the run
}

// Simulator runs timing predictions and keeps what runs can share: program
// builders, per chip and kernel the occupancy and memory patterns, and per
// chip and occupancy the measured core mixes (a k-loop class is its timing
// content, so kernels and variants whose loops time alike share their mixes).
// It is safe for concurrent use; results do not depend on the order of runs.
type Simulator struct {
	mu       sync.Mutex
	shared   map[shareKey]*shared
	caches   map[string]*coreCache // by model.mixKey: chips with equal core models share their measured mixes
	models   map[modelKey]*model
	builders map[builderKey]*tile.Builder
	vecs     map[vecKey]*tile.VecBuilder // mat-vec kernels' builders (matmul.go)
	mms      map[mmKey]*tile.MMBuilder   // dense mul_mm builders (matmul.go)
	keeper   *coreKeeper                 // coarse measurements' core models, for all kernels' caches
	progress *Progress                   // threadgroups dispatched, or nil
}

// SetProgress makes the simulator's later dispatches count their threadgroups
// in p (nil: no counting). Set it before runs start.
func (s *Simulator) SetProgress(p *Progress) { s.progress = p }

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

type builderKey struct {
	kernel tile.Kernel
	typeA  dequant.Type
	halfB  bool
	k      int
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

// NewSimulator returns an empty simulator.
func NewSimulator() *Simulator {
	return &Simulator{shared: map[shareKey]*shared{}, caches: map[string]*coreCache{}, models: map[modelKey]*model{}, builders: map[builderKey]*tile.Builder{},
		vecs: map[vecKey]*tile.VecBuilder{}, mms: map[mmKey]*tile.MMBuilder{}, keeper: newCoreKeeper()}
}

// Simulate predicts the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip with
// a fresh Simulator.
func Simulate(p tile.Problem, k tile.Kernel, chip *chips.Chip, opt Options) (*Result, error) {
	return NewSimulator().Run(p, k, chip, opt)
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
func (s *Simulator) share(g *Grid, chip *chips.Chip) (*shared, error) {
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

// RunGrid times one dispatch on a chip with the chosen engine.
func (s *Simulator) RunGrid(g *Grid, chip *chips.Chip, engine Engine) (*GridResult, error) {
	s.progress.begin(g.Launched)
	return s.runGrid(g, chip, engine)
}

// runGrid is RunGrid for a dispatch whose threadgroups the caller has already
// counted in the progress total.
func (s *Simulator) runGrid(g *Grid, chip *chips.Chip, engine Engine) (*GridResult, error) {
	sh, err := s.share(g, chip)
	if err != nil {
		return nil, err
	}
	res := &GridResult{Occupancy: sh.occ, Registers: sh.regs}
	cores := int(chip.Cores.Value)
	src := newGridSource(g, sh)
	src.progress = s.progress
	defer s.progress.end(src.len())
	var busy []float64
	switch engine {
	case Detailed:
		dr := runDetailed(sh.m, src, cores, sh.occ.TGsPerCore, nil, nil)
		res.Cycles, res.IdleSGCycles, res.Utilization, busy = dr.cycles, dr.idleSG, dr.util, dr.busy
		res.LevelBytes, res.DRAMBytes = dr.levels, dr.dram
		res.Instructions += dr.instr
	default:
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

// builder returns the (shared) program builder of a kernel for a problem's types.
func (s *Simulator) builder(p tile.Problem, k tile.Kernel) (*tile.Builder, error) {
	key := builderKey{k, p.TypeA, p.HalfB, p.K}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.builders[key]; ok {
		return b, nil
	}
	b, err := tile.NewBuilder(p, k)
	if err != nil {
		return nil, err
	}
	s.builders[key] = b
	return b, nil
}

// MulMMIDGrid returns the mul_mm_id dispatch of a problem for one routing.
func (s *Simulator) MulMMIDGrid(p tile.Problem, k tile.Kernel, tpe []int32) (*Grid, *tile.Plan, *tile.Builder, error) {
	b, err := s.builder(p, k)
	if err != nil {
		return nil, nil, nil, err
	}
	plan, err := tile.NewPlan(p, k, tpe)
	if err != nil {
		return nil, nil, nil, err
	}
	g := &Grid{
		TiledWeights: true,
		Kernel:       builderKey{k, p.TypeA, p.HalfB, p.K},
		Shape:        b.ShapePrograms(),
		Launched:     plan.Launched(),
		ActReuse:     plan.Grid[1],
		TG:           plan.Threadgroups(b),
		Loop:         b.LoopProgram,
	}
	return g, plan, b, nil
}

// Run predicts the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip: the
// mean over routing draws of the mul_mm_id dispatch, plus map0 and the two
// dependent dispatch boundaries.
func (s *Simulator) Run(p tile.Problem, k tile.Kernel, chip *chips.Chip, opt Options) (*Result, error) {
	start := time.Now()
	opt = opt.withDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := CheckMap0(p, chip, "n_mats", "n_used"); err != nil {
		return nil, err // before the main kernel is timed
	}
	res := &Result{Problem: p, KernelName: "mul_mm_id", Kernel: k, Chip: chip.Name, Engine: opt.Engine, Draws: opt.Draws}
	mean := drawMean{res: res}
	err := s.runDraws(&mean, chip, func(d int) (*Grid, tile.Counters, error) {
		tpe, err := opt.Routing.Counts(p, opt.Seed+uint64(d))
		if err != nil {
			return nil, tile.Counters{}, err
		}
		g, plan, b, err := s.MulMMIDGrid(p, k, tpe)
		if err != nil {
			return nil, tile.Counters{}, err
		}
		return g, tile.CountPlan(plan, b), nil
	})
	if err != nil {
		return nil, err
	}
	m0, err := s.map0(p, chip)
	if err != nil {
		return nil, err
	}
	res.Sim.Instructions += m0.Instructions
	res.Map0Us = m0.Us
	finish(res, p.FLOPs(), chip, 2, start, opt.Totals) // map0 and mul_mm_id: two dependent dispatches
	return res, nil
}

// runDraws times the dispatch of every routing draw of a run and gathers them
// into mean. grid(d) builds draw d's dispatch; it is called in draw order on
// the caller's goroutine, as soon as fewer than GOMAXPROCS dispatches are in
// flight (so memory holds that many grids, not one per draw). The dispatches
// run concurrently, sharing the kernel's measured core mixes, and are added
// in draw order, so the result is the same for any parallelism.
func (s *Simulator) runDraws(mean *drawMean, chip *chips.Chip, grid func(d int) (*Grid, tile.Counters, error)) error {
	n := mean.res.Draws
	counters := make([]tile.Counters, n)
	results := make([]*GridResult, n)
	errs := make([]error, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var gridErr error
	first := 0 // threadgroups of the first draw's grid
	for d := range n {
		sem <- struct{}{}
		g, c, err := grid(d)
		if err != nil {
			<-sem
			gridErr = err
			break
		}
		counters[d] = c
		// the progress total holds every draw from the first on (draws of
		// one problem launch the same grid), so the line never goes back
		if d == 0 {
			s.progress.begin(n * g.Launched)
			first = g.Launched
		} else {
			s.progress.begin(g.Launched - first)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[d], errs[d] = s.runGrid(g, chip, mean.res.Engine)
		}()
	}
	wg.Wait()
	if gridErr != nil {
		return gridErr
	}
	for d := range n {
		if errs[d] != nil {
			return errs[d]
		}
		mean.add(d, counters[d], results[d])
	}
	mean.done()
	return nil
}

// drawMean gathers the dispatches of a run's routing draws into its Result:
// the first draw's counters, occupancy and per-core busy time, the sum of the
// instructions, and the mean of the cycles, barrier-idle simdgroup-cycles,
// bytes per memory level and utilisation.
type drawMean struct {
	res                *Result
	sumCycles, sumIdle float64
	util               utilization
}

// add records draw d (counted from 0) of res.Draws.
func (m *drawMean) add(d int, counters tile.Counters, gr *GridResult) {
	res, n := m.res, float64(m.res.Draws)
	if d == 0 {
		res.Counters, res.CoreBusyUs = counters, gr.CoreBusyUs
		res.Occupancy, res.Registers = gr.Occupancy, gr.Registers
	}
	res.Sim.Represented += counters.Work.Instructions
	res.Sim.Instructions += gr.Instructions
	res.Sim.Events += gr.Events
	m.sumCycles += gr.Cycles
	m.sumIdle += gr.IdleSGCycles
	for l := range res.LevelBytes {
		res.LevelBytes[l] += gr.LevelBytes[l] / n
	}
	res.DRAMBytes += gr.DRAMBytes / n
	m.util.addScaled(gr.Utilization, 1/n)
}

// done writes the means once every draw is added.
func (m *drawMean) done() {
	n := float64(m.res.Draws)
	m.res.KernelCycles = m.sumCycles / n
	m.res.IdleSGCycles = m.sumIdle / n
	m.res.Utilization = m.util
}

type map0Key struct {
	experts, used int
}

// CheckMap0 reports a problem whose map0 threadgroup cannot launch on chip:
// llama.cpp runs kernel_mul_mm_id_map0 as one threadgroup with a thread per
// expert that stages the n_mats x n_used ids as uint16 in threadgroup memory,
// and asserts that both fit. experts and used name the fields (or flags) the
// two counts come from, for the error.
func CheckMap0(p tile.Problem, chip *chips.Chip, experts, used string) error {
	maxThreads, mem := int(chip.MaxThreadsPerTG.Value), int(chip.TGMemoryPerTG.Value)
	maxExperts := min(maxThreads/32*32, mem/2)
	if p.Experts > maxExperts {
		return fmt.Errorf("%s = %d: must be in [1, %d] on %s (map0 runs a thread per expert, at most %d threads, and stages 2 x n_mats x n_used bytes of ids in %d bytes of threadgroup memory)",
			experts, p.Experts, maxExperts, chip.Name, maxThreads, mem)
	}
	if 2*p.Experts*p.Used > mem {
		return fmt.Errorf("%s = %d: must be in [1, %d] with %s = %d on %s (map0 stages 2 x n_mats x n_used = %d bytes of ids in threadgroup memory, at most %d)",
			used, p.Used, mem/(2*p.Experts), experts, p.Experts, chip.Name, 2*p.Experts*p.Used, mem)
	}
	return nil
}

// map0 times the map0 kernel: one threadgroup of n_mats threads.
func (s *Simulator) map0(p tile.Problem, chip *chips.Chip) (*GridResult, error) {
	prog, err := tile.Map0Program(p)
	if err != nil {
		return nil, err
	}
	g := &Grid{Kernel: map0Key{p.Experts, p.Used}, Shape: []*isa.Program{prog}, Launched: 1, ActReuse: 1,
		TG: func(int) (*isa.Program, bool) { return prog, false }}
	// a lone threadgroup: the detailed engine is exact and cheap here
	return s.RunGrid(g, chip, Detailed)
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
		classes: map[tgKey]int{}, local: map[*isa.Program]*progMem{}, shapeSigs: make([]string, len(g.Shape))}
}

func (g *gridSource) len() int { return g.g.Launched }

func (g *gridSource) context(i int) (*isa.Program, bool, *progMem) {
	g.progress.dispatched(i)
	prog, repeat := g.g.TG(i)
	return prog, repeat, g.mem(prog)
}

func (g *gridSource) class(i int) int {
	g.progress.dispatched(i)
	prog, rep := g.g.TG(i)
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
