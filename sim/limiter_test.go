package sim

import (
	"strings"
	"testing"
)

// TestLimiterNames: every limiter but none has a long and a one-word short
// name, and no two limiters share one.
func TestLimiterNames(t *testing.T) {
	longs, shorts := map[string]bool{}, map[string]bool{}
	for l := LimitNone + 1; l < numLimiters; l++ {
		long, short := l.String(), l.Short()
		if long == "" || short == "" || strings.ContainsAny(short, " ,") {
			t.Errorf("limiter %d: long %q, short %q", l, long, short)
		}
		if longs[long] || shorts[short] {
			t.Errorf("limiter %d: %q / %q named twice", l, long, short)
		}
		longs[long], shorts[short] = true, true
	}
	if LimitNone.String() != "" || LimitNone.Short() != "" {
		t.Errorf("no limiter: %q / %q, want empty names", LimitNone, LimitNone.Short())
	}
	if got := numLimiters.String(); got != "Limiter(10)" {
		t.Errorf("an unnamed limiter: %q", got)
	}
}

// TestLimiterPicksTheBusiest: the busiest resource bounds a run unless none is
// near saturation; matrix work without 8x8 MMAs is issue-bound.
func TestLimiterPicksTheBusiest(t *testing.T) {
	for _, tc := range []struct {
		u    Utilization
		mma8 bool
		want Limiter
	}{
		{Utilization{Issue: 0.9, DRAM: 0.5}, true, LimitALU},
		{Utilization{Issue: 0.5, DRAM: 0.95}, true, LimitDRAM},
		{Utilization{Issue: 0.5, FMA: 0.9}, true, LimitMatrix},
		{Utilization{Issue: 0.5, FMA: 0.9}, false, LimitALU},
		{Utilization{Issue: 0.3, L1: 0.4}, true, LimitLatency},
	} {
		if got := limiter(tc.u, tc.mma8); got != tc.want {
			t.Errorf("%+v, mma8 %v: %s, want %s", tc.u, tc.mma8, got, tc.want)
		}
	}
}
