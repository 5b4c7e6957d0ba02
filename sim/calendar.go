package sim

import (
	"math"
	"math/bits"
)

// calendar is the ready queue of a core: a ring of one bucket per cycle over the
// next calSize cycles (FIFO lists threaded through the simdgroups), a bitmap of
// non-empty buckets so idle cycles are skipped a word at a time, and a small heap
// for the rare entries further ahead (long DRAM queueing). Push and pop are O(1);
// simdgroups ready in the same cycle leave in the order they were queued.
type calendar struct {
	now        int64 // every queued time is >= now
	head, tail [calSize]int32
	occ        [calSize / 64]uint64
	n          int      // entries in the ring
	far        []calFar // entries at now+calSize or later, a min-heap
	minT       int64    // the earliest queued time, when minOK
	minOK      bool
	next       []int32 // FIFO links of the buckets, by simdgroup (grown by addTG)
}

type calFar struct {
	t int64
	i int32
}

const (
	calBits = 12
	calSize = 1 << calBits
	calMask = calSize - 1
)

func (q *calendar) init() {
	for b := range q.head {
		q.head[b], q.tail[b] = -1, -1
	}
}

// push queues simdgroup i at its ready time.
func (q *calendar) push(c *coreSim, i int32) {
	sg := &c.sgs[i]
	t := max(sg.ready, q.now)
	sg.ready = t
	if q.minOK && t < q.minT {
		q.minT = t
	}
	if t-q.now >= calSize {
		q.farPush(calFar{t, i})
		return
	}
	q.ringAppend(c, i, t)
}

func (q *calendar) ringAppend(c *coreSim, i int32, t int64) {
	b := int(t & calMask)
	q.next[i] = -1
	if q.head[b] < 0 {
		q.head[b] = i
		q.occ[b>>6] |= 1 << (b & 63)
	} else {
		q.next[q.tail[b]] = i
	}
	q.tail[b] = i
	q.n++
}

// nextBucket returns the time of the earliest non-empty ring bucket.
func (q *calendar) nextBucket() (int64, bool) {
	if q.n == 0 {
		return 0, false
	}
	start := int(q.now & calMask)
	w := start >> 6
	word := q.occ[w] &^ (1<<(start&63) - 1)
	for k := 0; k <= calSize/64; k++ {
		if word != 0 {
			b := w<<6 | bits.TrailingZeros64(word)
			return q.now + int64((b-start)&calMask), true
		}
		w = (w + 1) & (calSize/64 - 1)
		word = q.occ[w]
		if w == start>>6 { // wrapped: only the bits before start remain
			word &= 1<<(start&63) - 1
		}
	}
	return 0, false
}

// earliest returns the earliest queued time, or math.MaxInt64 when empty. It
// is remembered until a pop removes the last entry of that time, so the issue
// loop's repeated questions cost one bitmap scan per cycle, not one per issue.
func (q *calendar) earliest(c *coreSim) int64 {
	if !q.minOK {
		t, ok := q.nextBucket()
		switch {
		case len(q.far) > 0 && (!ok || q.far[0].t < t):
			t = q.far[0].t
		case !ok:
			t = math.MaxInt64
		}
		q.minT, q.minOK = t, true
	}
	return q.minT
}

// popUntil removes and returns the earliest entry if its time is at most limit
// (advancing the clock to it), else returns -1.
func (q *calendar) popUntil(c *coreSim, limit int64) int32 {
	t := q.earliest(c)
	if t > limit || t == math.MaxInt64 {
		return -1
	}
	// the ring's bucket of t holds only entries of time t (ring entries lie in
	// [now, now+calSize) and none is earlier); ring entries leave before far
	// ones of the same time
	var i int32
	if b := int(t & calMask); q.head[b] >= 0 {
		i = q.head[b]
		q.head[b] = q.next[i]
		if q.head[b] < 0 {
			q.tail[b] = -1
			q.occ[b>>6] &^= 1 << (b & 63)
			q.minOK = false
		}
		q.n--
	} else {
		i = q.far[0].i
		q.farPop()
		q.minOK = false
	}
	q.now = t
	// entries that came into the ring's window move into it
	for len(q.far) > 0 && q.far[0].t-q.now < calSize {
		f := q.far[0]
		q.farPop()
		q.ringAppend(c, f.i, f.t)
	}
	return i
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
	return a.i < b.i
}
