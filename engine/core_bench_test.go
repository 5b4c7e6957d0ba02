package engine

import (
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/tile"
)

// calibratedPaths are the two calibrated chips, each on its default path:
// the cases the core-model tests run.
var calibratedPaths = []struct {
	chip string
	path tile.Path
}{{"M1 Pro 16-core GPU", tile.Simdgroup}, {"M5 10-core GPU", tile.Tensor}}

// headlineBuilder returns a chip and the program builder of the headline
// shape (128 experts, top 8, m = 768, k = 2048, n = 512, q4_0) for a variant
// on a path, for the core-model tests and benchmarks.
func headlineBuilder(tb testing.TB, chipName string, v tile.Variant, path tile.Path) (*chips.Chip, *tile.Builder, int) {
	tb.Helper()
	chip, err := chips.Lookup(chipName)
	if err != nil {
		tb.Fatal(err)
	}
	p := tile.HeadlineProblem(512)
	k := tile.Kernel{Variant: v, Path: path}
	bl, err := tile.NewBuilder(p, k)
	if err != nil {
		tb.Fatal(err)
	}
	return chip, bl, p.K / k.NK
}

// BenchmarkCoreMix measures one core mix (six resident full-tile threadgroups
// of the headline shape) with a fresh cache per iteration: the rate of the
// instruction-level core model itself, on each path. The plain cases also
// measure the threadgroup class the mix is made of (its overhead: one
// threadgroup alone, whose simdgroups interleave far more predictably), as a
// new composition costs a run; "-mix" times the six-threadgroup mix alone and
// "-class" the class alone, so a change can be seen on each part.
func BenchmarkCoreMix(b *testing.B) {
	const (
		both = iota
		mixOnly
		classOnly
	)
	for _, tc := range []struct {
		name, chip string
		path       tile.Path
		part       int
	}{
		{"simdgroup", "M1 Pro 16-core GPU", tile.Simdgroup, both},
		{"tensor", "M5 10-core GPU", tile.Tensor, both},
		{"simdgroup-mix", "M1 Pro 16-core GPU", tile.Simdgroup, mixOnly},
		{"simdgroup-class", "M1 Pro 16-core GPU", tile.Simdgroup, classOnly},
	} {
		b.Run(tc.name, func(b *testing.B) {
			chip, bl, steps := headlineBuilder(b, tc.chip, tile.Upstream(), tc.path)
			k := bl.Kernel
			prog := bl.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1, Steps: steps})
			m := newModel(chip, true)
			mem := newProgMem(prog, 4)
			var instr int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if tc.part == mixOnly {
					b.StopTimer()
				}
				cc := newCoreCache(m, 6)
				id, n := cc.class(prog, false, mem, prog, mem)
				switch tc.part {
				case mixOnly:
					n = 0
					b.StartTimer()
				case classOnly:
					instr += n
					continue
				}
				ids := []int{id, id, id, id, id, id}
				_, m := cc.mix(appendMixKey(nil, ids), ids, fine)
				instr += n + m
			}
			b.ReportMetric(float64(instr)/b.Elapsed().Seconds()/1e6, "M-instr/s")
		})
	}
}
