package engine

import (
	"math"
	"slices"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// The core model: one GPU core at simdgroup-instruction level, in whole cycles.
//
// A core has S SIMD partitions ("quads"), each with a dispatch port (one
// instruction per cycle) and its own pipes (fma: integer, float and legacy MMA;
// ic: conversions; tensor: the 16x16x16 unit), and core-shared ports for
// threadgroup memory and L1. Any partition issues any ready simdgroup (the
// calibration rows show that the half-tile's idle simdgroups free their
// partition's matrix throughput, which a fixed binding would not; docs/model.md),
// but a simdgroup uses each pipe sequentially: its next instruction on a pipe
// waits until its previous one there is through. Each simdgroup issues in order,
// at most once per sg_issue_interval cycles, after its dependences: scoreboard
// waits on outstanding loads, ILP chains inside a group, barriers. Time jumps
// from one issue to the next through a calendar queue: idle cycles are never
// visited.

// sgState says where a simdgroup is.
type sgState uint8

const (
	sgRunning sgState = iota
	sgBarrier
	sgDone
)

// sgRun.sg, a simdgroup's index in its threadgroup, is an int8: the largest
// threadgroup tile builds has 128 simdgroups (the constant below fails to
// compile if that grows).
const _ uint8 = 128 - tile.MaxThreadsPerTG/32

type sgRun struct {
	tg       int32
	sg       int8
	state    sgState
	sec      isa.Section
	cur      op         // the current group's op (a copy: one load less per issue)
	ops      []op       // the current section's ops
	insts    []isa.Inst // the same as instructions (for traces)
	gi       int32
	ii       uint32 // instructions of the current group issued
	step     int
	ready    int64
	devReady int64
	done     [doneSlots]int64 // when the last ALU result, threadgroup load and store are done
	waitFrom int64            // arrival at the current barrier
	pipeBusy [pipeRows]int64  // until when this simdgroup's groups so far occupy each issue pipe (set as a group ends)
	chain    [maxChains]int64 // ILP chains of the current group
	ci, nch  int32            // next chain, chains in the current group
}

type tgRun struct {
	prog      *isa.Program
	code      *progCode
	mem       *progMem
	first     int32 // index of simdgroup 0 in coreSim.sgs
	arrived   int
	arriveMax int64
	done      int
	loop      bool // steady-state mode: the body repeats forever
	repeat    bool // its weights were just read by a neighbouring threadgroup
	start     int64
	finish    int64
	barriers  int // barriers released in the current body iteration
	nbody     int // barriers per body iteration
	marks     []int64
	id        int
	live      bool
	steps     int // k-steps to run (the program's, or fewer when measuring overheads)
}

// coreStats accumulates what a core did.
type coreStats struct {
	pipeBusy   [pipeRows]float64  // cycles of occupancy summed over servers (shared ports: see portBusy)
	portBusy   [pipeRows]int64    // the shared ports' occupancy in port units (settled adds it to pipeBusy)
	issued     int64              // simdgroup instructions issued (barriers included)
	barrierSG  float64            // simdgroup-cycles spent waiting at barriers
	levelBytes [numLevels]float64 // distinct device bytes each memory level served
	dramBytes  float64
}

// settled returns the core's statistics with the instructions of the groups
// in progress counted (issue counts a group's instructions and their pipe
// occupancy when the group ends). The pipe rows it adds to hold whole cycles,
// so the sums are exact in any order.
func (c *coreSim) settled() coreStats {
	s := c.stats
	for p, u := range s.portBusy {
		s.pipeBusy[p] += float64(u) / portOne // exact (u < 2^53): the sum of the occupancies as floats
	}
	s.portBusy = [pipeRows]int64{}
	for i := range c.sgs {
		sg := &c.sgs[i]
		if sg.ii > 0 {
			s.issued += int64(sg.ii)
			s.pipeBusy[sg.cur.wpipe&(pipeRows-1)] += float64(int64(sg.ii) * int64(sg.cur.issue))
		}
	}
	return s
}

// coreSim simulates one core.
type coreSim struct {
	m *model
	// when each partition's dispatch port takes its next instruction, and
	// each pipe of each partition is free, as time<<quadBits | partition
	quadFree  [maxQuads]int64
	pipeFree  [pipeRows][maxQuads]int64
	portFree  [pipeRows]int64 // in port units; the rows of pipes without a port stay zero (read by ALU ops)
	sgs       []sgRun
	tgs       []tgRun
	q         calendar
	stats     coreStats
	weightLvl int       // level serving weight lines re-read in the next k-step
	actLvl    int       // level serving activations
	finished  []int     // threadgroup slots that finished since the driver last looked
	stalls    []stall64 // threadgroup launches: no partition issues meanwhile
	stallsEnd int64     // the latest end of a stall: no later issue waits for one
	// yieldFinished makes run return as soon as a threadgroup finishes
	yieldFinished bool
	// sharedOnly makes run's limit bound only what other cores see: DRAM
	// transfers (the chip's channel serves them in time order) and,
	// with yieldFinished, threadgroup finishes (the dispatch order). The
	// rest of the core runs ahead (the detailed engine without a trace).
	sharedOnly bool
	dram       *dramServer
	trace      traceSink
	index      int // the core's index on the chip (for listeners)
	// markLimit is how many body-iteration marks each threadgroup keeps: a
	// mix measurement (measure) keeps them all, other runs none, so that
	// their memory does not grow with the k-steps (map0's chunks).
	markLimit int
}

func newCoreSim(m *model) *coreSim {
	c := &coreSim{m: m, weightLvl: lvlL2, actLvl: lvlL2}
	for q := range c.quadFree {
		c.quadFree[q] = int64(q) // time 0
	}
	c.q.init()
	return c
}

// reserve makes room for tgs threadgroups of sgs simdgroups in all, so addTG
// does not grow the slices one simdgroup at a time.
func (c *coreSim) reserve(tgs, sgs int) {
	c.tgs = slices.Grow(c.tgs, tgs)
	c.sgs = slices.Grow(c.sgs, sgs)
	c.q.next = slices.Grow(c.q.next, sgs)
}

// addTG makes a threadgroup resident, its simdgroups ready at time t. In loop
// mode its k-steps are numbered from step0 (so threadgroups of a mix sit at
// different phases of the weight-line pattern).
func (c *coreSim) addTG(prog *isa.Program, mem *progMem, t int64, loop, repeat bool, id, step0 int) int {
	slot := -1
	for i := range c.tgs {
		if !c.tgs[i].live && c.tgs[i].prog.NSG == prog.NSG {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = len(c.tgs)
		c.tgs = append(c.tgs, tgRun{first: int32(len(c.sgs))})
		for s := 0; s < prog.NSG; s++ {
			c.sgs = append(c.sgs, sgRun{})
			c.q.next = append(c.q.next, -1)
		}
	}
	tg := &c.tgs[slot]
	code := c.m.code(prog)
	*tg = tgRun{prog: prog, code: code, mem: mem, first: tg.first, loop: loop, repeat: repeat,
		start: t, id: id, live: true, marks: tg.marks[:0], nbody: code.nbody, steps: prog.Steps}
	for s := 0; s < prog.NSG; s++ {
		i := tg.first + int32(s)
		sg := &c.sgs[i]
		*sg = sgRun{tg: int32(slot), sg: int8(s), ready: t, step: step0}
		c.enterSection(sg, isa.SecPrologue)
		if sg.state == sgRunning {
			c.readyNext(sg, t, true)
			c.q.push(c, i)
		}
	}
	c.checkBarrier(tg)
	return slot
}

// enterSection positions sg at the start of a section, skipping empty sections.
func (c *coreSim) enterSection(sg *sgRun, sec isa.Section) {
	tg := &c.tgs[sg.tg]
	for {
		if sec == isa.SecBody && tg.steps == 0 && !tg.loop {
			sec = isa.SecEpilogue
		}
		if sec >= isa.NumSections {
			sg.state = sgDone
			tg.done++
			tg.finish = max(tg.finish, sg.ready)
			if tg.done == tg.prog.NSG {
				tg.live = false
				c.finished = append(c.finished, int(sg.tg))
			}
			return
		}
		sg.sec, sg.gi, sg.ii = sec, 0, 0
		sg.ops = tg.code.ops[sec][sg.sg]
		sg.insts = tg.code.tim.Insts[sec][sg.sg]
		if len(sg.ops) > 0 {
			sg.state = sgRunning
			return
		}
		sec++
	}
}

// readyNext enters the group at sg.gi and sets sg.ready to the earliest time
// its first instruction may issue, given that the previous one issued at t
// (or, fresh, that it starts at t). The later instructions of a group are
// timed by issue itself.
func (c *coreSim) readyNext(sg *sgRun, t int64, fresh bool) {
	r := t
	if !fresh {
		r += c.m.sgInterval
	}
	sg.cur = sg.ops[sg.gi]
	in := &sg.cur
	// the group's waits, as masks (branch-free)
	r = max(r, sg.devReady&int64(in.devMask), sg.done[doneTGLoad]&int64(in.tgMask), sg.done[doneALU]&int64(in.aluMask))
	sg.nch = int32(in.nch)
	sg.ci = 0
	sg.chain = [maxChains]int64{}           // all of them: cheaper than a loop of nch
	sg.ready = max(r, sg.pipeBusy[in.pipe]) // memory pipes' rows stay 0
}

func chains(in *isa.Inst) int { return max(1, min(int(in.ILP), maxChains)) }

// run issues instructions until none is ready at or before limit (with
// sharedOnly: until the next is a DRAM transfer after limit), or, when
// yieldFinished is set, until a threadgroup finishes (the detailed engine
// dispatches the next one). A simdgroup whose next instruction is ready before
// anything queued keeps issuing without going through the queue, and one that
// goes back to it is queued after the next one has left it (it goes behind
// that one either way): the order is the same as popping and pushing one at a
// time, and the next issue step's loads do not wait for the stores that queue
// the last simdgroup.
func (c *coreSim) run(limit int64) {
	q := &c.q
	t := q.earliest()
	for {
		if t > limit || t == math.MaxInt64 {
			if t == math.MaxInt64 || !c.sharedOnly || c.sharedNext(t) {
				return
			}
		}
		if q.occ == 0 {
			q.advance(t) // the first far entries enter the empty ring
		}
		i := q.take(t)
		q.advance(t)
		// the queue's earliest time, kept by hand across the issues
		// below (issue changes the queue only when it reports no more):
		// a simdgroup queued into the ring makes it min(that, its time),
		// so the next comparison need not wait for the bitmap's update
		eq := q.earliest()
		for {
			r, more := c.issue(i)
			if !more {
				t = q.earliest()
				break
			}
			e := eq
			if r >= e {
				if e <= limit || c.sharedOnly && !c.sharedNext(e) {
					// the next simdgroup, the first at e, leaves the queue
					// before i joins it at r >= e (behind it, as it
					// would be): the loads of that step need not wait
					// for r
					if q.occ == 0 {
						q.advance(e)
					}
					j := q.take(e)
					q.advance(e)
					eq = q.earliest()
					// queueAt written out (now = e <= r): this is the
					// hottest path, and the call is not inlined
					if r-e < calSize {
						q.ringAppend(i, r)
						eq = min(eq, r)
					} else {
						q.push(c, i)
						eq = q.earliest()
					}
					i = j
					continue
				}
				q.queueAt(c, i, r)
				t = e
				break
			}
			if r > limit && (!c.sharedOnly || c.usesDRAM(&c.sgs[i])) {
				q.queueAt(c, i, r)
				// the queue's earliest is now min(e, that) = that
				t = max(r, q.now)
				break
			}
			q.advance(r)
			eq = q.earliest()
		}
		if c.yieldFinished && len(c.finished) > 0 {
			return
		}
	}
}

// sharedNext reports whether the queue's first simdgroup, due at t (the
// queue's earliest time), next issues what other cores see: a transfer on the
// DRAM channel.
func (c *coreSim) sharedNext(t int64) bool {
	q := &c.q
	i := q.head[t&calMask]
	if q.occ == 0 {
		i = q.farFirst() // it leads the ring once it enters
	}
	return c.usesDRAM(&c.sgs[i])
}

// nextTime returns the time of the earliest pending issue, or math.MaxInt64.
func (c *coreSim) nextTime() int64 {
	return c.q.earliest()
}

// issue issues the next instruction of simdgroup i, which the caller has just
// taken off the queue. It reports whether i has more to issue at sg.ready and
// must be queued again by the caller (a simdgroup that reaches a barrier or the
// end of a section is queued, or not, by the barrier and section logic).
func (c *coreSim) issue(i int32) (ready int64, more bool) {
	// the hot path: the rare cases (barriers, launch stalls, device
	// accesses) are calls, so it keeps more of its values in registers
	sg := &c.sgs[i]
	in := &sg.cur
	if in.class == isa.ClassBarrier {
		c.arrive(sg)
		return 0, false
	}
	t := sg.ready
	m := c.m
	pipe := int(in.pipe) & (pipeRows - 1)
	// the partition that can take the instruction first (the lowest-numbered
	// of the earliest): the minimum over partitions of their free times, kept
	// tagged (time<<quadBits | partition), which the compiler evaluates
	// without branches. Rows of pipeFree for the memory pipes stay zero, so
	// one expression serves every class.
	qf, pf := &c.quadFree, &c.pipeFree[pipe]
	var key int64
	if m.quads == 4 {
		key = min(max(qf[0], pf[0]), max(qf[1], pf[1]), max(qf[2], pf[2]), max(qf[3], pf[3]))
	} else {
		key = math.MaxInt64
		for k := 0; k < m.quads; k++ {
			key = min(key, max(qf[k], pf[k]))
		}
	}
	q := int(key & (maxQuads - 1))
	t = max(t, key>>quadBits)
	if t < c.stallsEnd { // threadgroup launches (the detailed engine)
		t = c.afterStalls(t)
	}
	c.quadFree[q] = (t+int64(in.hold))<<quadBits | int64(q)
	wp := in.wpipe & (pipeRows - 1)
	c.pipeFree[wp][q] = (t+int64(in.issue))<<quadBits | int64(q)
	// the chain of the group's next instruction, read before this one
	// writes its own: when they are the same chain (one chain), the value
	// this one writes is added below (chain values only grow within a
	// group), so the next issue time does not wait for the store
	ci0 := sg.ci
	ci := ci0 + 1
	ci &= (ci - sg.nch) >> 31 // wraps to 0 at nch, without a branch
	sg.ci = ci
	next := sg.chain[ci&(maxChains-1)]
	if in.kind != kindOther {
		// an ALU op or a threadgroup load or store, without a branch on
		// which (the mix of a core's simdgroups makes it unpredictable):
		// an ALU op reads its own pipe's row of portFree, which stays
		// zero, adds no port time and writes the sink row, so its result
		// is t+resLat; a threadgroup access waits for its port
		res := t + c.portWait(pipe, int(in.portWr&(pipeRows-1)), in.portOcc, t) + int64(in.resLat)
		d := in.done & (doneSlots - 1)
		sg.done[d] = max(sg.done[d], res)
		// an ALU result also lands on the op's chain (chain values only
		// grow within a group, so the max is the result)
		cm := -int64(in.onChain)
		ch := &sg.chain[ci0&(maxChains-1)]
		*ch = max(*ch, res&cm)
		same := int64((sg.nch - 2) >> 31) // -1 if one chain (ci == ci0)
		next = max(next, res&same&cm)
	} else {
		c.issueOther(sg, ci0, pipe, t)
		next = sg.chain[ci&(maxChains-1)]
	}
	if c.trace != nil {
		c.trace.issue(c, sg, &sg.insts[sg.gi], t)
	}
	// advance
	sg.ii++
	if sg.ii < in.count {
		// the next instruction of the group: its own pipe is busy until
		// t+in.issue (the gap has it)
		r := max(t+int64(in.gap), next)
		sg.ready = r
		return r, true
	}
	// the group's instructions are counted when it ends (coreSim.settled
	// adds the groups in progress)
	c.stats.issued += int64(in.count)
	c.stats.pipeBusy[wp] += float64(int64(in.count) * int64(in.issue))
	sg.pipeBusy[wp] = t + int64(in.issue) // for the next groups (the gap covers this one's)
	sg.ii = 0
	sg.gi++
	if int(sg.gi) == len(sg.ops) {
		sg.ready = t
		c.endSection(i)
		return 0, false
	}
	c.readyNext(sg, t, false)
	return sg.ready, true
}

// arrive issues a barrier: simdgroup sg waits until its threadgroup's
// simdgroups have all arrived and its stores are through.
//
//go:noinline
func (c *coreSim) arrive(sg *sgRun) {
	c.stats.issued++
	sg.state = sgBarrier
	sg.waitFrom = max(sg.ready, sg.done[doneStored])
	tg := &c.tgs[sg.tg]
	tg.arrived++
	tg.arriveMax = max(tg.arriveMax, sg.waitFrom)
	c.checkBarrier(tg)
}

// afterStalls returns the first time at or after t outside the launch stalls.
//
//go:noinline
func (c *coreSim) afterStalls(t int64) int64 {
	for _, s := range c.stalls {
		if t >= s.b && t < s.e {
			t = s.e
		}
	}
	return t
}

// issueOther accounts an op the issue step's common cases do not cover
// (device accesses, and any other combination of port and result) issued
// at t.
//
//go:noinline
func (c *coreSim) issueOther(sg *sgRun, ci int32, pipe int, t int64) {
	in := &sg.cur
	var occ int64
	if in.portOcc != 0 {
		occ = c.portWait(pipe, pipe, in.portOcc, t)
	}
	if d := in.done; d != doneDevice {
		// branch-free: ALU results also land on their chain (chain
		// values only grow within a group, so the max is the result)
		res := t + occ + int64(in.resLat)
		sg.done[d] = max(sg.done[d], res)
		ch := &sg.chain[ci&(maxChains-1)]
		*ch = max(*ch, res&-int64(in.onChain))
	} else if in.class.Result() == isa.ResultDeviceStore {
		sg.done[doneStored] = max(sg.done[doneStored], t+occ)
		if sg.ii == 0 {
			c.stats.dramBytes += float64(in.unique)
			if c.dram != nil {
				c.dram.reserve(float64(t), float64(in.unique))
			}
		}
	} else {
		sg.devReady = max(sg.devReady, t+occ+c.loadLatency(sg, in, t)+int64(in.latency))
	}
}

// endSection moves simdgroup i past the end of its current section.
func (c *coreSim) endSection(i int32) {
	sg := &c.sgs[i]
	tg := &c.tgs[sg.tg]
	t := sg.ready
	switch sg.sec {
	case isa.SecPrologue:
		c.enterSection(sg, isa.SecBody)
	case isa.SecBody:
		if tg.nbody == 0 && sg.sg == 0 && len(tg.marks) < c.markLimit {
			// a loop body without barriers (the mat-vec kernels): its k-steps
			// are counted when simdgroup 0 finishes each pass
			tg.marks = append(tg.marks, t)
		}
		sg.step++
		if tg.loop || sg.step < tg.steps {
			c.enterSection(sg, isa.SecBody)
		} else {
			c.enterSection(sg, isa.SecEpilogue)
		}
	default:
		c.enterSection(sg, isa.NumSections)
	}
	if sg.state == sgRunning {
		c.readyNext(sg, t, false)
		c.q.push(c, i)
	}
}

// checkBarrier releases a threadgroup's barrier once every simdgroup arrived.
func (c *coreSim) checkBarrier(tg *tgRun) {
	if !tg.live || tg.arrived == 0 || tg.arrived < tg.prog.NSG-tg.done {
		return
	}
	release := tg.arriveMax + c.m.barrier
	tg.arrived, tg.arriveMax = 0, 0
	inBody := false
	for s := 0; s < tg.prog.NSG; s++ {
		i := tg.first + int32(s)
		sg := &c.sgs[i]
		if sg.state != sgBarrier {
			continue
		}
		inBody = inBody || sg.sec == isa.SecBody
		c.stats.barrierSG += float64(release - sg.waitFrom)
		if c.trace != nil {
			c.trace.barrier(c, sg, sg.waitFrom, release)
		}
		sg.state = sgRunning
		sg.ready = release
		sg.ii = 0
		sg.gi++
		if int(sg.gi) == len(sg.ops) {
			c.endSection(i)
			continue
		}
		c.readyNext(sg, release, true)
		c.q.push(c, i)
	}
	if inBody {
		tg.barriers++
		if tg.barriers == 1 && len(tg.marks) < c.markLimit {
			tg.marks = append(tg.marks, release)
		}
		if tg.barriers == tg.nbody {
			tg.barriers = 0
		}
	}
}

// portWait occupies the shared port whose free time is row rd of portFree
// for occ cycles from t (or from when it is free), writes the new free time
// to row wr, and returns the cycles from t until it is through. A port access
// reads and writes its own row; the issue step's ALU ops, which have no port,
// read their pipe's row, which stays zero, and write the sink row.
func (c *coreSim) portWait(rd, wr int, occ int64, t int64) int64 {
	end := max(t<<portBits, c.portFree[rd]) + occ
	c.portFree[wr] = end
	c.stats.portBusy[wr] += occ
	return (end+portOne-1)>>portBits - t // whole cycles, rounded up
}

// Port times are fixed point, portOne units per cycle: integer arithmetic
// keeps a shared port's free time, which every access to it waits on, off
// the float unit's latencies. An occupancy, bytes over the port's bytes per
// cycle, is exact in these units when the port's bytes per cycle is a power of
// two up to 2^portBits (64 or 128 on every embedded chip); other values round
// to the nearest unit, a millionth of a cycle.
const (
	portBits = 20
	portOne  = 1 << portBits
)

// portUnits converts port cycles to port units, rounded to the nearest.
func portUnits(x float64) int64 { return int64(math.Round(x * portOne)) }

// stall64 is an interval of cycles in which the core issues nothing.
type stall64 struct{ b, e int64 }

// addStall records a launch interval and forgets those that ended before now.
func (c *coreSim) addStall(b, e int64) {
	now := c.q.now
	c.stalls = slices.DeleteFunc(c.stalls, func(s stall64) bool { return s.e <= now })
	c.stalls = append(c.stalls, stall64{b, e})
	c.stallsEnd = max(c.stallsEnd, e)
}

// traceSink receives issue and barrier events (a Listener through
// listenerSink); nil costs nothing.
type traceSink interface {
	issue(c *coreSim, sg *sgRun, in *isa.Inst, t int64)
	barrier(c *coreSim, sg *sgRun, from, to int64)
}

// fmax is max for the non-NaN times of the model (math.Max's NaN and signed-zero
// handling costs more than the comparison in this hot path).
func fmax(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
