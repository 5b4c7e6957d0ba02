package sim

import (
	"math"
	"math/bits"
	"slices"
)

// calendar is the ready queue of a core: a ring of one bucket per cycle over the
// next calSize cycles (FIFO lists threaded through the simdgroups) with a
// one-word bitmap of its non-empty buckets, so the earliest entry is found with
// a rotate and a count of trailing zeros, and a list for the entries further
// ahead (barrier releases, loads in flight), which enter the ring, earliest
// first and in the order they were queued, as soon as its window reaches them.
// Every far entry lies at now+calSize or later, so the ring, when not empty,
// holds the earliest entry, and simdgroups ready in the same cycle leave in
// the order they were queued. The far list is scanned, not kept as a heap: it
// holds a few of the core's simdgroups (at most all of them), and a heap's
// sift branches, which depend on the times, mispredicted about twice per pop
// in a six-threadgroup mix.
type calendar struct {
	now        int64 // every queued time is >= now
	occ        uint64
	head, tail [calSize]int32
	next       []int32  // FIFO links of the buckets: simdgroup i's at i+1, a dummy at 0 (grown by addTG)
	far        []calFar // entries at now+calSize or later, in the order they were queued
	farMin     int      // index in far of the earliest (the first queued of the earliest time)
}

type calFar struct {
	t int64
	i int32
}

const (
	calBits = 6
	calSize = 1 << calBits
	calMask = calSize - 1
)

// earliest returns the earliest queued time, or math.MaxInt64 when empty.
func (q *calendar) earliest() int64 {
	if q.occ != 0 {
		return q.now + int64(bits.TrailingZeros64(bits.RotateLeft64(q.occ, -int(q.now&calMask))))
	}
	if len(q.far) > 0 {
		return q.far[q.farMin].t
	}
	return math.MaxInt64
}

// push queues simdgroup i at its ready time (no earlier than now).
func (q *calendar) push(c *coreSim, i int32) {
	sg := &c.sgs[i]
	t := max(sg.ready, q.now)
	sg.ready = t
	if t-q.now >= calSize {
		q.farPush(calFar{t, i})
		return
	}
	q.ringAppend(i, t)
}

// take takes the first simdgroup off bucket t, the queue's earliest time.
func (q *calendar) take(t int64) int32 {
	b := t & calMask
	i := q.head[b]
	h := q.next[i+1]
	q.head[b] = h
	q.occ &^= 1 << b & uint64(int64(h>>31)) // cleared when the bucket empties
	return i
}

// queueAt queues simdgroup i, whose sg.ready is r, at max(r, now).
func (q *calendar) queueAt(c *coreSim, i int32, r int64) {
	if d := r - q.now; d >= 0 && d < calSize {
		q.ringAppend(i, r)
	} else {
		q.push(c, i)
	}
}

func (q *calendar) ringAppend(i int32, t int64) {
	// branch-free: an empty bucket's missing tail is the dummy link
	// next[0] (simdgroup i links through next[i+1])
	b := t & calMask
	h, prev := q.head[b], q.tail[b]+1
	if h < 0 {
		h, prev = i, 0
	}
	q.next[prev] = i
	q.next[i+1] = -1
	q.head[b], q.tail[b] = h, i
	q.occ |= 1 << b
}

// advance moves the clock to t (no later than the earliest entry) and lets the
// far entries its window now reaches into the ring.
func (q *calendar) advance(t int64) {
	q.now = t
	if len(q.far) > 0 && q.far[q.farMin].t-t < calSize {
		q.migrate()
	}
}

func (q *calendar) migrate() {
	for len(q.far) > 0 && q.far[q.farMin].t-q.now < calSize {
		f := q.far[q.farMin]
		q.farPop()
		q.ringAppend(f.i, f.t)
	}
}

func (q *calendar) init() {
	q.next = []int32{-1}
	for b := range q.head {
		q.head[b], q.tail[b] = -1, -1
	}
}

// farPush queues a far entry behind the others.
func (q *calendar) farPush(f calFar) {
	q.far = append(q.far, f)
	if n := len(q.far) - 1; f.t < q.far[q.farMin].t {
		q.farMin = n
	}
}

// farPop removes the earliest far entry, keeping the others in the order
// they were queued, and finds the next earliest: the first of the least
// time, so entries due in the same cycle leave in the order they came.
func (q *calendar) farPop() {
	q.far = slices.Delete(q.far, q.farMin, q.farMin+1)
	m, mt := 0, int64(math.MaxInt64)
	for j, f := range q.far {
		if f.t < mt {
			m, mt = j, f.t
		}
	}
	q.farMin = m
}
