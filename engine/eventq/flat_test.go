package eventq

import (
	"math/rand/v2"
	"testing"
)

// TestFlatOrder drives a Flat with random sets and removals and checks every
// peek and length against a plain table of the pending times: the earliest
// time first, equal times by id, as Queue orders them.
func TestFlatOrder(t *testing.T) {
	const ids = 13
	rng := rand.New(rand.NewPCG(3, 4))
	f := NewFlat(ids)
	pending := map[int]float64{}
	for step := range 20000 {
		id := rng.IntN(ids)
		switch op := rng.IntN(5); {
		case op < 3:
			tm := float64(rng.IntN(20)) // few distinct times: many ties
			f.Set(id, tm)
			pending[id] = tm
		case op == 3:
			f.Remove(id)
			delete(pending, id)
		}
		if f.Len() != len(pending) {
			t.Fatalf("step %d: Len %d, want %d", step, f.Len(), len(pending))
		}
		if len(pending) == 0 || rng.IntN(3) > 0 {
			continue // peeks at some steps only, so the earliest goes stale between them
		}
		best, bt := -1, 0.0
		for id, tm := range pending {
			if best < 0 || tm < bt || tm == bt && id < best {
				best, bt = id, tm
			}
		}
		if gid, gt := f.Peek(); gid != best || gt != bt {
			t.Fatalf("step %d: Peek (%d, %g), want (%d, %g)", step, gid, gt, best, bt)
		}
	}
}
