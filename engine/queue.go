package engine

import "math"

// Time is the engines' one clock: cycles from the dispatch start. The fast
// engine's threadgroup events fall on fractional cycles; the core model
// counts whole cycles inside a core (int64, exact in a Time up to 2^53) and
// the detailed engine schedules its cores, their launches and their finishes
// in Time (timeOf, cyclesOf).
type Time = float64

// timeOf is a core's whole-cycle time as a Time (math.MaxInt64, "never", is
// +Inf).
func timeOf(c int64) Time {
	if c == math.MaxInt64 {
		return math.Inf(1)
	}
	return Time(c)
}

// cyclesOf is a Time that holds a whole number of cycles as the core model's
// cycle count (+Inf is math.MaxInt64).
func cyclesOf(t Time) int64 {
	if math.IsInf(t, 1) {
		return math.MaxInt64
	}
	return int64(t)
}

// eventQueue is the engines' one event queue: at most one pending event per
// id, ordered by time and then by id (so equal times resolve the same way in
// every run), an id's new event replacing its pending one in place, so the
// heap never holds more entries than ids. The fast engine keys threadgroup
// events by it, the detailed engine its cores.
type eventQueue struct {
	heap []qEvent // a binary min-heap
	pos  []int32  // each id's index in heap, -1 when it has no pending event
}

type qEvent struct {
	t  Time
	id int32
}

func (a qEvent) before(b qEvent) bool {
	return a.t < b.t || a.t == b.t && a.id < b.id
}

func newEventQueue(ids int) *eventQueue {
	q := &eventQueue{heap: make([]qEvent, 0, ids), pos: make([]int32, ids)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

// len returns the number of pending events.
func (q *eventQueue) len() int { return len(q.heap) }

// set makes t the time of id's pending event.
func (q *eventQueue) set(id int32, t Time) {
	e := qEvent{t, id}
	p := q.pos[id]
	if p < 0 {
		q.heap = append(q.heap, e)
		q.up(int32(len(q.heap)-1), e)
		return
	}
	q.place(p, e)
}

// place puts e into hole p, whose old entry it replaces: up if it comes
// before that entry, else down.
func (q *eventQueue) place(p int32, e qEvent) {
	if e.before(q.heap[p]) {
		q.up(p, e)
	} else {
		q.down(p, e)
	}
}

// remove drops id's pending event, if any.
func (q *eventQueue) remove(id int32) {
	p := q.pos[id]
	if p < 0 {
		return
	}
	q.pos[id] = -1
	last := int32(len(q.heap) - 1)
	e := q.heap[last]
	q.heap = q.heap[:last]
	if p != last {
		q.place(p, e)
	}
}

// peek returns the earliest event's id and time, without removing it (the
// queue must not be empty).
func (q *eventQueue) peek() (int32, Time) { return q.heap[0].id, q.heap[0].t }

// runnerUp returns the second event in queue order (the earlier of the
// root's children) and false when fewer than two are pending.
func (q *eventQueue) runnerUp() (int32, Time, bool) {
	switch len(q.heap) {
	case 0, 1:
		return 0, 0, false
	case 2:
		return q.heap[1].id, q.heap[1].t, true
	}
	e := q.heap[1]
	if q.heap[2].before(e) {
		e = q.heap[2]
	}
	return e.id, e.t, true
}

// pop removes the earliest event and returns its id and time.
func (q *eventQueue) pop() (int32, Time) {
	e := q.heap[0]
	q.remove(e.id)
	return e.id, e.t
}

// put stores e at index i of the heap and records where it is.
func (q *eventQueue) put(i int32, e qEvent) {
	q.heap[i] = e
	q.pos[e.id] = i
}

// up places e at hole i or above it, moving later parents down.
func (q *eventQueue) up(i int32, e qEvent) {
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(q.heap[p]) {
			break
		}
		q.put(i, q.heap[p])
		i = p
	}
	q.put(i, e)
}

// down places e at hole i or below it, moving earlier children up.
func (q *eventQueue) down(i int32, e qEvent) {
	n := int32(len(q.heap))
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		k := l
		if r := l + 1; r < n && q.heap[r].before(q.heap[l]) {
			k = r
		}
		if !q.heap[k].before(e) {
			break
		}
		q.put(i, q.heap[k])
		i = k
	}
	q.put(i, e)
}
