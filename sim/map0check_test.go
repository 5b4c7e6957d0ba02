package sim

import (
	"slices"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
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

// TestMap0LoopTimesLikeUnrolled: map0's program keeps its full chunks as a
// loop body, so it has the same size for any number of tokens, and it times
// exactly like the same ops written out one chunk after another (a single
// prologue), on every chunk count and tail.
func TestMap0LoopTimesLikeUnrolled(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	for _, n := range []int{5, 128, 129, 512, 1000} {
		p := tile.Problem{Experts: 128, Used: 8, M: 64, K: 256, Tokens: n, TypeA: dequant.Q4_0}
		loop, err := tile.Map0Program(p)
		if err != nil {
			t.Fatal(err)
		}
		flat := *loop
		flat.Prologue, flat.Body, flat.Epilogue = make([][]isa.Op, loop.NSG), make([][]isa.Op, loop.NSG), make([][]isa.Op, loop.NSG)
		for sg := range loop.NSG {
			ops := slices.Clone(loop.Prologue[sg])
			for range loop.Steps {
				ops = append(ops, loop.Body[sg]...)
			}
			flat.Prologue[sg] = append(ops, loop.Epilogue[sg]...)
		}
		flat.Steps = 0
		cycles := func(prog *isa.Program) float64 {
			g := &Grid{Kernel: prog, Shape: []*isa.Program{prog}, Launched: 1, ActReuse: 1,
				TG: func(int) (*isa.Program, bool) { return prog, false }}
			r, err := NewSimulator().RunGrid(g, chip, Detailed)
			if err != nil {
				t.Fatal(err)
			}
			return r.Cycles
		}
		if a, b := cycles(loop), cycles(&flat); a != b {
			t.Errorf("n = %d: map0 as a loop %.0f cycles, written out %.0f", n, a, b)
		}
	}
	big, _ := tile.Map0Program(tile.Problem{Experts: 128, Used: 8, M: 64, K: 256, Tokens: 1 << 22, TypeA: dequant.Q4_0})
	small, _ := tile.Map0Program(tile.Problem{Experts: 128, Used: 8, M: 64, K: 256, Tokens: 256, TypeA: dequant.Q4_0})
	if len(big.Body[0]) != len(small.Body[0]) || len(big.Epilogue[0]) != len(small.Epilogue[0]) {
		t.Errorf("map0's program grows with the tokens: body %d vs %d ops", len(big.Body[0]), len(small.Body[0]))
	}
}
