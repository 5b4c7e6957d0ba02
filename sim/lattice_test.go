package sim_test

import (
	"math"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestMatVecIDLattice: a mul_mv_id grid of many waves (the calibration shape
// at n = 8: 16 waves on the M5, 26 on the M1 Pro) interpolates its one- and
// two-class core mixes on the composition lattice. Against measuring every
// composition (Grid.ExactMixes) it simulates under 0.4 of the instructions on
// the M1 Pro and under a quarter on the M5, whose 38-slot core reads its
// two-class compositions on the wide lattice (cores that move in step, all
// on one measurement of a composition, give many compositions the stays that
// call for a fine measurement, which the lattice reads from its corners).
// Its time is within 1 %: over 780 mul_mv_id rows (every
// chip, two shapes, n = 2..31, 2 draws; docs/model.md §3) the two-class
// lattice moved none by more than 0.79 %, the one-class lattice on top of it
// none by more than 0.62 % and the wide lattice none by more than 0.7 %,
// while a neutral change of the fine measurement's start-pattern jitter
// moves rows of this many waves by up to 0.7 %, so 1 % is the measurement's
// own scatter.
func TestMatVecIDLattice(t *testing.T) {
	p := tile.HeadlineProblem(8)
	for _, tc := range []struct {
		name string
		frac float64 // the most instructions on the lattice, a fraction of every composition measured
	}{{"M1 Pro 16-core GPU", 0.4}, {"M5 10-core GPU", 0.25}} {
		name := tc.name
		chip := chips.MustLookup(name)
		run := func(exact bool) *sim.GridResult {
			s := sim.NewSimulator()
			g, _, err := s.MulMVIDGrid(p, routing.UniformIDs(p, 1), chip)
			if err != nil {
				t.Fatal(err)
			}
			g.ExactMixes = exact
			r, err := s.RunGrid(g, chip, sim.Fast)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		lat, exact := run(false), run(true)
		t.Logf("%s: %.1f µs, %d instructions; every composition measured: %.1f µs, %d instructions",
			name, lat.Us, lat.Instructions, exact.Us, exact.Instructions)
		if float64(lat.Instructions) >= tc.frac*float64(exact.Instructions) {
			t.Errorf("%s: %d instructions on the lattice, %d measuring every composition: want under %.2f of it", name, lat.Instructions, exact.Instructions, tc.frac)
		}
		if d := math.Abs(lat.Us/exact.Us - 1); d > 0.01 {
			t.Errorf("%s: %.2f µs on the lattice, %.2f µs measuring every composition: %.2f %% apart, want within 1 %%", name, lat.Us, exact.Us, 100*d)
		}
	}
}
