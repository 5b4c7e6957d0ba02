package engine

import "testing"

// TestProgressSteps: a dispatch of n threadgroups, each reported once in
// order and then ended, adds exactly n, whatever n is against the step.
func TestProgressSteps(t *testing.T) {
	var p Progress
	var want int64
	for _, n := range []int{0, 1, progressStep - 1, progressStep, progressStep + 1, 3*progressStep + 7} {
		p.Begin(n)
		for i := 0; i < n; i++ {
			p.dispatched(i)
			if done, _ := p.Counts(); done > want+int64(i)+1 {
				t.Fatalf("n = %d: %d done after threadgroup %d of a dispatch that began at %d", n, done, i, want)
			}
		}
		p.end(n)
		want += int64(n)
		if done, total := p.Counts(); done != want || total != want {
			t.Errorf("n = %d: progress %d of %d, want %d of %d", n, done, total, want, want)
		}
	}
	var none *Progress // a simulator without a Progress
	none.Begin(5)
	none.dispatched(progressStep - 1)
	none.end(5)
}
