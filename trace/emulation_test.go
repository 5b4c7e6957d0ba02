package trace

import (
	"math"
	"testing"

	"github.com/metalsim/metalsim/golden"
)

// TestCompareEmulation: the worst error is in units of the accumulation
// bound; a nonzero value where every product is zero is infinitely wrong,
// and a NaN stays NaN (so a "<= 1" check fails it).
func TestCompareEmulation(t *testing.T) {
	ref := golden.References{F64: []float32{1, 0}, F16In: []float32{1, 0}, SumAbs: []float64{1, 0}}
	tol := golden.AccumulationTolerance(64, 1)
	e := CompareEmulation(64, []float32{1 + float32(tol/2), 0}, ref)
	if e.Worst <= 0 || e.Worst > 1 || e.MaxAbsF64 == 0 || e.MaxAbsF16In != e.MaxAbsF64 {
		t.Fatalf("within the bound: %+v", e)
	}
	if e := CompareEmulation(64, []float32{1, 1e-30}, ref); !math.IsInf(e.Worst, 1) {
		t.Fatalf("a value where every product is zero: worst %g, want +Inf", e.Worst)
	}
	if e := CompareEmulation(64, []float32{float32(math.NaN()), 0}, ref); !math.IsNaN(e.Worst) {
		t.Fatalf("a NaN: worst %g, want NaN", e.Worst)
	}
}
