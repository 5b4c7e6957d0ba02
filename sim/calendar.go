package sim

import (
	"math"
	"math/bits"
)

// calendar is the ready queue of a core: a ring of one bucket per cycle over the
// next calSize cycles (FIFO lists threaded through the simdgroups) with a
// one-word bitmap of its non-empty buckets, so the earliest entry is found with
// a rotate and a count of trailing zeros, and a min-heap for the entries further
// ahead (barrier releases, device loads), which enter the ring, in the order
// they were queued, as soon as its window reaches them. Every far entry lies at
// now+calSize or later, so the ring, when not empty, holds the earliest entry,
// and simdgroups ready in the same cycle leave in the order they were queued.
type calendar struct {
	now        int64 // every queued time is >= now
	occ        uint64
	head, tail [calSize]int32
	next       []int32  // FIFO links of the buckets: simdgroup i's at i+1, a dummy at 0 (grown by addTG)
	far        []calFar // entries at now+calSize or later, a min-heap by (t, seq)
	seq        uint64   // far pushes so far: the heap's tie-break keeps their order
}

type calFar struct {
	t   int64
	seq uint64
	i   int32
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
		return q.far[0].t
	}
	return math.MaxInt64
}

// push queues simdgroup i at its ready time (no earlier than now).
func (q *calendar) push(c *coreSim, i int32) {
	sg := &c.sgs[i]
	t := max(sg.ready, q.now)
	sg.ready = t
	if t-q.now >= calSize {
		q.farPush(calFar{t, q.seq, i})
		q.seq++
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
	if len(q.far) > 0 && q.far[0].t-t < calSize {
		q.migrate()
	}
}

func (q *calendar) migrate() {
	for len(q.far) > 0 && q.far[0].t-q.now < calSize {
		f := q.far[0]
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

func (q *calendar) farPush(f calFar) {
	q.far = append(q.far, f)
	j := len(q.far) - 1
	for j > 0 {
		p := (j - 1) / 2
		if !farLess(q.far[j], q.far[p]) {
			break
		}
		q.far[j], q.far[p] = q.far[p], q.far[j]
		j = p
	}
}

func (q *calendar) farPop() {
	n := len(q.far) - 1
	q.far[0] = q.far[n]
	q.far = q.far[:n]
	j := 0
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		k := l
		if r := l + 1; r < n && farLess(q.far[r], q.far[l]) {
			k = r
		}
		if !farLess(q.far[k], q.far[j]) {
			return
		}
		q.far[j], q.far[k] = q.far[k], q.far[j]
		j = k
	}
}

func farLess(a, b calFar) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}
