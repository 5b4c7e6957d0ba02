package chips

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// The resources that bound resident threadgroups, as Occupancy.Limiter
// names them.
const (
	OccRegisters = "registers"          // the register file
	OccTGMemory  = "threadgroup memory" // threadgroup memory per core
	OccThreads   = "threads"            // thread slots per core
	OccTGCap     = "threadgroups"       // the cap on resident threadgroups per core
)

// Occupancy is how many threadgroups of a kernel fit on one core, and why not more.
type Occupancy struct {
	ThreadsPerTG   int
	RegsPerThread  int
	TGMemoryBytes  int
	TGsPerCore     int    // resident threadgroups per core
	SGsPerCore     int    // resident simdgroups per core
	Limiter        string // OccRegisters, OccTGMemory, OccThreads or OccTGCap
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
	// every input out of range at once: a what-if tile can break several
	var errs []string
	if threadsPerTG < 1 || threadsPerTG > int(c.MaxThreadsPerTG.Value) {
		errs = append(errs, fmt.Sprintf("threads per threadgroup = %d: must be in [1, %d] on %s (its max_threads_per_tg; a what-if chip file may raise it)", threadsPerTG, int(c.MaxThreadsPerTG.Value), c.Name))
	}
	if regsPerThread < 1 || regsPerThread > MaxRegsPerThread {
		errs = append(errs, fmt.Sprintf("registers per thread = %d: must be in [1, %d] (metalsim's bound; simrun occupancy shows where they go)", regsPerThread, MaxRegsPerThread))
	}
	if tgMemBytes < 0 || tgMemBytes > int(c.TGMemoryPerTG.Value) {
		errs = append(errs, fmt.Sprintf("threadgroup memory = %d bytes: must be in [0, %d] on %s (its tg_memory_per_tg_bytes; a what-if chip file may raise it)", tgMemBytes, int(c.TGMemoryPerTG.Value), c.Name))
	}
	if len(errs) > 0 {
		return o, errors.New(strings.Join(errs, "; ")) // one line: tables and CSV cells hold it
	}
	g := int(c.ThreadGranule.Value)
	o.ThreadsByRegs = int(c.RegisterFile.Value) / (4 * regsPerThread) / g * g
	o.ThreadsByRegs = min(o.ThreadsByRegs, int(c.MaxThreadsPerCore.Value))
	o.MaxThreadsByTG = min(o.ThreadsByRegs, int(c.MaxThreadsPerTG.Value))
	if threadsPerTG > o.MaxThreadsByTG {
		return o, fmt.Errorf("threadgroup of %d threads at %d registers per thread cannot launch on %s (at most %d threads: "+
			"register_file_bytes %d / (4 bytes x %d registers), rounded down to a multiple of occupancy_thread_granule %d, is %d; "+
			"max_threads_per_core %d; max_threads_per_tg %d)",
			threadsPerTG, regsPerThread, c.Name, o.MaxThreadsByTG,
			int(c.RegisterFile.Value), regsPerThread, g, int(c.RegisterFile.Value)/(4*regsPerThread)/g*g,
			int(c.MaxThreadsPerCore.Value), int(c.MaxThreadsPerTG.Value))
	}
	// a threadgroup holds whole simdgroups: registers and thread slots are
	// taken 32 threads at a time, so 33 threads take 64
	alloc := (threadsPerTG + 31) / 32 * 32
	o.ByRegisters = o.ThreadsByRegs / alloc
	o.ByThreads = int(c.MaxThreadsPerCore.Value) / alloc
	o.ByTGCap = int(c.MaxTGsPerCore.Value)
	o.ByTGMemory = math.MaxInt
	if tgMemBytes > 0 {
		o.ByTGMemory = int(c.TGMemoryPerCore.Value) / tgMemBytes
	}
	o.TGsPerCore, o.Limiter = o.ByRegisters, OccRegisters
	for _, l := range []struct {
		n    int
		name string
	}{{o.ByTGMemory, OccTGMemory}, {o.ByThreads, OccThreads}, {o.ByTGCap, OccTGCap}} {
		if l.n < o.TGsPerCore {
			o.TGsPerCore, o.Limiter = l.n, l.name
		}
	}
	o.SGsPerCore = o.TGsPerCore * ((threadsPerTG + 31) / 32)
	return o, nil
}

// MaxRegsPerThread bounds the registers per thread OccupancyFor accepts: twice
// the largest count of the register table (apple-gpu.md §2.2, 128), so a what-if
// tile can still be shown how its registers limit it.
const MaxRegsPerThread = 256
