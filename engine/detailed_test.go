package engine

import (
	"reflect"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// nopTrace is a trace sink that records nothing: with a sink, the detailed
// engine keeps every core's issues in one global time order.
type nopTrace struct{ issues int64 }

func (n *nopTrace) issue(*coreSim, *sgRun, *isa.Inst, int64) { n.issues++ }
func (n *nopTrace) barrier(*coreSim, *sgRun, int64, int64)   {}

// TestDetailedRunAheadIsExact: without a trace, the detailed engine lets each
// core run ahead of the others up to its next DRAM transfer or threadgroup
// finish (what other cores see: the DRAM channel, the dispatch order). The
// result must be the one of the global instruction-by-instruction order,
// bit for bit, on both paths, with early exits, several waves and DRAM
// contention.
func TestDetailedRunAheadIsExact(t *testing.T) {
	for _, tc := range []struct {
		chip string
		k    tile.Kernel
	}{
		{"M1 Pro 16-core GPU", tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}},
		{"M5 10-core GPU", tile.Kernel{Variant: tile.Upstream(), Path: tile.Tensor}},
	} {
		chip := chips.MustLookup(tc.chip)
		p := tile.Problem{Experts: 16, Used: 4, M: 256, K: 512, Tokens: 96, TypeA: dequant.IQ2_XS}
		b, err := tile.NewBuilder(p, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := tile.NewPlan(p, tc.k, routing.UniformCounts(p, 7))
		if err != nil {
			t.Fatal(err)
		}
		g := PlanGrid(plan, b, tc.k)
		sh, err := NewCaches().share(g, chip)
		if err != nil {
			t.Fatal(err)
		}
		cores := int(chip.Cores.Value)
		ahead := runDetailed(sh.m, newGridSource(g, sh), cores, sh.occ.TGsPerCore, nil, nil)
		sink := &nopTrace{}
		lockstep := runDetailed(sh.m, newGridSource(g, sh), cores, sh.occ.TGsPerCore, nil, sink)
		if !reflect.DeepEqual(ahead, lockstep) {
			t.Errorf("%s: running ahead %+v\nin global order %+v", tc.chip, ahead, lockstep)
		}
		if sink.issues == 0 || sink.issues > lockstep.instr {
			t.Errorf("%s: the sink saw %d issues of %d", tc.chip, sink.issues, lockstep.instr)
		}
	}
}
