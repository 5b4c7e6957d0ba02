package engine

import (
	"math/rand"
	"testing"
)

// TestCalendarOrder checks that the ready queue lets simdgroups leave by
// time, those of the same time in the order they were queued, at every
// distance: in the ring, in the second ring and in the heap beyond it (entries
// that meet in one cycle after entering by different ways).
func TestCalendarOrder(t *testing.T) {
	type entry struct {
		t   int64
		seq int
		i   int32
	}
	const n = 64
	for seed := int64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := &coreSim{sgs: make([]sgRun, n)}
		q := &c.q
		q.init()
		var queued []entry
		var idle []int32
		for i := int32(0); i < n; i++ {
			q.next = append(q.next, -1)
			idle = append(idle, i)
		}
		ahead := func() int64 {
			switch rng.Intn(4) {
			case 0:
				return int64(rng.Intn(calSize + 8))
			case 1:
				return int64(rng.Intn(farSize + 100))
			case 2:
				return int64(rng.Intn(3)) * 157 // shared times
			}
			return farSize - 100 + int64(rng.Intn(3*farSize))
		}
		for step := 0; step < 20000; step++ {
			if len(idle) > 0 && (len(queued) == 0 || rng.Intn(2) == 0) {
				k := rng.Intn(len(idle))
				i := idle[k]
				idle = append(idle[:k], idle[k+1:]...)
				c.sgs[i].ready = q.now + ahead() - int64(rng.Intn(2)) // may be before now
				q.push(c, i)
				queued = append(queued, entry{c.sgs[i].ready, step, i})
				continue
			}
			f := 0
			for k, e := range queued {
				if e.t < queued[f].t || e.t == queued[f].t && e.seq < queued[f].seq {
					f = k
				}
			}
			want := queued[f]
			if e := q.earliest(); e != want.t {
				t.Fatalf("seed %d, step %d: earliest %d, want %d", seed, step, e, want.t)
			}
			if q.occ == 0 {
				if i := q.farFirst(); i != want.i {
					t.Fatalf("seed %d, step %d: the far entries' first is %d, want %d", seed, step, i, want.i)
				}
				q.advance(want.t)
			}
			i := q.take(want.t)
			q.advance(want.t)
			if i != want.i {
				t.Fatalf("seed %d, step %d: simdgroup %d left the queue, want %d", seed, step, i, want.i)
			}
			queued = append(queued[:f], queued[f+1:]...)
			idle = append(idle, i)
		}
	}
}
