package sim

import (
	"fmt"
	"math"
)

// Occupancy is how many threadgroups of a kernel fit on one core, and why not more.
type Occupancy struct {
	ThreadsPerTG   int
	RegsPerThread  int
	TGMemoryBytes  int
	TGsPerCore     int    // resident threadgroups per core
	SGsPerCore     int    // resident simdgroups per core
	Limiter        string // "registers", "threadgroup memory", "threads", "threadgroups"
	ByRegisters    int    // threadgroups per core each resource alone would allow
	ByTGMemory     int
	ByThreads      int
	ByTGCap        int
	ThreadsByRegs  int // resident threads per core the register file allows
	MaxThreadsByTG int // largest threadgroup the register count allows (Metal's maxTotalThreadsPerThreadgroup)
}

// OccupancyFor computes the residency of a threadgroup shape on a chip. The
// register rule: resident threads per core = RegisterFile / (4 B x registers),
// rounded down to the thread granule (for G13 this reproduces Mesa's table,
// apple-gpu.md 2.2; for M3+ dynamic caching it is the measured floor).
func OccupancyFor(c *Chip, threadsPerTG, regsPerThread, tgMemBytes int) (Occupancy, error) {
	o := Occupancy{ThreadsPerTG: threadsPerTG, RegsPerThread: regsPerThread, TGMemoryBytes: tgMemBytes}
	if threadsPerTG < 1 || threadsPerTG > int(c.MaxThreadsPerTG.Value) {
		return o, fmt.Errorf("threads per threadgroup = %d: must be in [1, %d] on %s", threadsPerTG, int(c.MaxThreadsPerTG.Value), c.Name)
	}
	if regsPerThread < 1 || regsPerThread > 256 {
		return o, fmt.Errorf("registers per thread = %d: must be in [1, 256]", regsPerThread)
	}
	if tgMemBytes < 0 || tgMemBytes > int(c.TGMemoryPerTG.Value) {
		return o, fmt.Errorf("threadgroup memory = %d bytes: must be in [0, %d] on %s", tgMemBytes, int(c.TGMemoryPerTG.Value), c.Name)
	}
	g := int(c.ThreadGranule.Value)
	o.ThreadsByRegs = int(c.RegisterFile.Value) / (4 * regsPerThread) / g * g
	o.ThreadsByRegs = min(o.ThreadsByRegs, int(c.MaxThreadsPerCore.Value))
	o.MaxThreadsByTG = min(o.ThreadsByRegs, int(c.MaxThreadsPerTG.Value))
	if threadsPerTG > o.MaxThreadsByTG {
		return o, fmt.Errorf("threadgroup of %d threads at %d registers per thread cannot launch on %s (at most %d threads)", threadsPerTG, regsPerThread, c.Name, o.MaxThreadsByTG)
	}
	o.ByRegisters = o.ThreadsByRegs / threadsPerTG
	o.ByThreads = int(c.MaxThreadsPerCore.Value) / threadsPerTG
	o.ByTGCap = int(c.MaxTGsPerCore.Value)
	o.ByTGMemory = math.MaxInt
	if tgMemBytes > 0 {
		o.ByTGMemory = int(c.TGMemoryPerCore.Value) / tgMemBytes
	}
	o.TGsPerCore, o.Limiter = o.ByRegisters, "registers"
	for _, l := range []struct {
		n    int
		name string
	}{{o.ByTGMemory, "threadgroup memory"}, {o.ByThreads, "threads"}, {o.ByTGCap, "threadgroups"}} {
		if l.n < o.TGsPerCore {
			o.TGsPerCore, o.Limiter = l.n, l.name
		}
	}
	o.SGsPerCore = o.TGsPerCore * ((threadsPerTG + 31) / 32)
	return o, nil
}
