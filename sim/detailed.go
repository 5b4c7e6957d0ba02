package sim

import (
	"math"
)

// The detailed engine: every simdgroup instruction of every threadgroup on every
// core, in one global time order, with one chip-wide DRAM channel. Threadgroups
// are dispatched like in the fast engine (linear order, round-robin first, then
// one per freed slot, through each core's serial launcher).

type detailedResult struct {
	cycles float64
	idleSG float64
	util   utilization
	busy   []float64
	instr  int64
}

func runDetailed(m *model, src *gridSource, cores, tgsPerCore int, trace traceSink) detailedResult {
	c := m.chip
	dram := &dramServer{bytesPerClk: c.DRAMBandwidthGBs.Value * 1e9 / c.Clock()}
	wl, al := cacheLevels(m, tgsPerCore)
	cs := make([]*coreSim, cores)
	launcher := make([]int64, cores)
	for i := range cs {
		cs[i] = newCoreSim(m)
		cs[i].dram = dram
		cs[i].weightLvl, cs[i].actLvl = wl, al
		cs[i].trace = trace
	}
	next, n := 0, src.len()
	dispatch := func(ci int, t int64) {
		if next >= n {
			return
		}
		prog, rep, mem := src.context(next)
		begin := max(launcher[ci], t)
		start := begin + m.launch
		launcher[ci] = start
		if start > begin {
			cs[ci].addStall(begin, start)
		}
		cs[ci].addTG(prog, mem, start, false, rep, next, 0)
		next++
	}
	for s := 0; s < tgsPerCore; s++ {
		for ci := range cs {
			dispatch(ci, 0)
		}
	}
	// heap of cores by their next issue time
	h := make([]int, cores)
	pos := make([]int, cores)
	key := func(i int) int64 { return cs[h[i]].nextTime() }
	less := func(a, b int) bool {
		ka, kb := key(a), key(b)
		if ka != kb {
			return ka < kb
		}
		return h[a] < h[b]
	}
	swap := func(a, b int) {
		h[a], h[b] = h[b], h[a]
		pos[h[a]], pos[h[b]] = a, b
	}
	down := func(j int) {
		for {
			l := 2*j + 1
			if l >= len(h) {
				return
			}
			k := l
			if r := l + 1; r < len(h) && less(r, l) {
				k = r
			}
			if !less(k, j) {
				return
			}
			swap(j, k)
			j = k
		}
	}
	up := func(j int) {
		for j > 0 {
			p := (j - 1) / 2
			if !less(j, p) {
				return
			}
			swap(j, p)
			j = p
		}
	}
	for i := range h {
		h[i], pos[i] = i, i
	}
	for j := len(h)/2 - 1; j >= 0; j-- {
		down(j)
	}
	res := detailedResult{busy: make([]float64, cores)}
	for {
		ci := h[0]
		core := cs[ci]
		i, t := core.q.peek(core)
		if i < 0 || t == math.MaxInt64 {
			break // the earliest core has nothing left: all cores are done
		}
		core.q.pop(core)
		core.issue(i)
		for _, slot := range core.finished {
			f := core.tgs[slot].finish
			res.busy[ci] = math.Max(res.busy[ci], float64(f))
			dispatch(ci, f)
		}
		core.finished = core.finished[:0]
		down(pos[ci])
		up(pos[ci])
	}
	for ci, core := range cs {
		res.cycles = math.Max(res.cycles, res.busy[ci])
		res.instr += issued(core)
		res.idleSG += core.stats.barrierSG
		if res.busy[ci] > 0 {
			res.util.addScaled(core.utilization(res.busy[ci]), 1/float64(cores))
		}
	}
	// the core-level DRAM share in utilization() assumes a per-core channel;
	// here the channel is chip-wide
	res.util.DRAM = 0
	var bytes float64
	for _, core := range cs {
		bytes += core.stats.dramBytes
	}
	if res.cycles > 0 {
		res.util.DRAM = bytes / (res.cycles * dram.bytesPerClk)
	}
	return res
}
