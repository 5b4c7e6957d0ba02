// Package eventq holds the simulator engines' event queues, both ordered by
// time and then by id: Queue, a binary min-heap of timed events keyed by id
// (the fast engine keys its threadgroup slots' events by it, the detailed
// engine its cores), and Flat, for a few ids whose times all change at once
// (the fast engine's cores' k-loop ends).
package eventq

// Queue holds at most one pending event per id, ordered by time and then by
// id (so equal times resolve the same way in every run), an id's new event
// replacing its pending one in place, so the heap never holds more entries
// than ids.
type Queue struct {
	heap []event // a binary min-heap
	pos  []int32 // each id's index in heap, -1 when it has no pending event
}

type event struct {
	t  float64
	id int32
}

func (a event) before(b event) bool {
	return a.t < b.t || a.t == b.t && a.id < b.id
}

// New returns an empty queue for the ids 0 to ids-1.
func New(ids int) *Queue {
	q := &Queue{heap: make([]event, 0, ids), pos: make([]int32, ids)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

// Len returns the number of pending events.
func (q *Queue) Len() int { return len(q.heap) }

// Set makes t the time of id's pending event.
func (q *Queue) Set(id int32, t float64) {
	e := event{t, id}
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
func (q *Queue) place(p int32, e event) {
	if e.before(q.heap[p]) {
		q.up(p, e)
	} else {
		q.down(p, e)
	}
}

// Remove drops id's pending event, if any.
func (q *Queue) Remove(id int32) {
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

// Peek returns the earliest event's id and time, without removing it (the
// queue must not be empty).
func (q *Queue) Peek() (int32, float64) { return q.heap[0].id, q.heap[0].t }

// RunnerUp returns the second event in queue order (the earlier of the
// root's children) and false when fewer than two are pending.
func (q *Queue) RunnerUp() (int32, float64, bool) {
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

// Pop removes the earliest event and returns its id and time.
func (q *Queue) Pop() (int32, float64) {
	e := q.heap[0]
	q.Remove(e.id)
	return e.id, e.t
}

// put stores e at index i of the heap and records where it is.
func (q *Queue) put(i int32, e event) {
	q.heap[i] = e
	q.pos[e.id] = i
}

// up places e at hole i or above it, moving later parents down.
func (q *Queue) up(i int32, e event) {
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
func (q *Queue) down(i int32, e event) {
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
