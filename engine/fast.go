package engine

import (
	"math"
	"slices"

	"github.com/metalsim/metalsim/engine/eventq"
)

// The fast engine: threadgroup-level events over the whole chip, with the
// per-core throughput of every mix of resident threadgroups measured once by the
// instruction-level core model and cached.
//
// A threadgroup's life on a core: the core's front end launches it (one launch
// taking sg_launch_clk per simdgroup), it spends its fixed overhead (prologue and epilogue
// latency, measured alone on the core model), then runs its k-steps at the rate
// the current mix of k-looping threadgroups on that core sustains; the rate is
// re-read whenever the mix changes. Early-exit threadgroups hold their slot for
// their launch and their one routing read. Dispatch follows the hardware: linear
// index order, round-robin over cores first, then one threadgroup per freed slot
// (slots that k-loop ends on several cores free within one cycle are
// refilled round-robin over those cores: runFast's refill).

// slot phases
const (
	phIdle = iota
	phPre  // launched, in its overhead outside the k-loop
	phBody // in the k-loop
	phExit // early exit
)

type slot struct {
	class    int
	mix      int     // its class's k-loop class (classInfo.mixID)
	dramStep float64 // its class's DRAM bytes per k-step
	phase    uint8
	period   float64 // cycles per k-step in the current mix, at full DRAM bandwidth
	end      float64 // work-clock value at which the k-loop is done
	at       float64 // phPre: when its k-loop starts
}

// fastCore is one core at threadgroup level. Its work clock W advances at the
// chip's DRAM scale s(t); while its front end launches a threadgroup it issues
// nothing (fastCore.advance says what that costs); a k-looping threadgroup of
// period P needs P work-clock cycles per step.
type fastCore struct {
	slots    []slot
	front    frontEnd
	mixSince float64
	mix      *mixResult // the mix its k-looping threadgroups run, nil if none
	comp     *runMix    // the composition mix was read for
	stay     float64    // its expected stay in comp, counted in comp.pending
	ids      []int      // the k-loop classes of its k-looping threadgroups, in canonical order
	w        float64    // work clock at wAt
	wAt      float64
	wMix     float64 // work clock at mixSince
	lag      float64 // work its DRAM share brought during pauses that it has not done yet
	pauses   []pause
	demand   float64 // DRAM bytes per cycle its k-looping threadgroups want at s = 1
	first    float64 // the earliest k-loop end of its slots on the work clock (+Inf if none)
}

type pause struct{ b, e float64 }

// effective returns the unpaused time in [t0, t1].
func (c *fastCore) effective(t0, t1 float64) float64 {
	d := t1 - t0
	for _, p := range c.pauses {
		d -= max(0, min(p.e, t1)-max(p.b, t0))
	}
	return max(0, d)
}

// endTime returns when work unpaused cycles starting at t0 are done.
func (c *fastCore) endTime(t0, work float64) float64 {
	t := t0
	for _, p := range c.pauses {
		if p.e <= t {
			continue
		}
		if p.b > t {
			if t+work <= p.b {
				return t + work
			}
			work -= p.b - t
		}
		t = p.e
	}
	return t + work
}

// advance moves the core's work clock to real time t at DRAM scale s, with
// lat the DRAM latency in cycles.
//
// A launch pause stops the core's issue, not the DRAM: at s < 1 its
// k-looping threadgroups wait on transfers already in flight, which keep
// arriving at the core's share s. The work they bring (s per cycle, pauses
// included, plus what the core still owes, lag) is done as fast as the core
// can issue, at most one work-clock cycle per unpaused cycle; what it cannot
// do yet stays owed, up to one DRAM latency of its share (the transfers a
// pause finds in flight). At s = 1 the core is not waiting on DRAM and a
// pause stalls it.
func (c *fastCore) advance(t, s, lat float64) {
	if t <= c.wAt {
		return
	}
	unpaused := c.effective(c.wAt, t)
	if s >= 1 {
		c.w += unpaused
		c.lag = 0
	} else {
		due := s*(t-c.wAt) + c.lag
		done := min(due, unpaused)
		c.w += done
		c.lag = min(due-done, s*lat)
	}
	c.wAt = t
	if len(c.pauses) > 0 {
		c.pauses = slices.DeleteFunc(c.pauses, func(p pause) bool { return p.e <= t })
	}
}

// doneAt returns when the core, at time t with its clock current, has done
// work more work-clock cycles at DRAM scale s (advance's rule).
func (c *fastCore) doneAt(t, work, s float64) float64 {
	issue := c.endTime(t, work)
	if s >= 1 {
		return issue
	}
	return max(issue, t+(work-c.lag)/s)
}

// fastResult is what one fast-engine run produced.
type fastResult struct {
	cycles    float64
	util      utilization
	idleSG    float64            // simdgroup-cycles at barriers, chip-wide
	levels    [numLevels]float64 // device bytes each memory level served, chip-wide
	busy      []float64
	events    int64
	launched  int64
	dramBytes float64 // DRAM bytes moved, integrated over the cores' demand (utilisation)
	traffic   float64 // DRAM bytes of the threadgroups run, each its own program's
}

// source enumerates a grid's threadgroups in dispatch order.
type source interface {
	len() int
	// class returns the class id of threadgroup i.
	class(i int) int
}

// refilled, when a test sets it, is told of every refill of runFast: the
// time and the cores that got a threadgroup, in dispatch order (a slice
// valid during the call).
var refilled func(t float64, cores []int)

// runFast simulates a grid on cores x tgsPerCore slots. DRAM bandwidth is
// shared chip-wide: while the k-looping threadgroups of all cores want more
// bytes per cycle than the chip delivers, they all progress at the fraction s
// of their rate that it can feed (a roofline applied over time).
//
// coreDRAM is one core's share of the chip's DRAM bandwidth in bytes per
// cycle.
func runFast(v *cacheView, src source, cores, tgsPerCore int, coreDRAM float64) fastResult {
	cc := v.cc
	fc := make([]fastCore, cores)
	for i := range fc {
		fc[i].slots = make([]slot, tgsPerCore)
		fc[i].first = math.Inf(1)
	}
	// events: core ci's k-loop end in ends, its slot s's in evq under id
	// ci*tgsPerCore + s; every k-loop end at one time comes before any slot
	// event at that time, in core order, and slots in (core, slot) order
	// (eventq.Queue resolves equal times by id); refill takes the cores that
	// k-loop ends within one cycle free as one batch
	ends := eventq.NewFlat(cores)
	evq := eventq.New(cores * tgsPerCore)
	slotEvent := func(ci, s int) int32 { return int32(ci*tgsPerCore + s) }
	// next returns the earliest event: a core's k-loop end (slot -1) or a
	// slot's event
	next := func() (ci, slot int, t float64) {
		if ends.Len() > 0 {
			ci, t = ends.Peek()
			if evq.Len() == 0 {
				return ci, -1, t
			}
			if _, st := evq.Peek(); t <= st {
				return ci, -1, t
			}
		}
		id, st := evq.Peek()
		return int(id) / tgsPerCore, int(id) % tgsPerCore, st
	}
	queue := dispatchQueue{n: src.len()}
	res := fastResult{busy: make([]float64, cores), launched: int64(queue.n)}
	bw := coreDRAM * float64(cores) // bytes per cycle, chip-wide
	lat := float64(cc.m.lat[lvlDRAM])
	scale := 1.0
	demand := 0.0
	wsum := 0.0

	// accountMix books core c's mix from mixSince to t (its clock is at t).
	accountMix := func(c *fastCore, t float64) {
		if d := t - c.mixSince; d > 0 && c.mix != nil {
			r := c.mix
			c.comp.use += d
			// the mix's units are busy at its measured (full-bandwidth)
			// rates only while the work clock runs
			w := c.w - c.wMix
			res.util.AddScaled(r.util, w)
			res.idleSG += r.idleSG * w
			res.dramBytes += c.demand * w
			wsum += d
		}
		c.mixSince, c.wMix = t, c.w
	}
	// schedule (re)queues a core's next k-loop end at the current scale.
	schedule := func(ci int, t float64) {
		c := &fc[ci]
		first := c.first
		if math.IsInf(first, 1) {
			ends.Remove(ci)
			return
		}
		ends.Set(ci, c.doneAt(t, max(0, first-c.w), scale))
	}
	// rescale recomputes the DRAM scale; when it changes every core's clock is
	// brought to t under the old scale and its next end re-timed.
	rescale := func(t float64) {
		s := 1.0
		if demand > bw {
			s = bw / demand
		}
		if s == scale {
			return
		}
		for ci := range fc {
			fc[ci].advance(t, scale, lat)
			accountMix(&fc[ci], t)
		}
		scale = s
		for ci := range fc {
			schedule(ci, t)
		}
	}
	// update re-reads the mix of core ci at time t (its clock is current).
	var update func(ci int, t float64)
	update = func(ci int, t float64) {
		c := &fc[ci]
		accountMix(c, t)
		if c.mix != nil {
			c.comp.pending -= c.stay
			c.stay = 0
		}
		demand -= c.demand
		c.demand = 0
		c.first = math.Inf(1)
		if len(c.ids) == 0 {
			c.mix = nil
			rescale(t)
			schedule(ci, t)
			return
		}
		rm := v.comp(c.ids)
		// the core's expected stay in the composition, under the coarse
		// periods: until its first k-loop ends or a launched threadgroup
		// enters its k-loop
		stay := math.Inf(1)
		// a k-looping slot's stay, (end - w) * p / period / scale, is
		// monotone in its end (each float step is, for positive factors):
		// the slots of the first (class, period) met are read at their
		// earliest end, one division pair for them all
		gMix, gPeriod, gEnd := -1, 0.0, math.Inf(1)
		w := c.w
		for s := range c.slots {
			switch sl := &c.slots[s]; sl.phase {
			case phBody:
				switch {
				case sl.mix == gMix && sl.period == gPeriod:
					gEnd = min(gEnd, sl.end)
				case gMix < 0:
					gMix, gPeriod, gEnd = sl.mix, sl.period, sl.end
				default:
					p := rm.coarse.period.of(sl.mix)
					stay = min(stay, (sl.end-w)*p/sl.period/scale)
				}
			case phPre:
				stay = min(stay, sl.at-t)
			}
		}
		if gMix >= 0 {
			p := rm.coarse.period.of(gMix)
			stay = min(stay, (gEnd-w)*p/gPeriod/scale)
		}
		r, made := v.result(rm, stay)
		c.mix, c.comp, c.stay = r, rm, stay
		rm.pending += stay
		first, dem := math.Inf(1), 0.0 // c.first and c.demand, in locals
		lastMix, p := -1, 0.0
		for s := range c.slots {
			sl := &c.slots[s]
			if sl.phase != phBody {
				continue
			}
			if sl.mix != lastMix {
				lastMix, p = sl.mix, r.period.of(sl.mix)
			}
			// remaining work keeps its fraction of a step under the new period
			sl.end = w + (sl.end-w)*p/sl.period
			sl.period = p
			first = min(first, sl.end)
			dem += sl.dramStep / p
		}
		c.first, c.demand = first, dem
		demand += c.demand
		rescale(t)
		schedule(ci, t)
		if made {
			// the cores on the coarse measurement go on at the fine one
			for cj := range fc {
				if o := &fc[cj]; cj != ci && o.comp == rm && o.mix == rm.coarse {
					o.advance(t, scale, lat)
					update(cj, t)
				}
			}
		}
	}
	dispatch := func(ci, s int, t float64) {
		c := &fc[ci]
		sl := &c.slots[s]
		i, ok := queue.take()
		if !ok {
			sl.phase = phIdle
			return
		}
		id := src.class(i)
		info := v.class(id)
		for l, b := range info.traffic.levels {
			res.levels[l] += b
		}
		res.traffic += info.traffic.dram
		begin, start := c.front.launch(t, float64(int64(info.prog.NSG)*cc.m.launch))
		if start > begin {
			c.advance(t, scale, lat)
			c.pauses = append(c.pauses, pause{begin, start})
			schedule(ci, t)
		}
		sl.class, sl.mix, sl.dramStep = id, info.mixID, info.traffic.dramStep
		sl.phase = phPre
		sl.at = start + info.overhead
		if info.prog.Exit {
			sl.phase = phExit
		}
		evq.Set(slotEvent(ci, s), sl.at)
	}
	// refill fills, at time t, the idle slots of the cores whose k-loop ends
	// freed them within one cycle before, in rounds of one threadgroup per
	// core (in core order) while the grid lasts. Cores whose identical
	// threadgroups run in lock-step free their slots at one time here (their
	// float times a rounding apart), where the detailed engine's cores,
	// whose simdgroups interleave, free them one after another: the
	// remaining threadgroups spread over the cores, as there, instead of
	// filling the first cores' slots while the others idle. A modelling
	// choice: how the hardware hands threadgroups to cores (round robin or
	// first free) is not documented (apple-gpu.md §8).
	var got []int // refill's dispatches, for refilled
	refill := func(batch []int, t float64) {
		// in core order, each core once, however rounding ordered their ends
		slices.Sort(batch)
		batch = slices.Compact(batch)
		got = got[:0]
		for more := true; more; {
			more = false
			for _, fi := range batch {
				f := &fc[fi]
				for s := range f.slots {
					if f.slots[s].phase == phIdle {
						dispatch(fi, s, t)
						if f.slots[s].phase != phIdle {
							more = true
							if refilled != nil {
								got = append(got, fi)
							}
						}
						break
					}
				}
			}
		}
		if refilled != nil {
			refilled(t, got)
		}
	}
	// the cores whose k-loops ended within a cycle of freedAt, not yet
	// refilled: ends the dispatcher sees in one cycle are one batch, refilled
	// at the last event's time, whatever rounding put between the cores'
	// float times
	var freed []int
	var freedAt, now float64 // now: the last event's time, no core's clock past it
	firstWave(cores, tgsPerCore, func(ci, s int) { dispatch(ci, s, 0) })
	for evq.Len() > 0 || ends.Len() > 0 || len(freed) > 0 {
		// the freed cores are refilled once no other core's k-loop end
		// within the cycle is pending, before any later event
		if len(freed) > 0 {
			endInCycle := false
			if evq.Len() > 0 || ends.Len() > 0 {
				_, ns, nt := next()
				endInCycle = nt < freedAt+1 && ns < 0
			}
			if !endInCycle {
				refill(freed, now)
				freed = freed[:0]
				continue
			}
		}
		ci, slotIdx, t := next()
		if slotIdx < 0 {
			ends.Remove(ci)
		} else {
			evq.Pop()
		}
		now = t
		c := &fc[ci]
		if slotIdx < 0 {
			res.events++
			c.advance(t, scale, lat)
			// every k-loop that reached its end finishes now
			done := false
			for s := range c.slots {
				sl := &c.slots[s]
				if sl.phase == phBody && sl.end <= c.w+1e-6*max(1, sl.period) {
					sl.phase = phIdle
					c.ids = removeMix(c.ids, sl.mix)
					done = true
				}
			}
			if !done {
				schedule(ci, t)
				continue
			}
			res.busy[ci] = t
			res.cycles = max(res.cycles, t)
			update(ci, t)
			// other cores' k-loop ends within the cycle free their slots
			// before any is refilled (the loop's head refills them)
			if len(freed) == 0 {
				freedAt = t
			}
			freed = append(freed, ci)
			continue
		}
		sl := &c.slots[slotIdx]
		res.events++
		switch sl.phase {
		case phPre:
			c.advance(t, scale, lat)
			sl.phase = phBody
			sl.period = 1
			sl.end = c.w + float64(v.class(sl.class).prog.Steps)
			c.ids = v.insertMix(c.ids, sl.mix)
			update(ci, t)
		case phExit:
			sl.phase = phIdle
			res.busy[ci] = t
			res.cycles = max(res.cycles, t)
			dispatch(ci, slotIdx, t)
		}
	}
	for ci := range fc {
		fc[ci].advance(res.cycles, scale, lat)
		accountMix(&fc[ci], res.cycles)
	}
	if wsum > 0 {
		u := res.util
		res.util = utilization{}
		res.util.AddScaled(u, 1/wsum)
	}
	if res.cycles > 0 {
		res.util.DRAM = res.dramBytes / (res.cycles * bw)
	}
	return res
}

// removeMix removes one k-loop class id from a composition (its members are
// interchangeable, so which one does not matter), keeping the order.
func removeMix(ids []int, id int) []int {
	i := slices.Index(ids, id)
	return slices.Delete(ids, i, i+1)
}
