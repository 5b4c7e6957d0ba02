// Package lattice is the geometry of the fast engine's composition lattice.
// On a core that holds many short threadgroups of two k-loop classes
// (mul_mv_id's weights from DRAM and from the SLC), a run meets hundreds of
// compositions (a, b), each a mix measurement of a + b threadgroups, and the
// one-class ones of every count. Their per-class periods are smooth in the
// counts, so only a lattice of them is measured and the rest are
// interpolated linearly (docs/model.md §3, "The composition lattice"). This
// package says which measured compositions, with which weights, stand for a
// composition; the engine measures them and takes the weighted mean.
package lattice

const (
	// Step is the one-class lattice's spacing in the free slots, and
	// the two-class lattice's where a cell of WideStep does not fit.
	Step = 4
	// WideStep is the two-class lattice's spacing in each class's
	// count and in the free slots wherever its cell fits in the core.
	WideStep = 8
	// MinTGs is the least resident threadgroups per core for which
	// compositions are interpolated: below it a core meets few compositions,
	// and mul_mm_id (at most 8 on any chip) is measured exactly.
	MinTGs = 12
	// MinWaves is the least waves (threadgroups over the chip's
	// slots) of a grid whose compositions are interpolated: a grid of fewer
	// waves spends much of its time in the ramp and drain compositions, each
	// read briefly, so its total follows each one's measurement (docs/model.md
	// §3, "The composition lattice").
	MinWaves = 16
)

// Corner is one measured composition of an interpolated one: A
// threadgroups of the composition's first class and B of its second, with
// its weight W.
type Corner struct {
	A, B int
	W    float64
}

// Corners returns the measured compositions, at most 3, whose
// weighted mean stands for the composition ids (canonically sorted) on a
// core of occ slots, or nil if it is measured itself: it has more than two
// classes, occ is below MinTGs, or it is a lattice point. A one-class
// composition is read on a 1-D lattice (oneClassCorners).
//
// Two classes are read on the lattice of WideStep on a core that
// holds two of its cells along each axis (occ - 2 ≥ 2 × WideStep), a
// point whose upper triangle there would leave the core on the lattice of
// Step, and so is every point on a smaller core (twoClassCorners): a
// wide cell on a small core reaches corners far from the point (a 15-slot
// core's near-full compositions would read one of 7 threadgroups), whose
// fine measurements cost more than the ones the wide step saves.
func Corners(ids []int, occ int) []Corner {
	if occ < MinTGs || len(ids) == 0 || len(ids) > occ {
		return nil
	}
	if ids[0] == ids[len(ids)-1] {
		return oneClassCorners(len(ids), occ)
	}
	a := 0
	for _, id := range ids {
		switch id {
		case ids[0]:
			a++
		case ids[len(ids)-1]:
		default:
			return nil // three classes or more
		}
	}
	b := len(ids) - a
	if occ-2 >= 2*WideStep {
		if cs := twoClassCorners(a, b, occ, WideStep); cs != nil {
			return cs
		}
	}
	return twoClassCorners(a, b, occ, Step)
}

// twoClassCorners returns the measured compositions, at most 3, whose
// weighted mean stands for a threadgroups of class A and b of class B on a
// core of occ slots, on the lattice of step s, or nil if it is a lattice
// point or its upper triangle would leave the core.
//
// Coordinates u = a - 1 and v = occ - a - b (the free slots), so the domain
// u, v ≥ 0, u + v ≤ w = occ - 2 keeps both classes in every corner (a
// corner without a class has no period for it) and the full core (v = 0) is
// a lattice line. The cell of step s at (u0, v0) is cut into two triangles
// and the point is read barycentrically from the one that holds it; along
// the edge b = 1 (u + v = w) a cell is cut short there, its corners on the
// edge.
func twoClassCorners(a, b, occ, s int) []Corner {
	u, v, w := a-1, occ-a-b, occ-2
	u0, v0 := u-u%s, v-v%s
	du, dv := u-u0, v-v0
	if du == 0 && dv == 0 {
		return nil
	}
	at := func(uu, vv int, wt float64) Corner {
		aa := uu + 1
		return Corner{A: aa, B: occ - vv - aa, W: wt}
	}
	if r := w - u0 - v0; r < s { // the cell is cut short by the edge b = 1
		fs := float64(r)
		return []Corner{at(u0, v0, 1-float64(du+dv)/fs), at(u0+r, v0, float64(du)/fs), at(u0, v0+r, float64(dv)/fs)}
	}
	fs := float64(s)
	if du+dv <= s {
		return []Corner{at(u0, v0, 1-float64(du+dv)/fs), at(u0+s, v0, float64(du)/fs), at(u0, v0+s, float64(dv)/fs)}
	}
	if u0+v0+2*s > w {
		return nil
	}
	return []Corner{at(u0+s, v0+s, float64(du+dv)/fs-1), at(u0+s, v0, 1-float64(dv)/fs), at(u0, v0+s, 1-float64(du)/fs)}
}

// oneClassCorners returns the measured compositions, at most 2, whose
// weighted mean stands for c threadgroups of one class on a core of occ
// slots, or nil if it is measured itself. The lattice is 1-D in the free
// slots v = occ - c, of step Step: the full core (v = 0) is a lattice
// point, and so is one threadgroup alone (v = occ - 1), where the last cell is
// cut short.
func oneClassCorners(c, occ int) []Corner {
	const s = Step
	v := occ - c
	v0 := v - v%s
	if v == v0 || c == 1 {
		return nil
	}
	v1 := min(v0+s, occ-1)
	f := float64(v-v0) / float64(v1-v0)
	return []Corner{{A: occ - v0, W: 1 - f}, {A: occ - v1, W: f}}
}
