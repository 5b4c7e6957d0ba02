package sim

import "fmt"

// Limiter is what bounds a run, in a speed-of-light vocabulary: String gives
// its long name (simulate, validate), Short a one-word name (tables and
// files: sweep, compare, model).
type Limiter uint8

// The limiters; the zero value is a result without one.
const (
	LimitNone     Limiter = iota
	LimitMatrix           // the FMA pipes, running simdgroup MMAs
	LimitALU              // instruction issue
	LimitConvert          // the integer/complex pipe's conversions
	LimitTensor           // the tensor unit
	LimitTGMem            // threadgroup memory bandwidth
	LimitL1               // L1 / load bandwidth
	LimitDRAM             // DRAM bandwidth
	LimitLatency          // no resource near saturation: too few resident simdgroups hide latency
	LimitDispatch         // threadgroup launch (early exits)
	numLimiters
)

// limiterNames are each limiter's long and short names, in value order.
var limiterNames = [numLimiters]struct{ long, short string }{
	LimitNone:     {"", ""},
	LimitMatrix:   {"ALU: matrix (simdgroup MMA on the FMA pipes)", "matrix"},
	LimitALU:      {"ALU: issue", "issue"},
	LimitConvert:  {"ALU: conversions (integer/complex pipe)", "conversions"},
	LimitTensor:   {"tensor unit (neural accelerator)", "tensor"},
	LimitTGMem:    {"threadgroup memory bandwidth", "tg-memory"},
	LimitL1:       {"L1 / load bandwidth", "l1"},
	LimitDRAM:     {"DRAM bandwidth", "dram"},
	LimitLatency:  {"latency (occupancy-bound: resident simdgroups cannot hide memory and barrier latency)", "latency"},
	LimitDispatch: {"threadgroup launch (early-exit threadgroups)", "launch"},
}

// String returns the limiter's long name.
func (l Limiter) String() string {
	if l >= numLimiters {
		return fmt.Sprintf("Limiter(%d)", uint8(l))
	}
	return limiterNames[l].long
}

// Short returns the limiter's one-word name.
func (l Limiter) Short() string {
	if l >= numLimiters {
		return l.String()
	}
	return limiterNames[l].short
}

// limiter names what bounds a run: the busiest resource if it is nearly
// saturated, else latency (too few resident simdgroups to hide it).
func limiter(u Utilization, mma8 bool) Limiter {
	best, name := u.Issue, LimitALU
	for _, c := range []struct {
		v    float64
		name Limiter
	}{{u.FMA, LimitMatrix}, {u.IC, LimitConvert}, {u.Tensor, LimitTensor}, {u.TGMem, LimitTGMem}, {u.L1, LimitL1}, {u.DRAM, LimitDRAM}} {
		if c.v > best {
			best, name = c.v, c.name
		}
	}
	if name == LimitMatrix && !mma8 {
		name = LimitALU
	}
	if best < latencyBound {
		return LimitLatency
	}
	return name
}

// latencyBound is the busiest resource's utilisation below which a run is
// called latency-bound: no unit is busy three quarters of the time, so what
// holds it back is waiting (dependences, barriers, memory latency), the
// speed-of-light reading of a profiler.
const latencyBound = 0.75
