package sim

import (
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// Skewed routing concentrates tokens on few experts: more token tiles, so a
// Zipf run is slower than a uniform one on the same problem.
func TestRunWithZipfRouting(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 32, Used: 4, M: 256, K: 256, Tokens: 256, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	s := NewSimulator()
	u, err := s.Run(p, k, chip, Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Run(p, k, chip, Options{Draws: 1, Routing: routing.Zipf{S: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if z.Counters.Active == u.Counters.Active {
		t.Fatalf("zipf:2 and uniform computed the same number of tiles (%d)", z.Counters.Active)
	}
}
