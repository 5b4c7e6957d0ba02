package engine

import (
	"slices"
	"testing"
)

// TestCompositionOrder: a core's composition, kept by insertMix and
// removeMix as threadgroups enter and leave their k-loops, is always the
// canonical order (rank, then id) that a sort of the same ids gives, also
// when a class met later ranks before the ones already in it.
func TestCompositionOrder(t *testing.T) {
	cc := &coreCache{info: []*classInfo{{rank: "m"}, {rank: "c"}, {rank: "x"}, {rank: "c"}}}
	v := newCacheView(cc)
	canonical := func(ids []int) []int {
		s := slices.Clone(ids)
		slices.SortStableFunc(s, func(a, b int) int {
			if ra, rb := cc.info[a].rank, cc.info[b].rank; ra != rb {
				if ra < rb {
					return -1
				}
				return 1
			}
			return a - b
		})
		return s
	}
	var ids []int
	for _, id := range []int{2, 0, 0, 3, 1, 2} {
		ids = v.insertMix(ids, id)
		if want := canonical(ids); !slices.Equal(ids, want) {
			t.Fatalf("after inserting %d: %v, want %v", id, ids, want)
		}
	}
	// a class created after the view numbered its order
	cc.info = append(cc.info, &classInfo{rank: "a"})
	ids = v.insertMix(ids, 4)
	if want := []int{4, 1, 3, 0, 0, 2, 2}; !slices.Equal(ids, want) {
		t.Fatalf("after inserting a new class: %v, want %v", ids, want)
	}
	for _, id := range []int{0, 2, 4} {
		ids = removeMix(ids, id)
	}
	if want := []int{1, 3, 0, 2}; !slices.Equal(ids, want) {
		t.Fatalf("after removing: %v, want %v", ids, want)
	}
}
