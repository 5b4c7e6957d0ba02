package engine

import (
	"math"

	"github.com/metalsim/metalsim/engine/eventq"
)

// The detailed engine: every simdgroup instruction of every threadgroup on every
// core, with one chip-wide DRAM channel. Threadgroups are dispatched like in the
// fast engine (linear order, round-robin first, then one per freed slot, through
// each core's serial launcher). What cores share happens in one global time
// order: DRAM transfers (the channel serves them in that order) and
// threadgroup finishes (which core gets the next threadgroup). Between two such
// events a core touches nothing another core sees, so it runs ahead of the
// others without changing the result (TestDetailedRunAheadIsExact); with a
// listener, which is told every issue in global order, every issue waits its
// turn.

type detailedResult struct {
	cycles float64
	idleSG float64
	levels [numLevels]float64
	dram   float64 // DRAM bytes moved
	util   utilization
	busy   []float64
	instr  int64
}

// runDetailed runs a grid on the detailed engine. With a listener (lis, and
// sink its adapter of the core hooks, both nil or both set) every issue is
// told in global time order, and threadgroup starts and finishes as they
// happen.
func runDetailed(m *model, src *gridSource, cores, tgsPerCore int, lis Listener, sink traceSink) detailedResult {
	dram := &dramServer{bytesPerClk: m.dramBPC}
	wl, al := cacheLevels(m, tgsPerCore)
	cs := make([]*coreSim, cores)
	fronts := make([]frontEnd, cores)
	for i := range cs {
		cs[i] = newCoreSim(m)
		cs[i].dram = dram
		cs[i].weightLvl, cs[i].actLvl = wl, al
		cs[i].trace = sink
		cs[i].index = i
		cs[i].yieldFinished = true
		// a listener is told every issue in global time order; without one,
		// only DRAM transfers and finishes need that order
		cs[i].sharedOnly = sink == nil
	}
	queue := dispatchQueue{n: src.len()}
	dispatch := func(ci int, t int64) {
		i, ok := queue.take()
		if !ok {
			return
		}
		prog, rep, mem := src.context(i)
		b, st := fronts[ci].launch(timeOf(t), timeOf(int64(prog.NSG)*m.launch))
		begin, start := cyclesOf(b), cyclesOf(st)
		if start > begin {
			cs[ci].addStall(begin, start)
		}
		slot := cs[ci].addTG(prog, mem, start, false, rep, i, 0)
		if lis != nil {
			lis.TGStart(ci, slot, i, prog.NSG, start)
		}
	}
	if ls, ok := sink.(*listenerSink); ok {
		ls.cores = cs
	}
	firstWave(cores, tgsPerCore, func(ci, _ int) { dispatch(ci, 0) })
	// cores queued by the time of their next shared event (their next issue
	// with a trace sink); a core's key changes only when it runs (the cores
	// share nothing that moves another core's queue: a DRAM transfer's
	// completion is fixed when it is issued), so each core's key is computed
	// once per turn
	q := eventq.New(cores)
	for ci, core := range cs {
		q.Set(int32(ci), timeOf(core.nextTime()))
	}
	res := detailedResult{busy: make([]float64, cores)}
	// a core whose threadgroup finished after its turn (it ran ahead) waits
	// with the finish until its turn: the next threadgroup goes to the cores
	// in the order of their finishes
	waiting := make([]bool, cores)
	for {
		id, key := q.Peek()
		ci := int(id)
		core := cs[ci]
		if math.IsInf(key, 1) {
			break // the earliest core has nothing left: all cores are done
		}
		// The earliest core's shared events (every issue, with a trace) go on
		// while they come before every other core's, (time, core index)
		// ordered: no other core's queue moves meanwhile, so this is the
		// global order without a queue step per event.
		rt, rc := int64(math.MaxInt64), cores
		if rid, rkey, ok := q.RunnerUp(); ok {
			rt, rc = cyclesOf(rkey), int(rid)
		}
		stop := false
		limit := rt // a tie goes to the lower core index
		if ci > rc {
			limit--
		}
		for {
			if !waiting[ci] {
				core.run(limit)
			}
			waiting[ci] = false
			if len(core.finished) == 0 {
				break
			}
			if core.q.now > limit {
				waiting[ci] = true
				break
			}
			for _, slot := range core.finished {
				f := core.tgs[slot].finish
				res.busy[ci] = math.Max(res.busy[ci], float64(f))
				if lis != nil && lis.TGFinish(ci, slot, f) {
					stop = true
				}
				dispatch(ci, f)
			}
			core.finished = core.finished[:0]
			if stop {
				break // the timeline has what it asked for
			}
		}
		if stop {
			break
		}
		next := core.nextTime()
		if waiting[ci] {
			next = core.q.now // the finish's turn
		}
		q.Set(id, timeOf(next))
	}
	for ci, core := range cs {
		res.cycles = math.Max(res.cycles, res.busy[ci])
		res.instr += core.settled().issued
		res.idleSG += core.stats.barrierSG
		for l := range res.levels {
			res.levels[l] += core.stats.levelBytes[l]
		}
		if res.busy[ci] > 0 {
			res.util.AddScaled(core.utilization(res.busy[ci]), 1/float64(cores))
		}
	}
	// the core-level DRAM share in utilization() assumes a per-core channel;
	// here the channel is chip-wide
	res.util.DRAM = 0
	for _, core := range cs {
		res.dram += core.stats.dramBytes
	}
	if res.cycles > 0 {
		res.util.DRAM = res.dram / (res.cycles * dram.bytesPerClk)
	}
	return res
}
