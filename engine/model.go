package engine

import (
	"fmt"
	"slices"
	"sync"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
)

// A chip resolved into the core model's cycle units: each instruction class's
// pipe, occupancy and latency in whole cycles, the shared ports' bandwidth,
// the memory levels' latencies, and programs resolved into ops of the model.

// Memory levels.
const (
	lvlL1 = iota
	lvlL2
	lvlSLC
	lvlDRAM
	numLevels
)

// LevelNames names the memory levels of Result.LevelBytes.
var LevelNames = [numLevels]string{"L1", "L2", "SLC", "DRAM"}

const (
	quadBits  = 4
	maxQuads  = 1 << quadBits
	maxChains = 16
)

// ccost is an instruction class in whole cycles.
type ccost struct {
	pipe    int
	issue   int64 // pipe occupancy
	latency int64
}

// model is a chip resolved into cycle units.
type model struct {
	chip       *chips.Chip
	quads      int
	sgInterval int64
	dispatch   int64 // dispatch-port cycles per instruction
	cls        [isa.NumClasses]ccost
	portBPC    [numPipes]float64 // bytes per cycle of the shared ports
	lat        [numLevels]int64
	barrier    int64
	launch     int64   // front-end cycles per simdgroup launched
	dramBPC    float64 // chip-wide DRAM bytes per cycle for this kernel's access pattern
	gatherSPC  float64 // distinct 32-byte sectors per cycle the L1 port serves a gather
	callClk    int64   // a short matmul2d call's fixed cost on the tensor slot
	regather   bool    // a second matmul2d call gathers an operand the k-step already gathered
	accumulate bool    // a multiply_accumulate matmul2d call adds the old C with fp32 adds

	codeMu sync.Mutex
	codes  map[*isa.Program]*progCode // programs resolved into ops of this model
}

// op is a timing instruction resolved for one model: its class's pipe,
// occupancy and latency in whole cycles and its port occupancy, looked up once
// per program instead of at every issue.
type op struct {
	portOcc int64  // threadgroup-memory or L1 port time, max(1, bytes / port bytes per cycle), in port units
	issue   uint32 // pipe occupancy (pipes below pipeMem)
	latency uint32 // cycles to its result
	resLat  uint32 // latency added to the result time (0 for stores)
	gap     uint32 // cycles to the group's next instruction, chains aside: max(sg_issue_interval, its own pipe occupancy)
	hold    uint32 // cycles the partition's dispatch port is taken: dispatch_interval, plus a short matmul2d call's fixed cost
	unique  uint32 // isa.Inst.Unique
	count   uint32 // simdgroup instructions in the group
	class   isa.Class
	pipe    uint8
	stream  isa.Stream
	nch     uint8 // ILP chains of the group (1..maxChains)
	// where the result lands: an ALU op writes its chain and sg.done[doneALU]
	// at t+latency, a threadgroup load sg.done[doneTGLoad] at t+port+latency,
	// a threadgroup store sg.done[doneStored] at t+port; device accesses
	// (doneDevice) go through loadLatency and the DRAM channel
	done    uint8
	wpipe   uint8 // pipe whose occupancy the op writes: pipe, or pipeSink for the memory pipes
	portWr  uint8 // row of coreSim.portFree the op writes: its port's (kindTG), else pipeSink
	onChain uint8 // 1 if its result also lands on its chain (ALU ops), else 0
	kind    uint8 // kindALU, kindTG or kindOther: the issue step's cases
	// the group's wait (isa.Wait) as masks: -1 to wait for device loads,
	// threadgroup loads, ALU results, 0 not to
	devMask, tgMask, aluMask int8
}

// Extra row of the per-pipe arrays, so the issue step updates them without
// branching on the class: pipeSink is written and never read. The rows are
// a power of two, so a masked index needs no bounds check.
const (
	pipeSink = numPipes + iota
	pipeRows
)

var _ = [1]struct{}{}[pipeRows&(pipeRows-1)+doneSlots&(doneSlots-1)] // both must be powers of two

// Issue-step cases of an op (op.kind): the two common ones share one path
// without a branch between them; kindOther is a call.
const (
	kindOther = iota // device accesses, and any op the two below do not cover
	kindALU          // no port; an ALU result (its chain, sg.done[doneALU])
	kindTG           // a port; a threadgroup load or store result
)

// Result slots of sgRun.done, by op.done.
const (
	doneALU = iota
	doneTGLoad
	doneStored
	doneDevice // not a slot: device loads and stores
	doneSlots  // sgRun.done's length, a power of two (masked indices)
)

// progCode is a program's timing streams resolved into ops of one model.
type progCode struct {
	tim   *isa.Timing
	ops   [isa.NumSections][][]op // per section, per simdgroup; index-aligned with tim.Insts
	nbody int                     // barriers per loop-body iteration (simdgroup 0)
}

// code returns the program's ops under this model (resolved once).
func (m *model) code(p *isa.Program) *progCode {
	m.codeMu.Lock()
	defer m.codeMu.Unlock()
	if pc, ok := m.codes[p]; ok {
		return pc
	}
	tim := m.timing(p)
	pc := &progCode{tim: tim}
	for sec := range tim.Insts {
		pc.ops[sec] = make([][]op, len(tim.Insts[sec]))
		for sg, insts := range tim.Insts[sec] {
			ops := make([]op, len(insts))
			for j := range insts {
				in := &insts[j]
				cc := m.cls[in.Class]
				o := op{issue: uint32(cc.issue), latency: uint32(cc.latency), // chip validation bounds them (4096, 1e5)
					unique: in.Unique, count: uint32(in.Count),
					class: in.Class, pipe: uint8(cc.pipe), stream: in.Stream, nch: uint8(chains(in))}
				o.hold = uint32(m.dispatch)
				if in.CallStart {
					// the call's fixed cost: issue work of its own on the
					// partition, which takes no other instruction meanwhile
					// while the tensor slot goes on with earlier MMAs
					o.hold += uint32(m.callClk)
				}
				o.wpipe = uint8(cc.pipe)
				o.gap = uint32(max(m.sgInterval, cc.issue))
				if cc.pipe >= pipeMem {
					// the memory pipes are shared ports, not the simdgroup's own
					o.wpipe = pipeSink
					o.gap = uint32(m.sgInterval)
				}
				if cc.pipe == pipeTGMem || cc.pipe == pipeL1 {
					o.portOcc = portUnits(m.portCycles(in, cc.pipe))
				}
				o.devMask = waitMask(in.Wait, isa.WaitDevice)
				o.tgMask = waitMask(in.Wait, isa.WaitTG)
				o.aluMask = waitMask(in.Wait, isa.WaitALU)
				switch r := in.Class.Result(); {
				case r.Device():
					o.done = doneDevice
				case r == isa.ResultTGLoad:
					o.done, o.resLat = doneTGLoad, uint32(cc.latency)
				case r == isa.ResultTGStore:
					o.done = doneStored
				default:
					o.done, o.resLat, o.onChain = doneALU, uint32(cc.latency), 1
				}
				o.portWr = pipeSink
				switch {
				case o.portOcc == 0 && o.done == doneALU:
					o.kind = kindALU
				case o.portOcc != 0 && (o.done == doneTGLoad || o.done == doneStored):
					o.kind = kindTG
					o.portWr = o.pipe
				}
				ops[j] = o
			}
			pc.ops[sec][sg] = ops
		}
	}
	if len(tim.Insts[isa.SecBody]) > 0 {
		for _, in := range tim.Insts[isa.SecBody][0] {
			if in.Class == isa.ClassBarrier {
				pc.nbody++
			}
		}
	}
	if m.codes == nil {
		m.codes = map[*isa.Program]*progCode{}
	}
	m.codes[p] = pc
	return pc
}

// The core model's pipe indices, untyped for array indexing: chips.Pipe's
// values, which the declaration below checks at compile time.
const (
	pipeFMA = iota
	pipeIC
	pipeTensor
	pipeMem
	pipeTGMem
	pipeL1
	pipeSync
	numPipes
)

var (
	_ = [1]struct{}{}[int(chips.PipeFMA)-pipeFMA]
	_ = [1]struct{}{}[int(chips.PipeIC)-pipeIC]
	_ = [1]struct{}{}[int(chips.PipeTensor)-pipeTensor]
	_ = [1]struct{}{}[int(chips.PipeMem)-pipeMem]
	_ = [1]struct{}{}[int(chips.PipeTGMem)-pipeTGMem]
	_ = [1]struct{}{}[int(chips.PipeL1)-pipeL1]
	_ = [1]struct{}{}[int(chips.PipeSync)-pipeSync]
	_ = [1]struct{}{}[int(chips.NumPipes)-numPipes]
)

// mixKey renders everything a core mix measured on this model depends on:
// the per-core costs in cycles and the cache level serving re-read lines for
// tgsPerCore resident threadgroups, but not the chip's core count or DRAM
// bandwidth (mixes are measured per core, without a bandwidth limit). Chips
// with equal keys (bins of one die at one clock, mostly) share their
// measurements: a cache by content.
func (m *model) mixKey(tgsPerCore int) string {
	wl, al := cacheLevels(m, tgsPerCore)
	return fmt.Sprintf("%d|%d|%d|%v|%v|%v|%d|%d|%d|%d|%d|%v|%d|%v|%v", m.quads, m.sgInterval, m.dispatch, m.cls, m.portBPC, m.lat,
		m.barrier, m.launch, wl, al, tgsPerCore, m.gatherSPC, m.callClk, m.regather, m.accumulate)
}

// portCycles returns the cycles a threadgroup-memory or L1 access occupies
// its port (docs/model.md §2, "Gathers"): its bytes over the port's bytes per
// cycle, at least one, and for a per-lane gather at least its distinct
// sectors over the L1's sectors per cycle, or its busiest bank's words (one
// word per bank and cycle) in threadgroup memory.
func (m *model) portCycles(in *isa.Inst, pipe int) float64 {
	c := fmax(1, float64(in.Bytes)/m.portBPC[pipe])
	if pipe == pipeL1 && in.Sectors > 0 {
		c = fmax(c, float64(in.Sectors)/m.gatherSPC)
	}
	if pipe == pipeTGMem && in.BankWords > 0 {
		c = fmax(c, float64(in.BankWords))
	}
	return c
}

// timing returns the program's timing instructions under this model: the
// program's own, less the operand gathers a second matmul2d call makes when
// the chip's calls share them (matmul2d_regather = 0) and the accumulate
// adds when the chip's calls make none (matmul2d_accumulate_adds = 0).
func (m *model) timing(p *isa.Program) *isa.Timing {
	tim := p.Timing()
	if m.regather && m.accumulate {
		return tim
	}
	drop := func(in isa.Inst) bool { return in.Regather && !m.regather || in.Accumulate && !m.accumulate }
	out := &isa.Timing{}
	for sec := range tim.Insts {
		out.Insts[sec] = make([][]isa.Inst, len(tim.Insts[sec]))
		for sg, insts := range tim.Insts[sec] {
			out.Insts[sec][sg] = slices.DeleteFunc(slices.Clone(insts), drop)
		}
	}
	return out
}

// waitMask is -1 if w includes f, else 0.
func waitMask(w, f isa.Wait) int8 {
	if w&f != 0 {
		return -1
	}
	return 0
}

// cyc rounds a cycle count up to whole cycles (a cycle-level model cannot use
// a result before the cycle it is ready in).
//
// It is math.Ceil for the model's values (finite, within int64) without its
// call: truncate, then add one if that lost a fraction.
func cyc(x float64) int64 {
	y := x - 1e-9
	n := int64(y)
	if float64(n) < y {
		n++
	}
	return n
}

// newModel resolves a chip's costs for one kernel; tiled says whether the
// kernel reads its weights as tiles (Grid.TiledWeights), which achieve
// tiled_dram_efficiency of the DRAM bandwidth.
func newModel(c *chips.Chip, tiled bool) *model {
	m := &model{chip: c, quads: min(int(c.Schedulers.Value), maxQuads), sgInterval: max(1, cyc(c.SGIssueInterval.Value)),
		dispatch: max(1, cyc(c.DispatchInterval.Value)), barrier: cyc(c.BarrierClk.Value), launch: cyc(c.SGLaunchClk.Value)}
	m.gatherSPC = c.L1GatherSectorsPerClk.Value
	m.callClk = cyc(c.Matmul2DCallClk.Value)
	m.regather = c.Matmul2DRegather.Value != 0
	m.accumulate = c.Matmul2DAccumulateAdds.Value != 0
	// half of a two-die chip's traffic crosses the die link
	m.dramBPC = c.DRAMBandwidthGBs.Value * c.DieLinkEfficiency.Value * 1e9 / c.Clock()
	if tiled {
		m.dramBPC *= c.TiledDRAMEfficiency.Value
	}
	for cl := range isa.NumClasses {
		pipe, issue, latency := c.ClassTiming(cl)
		m.cls[cl] = ccost{pipe: int(pipe), issue: max(1, cyc(issue)), latency: cyc(latency)}
	}
	m.portBPC[pipeTGMem] = c.TGMemBytesPerClk.Value
	m.portBPC[pipeL1] = c.L1BytesPerClk.Value
	m.lat[lvlL1] = cyc(c.Cycles(c.L1LatencyNs.Value))
	m.lat[lvlL2] = cyc(c.Cycles(c.L2LatencyNs.Value))
	m.lat[lvlSLC] = cyc(c.Cycles(c.SLCLatencyNs.Value))
	m.lat[lvlDRAM] = cyc(c.Cycles(c.DRAMLatencyNs.Value))
	return m
}
