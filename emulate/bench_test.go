package emulate_test

import (
	"testing"

	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/tile"
)

// BenchmarkEmulate emulates the 128-expert top-8, m=768, k=2048, n=512 q4_0
// case on the simdgroup path on one core and reports multiply-accumulates per
// second (padding rows included: they are executed).
func BenchmarkEmulate(b *testing.B) {
	p := tile.HeadlineProblem(512)
	t := emulate.RandomTensors(p, 1)
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	b.ResetTimer()
	var macs float64
	for i := 0; i < b.N; i++ {
		r, err := emulate.MulMatID(p, k, t, 1)
		if err != nil {
			b.Fatal(err)
		}
		macs += float64(r.Counters.Work.MMA8) * 512
	}
	b.ReportMetric(macs/b.Elapsed().Seconds()/1e9, "GMAC/s/core")
}
