package engine

import "sync/atomic"

// Progress counts the threadgroups the timing engines have dispatched, so a
// long run can show how far it is (simrun simulate draws a progress line on a
// terminal). Give a Simulator one before its runs (Simulator.SetProgress); it
// is safe for concurrent use, costs the engines one check per threadgroup
// and never changes a result.
type Progress struct {
	done, total atomic.Int64
}

// Counts returns the threadgroups dispatched so far and the threadgroups of
// every dispatch begun so far (all routing draws of the runs in flight).
func (p *Progress) Counts() (done, total int64) {
	return p.done.Load(), p.total.Load()
}

// progressStep is how many threadgroups a dispatch reports at a time.
const progressStep = 1 << 14

// Begin counts a dispatch of n threadgroups in the total.
func (p *Progress) Begin(n int) {
	if p != nil {
		p.total.Add(int64(n))
	}
}

// dispatched reports threadgroup i of a dispatch, in dispatch order: every
// progressStep-th adds a step.
func (p *Progress) dispatched(i int) {
	if p != nil && i&(progressStep-1) == progressStep-1 {
		p.done.Add(progressStep)
	}
}

// end adds the dispatch's threadgroups after its last full step.
func (p *Progress) end(n int) {
	if p != nil {
		p.done.Add(int64(n & (progressStep - 1)))
	}
}
