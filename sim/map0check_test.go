package sim

import (
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

// TestCheckMap0MatchesTheEngine: CheckMap0 accepts exactly the shapes whose
// map0 threadgroup the core model can launch (timed without the check), on
// chips with different thread and threadgroup-memory limits.
func TestCheckMap0MatchesTheEngine(t *testing.T) {
	for _, name := range []string{"M1 Pro 16-core GPU", "M5 10-core GPU", "A19 5-core GPU"} {
		chip := chips.MustLookup(name)
		s := NewSimulator()
		for _, eu := range [][2]int{{1024, 16}, {1024, 17}, {992, 16}, {1025, 1}, {512, 32}, {512, 33}, {128, 8}} {
			p := tile.Problem{Experts: eu[0], Used: eu[1], M: 64, K: 64, Tokens: 32, TypeA: dequant.Q4_0}
			errCheck := CheckMap0(p, chip, "n_mats", "n_used")
			_, errRun := s.map0(p, chip)
			if (errCheck == nil) != (errRun == nil) {
				t.Errorf("%s, experts %d, used %d: CheckMap0 %v, engine %v", name, eu[0], eu[1], errCheck, errRun)
			}
		}
	}
}
