package eventq

import "math"

// Flat holds at most one pending time per id for a few ids whose times
// change far more often than the earliest is asked for: Set is a store, and
// the earliest is found by a scan when it is asked for after the earliest
// id's time moved later. It orders like Queue: by time, then by id. The fast
// engine keeps its cores' k-loop ends here, which a DRAM-bound grid re-times
// all at once at every change of the DRAM scale.
type Flat struct {
	t     []float64 // +Inf: no time pending
	n     int       // times pending
	min   int       // the earliest id, when minOK
	minOK bool
}

// NewFlat returns an empty Flat for the ids 0 to ids-1.
func NewFlat(ids int) *Flat {
	f := &Flat{t: make([]float64, ids)}
	for i := range f.t {
		f.t[i] = math.Inf(1)
	}
	return f
}

// Len returns the number of pending times.
func (f *Flat) Len() int { return f.n }

// Set makes t, which must be finite, the pending time of id.
func (f *Flat) Set(id int, t float64) {
	old := f.t[id]
	if math.IsInf(old, 1) {
		f.n++
	}
	f.t[id] = t
	switch {
	case !f.minOK:
	case id == f.min:
		f.minOK = t <= old
	case t < f.t[f.min] || t == f.t[f.min] && id < f.min:
		f.min = id
	}
}

// Remove drops id's pending time, if any.
func (f *Flat) Remove(id int) {
	if math.IsInf(f.t[id], 1) {
		return
	}
	f.n--
	f.t[id] = math.Inf(1)
	if id == f.min {
		f.minOK = false
	}
}

// Peek returns the id with the earliest pending time and the time (Len must
// not be 0).
func (f *Flat) Peek() (int, float64) {
	if !f.minOK {
		f.min = 0
		for id, t := range f.t {
			if t < f.t[f.min] {
				f.min = id
			}
		}
		f.minOK = true
	}
	return f.min, f.t[f.min]
}
