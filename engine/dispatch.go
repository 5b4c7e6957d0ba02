package engine

// The dispatch policy both engines share (apple-gpu.md §8): threadgroups
// leave in linear index order; a first wave fills the cores round-robin, one
// slot of every core per pass, until every slot holds one; after that a freed
// slot takes the next threadgroup. Each core's front end launches one
// threadgroup at a time, sg_launch_clk cycles per simdgroup.

// dispatchQueue hands out a grid's threadgroups in dispatch order.
type dispatchQueue struct{ next, n int }

// take returns the next threadgroup's index, or false when all are out.
func (d *dispatchQueue) take() (int, bool) {
	if d.next >= d.n {
		return 0, false
	}
	d.next++
	return d.next - 1, true
}

// firstWave calls fill for every (core, slot) of the first wave, in its order.
func firstWave(cores, slots int, fill func(core, slot int)) {
	for s := 0; s < slots; s++ {
		for ci := 0; ci < cores; ci++ {
			fill(ci, s)
		}
	}
}

// frontEnd is a core's serial threadgroup launcher.
type frontEnd struct{ free Time }

// launch launches a threadgroup that may start at t and takes cost cycles of
// the front end: it returns when the launch begins (when the front end is
// free) and when the threadgroup starts.
func (f *frontEnd) launch(t, cost Time) (begin, start Time) {
	begin = max(f.free, t)
	start = begin + cost
	f.free = start
	return begin, start
}
