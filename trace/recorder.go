package trace

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// The timeline view of the detailed engine. A Recorder listens to the core
// model's issue and barrier events and to threadgroup starts and finishes, and
// keeps, for a window of time and a set of cores, what each simdgroup was doing:
// runs of one program phase, barrier waits and idle stretches. It never changes
// the simulation (a traced run times exactly like an untraced one) and costs
// nothing when absent. The trace package renders the Timeline it produces.

// Trace defaults and limits.
const (
	DefaultWindowUs  = 200     // the first 200 µs of the dispatch
	DefaultMaxEvents = 500_000 // about 80 MB of trace-event JSON
	DefaultSampleUs  = 1       // DRAM bandwidth counter interval
	// DefaultIdleDRAMTrips is the default idle threshold in DRAM
	// latencies. In the detailed engine's gaps between two instructions of a
	// simdgroup, loads from DRAM make a bump at 1 to 1.5 DRAM latencies; gaps
	// past 2 are rare and mean contention.
	DefaultIdleDRAMTrips = 2
)

// DefaultCores are the cores traced unless told otherwise.
func DefaultCores() []int { return []int{0, 1} }

// RecordOptions bound what a Recorder keeps. Zero values take the defaults.
type RecordOptions struct {
	// StartUs and EndUs are the window, in µs from the dispatch start
	// (default 0 to DefaultWindowUs). Spans are clipped to it.
	StartUs, EndUs float64
	// Cores are the cores whose tracks are kept (default DefaultCores).
	// DRAM bandwidth is chip-wide and counts every core.
	Cores []int
	// MaxEvents caps the spans and counter samples kept (default
	// DefaultMaxEvents). When the cap is near the recorder closes the
	// spans of the threadgroups in flight (cut there, in room it keeps for
	// them), keeps nothing more and says so in Timeline.Truncated; the run
	// stops there unless Full asks for the whole dispatch. DRAM samples count
	// as the run reaches their interval, so a run that stops early leaves
	// their room to spans.
	MaxEvents int
	// IdleNs is how long a resident simdgroup must issue nothing (outside
	// barrier waits) before the gap shows as an idle span. 0 takes twice the
	// chip's DRAM latency (DefaultIdleDRAMTrips): waiting for one load,
	// even from DRAM, does not show; waiting behind a queue of them, or for
	// nothing at all, does.
	IdleNs float64
	// SampleUs is the interval of the DRAM bandwidth counter (default
	// DefaultSampleUs).
	SampleUs float64
	// Full runs the dispatch to its end instead of stopping once the window
	// has passed (the result then has the whole dispatch's time).
	Full bool
}

// SpanKind says what a span of a timeline is.
type SpanKind uint8

// The span kinds.
const (
	// SpanThreadgroup is a threadgroup's life in a slot, from its launch
	// (after the core's launcher) to its last simdgroup's last instruction.
	SpanThreadgroup SpanKind = iota
	// SpanPhase is a contiguous run of one program phase on a simdgroup.
	SpanPhase
	// SpanBarrier is a simdgroup waiting at a threadgroup barrier, from its
	// arrival to the release.
	SpanBarrier
	// SpanIdle is a resident simdgroup that issued nothing for longer than the
	// idle threshold, outside barrier waits.
	SpanIdle
)

// spanKindNames are the span kinds' names, in value order.
var spanKindNames = [...]string{SpanThreadgroup: "threadgroup", SpanPhase: "phase", SpanBarrier: "barrier wait", SpanIdle: "idle"}

// String returns the span kind's name.
func (k SpanKind) String() string {
	if int(k) >= len(spanKindNames) {
		return fmt.Sprintf("SpanKind(%d)", uint8(k))
	}
	return spanKindNames[k]
}

// Span is one span of a timeline, in cycles from the dispatch start,
// clipped to the window.
type Span struct {
	Kind       SpanKind
	Core, Slot int
	SG         int // simdgroup, -1 for a threadgroup span
	Start, End int64
	Phase      isa.Phase // SpanPhase
	TG         int       // threadgroup index in dispatch order (TGInfo by Timeline.TG)
	// Open marks a span still going at the end of the window or of the run.
	Open bool
}

// TGInfo describes a threadgroup of a timeline: its grid coordinates and tile.
type TGInfo struct {
	ID      int // index in dispatch order
	X, Y, Z int // token tile, row tile, expert
	Rows    int // weight rows of the tile
	Tokens  int // tokens of the tile (0: it exits early)
	Steps   int // k-steps
	// HalfTile marks a tile whose upper token parts (of nr1h tokens) the
	// half-skip leaves out (its program's Skipped.HalfTiles).
	HalfTile bool
}

// CounterKind says what a counter sample measures.
type CounterKind uint8

// The counter kinds.
const (
	// CounterResident is the number of threadgroups resident on a core.
	CounterResident CounterKind = iota
	// CounterDRAM is the chip-wide DRAM bandwidth in GB/s over the interval
	// starting at the sample, as the engine's DRAM channel serves it.
	CounterDRAM
)

// Sample is one counter value from time T on (cycles); Core is -1 for
// chip-wide counters.
type Sample struct {
	Kind  CounterKind
	Core  int
	T     int64
	Value float64
}

// Timeline is what a Recorder kept of one traced run.
type Timeline struct {
	Chip     string
	ClockMHz float64
	Kernel   string // variant/path (mul_mm_id), "mul_mm variant/path", or the mat-vec kernel's name
	Metal    string // the Metal kernel (mul_mm_id, mul_mv_id, mul_mm, mul_mv, mul_mv_ext)
	Problem  string // test-backend-ops vars
	Seed     uint64 // the routing draw's seed (0: a MUL_MAT, which has none)
	// Start and End are the window in cycles; Cores the traced cores.
	Start, End int64
	Cores      []int
	IdleCycles int64 // the idle threshold
	Sample     int64 // the DRAM counter interval in cycles
	Spans      []Span
	Samples    []Sample
	// TGs holds the threadgroups the spans refer to, by ascending ID.
	TGs []TGInfo
	// Complete is false when the run stopped after the window (the default):
	// SimulatedCycles is then where it stopped, not the dispatch's end.
	Complete        bool
	SimulatedCycles int64
	// Truncated is set when MaxEvents was reached at TruncatedAt (cycles): the
	// timeline holds nothing after that.
	Truncated   bool
	TruncatedAt int64
	MaxEvents   int
}

// Us converts cycles to µs.
func (tl *Timeline) Us(cycles int64) float64 { return float64(cycles) / tl.ClockMHz }

// TG returns the threadgroup of that ID.
func (tl *Timeline) TG(id int) (TGInfo, bool) {
	i, ok := slices.BinarySearchFunc(tl.TGs, id, func(t TGInfo, id int) int { return t.ID - id })
	if !ok {
		return TGInfo{}, false
	}
	return tl.TGs[i], true
}

// Recorder records a Timeline from a detailed run (sim.Simulator.Observe).
// A recorder serves one run.
type Recorder struct {
	opt  RecordOptions
	used bool

	tl      Timeline
	want    []bool // per core
	state   sim.EngineState
	tracks  [][]sgTrack // per core, per slot*nsg+sg
	tgs     [][]tgTrack // per core, per slot
	nsg     int
	tgInfo  func(id int) TGInfo
	seen    map[int]bool
	budget  int  // events that may still be kept
	closing bool // truncate is closing the spans in flight: past the budget
	off     bool
	idle    int64
	deltas  []residentDelta
	dram    []float64 // bytes requested per core so far
	free    float64   // the DRAM channel's shadow: when it is next free
	bpc     float64   // DRAM bytes per cycle
	bins    []float64 // DRAM bytes served per sample interval from the window start
	counted int       // bins counted against the budget: those the run has reached
	live    int       // threadgroups in flight on the traced cores
	running int64     // latest event time seen
}

type sgTrack struct {
	open  bool
	phase isa.Phase
	from  int64 // start of the open phase span
	last  int64 // last issue, barrier release or threadgroup start
	tg    int
}

type tgTrack struct {
	live  bool
	id    int
	nsg   int
	start int64
}

type residentDelta struct {
	core int
	t    int64
	d    int
}

// NewRecorder checks the options and returns a recorder.
func NewRecorder(opt RecordOptions) (*Recorder, error) {
	if opt.EndUs == 0 && opt.StartUs == 0 {
		opt.EndUs = DefaultWindowUs
	}
	if opt.Cores == nil {
		opt.Cores = DefaultCores()
	}
	if opt.MaxEvents == 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	if opt.SampleUs == 0 {
		opt.SampleUs = DefaultSampleUs
	}
	var errs []error
	if math.IsNaN(opt.StartUs) || math.IsNaN(opt.EndUs) || opt.StartUs < 0 || opt.EndUs <= opt.StartUs || math.IsInf(opt.EndUs, 0) {
		errs = append(errs, fmt.Errorf("trace window %g:%g µs: must be finite with 0 <= start < end", opt.StartUs, opt.EndUs))
	}
	if len(opt.Cores) == 0 {
		errs = append(errs, errors.New("trace cores: at least one core"))
	}
	for _, c := range opt.Cores {
		if c < 0 {
			errs = append(errs, fmt.Errorf("trace core %d: must be >= 0", c))
		}
	}
	if opt.MaxEvents < 1 {
		errs = append(errs, fmt.Errorf("trace max events = %d: must be positive", opt.MaxEvents))
	}
	if math.IsNaN(opt.IdleNs) || opt.IdleNs < 0 || math.IsInf(opt.IdleNs, 0) {
		errs = append(errs, fmt.Errorf("trace idle threshold = %g ns: must be >= 0 (0: twice the chip's DRAM latency)", opt.IdleNs))
	}
	if math.IsNaN(opt.SampleUs) || opt.SampleUs <= 0 || math.IsInf(opt.SampleUs, 0) {
		errs = append(errs, fmt.Errorf("trace sample interval = %g µs: must be positive", opt.SampleUs))
	} else if n := (opt.EndUs - opt.StartUs) / opt.SampleUs; n >= float64(opt.MaxEvents) {
		errs = append(errs, fmt.Errorf("trace sample interval = %g µs: %.0f DRAM samples over the window leave no room under the cap of %d events", opt.SampleUs, n, opt.MaxEvents))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	opt.Cores = slices.Clone(opt.Cores)
	slices.Sort(opt.Cores)
	opt.Cores = slices.Compact(opt.Cores)
	return &Recorder{opt: opt}, nil
}

// Timeline returns what the recorder kept (after the observed run, sim.Simulator.Observe).
func (r *Recorder) Timeline() *Timeline { return &r.tl }

// Begin implements sim.Listener: it resolves the options on the run's chip.
func (r *Recorder) Begin(run sim.RunInfo) error {
	if r.used {
		return errors.New("trace recorder: it has already served a run")
	}
	for _, c := range r.opt.Cores {
		if c >= run.Cores {
			return fmt.Errorf("trace core %d: %s has %d cores (0..%d)", c, run.Chip.Name, run.Cores, run.Cores-1)
		}
	}
	r.used = true
	r.state = run.State
	r.bpc = run.DRAMBytesPerCycle // the bandwidth the traced kernel's reads achieve
	where := run.Tile
	if where == nil {
		plan := run.Plan
		where = func(id int) (int, int, int, tile.Context) {
			x, y, z := plan.Coords(id)
			return x, y, z, plan.Context(x, y, z)
		}
	}
	r.setup(run.Chip, run.Cores, run.Program(0).NSG, func(id int) TGInfo {
		x, y, z, ctx := where(id)
		// its program counts the token parts it skips
		return TGInfo{ID: id, X: x, Y: y, Z: z, Rows: ctx.Rows, Tokens: ctx.Tokens, Steps: ctx.Steps,
			HalfTile: run.Program(id).Skipped.HalfTiles > 0}
	})
	metal := run.Metal
	if metal == tile.KernelAuto {
		metal = tile.KernelMulMMID // a run with a Plan
	}
	r.tl.Kernel, r.tl.Problem, r.tl.Seed, r.tl.Metal = RunLabel(metal, run.Kernel), run.Problem.String(), run.Seed, metal.String()
	if op, _ := metal.Op(); op == tile.OpMulMat {
		r.tl.Problem, r.tl.Seed = run.Dense.String(), 0
	}
	return nil
}

// setup resolves the options on a chip.
func (r *Recorder) setup(chip *chips.Chip, cores, nsg int, info func(int) TGInfo) {
	mhz := chip.ClockMHz.Value
	tl := &r.tl
	tl.Chip, tl.ClockMHz, tl.Cores, tl.MaxEvents = chip.Name, mhz, r.opt.Cores, r.opt.MaxEvents
	tl.Start = int64(math.Floor(r.opt.StartUs * mhz))
	tl.End = int64(math.Ceil(r.opt.EndUs * mhz))
	tl.Sample = max(1, int64(math.Round(r.opt.SampleUs*mhz)))
	idle := r.opt.IdleNs
	if idle == 0 {
		idle = DefaultIdleDRAMTrips * chip.DRAMLatencyNs.Value
	}
	r.idle = max(1, sim.WholeCycles(chip.Cycles(idle)))
	tl.IdleCycles = r.idle
	r.want = make([]bool, cores)
	for _, c := range r.opt.Cores {
		r.want[c] = true
	}
	r.tracks = make([][]sgTrack, cores)
	r.tgs = make([][]tgTrack, cores)
	r.dram = make([]float64, cores)
	r.nsg = nsg
	r.tgInfo = info
	r.seen = map[int]bool{}
	r.bins = make([]float64, (tl.End-tl.Start+tl.Sample-1)/tl.Sample)
	// room for the last DRAM sample and each core's resident count at the
	// window start; DRAM samples (countBins), spans and resident changes take
	// the rest as the run reaches them
	r.budget = r.opt.MaxEvents - 1 - len(r.opt.Cores)
}

// track returns the state of a simdgroup slot.
func (r *Recorder) track(core, slot, sg int) *sgTrack {
	i := slot*r.nsg + sg
	if i >= len(r.tracks[core]) {
		r.tracks[core] = append(r.tracks[core], make([]sgTrack, i+1-len(r.tracks[core]))...)
	}
	return &r.tracks[core][i]
}

// emit keeps a span clipped to the window.
func (r *Recorder) emit(sp Span) {
	if r.off {
		return
	}
	if sp.End > r.tl.End {
		sp.Open = true // still going at the window's end
	}
	sp.Start, sp.End = max(sp.Start, r.tl.Start), min(sp.End, r.tl.End)
	if sp.End <= sp.Start {
		return
	}
	if r.closing {
		r.budget-- // in the room reserve kept
	} else if !r.spend(1) {
		return
	}
	if !r.seen[sp.TG] {
		r.seen[sp.TG] = true
		r.tl.TGs = append(r.tl.TGs, r.tgInfo(sp.TG))
	}
	r.tl.Spans = append(r.tl.Spans, sp)
}

// reserve is the room kept under the cap for closing the threadgroups in
// flight when it is reached (closeLive): per simdgroup a phase or idle span
// and a barrier wait (at most 3 spans), and the threadgroup's own.
func (r *Recorder) reserve() int { return r.live * (3*r.nsg + 1) }

// countBins counts against the budget the DRAM samples of the intervals the
// run has reached (finish writes one per interval that starts before the
// recording's end), so a run that stops early leaves their room to spans.
func (r *Recorder) countBins() {
	if r.off {
		return
	}
	reached := min(len(r.bins), int(max(0, (r.running-r.tl.Start+r.tl.Sample-1)/r.tl.Sample)))
	if need := reached - r.counted; need > 0 && r.spend(need) {
		r.counted = reached
	}
}

// spend takes n events from the budget, keeping reserve's room for closing
// the threadgroups in flight; without room it truncates the recording and
// reports false.
func (r *Recorder) spend(n int) bool {
	if r.budget-n < r.reserve() {
		r.truncate()
		return false
	}
	r.budget -= n
	return true
}

func (r *Recorder) truncate() {
	if r.off || r.closing {
		return
	}
	r.tl.Truncated, r.tl.TruncatedAt = true, r.running
	// the threadgroups in flight keep their spans, cut where the recording
	// stops, in the room reserve kept for them: no lane is left empty
	r.closing = true
	r.closeLive(min(r.running, r.tl.End))
	r.closing = false
	r.off = true
}

// Issue implements sim.Listener.
func (r *Recorder) Issue(ci, slot, s int, sec isa.Section, in *isa.Inst, t int64, coreDRAM float64) {
	if t > r.running {
		r.running = t
		r.countBins()
	}
	if d := coreDRAM - r.dram[ci]; d > 0 {
		r.dram[ci] = coreDRAM
		r.serve(float64(t), d)
	}
	if !r.want[ci] || r.off {
		return
	}
	tr := r.track(ci, slot, s)
	span := func(k SpanKind, from, to int64) {
		r.emit(Span{Kind: k, Core: ci, Slot: slot, SG: s, Start: from, End: to, Phase: tr.phase, TG: tr.tg})
	}
	ph := in.Phase
	if ph == isa.PhaseSetup && sec != isa.SecPrologue && tr.open {
		// generic ALU groups carry the setup phase; past the prologue they are
		// loop and address bookkeeping of the phase they sit in
		ph = tr.phase
	}
	switch {
	case !tr.open:
		if t-tr.last > r.idle {
			span(SpanIdle, tr.last, t)
		}
		tr.open, tr.phase, tr.from = true, ph, t
	case t-tr.last > r.idle:
		span(SpanPhase, tr.from, tr.last+1)
		span(SpanIdle, tr.last+1, t)
		tr.phase, tr.from = ph, t
	case ph != tr.phase:
		span(SpanPhase, tr.from, t)
		tr.phase, tr.from = ph, t
	}
	tr.last = t
}

// Barrier implements sim.Listener.
func (r *Recorder) Barrier(ci, slot, s int, from, to int64) {
	if !r.want[ci] || r.off {
		return
	}
	r.closeUntil(ci, slot, s, from, false)
	tr := r.track(ci, slot, s)
	r.emit(Span{Kind: SpanBarrier, Core: ci, Slot: slot, SG: s, Start: from, End: to, TG: tr.tg})
	tr.last = to
}

// closeUntil ends a simdgroup's open phase span at t (with an idle span
// before t when it issued nothing for longer than the threshold); open marks
// the spans as cut by the end of the run.
func (r *Recorder) closeUntil(ci, slot, s int, t int64, open bool) {
	tr := r.track(ci, slot, s)
	span := func(k SpanKind, from, to int64) {
		r.emit(Span{Kind: k, Core: ci, Slot: slot, SG: s, Start: from, End: to, Phase: tr.phase, TG: tr.tg, Open: open})
	}
	switch {
	case tr.open && t-tr.last > r.idle:
		span(SpanPhase, tr.from, tr.last+1)
		span(SpanIdle, tr.last+1, t)
	case tr.open:
		span(SpanPhase, tr.from, max(t, tr.last+1))
	case t-tr.last > r.idle:
		span(SpanIdle, tr.last, t)
	}
	tr.open = false
}

// TGStart implements sim.Listener.
func (r *Recorder) TGStart(ci, slot, id, nsg int, t int64) {
	if !r.want[ci] {
		return
	}
	for len(r.tgs[ci]) <= slot {
		r.tgs[ci] = append(r.tgs[ci], tgTrack{})
	}
	r.tgs[ci][slot] = tgTrack{live: true, id: id, nsg: nsg, start: t}
	r.live++
	for s := 0; s < nsg; s++ {
		*r.track(ci, slot, s) = sgTrack{last: t, tg: id}
	}
	r.delta(ci, t, +1)
}

// delta records a change of a core's resident threadgroups; the samples
// inside the window count against the event cap as they happen.
func (r *Recorder) delta(ci int, t int64, d int) {
	if r.off {
		return
	}
	if t >= r.tl.Start && t < r.tl.End && !r.spend(1) {
		return
	}
	r.deltas = append(r.deltas, residentDelta{ci, t, d})
}

// TGFinish implements sim.Listener.
func (r *Recorder) TGFinish(ci, slot int, t int64) bool {
	if t > r.running {
		r.running = t
		r.countBins()
	}
	if r.want[ci] {
		tt := &r.tgs[ci][slot]
		for s := 0; s < tt.nsg; s++ {
			if tr := r.track(ci, slot, s); tr.open {
				r.emit(Span{Kind: SpanPhase, Core: ci, Slot: slot, SG: s, Start: tr.from, End: tr.last + 1, Phase: tr.phase, TG: tr.tg})
				tr.open = false
			}
		}
		r.emit(Span{Kind: SpanThreadgroup, Core: ci, Slot: slot, SG: -1, Start: tt.start, End: t, TG: tt.id})
		tt.live = false
		r.live--
		r.delta(ci, t, -1)
	}
	// Full runs on to the dispatch's end, recording or not
	return !r.opt.Full && (r.off || t >= r.tl.End)
}

// serve replays a DRAM transfer on a shadow of the engine's chip-wide channel
// (same order, same bandwidth, so the same service intervals) and adds its
// bytes to the sample bins it is served in.
func (r *Recorder) serve(t, bytes float64) {
	s := math.Max(r.free, t)
	e := s + bytes/r.bpc
	r.free = e
	w0, n := float64(r.tl.Start), float64(r.tl.Sample)
	lo := max(0, int(math.Floor((s-w0)/n)))
	hi := min(len(r.bins)-1, int(math.Floor((e-w0)/n)))
	for b := lo; b <= hi; b++ {
		bs, be := w0+float64(b)*n, w0+float64(b+1)*n
		if ov := math.Min(e, be) - math.Max(s, bs); ov > 0 {
			r.bins[b] += ov * r.bpc
		}
	}
}

// closeLive closes the spans of the threadgroups in flight at end on the
// traced cores: each simdgroup's phase or barrier wait and the threadgroup
// itself, all marked open (cut there).
func (r *Recorder) closeLive(end int64) {
	for ci := range r.tgs {
		if !r.want[ci] {
			continue
		}
		for slot := range r.tgs[ci] {
			tt := &r.tgs[ci][slot]
			if !tt.live || !r.state.Live(ci, slot) {
				continue
			}
			for s := 0; s < tt.nsg; s++ {
				tr := r.track(ci, slot, s)
				switch st, from := r.state.Simdgroup(ci, slot, s); st {
				case sim.SGAtBarrier:
					r.closeUntil(ci, slot, s, from, false)
					r.emit(Span{Kind: SpanBarrier, Core: ci, Slot: slot, SG: s, Start: from, End: end, TG: tr.tg, Open: true})
				case sim.SGRunning:
					r.closeUntil(ci, slot, s, end, true)
				}
			}
			r.emit(Span{Kind: SpanThreadgroup, Core: ci, Slot: slot, SG: -1, Start: tt.start, End: end, TG: tt.id, Open: true})
		}
	}
}

// End implements sim.Listener: it closes what is still open at the end of
// the run or the window and makes the counter samples.
func (r *Recorder) End() {
	tl := &r.tl
	complete := true
	for ci := range r.tgs {
		for slot := 0; slot < r.state.Slots(ci); slot++ {
			if r.state.Live(ci, slot) {
				complete = false
			}
		}
	}
	tl.Complete = complete // the run reached the dispatch's end (Truncated: the trace did not)
	tl.SimulatedCycles = r.running
	r.closeLive(min(r.running, tl.End)) // nothing once truncated: truncate closed them
	end := min(r.running, tl.End)
	if tl.Truncated {
		end = min(end, tl.TruncatedAt)
	}
	// resident threadgroups: the count at the window start, then every change
	// inside the window
	slices.SortStableFunc(r.deltas, func(a, b residentDelta) int {
		if a.core != b.core {
			return a.core - b.core
		}
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return a.d - b.d // finishes before starts at the same cycle
	})
	for i := 0; i < len(r.deltas); {
		ci, n := r.deltas[i].core, 0
		j := i
		for ; j < len(r.deltas) && r.deltas[j].core == ci && r.deltas[j].t <= tl.Start; j++ {
			n += r.deltas[j].d
		}
		tl.Samples = append(tl.Samples, Sample{Kind: CounterResident, Core: ci, T: tl.Start, Value: float64(n)})
		for j < len(r.deltas) && r.deltas[j].core == ci {
			t := r.deltas[j].t
			for ; j < len(r.deltas) && r.deltas[j].core == ci && r.deltas[j].t == t; j++ {
				n += r.deltas[j].d
			}
			if t > tl.Start && t < end {
				tl.Samples = append(tl.Samples, Sample{Kind: CounterResident, Core: ci, T: t, Value: float64(n)})
			}
		}
		i = j
	}
	// DRAM bandwidth: the bins reserved room under the cap
	if end > tl.Start {
		gbs := tl.ClockMHz * 1e6 / float64(tl.Sample) / 1e9
		for b, bytes := range r.bins {
			t := tl.Start + int64(b)*tl.Sample
			if t >= end {
				break
			}
			tl.Samples = append(tl.Samples, Sample{Kind: CounterDRAM, Core: -1, T: t, Value: bytes * gbs})
		}
		tl.Samples = append(tl.Samples, Sample{Kind: CounterDRAM, Core: -1, T: end, Value: 0})
	}
	slices.SortFunc(tl.TGs, func(a, b TGInfo) int { return a.ID - b.ID })
}
