package engine

import (
	"fmt"
	"math"

	"github.com/metalsim/metalsim/isa"
)

// progMem is what the memory model needs to know about one program: for every
// simdgroup and k-step, whether its weight load touches a cache line its
// threadgroup has not touched before (a line's first touch goes to DRAM, later
// ones hit a cache), and how many threadgroups read the same activation rows.
type progMem struct {
	lines    [][]bool
	actReuse int
	key      string // the pattern and reuse rendered: equal keys, equal patterns
	// lineKey renders the line pattern alone: all of the pattern a core mix
	// measurement reads (its cores have no DRAM channel, so the activations'
	// DRAM share, which the reuse sets, times nothing there)
	lineKey string
}

const lineBytes = 128 // global cache line (apple-gpu.md 2.1, E PT-MB)

// newProgMem derives the line pattern from the tile geometry: row r of a tile
// starts r*rowBytes past a line-aligned tile base (tiles start at multiples of
// NR0 rows, and NR0*rowBytes is a multiple of 128 for every type), and k-step s
// reads the row's bytes [s*b, (s+1)*b) with b = RowBytesPerStep.
func newProgMem(p *isa.Program, actReuse int) *progMem {
	pm := &progMem{actReuse: max(1, actReuse)}
	defer pm.render()
	tl := &p.Tiling
	if p.Exit || p.Steps == 0 {
		return pm
	}
	b := tl.RowBytesPerStep
	rowBytes := b * float64(p.Steps)
	passes := (tl.AItems() + tl.Threads - 1) / tl.Threads
	sgRows := make([]map[int]bool, p.NSG)
	reads := false
	for sg := range sgRows {
		rows := map[int]bool{}
		for pass := 0; pass < passes; pass++ {
			for lane := 0; lane < 32; lane++ {
				if row, _, ok := tl.AItem(sg, lane, pass); ok {
					rows[min(row, tl.Rows-1)] = true
				}
			}
		}
		sgRows[sg], reads = rows, reads || len(rows) > 0
	}
	if !reads {
		// no weight loads (map0): no pattern, whose size would grow with
		// the program's steps
		return pm
	}
	pm.lines = make([][]bool, p.NSG)
	for sg, rows := range sgRows {
		l := make([]bool, p.Steps)
		for r := range rows {
			off := float64(r) * rowBytes
			for s := range l {
				if s == 0 {
					l[s] = true
					continue
				}
				last := int((off + float64(s+1)*b - 1) / lineBytes)
				prev := int((off + float64(s)*b - 1) / lineBytes)
				if last > prev {
					l[s] = true
				}
			}
		}
		pm.lines[sg] = l
	}
	return pm
}

// newLine reports whether simdgroup sg's weight load of step touches a new line.
func (pm *progMem) newLine(sg, step int) bool {
	if pm.lines == nil {
		return false
	}
	l := pm.lines[sg]
	return l[step%len(l)]
}

// render sets pm.key, the one definition of when two patterns are equal, and
// pm.lineKey.
func (pm *progMem) render() {
	var b []byte
	b = fmt.Appendf(b, "%d:", pm.actReuse)
	n := len(b)
	for _, l := range pm.lines {
		for _, x := range l {
			if x {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		b = append(b, '|')
	}
	pm.key = string(b)
	pm.lineKey = pm.key[n:]
}

// sameLines reports whether two patterns have the same lines and reuse.
func (pm *progMem) sameLines(o *progMem) bool { return pm.key == o.key }

// canonical returns the first progMem with the same line pattern and reuse seen
// in sets (adding pm if it is new), so equal patterns compare equal by pointer.
func (pm *progMem) canonical(sets map[string]*progMem) *progMem {
	if c, ok := sets[pm.key]; ok {
		return c
	}
	sets[pm.key] = pm
	return pm
}

// tgTraffic is a threadgroup's device traffic over its life, counted the way the
// core model counts it as it issues (coreSim.loadLatency and issueOther, once
// per instruction group): the distinct bytes its loads request, by the memory
// level that serves them, and the bytes it moves over the DRAM channel. The
// fast engine adds it up per threadgroup; the detailed engine counts the same
// at every issue.
type tgTraffic struct {
	levels   [numLevels]float64
	dram     float64 // DRAM bytes over the threadgroup's life
	dramStep float64 // DRAM bytes of one k-step of its loop body
}

// newTGTraffic returns the traffic of one threadgroup running p with the
// memory pattern mem (repeat: a neighbouring threadgroup just read its weight
// tile) on a core whose re-read weight lines and activations are served by
// weightLvl and actLvl. A simdgroup's k-step counter is 0 in the prologue and
// in the body's first pass and p.Steps in the epilogue (coreSim.endSection).
func newTGTraffic(p *isa.Program, mem *progMem, repeat bool, weightLvl, actLvl int) tgTraffic {
	var tr tgTraffic
	var w, a float64 // the body's weight and activation bytes per pass, all simdgroups
	tim := p.Timing()
	for sec := isa.SecPrologue; sec < isa.NumSections; sec++ {
		passes, step0 := 1, 0
		switch {
		case sec == isa.SecBody:
			passes = p.Steps
		case sec == isa.SecEpilogue && p.Steps > 0:
			step0 = p.Steps
		}
		if passes == 0 {
			continue
		}
		n := float64(passes)
		for sg, insts := range tim.Insts[sec] {
			for i := range insts {
				in := &insts[i]
				u := float64(in.Unique)
				if sec == isa.SecBody {
					switch in.Stream {
					case isa.StreamWeights:
						w += u
					case isa.StreamActivations:
						a += u
					}
				}
				switch in.Class.Result() {
				case isa.ResultDeviceStore:
					tr.dram += u * n
					continue
				case isa.ResultDeviceLoad:
				default:
					continue
				}
				tr.dram += loadDRAM(in.Stream, u, repeat, mem.actReuse) * n
				if in.Stream != isa.StreamWeights {
					tr.levels[loadLevel(in.Stream, false, repeat, weightLvl, actLvl)] += u * n
					continue
				}
				for s := step0; s < step0+passes; s++ {
					tr.levels[loadLevel(in.Stream, mem.newLine(sg, s), repeat, weightLvl, actLvl)] += u
				}
			}
		}
	}
	tr.dramStep = loadDRAM(isa.StreamWeights, w, repeat, mem.actReuse) + loadDRAM(isa.StreamActivations, a, repeat, mem.actReuse)
	return tr
}

// loadLatency returns the memory latency of a device or constant load group
// issued at t, and accounts its DRAM traffic.
func (c *coreSim) loadLatency(sg *sgRun, in *op, t int64) int64 {
	tg := &c.tgs[sg.tg]
	newLine := in.stream == isa.StreamWeights && tg.mem.newLine(int(sg.sg), sg.step)
	lvl := loadLevel(in.stream, newLine, tg.repeat, c.weightLvl, c.actLvl)
	dramBytes := c.loadDRAMBytes(sg, in)
	if sg.ii == 0 {
		c.stats.levelBytes[lvl] += float64(in.unique)
	}
	lat := c.m.lat[lvl]
	if dramBytes > 0 {
		c.stats.dramBytes += dramBytes
		if c.dram != nil {
			// the transfer queues behind earlier ones at the channel's bandwidth
			lat = max(lat, cyc(c.dram.reserve(float64(t), dramBytes))-t)
		}
	}
	return lat
}

// loadLevel returns the memory level that serves a device load of stream s
// (docs/model.md §2, "Memory"): codebooks from L1, routing metadata from L2, a
// weight load that touches a line its threadgroup has not touched from DRAM
// (from the SLC when a neighbouring threadgroup just read the same tile), any
// other weight load from weightLvl and activations from actLvl.
func loadLevel(s isa.Stream, newLine, repeat bool, weightLvl, actLvl int) int {
	switch s {
	case isa.StreamCodebook:
		return lvlL1
	case isa.StreamWeights:
		switch {
		case newLine && repeat:
			return lvlSLC
		case newLine:
			return lvlDRAM
		}
		return weightLvl
	case isa.StreamActivations:
		return actLvl
	}
	return lvlL2
}

// loadDRAMBytes returns the DRAM bytes a device load group's instruction
// brings in (counted once per group, at its first instruction): a tile's new
// weight bytes, unless a neighbouring threadgroup just read them, and its
// share of the activation rows' bytes.
func (c *coreSim) loadDRAMBytes(sg *sgRun, in *op) float64 {
	if sg.ii != 0 {
		return 0
	}
	tg := &c.tgs[sg.tg]
	return loadDRAM(in.stream, float64(in.unique), tg.repeat, tg.mem.actReuse)
}

// loadDRAM returns the DRAM bytes of a device load group of stream s that
// requests unique distinct bytes: all of a tile's weight bytes unless a
// neighbouring threadgroup just read them (repeat), and the activations' share
// of the first of the actReuse row tiles reading them, which misses the caches.
func loadDRAM(s isa.Stream, unique float64, repeat bool, actReuse int) float64 {
	switch s {
	case isa.StreamWeights:
		if !repeat {
			return unique
		}
	case isa.StreamActivations:
		return unique / float64(actReuse)
	}
	return 0
}

// usesDRAM reports whether sg's current instruction, issued next, queues a
// transfer on the DRAM channel (issueOther: a device store's first
// instruction, a load with DRAM bytes).
func (c *coreSim) usesDRAM(sg *sgRun) bool {
	in := &sg.cur
	if in.done != doneDevice {
		return false
	}
	if in.class.Result() == isa.ResultDeviceStore {
		return sg.ii == 0
	}
	return c.loadDRAMBytes(sg, in) > 0
}

// dramServer is a DRAM channel: transfers are served in order at the achievable
// bandwidth (chip-wide in the detailed engine, a core's share in mix runs).
type dramServer struct {
	free        float64
	bytesPerClk float64
}

// reserve queues a transfer that starts no earlier than t and returns its
// completion time.
func (d *dramServer) reserve(t, bytes float64) float64 {
	d.free = math.Max(d.free, t) + bytes/d.bytesPerClk
	return d.free
}
