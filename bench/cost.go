package bench

import (
	"fmt"
	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Pricing: each node of an evaluation becomes a cost item that does not
// depend on the calibrated parameters (Params): a matmul's kernel time from
// the kernel models, an attention kernel's compute time, and the bytes of
// the memory-bound work. Params turn items into time (Profile.Time), so a
// fit re-evaluates profiles without re-running the simulator.

// rates are the chip numbers the analytic attention model reads; this file
// is the one place bench reads a chips.Chip's fields.
type rates struct {
	cores, schedulers, clockMHz float64
	mmaClk                      float64 // issue cycles of an 8x8x8 simdgroup MMA per SIMD partition
	aluClk                      float64 // issue cycles of an fp32 instruction
	dramGBs                     float64 // achievable DRAM bandwidth
}

func chipRates(c *chips.Chip) rates {
	_, mma, _ := c.ClassTiming(isa.ClassMMA8)
	_, alu, _ := c.ClassTiming(isa.ClassFP32)
	return rates{cores: c.Cores.Value, schedulers: c.Schedulers.Value, clockMHz: c.ClockMHz.Value,
		mmaClk: mma, aluClk: alu, dramGBs: c.DRAMBandwidthGBs.Value}
}

// Attention kernel geometry (docs/llama-graph.md §3.2, §3.3).
const (
	faQueries     = 8  // queries per threadgroup of kernel_flash_attn_ext (NQPSG)
	faKeys        = 64 // KV per step (NCPSG)
	vecKeys       = 32 // KV per simdgroup step of the vector kernel
	vecWorkgroups = 32 // workgroups per (query, head) of the vector kernel (nwg)
)

// Instruction counts of the attention kernels' non-MMA work, estimated from
// the kernel's structure (docs/bench.md, "Attention"): per (8-query, 64-key)
// block, the online softmax over its 512 scores (scale, mask, max, exp, sum:
// about 8 lane operations each) plus a load, multiply and store per 32
// values of the 8 × Dv output accumulator; per 32-key chunk of the vector
// kernel, the scalar dot products (Dk + Dv FMAs per lane), the shuffle
// reductions (3 levels × 4 rows × 8 passes) and the softmax.
const (
	faSoftmaxInstr   = faQueries * faKeys * 8 / 32
	vecChunkOverhead = 3*4*8 + 24
)

// pad64 rounds up to a multiple of 64 (the matrix kernel's V columns).
func pad64(n int) int { return (n + 63) / 64 * 64 }

// visible returns the keys query position p sees among n cells: all up to p
// (causal), or the last window of them.
func visible(p, window int) (lo, hi int) {
	lo = 0
	if window > 0 {
		lo = max(0, p-window+1)
	}
	return lo, p
}

// pairs returns the (8-query, 64-key) blocks kernel_flash_attn_ext computes
// for one head: a block is skipped when the mask hides all of it (§3.2). Keys
// lie in position order (the sliding-window cache's ring is taken unwrapped),
// at most the S cells.
func (a Attention) pairs() int {
	n := 0
	for q0 := 0; q0 < a.T; q0 += faQueries {
		pLo, pHi := a.Pos+q0, a.Pos+min(q0+faQueries, a.T)-1
		lo, _ := visible(pLo, a.Window)
		n += min(a.S/faKeys, pHi/faKeys-lo/faKeys+1)
	}
	return n
}

// chunks returns the 32-key chunks the vector kernel computes for one head:
// the others are skipped after their mask is read (§3.3).
func (a Attention) chunks() int {
	n := 0
	for t := 0; t < a.T; t++ {
		lo, hi := visible(a.Pos+t, a.Window)
		n += min(a.S/vecKeys, hi/vecKeys-lo/vecKeys+1)
	}
	return n
}

// keys returns the distinct KV rows the ubatch's queries see, at most the S
// cells.
func (a Attention) keys() int {
	lo, _ := visible(a.Pos, a.Window)
	return min(a.S, a.Pos+a.T-lo)
}

// matBytes: Q read, O written (f32), and K and V (f16) read once per KV head
// (the query blocks and the heads sharing a KV head find them in the caches;
// docs/llama-graph.md §7 gives the bounds).
func (a Attention) matBytes() float64 {
	return 4*f(a.T)*f(a.H)*f(a.Dk+a.Dv) + 2*f(a.keys())*f(a.Hkv)*f(a.Dk+a.Dv)
}

// vecBytes: as matBytes, plus the workgroups' partial results (Dv + 2 floats
// each) written for the reduce kernel; every 32-key chunk's mask is read.
func (a Attention) vecBytes() float64 {
	tmp := f(a.T) * f(a.H) * vecWorkgroups * f(a.Dv+2) * 4
	return a.matBytes() + tmp + 2*f(a.T)*f(a.S)
}

// computeUs returns the attention kernel's issue-limited time on the chip:
// its MMA and ALU instructions spread over every SIMD partition, latency
// hidden (the bound the simulator finds kernel_mul_mm near for f16 weights).
func (a Attention) computeUs(r rates) float64 {
	var cycles float64
	if a.Vec {
		perChunk := f(a.Dk+a.Dv+vecChunkOverhead) * r.aluClk
		cycles = f(a.chunks()) * f(a.H) * perChunk
	} else {
		perPair := f(a.Dk+pad64(a.Dv))*r.mmaClk + (faSoftmaxInstr+f(pad64(a.Dv))*faQueries*3/32)*r.aluClk
		cycles = f(a.pairs()) * f(a.H) * perPair
	}
	return cycles / (r.cores * r.schedulers) / r.clockMHz
}

// item is one kind of cost in a profile: nodes with the same op, kernel and
// costs.
type item struct {
	Op, Kernel string
	Kind       Kind
	FixedUs    float64 // kernel time independent of the parameters (matmul, attention compute)
	Bytes      float64 // bytes on the achieved-bandwidth roofline (memory ops, attention)
	Dispatches int
}

// pricer turns nodes into items on one chip, timing each distinct matmul
// once.
type pricer struct {
	sim    *sim.Simulator
	chip   *chips.Chip
	kernel tile.Kernel
	opt    sim.Options
	rates  rates
	mm     map[tile.Workload]mmCost
}

type mmCost struct {
	us     float64
	kernel string
}

func newPricer(s *sim.Simulator, chip *chips.Chip, k tile.Kernel, opt sim.Options) *pricer {
	return &pricer{sim: s, chip: chip, kernel: k, opt: opt, rates: chipRates(chip), mm: map[tile.Workload]mmCost{}}
}

// price returns a node's cost item.
func (p *pricer) price(n Node) (item, error) {
	it := item{Op: n.Op, Kernel: n.Kernel, Kind: n.Kind, Dispatches: n.Dispatches}
	switch n.Kind {
	case KindMatmul:
		c, ok := p.mm[n.Matmul]
		if !ok {
			res, err := p.sim.RunWorkload(n.Matmul, p.kernel, tile.KernelAuto, p.chip, p.opt)
			if err != nil {
				return it, fmt.Errorf("%s %s (%s): %w", n.Op, n.Tensor, n.Matmul, err)
			}
			// the dispatch costs are the graph's own (Params), not a standalone run's
			c = mmCost{us: res.KernelUs + res.Map0Us, kernel: res.KernelName}
			p.mm[n.Matmul] = c
		}
		it.FixedUs, it.Kernel = c.us, c.kernel
	case KindAttn:
		it.FixedUs, it.Bytes = n.Attn.computeUs(p.rates), n.Bytes
	default:
		it.Bytes = n.Bytes
	}
	return it, nil
}
