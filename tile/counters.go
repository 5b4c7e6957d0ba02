package tile

import "github.com/metalsim/metalsim/isa"

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
func CountPlan(plan *Plan, b *Builder) Counters {
	c := Counters{Launched: int64(plan.Launched())}
	for _, cc := range plan.ContextCounts() {
		c.addProgram(b.Program(cc.Context), int64(cc.N))
	}
	return c
}

// CountPrograms sums the program counts of n threadgroups, threadgroup i
// running prog(i); programs are added in order of first use.
func CountPrograms(n int, prog func(i int) *isa.Program) Counters {
	count := map[*isa.Program]int64{}
	var order []*isa.Program
	for i := 0; i < n; i++ {
		p := prog(i)
		if count[p] == 0 {
			order = append(order, p)
		}
		count[p]++
	}
	c := Counters{Launched: int64(n)}
	for _, p := range order {
		c.addProgram(p, count[p])
	}
	return c
}

// addProgram adds n threadgroups running p: exited or active, and their work.
func (c *Counters) addProgram(p *isa.Program, n int64) {
	if p.Exit {
		c.Exited += n
	} else {
		c.Active += n
	}
	c.Work.Add(p.Counts().Scale(n))
	c.Skipped.Add(p.Skipped.Scale(n))
}
