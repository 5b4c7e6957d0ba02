package engine

// eventQueue is the engines' one event queue: at most one pending event per
// id, ordered by time and then by id (so equal times resolve the same way in
// every run), an id's new event replacing its pending one in place, so the
// heap never holds more entries than ids. The fast engine keys threadgroup
// events by fractional cycles, the detailed engine its cores by whole cycles.
type eventQueue[T int64 | float64] struct {
	heap []qEvent[T] // a binary min-heap
	pos  []int32     // each id's index in heap, -1 when it has no pending event
}

type qEvent[T int64 | float64] struct {
	t  T
	id int32
}

func (a qEvent[T]) before(b qEvent[T]) bool {
	return a.t < b.t || a.t == b.t && a.id < b.id
}

func newEventQueue[T int64 | float64](ids int) *eventQueue[T] {
	q := &eventQueue[T]{heap: make([]qEvent[T], 0, ids), pos: make([]int32, ids)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

// len returns the number of pending events.
func (q *eventQueue[T]) len() int { return len(q.heap) }

// set makes t the time of id's pending event.
func (q *eventQueue[T]) set(id int32, t T) {
	e := qEvent[T]{t, id}
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
func (q *eventQueue[T]) place(p int32, e qEvent[T]) {
	if e.before(q.heap[p]) {
		q.up(p, e)
	} else {
		q.down(p, e)
	}
}

// remove drops id's pending event, if any.
func (q *eventQueue[T]) remove(id int32) {
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
func (q *eventQueue[T]) peek() (int32, T) { return q.heap[0].id, q.heap[0].t }

// runnerUp returns the second event in queue order (the earlier of the
// root's children) and false when fewer than two are pending.
func (q *eventQueue[T]) runnerUp() (int32, T, bool) {
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
func (q *eventQueue[T]) pop() (int32, T) {
	e := q.heap[0]
	q.remove(e.id)
	return e.id, e.t
}

// put stores e at index i of the heap and records where it is.
func (q *eventQueue[T]) put(i int32, e qEvent[T]) {
	q.heap[i] = e
	q.pos[e.id] = i
}

// up places e at hole i or above it, moving later parents down.
func (q *eventQueue[T]) up(i int32, e qEvent[T]) {
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
func (q *eventQueue[T]) down(i int32, e qEvent[T]) {
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
