package sim

import "fmt"

// Limiter is what bounds a run, in a speed-of-light vocabulary. String gives
// its name, the one every table, file and view prints ("matrix", "dram");
// Meaning says what the name stands for (simulate, simrun help terms).
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

// limiterNames are each limiter's name and meaning, in value order.
var limiterNames = [numLimiters]struct{ name, meaning string }{
	LimitNone:     {"", ""},
	LimitMatrix:   {"matrix", "ALU: the FMA pipes, running simdgroup MMAs"},
	LimitALU:      {"issue", "ALU: instruction issue"},
	LimitConvert:  {"conversions", "ALU: the integer/complex pipe's conversions"},
	LimitTensor:   {"tensor", "the tensor unit (neural accelerator)"},
	LimitTGMem:    {"tg-memory", "threadgroup memory bandwidth"},
	LimitL1:       {"l1", "L1 / load bandwidth"},
	LimitDRAM:     {"dram", "DRAM bandwidth"},
	LimitLatency:  {"latency", "occupancy-bound: the resident simdgroups cannot hide memory and barrier latency"},
	LimitDispatch: {"launch", "threadgroup launch (early-exit threadgroups)"},
}

// Limiters returns every limiter a run can have, in value order.
func Limiters() []Limiter {
	out := make([]Limiter, 0, numLimiters-1)
	for l := LimitNone + 1; l < numLimiters; l++ {
		out = append(out, l)
	}
	return out
}

// String returns the limiter's name.
func (l Limiter) String() string {
	if l >= numLimiters {
		return fmt.Sprintf("Limiter(%d)", uint8(l))
	}
	return limiterNames[l].name
}

// Meaning says what the limiter's name stands for.
func (l Limiter) Meaning() string {
	if l >= numLimiters {
		return l.String()
	}
	return limiterNames[l].meaning
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
