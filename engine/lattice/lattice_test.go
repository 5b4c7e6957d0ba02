package lattice

import (
	"math"
	"testing"
)

// TestLatticeCornersReproduceThePoint checks every two-class composition of
// a core of occ slots: its corners are compositions of both classes within
// the core, their weights are non-negative and sum to 1, and their weighted
// counts are the point's own (so a per-class period linear in the counts is
// interpolated exactly); only lattice points and the few whose upper
// triangle would leave the core are measured themselves, and the corners of
// all the compositions are at most a third of them: on a 38-slot core, read
// on the wide lattice (WideStep), 29 of 703 (55 on the lattice of
// Step alone); the smaller cores keep the lattice of Step.
// Below MinTGs every composition is measured.
func TestLatticeCornersReproduceThePoint(t *testing.T) {
	const A, B = 3, 7
	wantMeasured := map[int]int{MinTGs: 18, 15: 24, 38: 29}
	for _, occ := range []int{MinTGs - 1, MinTGs, 15, 38} {
		measured, points := map[[2]int]bool{}, 0
		for a := 1; a < occ; a++ {
			for b := 1; a+b <= occ; b++ {
				points++
				ids := make([]int, 0, a+b)
				for range a {
					ids = append(ids, A)
				}
				for range b {
					ids = append(ids, B)
				}
				cs := Corners(ids, occ)
				if occ < MinTGs {
					if cs != nil {
						t.Fatalf("occ %d < MinTGs: (%d, %d) interpolated", occ, a, b)
					}
					continue
				}
				if cs == nil {
					measured[[2]int{a, b}] = true
					continue
				}
				var w, wa, wb float64
				for _, c := range cs {
					if c.W < 0 || c.A < 1 || c.B < 1 || c.A+c.B > occ {
						t.Fatalf("occ %d (%d, %d): corner %+v outside the core or of negative weight", occ, a, b, c)
					}
					if c.W > 0 {
						measured[[2]int{c.A, c.B}] = true
					}
					w += c.W
					wa += c.W * float64(c.A)
					wb += c.W * float64(c.B)
				}
				// weights are ratios of small integers: exact to rounding
				if math.Abs(w-1) > 1e-12 || math.Abs(wa-float64(a)) > 1e-9 || math.Abs(wb-float64(b)) > 1e-9 {
					t.Errorf("occ %d (%d, %d): weights sum to %g, weighted counts (%g, %g)", occ, a, b, w, wa, wb)
				}
			}
		}
		if occ >= MinTGs && 3*len(measured) > points {
			t.Errorf("occ %d: %d of %d compositions measured, want at most a third", occ, len(measured), points)
		}
		if occ >= MinTGs && len(measured) != wantMeasured[occ] {
			t.Errorf("occ %d: %d of %d two-class compositions measured, want %d", occ, len(measured), points, wantMeasured[occ])
		}
	}
}

// TestLatticeOneClassCorners checks every one-class composition of a core of
// occ slots: its corners are one-class compositions within the core whose
// non-negative weights sum to 1 and whose weighted count is its own; the
// full core and one threadgroup alone are measured themselves, and so is
// every fourth free slot count, at most a third of the counts in all. Below
// MinTGs every composition is measured.
func TestLatticeOneClassCorners(t *testing.T) {
	const A = 3
	for _, occ := range []int{MinTGs - 1, MinTGs, 15, 38} {
		measured := map[int]bool{}
		for c := 1; c <= occ; c++ {
			ids := make([]int, c)
			for i := range ids {
				ids[i] = A
			}
			cs := Corners(ids, occ)
			if occ < MinTGs || c == 1 || c == occ || (occ-c)%Step == 0 {
				if cs != nil {
					t.Fatalf("occ %d: %d threadgroups interpolated, want measured", occ, c)
				}
				if occ >= MinTGs {
					measured[c] = true
				}
				continue
			}
			if cs == nil {
				t.Fatalf("occ %d: %d threadgroups measured, want interpolated", occ, c)
			}
			var w, wa float64
			for _, k := range cs {
				if k.W < 0 || k.A < 1 || k.B != 0 || k.A > occ {
					t.Fatalf("occ %d (%d): corner %+v outside the core, of another class or of negative weight", occ, c, k)
				}
				if k.W > 0 {
					measured[k.A] = true
				}
				w += k.W
				wa += k.W * float64(k.A)
			}
			// weights are ratios of small integers: exact to rounding
			if math.Abs(w-1) > 1e-12 || math.Abs(wa-float64(c)) > 1e-9 {
				t.Errorf("occ %d (%d): weights sum to %g, weighted count %g", occ, c, w, wa)
			}
		}
		if occ >= MinTGs && 3*len(measured) > occ+2 {
			t.Errorf("occ %d: %d of %d one-class compositions measured, want about a third at most", occ, len(measured), occ)
		}
	}
}
