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
	first := func(skip int32) (int32, float64, bool) { return earliest(pending, skip) }
	for step := range 20000 {
		if !randomChange(rng, ids, 50, pending, q.Set, q.Remove) {
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

// TestFlatOrder drives a Flat with random sets and removals and checks every
// peek and length against a plain table of the pending times: the earliest
// time first, equal times by id, as Queue orders them.
func TestFlatOrder(t *testing.T) {
	f, pending := NewFlat(13), map[int]float64{}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 20000 {
		randomChange(rng, 13, 20, pending, f.Set, f.Remove)
		if f.Len() != len(pending) {
			t.Fatalf("step %d: Len %d, want %d", step, f.Len(), len(pending))
		}
		if len(pending) == 0 || rng.IntN(3) > 0 {
			continue // peeks at some steps only, so the earliest goes stale between them
		}
		best, bt, _ := earliest(pending, -1)
		if gid, gt := f.Peek(); gid != best || gt != bt {
			t.Fatalf("step %d: Peek (%d, %g), want (%d, %g)", step, gid, gt, best, bt)
		}
	}
}

// earliest returns the reference's earliest pending event other than skip:
// the earliest time, equal times by id.
func earliest[ID int | int32](pending map[ID]float64, skip ID) (ID, float64, bool) {
	var best ID
	bt, ok := 0.0, false
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

// randomChange makes one random change to a queue under test and to its
// reference table pending: half the time it sets a random id below ids to
// one of times whole times (few distinct times: many ties), a quarter it
// removes one; the other quarter it changes nothing and returns false.
func randomChange[ID int | int32](rng *rand.Rand, ids, times int, pending map[ID]float64, set func(ID, float64), remove func(ID)) bool {
	id := ID(rng.IntN(ids))
	switch op := rng.IntN(4); {
	case op < 2:
		tm := float64(rng.IntN(times))
		set(id, tm)
		pending[id] = tm
	case op == 2:
		remove(id)
		delete(pending, id)
	default:
		return false
	}
	return true
}
