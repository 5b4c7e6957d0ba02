package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/engine"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// The timing engines and their types (package engine), as sim's API names
// them.
type (
	// Engine selects how the chip is simulated: Fast or Detailed.
	Engine = engine.Kind
	// Grid is one compute dispatch as the timing engines consume it.
	Grid = engine.Grid
	// GridResult is the timing of one dispatch.
	GridResult = engine.GridResult
	// Utilization is the mean busy fraction of each resource while threadgroups ran.
	Utilization = engine.Utilization
	// Progress counts the threadgroups the engines have dispatched.
	Progress = engine.Progress
	// Listener receives the detailed engine's events (Observe).
	Listener = engine.Listener
	// RunInfo describes an observed run to its listener.
	RunInfo = engine.RunInfo
	// EngineState is what a listener may ask of the engine during an event.
	EngineState = engine.EngineState
	// SGState says where a simdgroup is.
	SGState = engine.SGState
)

// The engines and simdgroup states.
const (
	Fast        = engine.Fast
	Detailed    = engine.Detailed
	SGRunning   = engine.SGRunning
	SGAtBarrier = engine.SGAtBarrier
	SGDone      = engine.SGDone
)

// LevelNames names the memory levels of Result.LevelBytes.
var LevelNames = engine.LevelNames

// ParseEngine maps "fast" or "detailed" to an Engine.
func ParseEngine(s string) (Engine, error) { return engine.ParseKind(s) }

// WholeCycles rounds a cycle count up to whole cycles, as the core model does.
func WholeCycles(x float64) int64 { return engine.WholeCycles(x) }

// Options control a timing run.
type Options struct {
	Engine  Engine
	Draws   int             // routing draws averaged (the calibration harness redraws ids every run); default 4
	Seed    uint64          // seed of the first draw; default 1
	Routing routing.Routing // default routing.Uniform
	// Totals, if set, adds up what every run given these options simulated
	// (a command's closing rate line).
	Totals *Totals
	// MaxWork bounds a run's estimated work (Work.Units): a run past it
	// fails with a *WorkError before it starts. 0: DefaultMaxWork.
	MaxWork float64
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
	eng      *engine.Caches // occupancy, memory patterns and measured core mixes
	builders map[builderKey]*tile.Builder
	vecs     map[vecKey]*tile.VecBuilder // mat-vec kernels' builders (matmul.go)
	mms      map[mmKey]*tile.MMBuilder   // dense mul_mm builders (matmul.go)
	progress *Progress                   // threadgroups dispatched, or nil
}

// SetProgress makes the simulator's later dispatches count their threadgroups
// in p (nil: no counting). Set it before runs start.
func (s *Simulator) SetProgress(p *Progress) { s.progress = p }

type builderKey struct {
	kernel tile.Kernel
	typeA  dequant.Type
	halfB  bool
	k      int
}

// NewSimulator returns an empty simulator.
func NewSimulator() *Simulator {
	return &Simulator{eng: engine.NewCaches(), builders: map[builderKey]*tile.Builder{},
		vecs: map[vecKey]*tile.VecBuilder{}, mms: map[mmKey]*tile.MMBuilder{}}
}

// RunGrid times one dispatch on a chip with the chosen engine.
func (s *Simulator) RunGrid(g *Grid, chip *chips.Chip, kind Engine) (*GridResult, error) {
	s.progress.Begin(g.Launched)
	return s.runGrid(g, chip, kind)
}

// runGrid is RunGrid for a dispatch whose threadgroups the caller has already
// counted in the progress total.
func (s *Simulator) runGrid(g *Grid, chip *chips.Chip, kind Engine) (*GridResult, error) {
	return s.eng.Run(g, chip, kind, s.progress)
}

// Simulate predicts the time of one MUL_MAT_ID (map0 + mul_mm_id) on a chip with
// a fresh Simulator.
func Simulate(p tile.Problem, k tile.Kernel, chip *chips.Chip, opt Options) (*Result, error) {
	return NewSimulator().Run(p, k, chip, opt)
}

// builder returns the (shared) program builder of a kernel for a problem's types.
func (s *Simulator) builder(p tile.Problem, k tile.Kernel) (*tile.Builder, error) {
	return memo(&s.mu, s.builders, builderKey{k, p.TypeA, p.HalfB, p.K}, func() (*tile.Builder, error) { return tile.NewBuilder(p, k) })
}

// memo returns m[key], building and keeping it first (under mu) when absent;
// a failed build is not kept.
func memo[K comparable, V any](mu *sync.Mutex, m map[K]V, key K, build func() (V, error)) (V, error) {
	mu.Lock()
	defer mu.Unlock()
	if v, ok := m[key]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		var none V
		return none, err
	}
	m[key] = v
	return v, nil
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
	return engine.PlanGrid(plan, b, builderKey{k, p.TypeA, p.HalfB, p.K}), plan, b, nil
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
	w, err := s.estimateMulMMID(p, k, opt)
	if err == nil {
		err = CheckWork(w, opt)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Problem: p, KernelName: "mul_mm_id", Kernel: k, Chip: chip.Name, Engine: opt.Engine, Draws: opt.Draws}
	mean := drawMean{res: res}
	err = s.runDraws(&mean, chip, func(d int) (*Grid, tile.Counters, error) {
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
			s.progress.Begin(n * g.Launched)
			first = g.Launched
		} else {
			s.progress.Begin(g.Launched - first)
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
	util               Utilization
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
	m.util.AddScaled(gr.Utilization, 1/n)
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
