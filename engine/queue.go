package engine

import "math"

// Time is the engines' one clock: cycles from the dispatch start. The fast
// engine's threadgroup events fall on fractional cycles; the core model
// counts whole cycles inside a core (int64, exact in a Time up to 2^53) and
// the detailed engine schedules its cores, their launches and their finishes
// in Time (timeOf, cyclesOf).
type Time = float64

// timeOf is a core's whole-cycle time as a Time (math.MaxInt64, "never", is
// +Inf).
func timeOf(c int64) Time {
	if c == math.MaxInt64 {
		return math.Inf(1)
	}
	return Time(c)
}

// cyclesOf is a Time that holds a whole number of cycles as the core model's
// cycle count (+Inf is math.MaxInt64).
func cyclesOf(t Time) int64 {
	if math.IsInf(t, 1) {
		return math.MaxInt64
	}
	return int64(t)
}
