package sim

import (
	"strings"
	"testing"
)

// TestLimiterNames: every limiter but none has a one-word name and a meaning,
// and no two limiters share either; Limiters lists each once.
func TestLimiterNames(t *testing.T) {
	names, meanings := map[string]bool{}, map[string]bool{}
	all := Limiters()
	if len(all) != int(numLimiters)-1 {
		t.Fatalf("Limiters() has %d, want %d", len(all), numLimiters-1)
	}
	for _, l := range all {
		name, meaning := l.String(), l.Meaning()
		if name == "" || meaning == "" || strings.ContainsAny(name, " ,/") {
			t.Errorf("limiter %d: name %q, meaning %q", l, name, meaning)
		}
		if names[name] || meanings[meaning] {
			t.Errorf("limiter %d: %q / %q given twice", l, name, meaning)
		}
		names[name], meanings[meaning] = true, true
	}
	if LimitNone.String() != "" || LimitNone.Meaning() != "" {
		t.Errorf("no limiter: %q / %q, want empty names", LimitNone, LimitNone.Meaning())
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
