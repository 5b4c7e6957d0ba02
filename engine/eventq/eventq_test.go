package eventq

import (
	"math/rand/v2"
	"testing"
)

// TestQueueOrder drives a queue with random sets, removals and pops and
// checks every pop, peek and runner-up against a plain table of the pending
// events: the earliest time first, equal times by id.
func TestQueueOrder(t *testing.T) {
	const ids = 37
	rng := rand.New(rand.NewPCG(1, 2))
	q := New(ids)
	pending := map[int32]float64{}
	// first returns the reference's earliest pending event other than skip.
	first := func(skip int32) (int32, float64, bool) {
		best, bt, ok := int32(0), 0.0, false
		for id, tm := range pending {
			if id == skip {
				continue
			}
			if !ok || tm < bt || tm == bt && id < best {
				best, bt, ok = id, tm, true
			}
		}
		return best, bt, ok
	}
	for step := range 20000 {
		id := int32(rng.IntN(ids))
		switch op := rng.IntN(4); {
		case op < 2:
			tm := float64(rng.IntN(50)) // few distinct times: many ties
			q.Set(id, tm)
			pending[id] = tm
		case op == 2:
			q.Remove(id)
			delete(pending, id)
		default:
			wid, wt, ok := first(-1)
			if !ok {
				continue
			}
			if rid, rt, rok := q.RunnerUp(); rok {
				sid, st, _ := first(wid)
				if rid != sid || rt != st {
					t.Fatalf("step %d: runner-up %d@%v, want %d@%v", step, rid, rt, sid, st)
				}
			}
			if pid, pt := q.Peek(); pid != wid || pt != wt {
				t.Fatalf("step %d: peek %d@%v, want %d@%v", step, pid, pt, wid, wt)
			}
			gid, gt := q.Pop()
			if gid != wid || gt != wt {
				t.Fatalf("step %d: pop %d@%v, want %d@%v", step, gid, gt, wid, wt)
			}
			delete(pending, wid)
		}
		if q.Len() != len(pending) {
			t.Fatalf("step %d: %d pending, want %d", step, q.Len(), len(pending))
		}
	}
}
