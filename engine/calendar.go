package engine

import (
	"math"
	"math/bits"
)

// calendar is the ready queue of a core: a ring of one bucket per cycle over the
// next calSize cycles (FIFO lists threaded through the simdgroups) with a
// one-word bitmap of its non-empty buckets, so the earliest entry is found with
// a rotate and a count of trailing zeros, and for the entries further ahead
// (barrier releases, device loads) a second ring of such buckets up to
// farSize cycles ahead, whose buckets move into the first ring whole as soon
// as its window reaches them, and a min-heap for those further still. Every far
// entry lies at now+calSize or later, so the ring, when not empty, holds the
// earliest entry, and simdgroups ready in the same cycle leave in the order
// they were queued: the clock only moves forward, so a cycle's heap entries
// were queued before its second-ring ones, and those before its first-ring ones.
type calendar struct {
	now        int64 // every queued time is >= now
	occ        uint64
	head, tail [calSize]int32
	next       []int32 // FIFO links of the buckets (both rings): simdgroup i's at i+1, a dummy at 0 (grown by addTG)
	farNext    int64   // the earliest far entry's time, or math.MaxInt64
	farOcc     [farSize / 64]uint64
	farEnds    [farSize]calEnds
	far        []calFar // entries queued at now+farSize or later, a min-heap by (t, seq)
	seq        uint64   // heap pushes so far: the heap's tie-break keeps their order
}

// calEnds is a bucket of the second ring: its first and last simdgroup.
type calEnds struct{ head, tail int32 }

type calFar struct {
	t   int64
	seq uint64
	i   int32
}

const (
	calBits = 6
	calSize = 1 << calBits
	calMask = calSize - 1
	farSize = 1024 // the second ring's span in cycles (a power of two, a multiple of 64): barrier releases and device loads fall within it
)

// earliest returns the earliest queued time, or math.MaxInt64 when empty.
func (q *calendar) earliest() int64 {
	if q.occ != 0 {
		return q.now + int64(bits.TrailingZeros64(bits.RotateLeft64(q.occ, -int(q.now&calMask))))
	}
	return q.farNext
}

// push queues simdgroup i at its ready time (no earlier than now).
func (q *calendar) push(c *coreSim, i int32) {
	sg := &c.sgs[i]
	t := max(sg.ready, q.now)
	sg.ready = t
	if t-q.now >= calSize {
		q.farPush(i, t)
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
	if q.farNext-t < calSize {
		q.migrate()
	}
}

// migrate moves the far cycles the ring's window reaches into it, each
// cycle's heap entries first, then its second-ring bucket, spliced whole
// behind them (nothing else is queued in the ring for a cycle before it
// enters the window).
func (q *calendar) migrate() {
	for q.farNext-q.now < calSize {
		t := q.farNext
		for len(q.far) > 0 && q.far[0].t == t {
			f := q.far[0]
			q.farPop()
			q.ringAppend(f.i, t)
		}
		b, fb := t&calMask, t&(farSize-1)
		if w, bit := fb>>6, uint64(1)<<(fb&63); q.farOcc[w]&bit != 0 {
			q.farOcc[w] &^= bit
			e := q.farEnds[fb]
			if q.occ&(1<<b) == 0 {
				q.head[b] = e.head
			} else {
				q.next[q.tail[b]+1] = e.head
			}
			q.tail[b] = e.tail
			q.occ |= 1 << b
		}
		q.farNext = q.farEarliest(t)
	}
}

// farEarliest returns the earliest far entry's time, given that none is
// earlier than t, or math.MaxInt64.
func (q *calendar) farEarliest(t int64) int64 {
	e := int64(math.MaxInt64)
	if len(q.far) > 0 {
		e = q.far[0].t
	}
	fb := t & (farSize - 1)
	w := fb >> 6
	x := q.farOcc[w] &^ (1<<(fb&63) - 1)
	for k := int64(0); ; k++ {
		if x != 0 {
			d := (w+k)*64 + int64(bits.TrailingZeros64(x)) - fb
			return min(e, t+d&(farSize-1))
		}
		if k == farSize/64 {
			return e
		}
		x = q.farOcc[(w+k+1)&(farSize/64-1)]
	}
}

// farFirst returns the simdgroup that leads the far entries.
func (q *calendar) farFirst() int32 {
	if len(q.far) > 0 && q.far[0].t == q.farNext {
		return q.far[0].i
	}
	return q.farEnds[q.farNext&(farSize-1)].head
}

func (q *calendar) init() {
	q.next = []int32{-1}
	for b := range q.head {
		q.head[b], q.tail[b] = -1, -1
	}
	q.farNext = math.MaxInt64
}

// farPush queues simdgroup i at t >= now+calSize: in the second ring if
// before now+farSize (so the ring's entries lie within farSize of any time it
// migrates: one per bucket), else in the heap.
func (q *calendar) farPush(i int32, t int64) {
	q.farNext = min(q.farNext, t)
	if t-q.now < farSize {
		fb := t & (farSize - 1)
		w, bit := fb>>6, uint64(1)<<(fb&63)
		e := &q.farEnds[fb]
		if q.farOcc[w]&bit == 0 {
			e.head = i
		} else {
			q.next[e.tail+1] = i
		}
		e.tail = i
		q.next[i+1] = -1
		q.farOcc[w] |= bit
		return
	}
	q.far = append(q.far, calFar{t, q.seq, i})
	q.seq++
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
