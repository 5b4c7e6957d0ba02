package sim

import (
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Counters are what a dispatch did, summed over its threadgroups. They derive
// from the programs the threadgroups run (the same function serves emulation and
// timing), so they need no tensor data.
type Counters struct {
	Launched int64      // threadgroups launched (the whole grid)
	Exited   int64      // threadgroups that returned right after reading their count
	Active   int64      // threadgroups that computed a tile
	Work     isa.Counts // work executed
	Skipped  isa.Counts // work the variant left out (half-tiles, their MMAs and matmul2d calls)
}

// CountPlan sums the program counts of every threadgroup of a plan.
func CountPlan(plan *tile.Plan, b *tile.Builder) Counters {
	c := Counters{Launched: int64(plan.Launched())}
	for _, cc := range plan.ContextCounts() {
		prog := b.Program(cc.Context)
		n := int64(cc.N)
		if prog.Exit {
			c.Exited += n
		} else {
			c.Active += n
		}
		c.Work.Add(prog.Counts().Scale(n))
		c.Skipped.Add(prog.Skipped.Scale(n))
	}
	return c
}
