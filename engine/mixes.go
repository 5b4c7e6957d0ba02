package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/metalsim/metalsim/engine/lattice"
	"github.com/metalsim/metalsim/isa"
)

// The core mixes of the fast engine: threadgroup classes (a program with its
// memory pattern and the k-loop that stands for it), and the throughput of
// every mix of resident k-looping classes, measured once on the core model
// and cached by content (coreCache), read by each run through a view of its
// own (cacheView).

// classKey identifies a threadgroup class by everything its timing is made
// of: the program, whether its weights come from a cache, its memory pattern
// (line pattern and activation reuse, which the problem's m sets while the
// program is shared across m) and the k-loop that stands for it in mixes
// (with its pattern). The program alone is not enough: problems of another m
// share the program but not its memory pattern, and a class must not depend
// on which problem met the program first.
type classKey struct {
	prog     *isa.Program
	repeat   bool
	mem      *progMem
	loopProg *isa.Program
	loopMem  *progMem
}

type classInfo struct {
	classKey           // loopProg: the program mixes of this k-loop class simulate (canonical, not first seen)
	overhead float64   // cycles outside the k-loop (prologue + epilogue), or the whole life of an exit
	mixID    int       // the k-loop class: programs whose loop bodies time alike share it
	rank     string    // canonical order of k-loop classes in a mix (independent of id assignment)
	traffic  tgTraffic // a threadgroup's device traffic (its own program's, not loopProg's)
}

// mixResult is what the core model measured for one mix.
type mixResult struct {
	period periods // cycles per k-step for a threadgroup of each class in the mix
	util   utilization
	idleSG float64 // simdgroup-cycles waiting at barriers per cycle
	instr  int64   // simdgroup instructions the measurement simulated
	last   int64   // the cycle of the last mark measured (0 if none), the rates' time base
}

// periods are the k-step periods of a mix's classes, by class id: a mix has
// at most a handful, so a scan beats a map.
type periods []idPeriod

type idPeriod struct {
	id int
	p  float64
}

// of returns the period of class id, 0 if the mix has none.
func (ps periods) of(id int) float64 {
	for _, e := range ps {
		if e.id == id {
			return e.p
		}
	}
	return 0
}

// add adds x to the period of class id, making an entry if needed.
func (ps *periods) add(id int, x float64) {
	for i := range *ps {
		if (*ps)[i].id == id {
			(*ps)[i].p += x
			return
		}
	}
	*ps = append(*ps, idPeriod{id, x})
}

// utilization is the busy fraction of each core resource.
type utilization struct {
	FMA, IC, Tensor, TGMem, L1, DRAM, Issue float64
}

// AddScaled adds w times o to u.
func (u *utilization) AddScaled(o utilization, w float64) {
	u.FMA += w * o.FMA
	u.IC += w * o.IC
	u.Tensor += w * o.Tensor
	u.TGMem += w * o.TGMem
	u.L1 += w * o.L1
	u.DRAM += w * o.DRAM
	u.Issue += w * o.Issue
}

// coreCache holds the measured mixes of one core model (a chip's per-core
// costs and cache levels, model.mixKey) at one occupancy.
// It is safe for concurrent use: runs of one kernel (rows, routing draws) share
// it, and each class and mix is measured once, by the first run that needs it,
// while the others wait for the result (running a share of a fine
// measurement's start patterns meanwhile). A class or mix is a function of its
// content only (mixes are simulated in a canonical order), so which run
// measures it never changes a result.
type coreCache struct {
	m       *model // the first chip's model with this mix key
	tgsHint int

	mu        sync.Mutex // guards classes, measuring, info and mixes
	classes   map[classKey]int
	measuring map[classKey]chan struct{} // classes whose overhead a run is measuring, closed when published in classes
	info      []*classInfo               // by class id; immutable once its id is in classes
	mixes     map[string]*mixEntry
	keeper    *coreKeeper // the core models of coarse measurements kept (shared by a Simulator's caches)

	classMu  sync.Mutex          // serialises class creation; guards loops and lineSets
	loops    map[string]int      // k-loop class (its rank) -> the class id that represents it
	lineSets map[string]*progMem // canonical line patterns
}

// mixEntry is a mix being measured (done open) or measured.
type mixEntry struct {
	done chan struct{}
	r    *mixResult
	pats *patternWork // a fine measurement's start patterns while it runs, which its waiters help run (guarded by coreCache.mu)
	// a coarse measurement's core model where it stopped, for the fine
	// measurement of the composition to go on from (nil once taken or
	// dropped)
	sim atomic.Pointer[coreSim]
}

func newCoreCache(m *model, tgsPerCore int) *coreCache {
	return &coreCache{m: m, classes: map[classKey]int{}, measuring: map[classKey]chan struct{}{}, mixes: map[string]*mixEntry{}, loops: map[string]int{},
		tgsHint: tgsPerCore, lineSets: map[string]*progMem{}, keeper: newCoreKeeper()}
}

// maxKept bounds the coarse measurements' core models a Simulator keeps for
// fine ones to go on from (~10 KB each, whatever the number of kernels): an
// evicted one's fine measurement starts afresh, with the same result and
// more work.
const maxKept = 128

// coreKeeper holds the coarse measurements' core models kept, oldest first,
// for every core cache of a Simulator.
type coreKeeper struct {
	mu      sync.Mutex
	entries []*mixEntry
}

func newCoreKeeper() *coreKeeper { return &coreKeeper{} }

// keep gives cs to its coarse entry e, dropping the oldest core model
// beyond maxKept.
func (k *coreKeeper) keep(e *mixEntry, cs *coreSim) {
	e.sim.Store(cs)
	k.mu.Lock()
	defer k.mu.Unlock()
	// core models a fine measurement took no longer count
	k.entries = slices.DeleteFunc(k.entries, func(x *mixEntry) bool { return x.sim.Load() == nil })
	k.entries = append(k.entries, e)
	if len(k.entries) > maxKept {
		k.entries[0].sim.Store(nil)
		k.entries = slices.Delete(k.entries, 0, 1)
	}
}

// snapshot returns the class infos created so far, by id.
func (cc *coreCache) snapshot() []*classInfo {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return slices.Clone(cc.info)
}

// class returns the class id of a program, measuring its overhead on first use,
// and the simdgroup instructions this call simulated to do so. loop is the
// program whose k-loop stands for p's in core mixes (p itself, or a canonical
// program of its grid), with its memory pattern loopMem.
func (cc *coreCache) class(p *isa.Program, repeat bool, mem *progMem, loop *isa.Program, loopMem *progMem) (int, int64) {
	k := classKey{prog: p, repeat: repeat, mem: mem, loopProg: loop, loopMem: loopMem}
	cc.mu.Lock()
	id, ok := cc.classes[k]
	wait, measuring := cc.measuring[k]
	if !ok && !measuring {
		cc.measuring[k] = make(chan struct{})
	}
	cc.mu.Unlock()
	if ok {
		return id, 0
	}
	if measuring { // another run is measuring its overhead
		<-wait
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return cc.classes[k], 0
	}
	// classMu orders the creation of classes (their ids and k-loop
	// classes), not their overhead measurements, which runs make in
	// parallel
	cc.classMu.Lock()
	cc.mu.Lock()
	id = len(cc.info) // only class creation appends to info, and it holds classMu
	cc.mu.Unlock()
	wl, al := cacheLevels(cc.m, cc.tgsHint)
	ci := &classInfo{classKey: k, mixID: id, traffic: newTGTraffic(p, mem, repeat, wl, al)}
	if !p.Exit {
		// a k-loop class is a k-loop as core mixes simulate it: the timing
		// content of its program's prologue and body (Grid.Loop's program,
		// itself a function of the tile), its weight line pattern (not the
		// activation reuse, which a mix measurement does not read: grids of
		// another m share the class) and whether the weights come from a
		// cache. Its rank, which orders the classes of a mix canonically
		// (never by id or by which run met them first), renders exactly
		// that, so equal content shares one class and its measured mixes,
		// whatever kernel, variant or m the program came from.
		lines := loopMem.canonical(cc.lineSets)
		rank := fmt.Sprintf("%s#%s#%d#%s#%v", sectionSignature(loop, isa.SecBody, true),
			sectionSignature(loop, isa.SecPrologue, true), loop.Steps, lines.lineKey, repeat)
		if rep, ok := cc.loops[rank]; ok {
			ci.mixID = rep
		} else {
			cc.loops[rank] = id
			ci.rank = rank
		}
	}
	// the info is visible to mix measurements (its own k-loop's, for the
	// overhead) before its id is published to other runs with the overhead set
	cc.mu.Lock()
	cc.info = append(cc.info, ci)
	cc.mu.Unlock()
	cc.classMu.Unlock()
	var instr int64
	ci.overhead, instr = cc.overhead(ci)
	cc.mu.Lock()
	cc.classes[k] = id
	close(cc.measuring[k])
	delete(cc.measuring, k)
	cc.mu.Unlock()
	return id, instr
}

// sectionSignature renders the timing content of a program's section: every
// field of its simdgroups' instructions that the core model reads, or, with
// withBytes false, all but the distinct bytes each touches (the instruction
// stream alone: an edge tile's matches its interior tile's).
func sectionSignature(p *isa.Program, sec isa.Section, withBytes bool) string {
	var b []byte
	for _, insts := range p.Timing().Insts[sec] {
		for _, in := range insts {
			b = fmt.Appendf(b, "%d/%d/%d/%d/%d/%d/%g/%g/%t/%t/%t;", in.Class, in.Count, in.ILP, in.Wait, in.Stream, in.Bytes,
				in.Sectors, in.BankWords, in.CallStart, in.Regather, in.Accumulate)
			if withBytes {
				b = fmt.Appendf(b, "%d;", in.Unique)
			}
		}
		b = append(b, '|')
	}
	return string(b)
}

func (cc *coreCache) newCore() *coreSim {
	cs := newCoreSim(cc.m)
	cs.weightLvl, cs.actLvl = cacheLevels(cc.m, cc.tgsHint)
	return cs
}

// cacheLevels decides which level serves re-read weight lines and activations:
// one level for both (docs/model.md §2, "Memory"), from the working set of the
// resident threadgroups, 64 weight rows of one 128-byte line each per
// threadgroup plus 32 activation rows (the upstream tile's; a cache serves a
// core mix of any kernel, so no one tile's geometry): L1 if a core's fits,
// else L2 if the whole chip's does, else the SLC, else DRAM.
func cacheLevels(m *model, tgsPerCore int) (weights, act int) {
	c := m.chip
	perCore := float64(tgsPerCore) * (64 + 32) * lineBytes
	chip := perCore * c.Cores.Value
	lvl := lvlDRAM
	switch {
	case perCore <= c.L1Bytes.Value:
		lvl = lvlL1
	case chip <= c.L2Bytes.Value:
		lvl = lvlL2
	case chip <= c.SLCBytes.Value:
		lvl = lvlSLC
	}
	return lvl, lvl
}

// overheadSteps is how many k-steps the overhead measurement runs: enough for
// the first steps' start-up to settle, far fewer than a real k-loop.
const overheadSteps = 8

// overhead measures, on an otherwise idle core, the cycles a threadgroup spends
// outside its steady k-loop: its life with a short k-loop minus that many steady
// steps.
func (cc *coreCache) overhead(ci *classInfo) (float64, int64) {
	cs := cc.newCore()
	slot := cs.addTG(ci.prog, ci.mem, 0, false, ci.repeat, 0, 0)
	steps := min(ci.prog.Steps, overheadSteps)
	cs.tgs[slot].steps = steps
	cs.run(math.MaxInt64)
	instr := cs.settled().issued
	total := float64(cs.tgs[0].finish)
	if ci.prog.Exit || steps == 0 {
		return total, instr
	}
	mid := ci.mixID
	r, n := cc.mix(appendMixKey(nil, []int{mid}), []int{mid}, fine)
	return max(0, total-float64(steps)*r.period.of(mid)), instr + n
}

// A mix is measured after mixWarmup k-steps, over enough steps that all its
// threadgroups together cover mixCover k-steps; the threadgroups start at
// phases spread over the k-loop so the weight-line pattern is sampled evenly.
const (
	mixWarmup  = 2
	mixMeasure = 4
	mixCover   = 256
	// coarseCover is the cover of a first, cheap measurement of a mix (its
	// period within a few per cent); a run reads the full one once its use of
	// the composition, expected stays included, reaches refineAfter times
	// what the full measurement simulates, so a full measurement costs at most
	// 1/refineAfter of simulating that use instruction by instruction (runMix).
	coarseCover = 16
	refineAfter = 2
)

// precision is how long a mix is measured.
type precision uint8

const (
	coarse precision = iota // coarseCover k-steps
	fine                    // mixCover k-steps
)

func (p precision) cover() int {
	if p == coarse {
		return coarseCover
	}
	return mixCover
}

// mix returns the measured periods of a canonically sorted multiset of k-loop
// classes. Mixes are measured with DRAM latency but without a bandwidth limit,
// which the chip level applies.
// key is appendMixKey(ids). It also returns the simdgroup instructions this
// call simulated (zero when another call measured the mix).
func (cc *coreCache) mix(key []byte, ids []int, p precision) (*mixResult, int64) {
	key = append(slices.Clip(key), byte(p)) // never into the caller's buffer
	cc.mu.Lock()
	if e, ok := cc.mixes[string(key)]; ok { // no allocation for the lookup
		pats := e.pats
		cc.mu.Unlock()
		if pats != nil {
			pats.help(cc) // a start pattern or more of it, rather than wait idle
		}
		<-e.done
		return e.r, 0
	}
	e := &mixEntry{done: make(chan struct{})}
	info := cc.info
	if p == fine {
		e.pats = newPatternWork(ids, info)
	}
	cc.mixes[string(key)] = e
	// a fine measurement goes on from the coarse one's core model: a fresh
	// one would simulate the same steps again (the loop below is the same
	// up to where the coarse one stopped), so the result is the same
	var cs *coreSim
	if p == fine {
		key[len(key)-1] = byte(coarse)
		if ce, ok := cc.mixes[string(key)]; ok {
			cs = ce.sim.Swap(nil)
		}
	}
	cc.mu.Unlock()
	defer close(e.done) // also if measure panics, so no waiter blocks forever
	if p == fine {
		e.r, cs = cc.measureFine(e.pats, cs)
		cc.mu.Lock()
		e.pats = nil // its patterns are all taken: the cache keeps the result only
		cc.mu.Unlock()
	} else {
		e.r, cs = cc.measure(ids, info, p.cover(), cs, 0)
	}
	if p == coarse {
		cc.keeper.keep(e, cs)
	}
	return e.r, e.r.instr
}

// startPatterns is how many start patterns a fine measurement averages: the
// core model's simdgroups interleave deterministically, and a mix's period
// depends on how its threadgroups happen to start relative to each other
// (±2.5 % on the M1 Pro headline shape under small integer-cycle changes,
// docs/model.md §5). Averaging 4 start patterns, each over a quarter of the
// cover, cuts that scatter's standard deviation from 1.8 % to about 1.1 % for
// 1.2 times the instructions; the shorter measurements read about 2 % fast,
// which the fitted per-core costs absorb. 8 patterns with a longer warm-up
// reach 0.95 % without the bias, for 2.1 times the instructions (the perf
// suite 2.7 times as long), which this model does not spend.
const startPatterns = 4

// patternJitter is the launch offset, in cycles, by which start pattern p
// moves the j-th threadgroup of a mix: odd multiples of a prime step, so the
// patterns put the threadgroups' simdgroups at different relative issue
// slots (pattern 0 is the unjittered start).
func patternJitter(p, j int) int64 { return int64(p * (2*j + 1) * 53) }

// patternWork is a fine measurement's start patterns 1 to startPatterns-1
// as work: the measuring run and any run waiting for the mix each take the
// next pattern not yet taken, so the patterns of one mix run in parallel
// when several runs need it at once. Each pattern's result lands in its own
// place and they are summed in pattern order, so the result does not depend
// on who ran which.
type patternWork struct {
	ids  []int
	info []*classInfo
	next atomic.Int32              // the last pattern taken
	res  [startPatterns]*mixResult // each pattern's result, 0 the measuring run's
	wg   sync.WaitGroup            // the patterns from 1 not yet done
}

func newPatternWork(ids []int, info []*classInfo) *patternWork {
	w := &patternWork{ids: slices.Clone(ids), info: info}
	if len(ids) == 1 {
		w.next.Store(startPatterns) // none to run: measureFine shifts pattern 0
		return w
	}
	w.wg.Add(startPatterns - 1)
	return w
}

// help runs the patterns not yet taken, one after the other.
func (w *patternWork) help(cc *coreCache) {
	for p := int(w.next.Add(1)); p < startPatterns; p = int(w.next.Add(1)) {
		w.res[p], _ = cc.measure(w.ids, w.info, mixCover/startPatterns, nil, p)
		w.wg.Done()
	}
}

// measureFine is the fine measurement of a mix: the mean over startPatterns
// start patterns, each covering mixCover/startPatterns k-steps; pattern 0
// goes on with cs (the coarse measurement's core model, nil if none) and is
// returned for the caller, the others are w's (or, for one threadgroup,
// pattern 0 shifted).
func (cc *coreCache) measureFine(w *patternWork, cs *coreSim) (*mixResult, *coreSim) {
	var cs0 *coreSim
	w.res[0], cs0 = cc.measure(w.ids, w.info, mixCover/startPatterns, cs, 0)
	if len(w.ids) == 1 {
		for p := 1; p < startPatterns; p++ {
			w.res[p] = shifted(w.res[0], cs0, p)
		}
	}
	w.help(cc)
	w.wg.Wait()
	sum := &mixResult{}
	var n periods // patterns that measured each class
	for _, r := range w.res {
		for _, e := range r.period {
			sum.period.add(e.id, e.p)
			n.add(e.id, 1)
		}
		sum.util.AddScaled(r.util, 1.0/startPatterns)
		sum.idleSG += r.idleSG / startPatterns
		sum.instr += r.instr
	}
	for i := range sum.period {
		sum.period[i].p /= n.of(sum.period[i].id)
	}
	return sum, cs0
}

// measure runs a mix on a fresh core model started in start pattern
// pattern, or goes on with cs, where a shorter measurement of the same mix
// stopped, and returns the core model.
func (cc *coreCache) measure(ids []int, info []*classInfo, cover int, cs *coreSim, pattern int) (*mixResult, *coreSim) {
	var before int64 // instructions simulated before this call (a shorter measurement's)
	if cs != nil {
		before = cs.settled().issued
	} else {
		cs = cc.newCore()
		cs.markLimit = math.MaxInt // a measurement reads its marks, and a longer one goes on from them
		nsg := 0
		for _, id := range ids {
			nsg += info[id].loopProg.NSG
		}
		cs.reserve(len(ids), nsg)
		for j, id := range ids {
			ci := info[id]
			cs.addTG(ci.loopProg, ci.loopMem, int64(j*ci.loopProg.NSG)*cc.m.launch+patternJitter(pattern, j), true, ci.repeat, j,
				j*max(1, ci.loopProg.Steps)/len(ids))
		}
	}
	// run until every threadgroup has warmed up and been measured
	measure := max(mixMeasure, (cover+len(ids)-1)/len(ids))
	need := mixWarmup + measure + 1
	for {
		done := true
		for i := range cs.tgs {
			if len(cs.tgs[i].marks) < need {
				done = false
				break
			}
		}
		if done || cs.nextTime() == math.MaxInt64 {
			break
		}
		cs.run(cs.nextTime() + 256)
	}
	r := &mixResult{}
	var count periods // threadgroups measured per class
	var t1 int64
	for j, id := range ids {
		mk := cs.tgs[j].marks
		if len(mk) < need {
			continue
		}
		r.period.add(id, float64(mk[need-1]-mk[mixWarmup])/float64(measure))
		count.add(id, 1)
		t1 = max(t1, mk[need-1])
	}
	for i := range r.period {
		r.period[i].p /= count.of(r.period[i].id)
	}
	r.instr = cs.settled().issued - before
	r.last = t1
	r.util, r.idleSG = cs.rates(t1)
	return r, cs
}

// rates returns a measurement's busy fractions and barrier waits per cycle
// over the cycles up to last.
func (c *coreSim) rates(last int64) (utilization, float64) {
	el := float64(max(last, 1))
	return c.utilization(el), c.stats.barrierSG / el
}

// shifted returns the measurement of pattern p of a one-threadgroup mix from
// pattern 0's, r0, and its core model cs0: on an otherwise idle core the
// threadgroup started patternJitter(p, 0) cycles later runs the same, the
// same cycles later, so only its marks and the time base of its rates move.
func shifted(r0 *mixResult, cs0 *coreSim, p int) *mixResult {
	r := &mixResult{period: slices.Clone(r0.period)}
	if r0.last > 0 {
		r.last = r0.last + patternJitter(p, 0)
	}
	r.util, r.idleSG = cs0.rates(r.last)
	return r
}

// utilization returns the busy fractions of a core over el cycles.
func (c *coreSim) utilization(el float64) utilization {
	q := float64(c.m.quads)
	s := c.settled()
	n := s.issued
	u := utilization{
		FMA:    s.pipeBusy[pipeFMA] / (el * q),
		IC:     s.pipeBusy[pipeIC] / (el * q),
		Tensor: s.pipeBusy[pipeTensor] / (el * q),
		TGMem:  s.pipeBusy[pipeTGMem] / el,
		L1:     s.pipeBusy[pipeL1] / el,
		Issue:  float64(n) / (el * q),
	}
	if c.dram != nil {
		u.DRAM = s.dramBytes / (el * c.dram.bytesPerClk)
	}
	return u
}

// cacheView is one run's view of a shared coreCache: the class infos and
// compositions it has met, so its events read them without locking.
type cacheView struct {
	cc      *coreCache
	info    []*classInfo
	comps   map[string]*runMix
	order   []int // each class's position in (rank, id) order (rankOrder)
	keyBuf  []byte
	instr   int64 // simdgroup instructions this run simulated in measurements
	lattice bool  // the run interpolates compositions on the lattice (lattice.MinWaves)
}

// runMix is one composition as a run uses it. A core entering it reads the
// coarse measurement unless the run's use of the composition (core cycles
// spent in it, summed over cores) plus the expected stays of the cores in it
// now, its own included, reaches refineAfter times the core cycles the fine
// measurement simulates (estimated from the coarse periods); then it reads the
// fine one. Once the fine one exists every core reads it, and the cores on
// the coarse one go on at it (runFast's update): the cores in one
// composition never run at two rates. So the effort spent measuring a
// composition follows how much the run needs it: the many short-lived
// compositions (a slot between two tiles, early exits) are measured
// briefly, the few that carry the run precisely. Both measurements are
// functions of the composition alone, and the switch depends on this run
// alone, so the result does not depend on what else the Simulator ran.
type runMix struct {
	key          []byte
	ids          []int
	coarse, fine *mixResult
	corners      []lattice.Corner // the lattice points that stand for it, nil if measured itself
	use          float64          // core cycles this run spent in the composition so far
	pending      float64          // expected stays of the cores in the composition now
	span         float64          // use from which the run reads the fine measurement
}

func newCacheView(cc *coreCache) *cacheView {
	return &cacheView{cc: cc, comps: map[string]*runMix{}}
}

// class returns the info of a class id the run got from the cache.
func (v *cacheView) class(id int) *classInfo {
	if id >= len(v.info) {
		v.info = v.cc.snapshot()
	}
	return v.info[id]
}

// insertMix adds a k-loop class id to a composition kept in canonical order
// (by rank, then id), so a mix is simulated the same way whatever ids its
// classes got.
func (v *cacheView) insertMix(ids []int, id int) []int {
	if id >= len(v.order) {
		v.rankOrder()
	}
	i := 0
	for i < len(ids) && v.order[ids[i]] <= v.order[id] {
		i++
	}
	return slices.Insert(ids, i, id)
}

// rankOrder numbers every class the view knows by (rank, id), so insertMix
// compares integers instead of rank strings.
func (v *cacheView) rankOrder() {
	v.info = v.cc.snapshot()
	ids := make([]int, len(v.info))
	for i := range ids {
		ids[i] = i
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c := strings.Compare(v.info[a].rank, v.info[b].rank); c != 0 {
			return c
		}
		return a - b
	})
	v.order = make([]int, len(ids))
	for pos, id := range ids {
		v.order[id] = pos
	}
}

// comp returns the run's composition of canonically sorted k-loop class ids.
func (v *cacheView) comp(ids []int) *runMix {
	v.keyBuf = appendMixKey(v.keyBuf[:0], ids)
	if rm, ok := v.comps[string(v.keyBuf)]; ok {
		return rm
	}
	rm := &runMix{key: slices.Clone(v.keyBuf), ids: slices.Clone(ids)}
	if v.lattice {
		rm.corners = lattice.Corners(ids, v.cc.tgsHint)
	}
	if rm.corners != nil {
		rm.coarse = v.latticeMix(rm.corners, ids[0], ids[len(ids)-1], coarse)
	} else {
		var n int64
		rm.coarse, n = v.cc.mix(rm.key, rm.ids, coarse)
		v.instr += n
	}
	// the full measurement runs until its slowest threadgroup has its steps
	// (the maximum is also independent of the map's iteration order)
	slowest := 0.0
	for _, e := range rm.coarse.period {
		slowest = max(slowest, e.p)
	}
	steps := mixWarmup + max(mixMeasure, (mixCover+len(ids)-1)/len(ids)) + 1
	rm.span = refineAfter * slowest * float64(steps)
	v.comps[string(rm.key)] = rm
	return rm
}

// result returns the measurement a core entering a composition reads, given
// how long it expects to stay: the fine one if it exists, else the run's past
// use of the composition, the expected stays of the other cores in it now,
// and its own decide; made reports that this call made the fine one.
func (v *cacheView) result(rm *runMix, stay float64) (r *mixResult, made bool) {
	switch {
	case rm.fine != nil:
		return rm.fine, false
	case rm.use+rm.pending+stay < rm.span:
		return rm.coarse, false
	case rm.corners != nil:
		rm.fine = v.latticeMix(rm.corners, rm.ids[0], rm.ids[len(rm.ids)-1], fine)
	default:
		var n int64
		rm.fine, n = v.cc.mix(rm.key, rm.ids, fine)
		v.instr += n
	}
	return rm.fine, true
}

func appendMixKey(b []byte, ids []int) []byte {
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8))
	}
	return b
}
