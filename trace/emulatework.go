package trace

import (
	"fmt"
	"math"

	"github.com/metalsim/metalsim/tile"
)

// DefaultMaxEmulateMACs is the multiply-accumulates emulate accepts when
// --max-macs is not given: the slowest kernel to emulate per estimated MAC
// (mul_mv_id, whose reference dequantizes a weight row per pair) runs about
// 4.3e7 a second on one core of the 2-core reference machine, so the largest
// run accepted by default takes under a minute (docs/performance.md,
// "Bounded work").
const DefaultMaxEmulateMACs = 2e9

// EmulateMACs returns an upper bound of the multiply-accumulates emulating
// workload w as kernel kern (kernel k's tile where kern takes one) executes,
// before it runs: mul_mm_id's and mul_mm's full tiles, padding included (for
// mul_mm_id each expert's token tiles cover its tokens, n·n_used in all, plus
// one partial tile per expert, whatever the routing), and one per product
// (n·n_used·m·k, m·n·k) for the mat-vec kernels, which run no padding.
func EmulateMACs(w tile.Workload, kern tile.MetalKernel, k tile.Kernel) (float64, error) {
	p := asMoE(w)
	products := float64(p.Tokens) * float64(p.Used) * float64(p.M) * float64(p.K)
	switch kern {
	case tile.KernelMulMMID:
		full := make([]int32, p.Experts)
		for e := range full {
			full[e] = int32(p.Tokens)
		}
		plan, err := tile.NewPlan(p, k, full)
		if err != nil {
			return 0, err
		}
		tokenTiles := min(float64(p.Experts)*float64(plan.Grid[0]), math.Ceil(float64(p.Tokens)*float64(p.Used)/float64(k.NR1))+float64(p.Experts))
		return tokenTiles * float64(k.NR1) * float64(plan.Grid[1]) * float64(k.NR0) * float64(p.K), nil
	case tile.KernelMulMM:
		b, err := tile.NewMMVariantBuilder(w.Dense, k)
		if err != nil {
			return 0, err
		}
		g := b.Grid()
		nr0, nr1 := b.TileShape()
		return float64(g[0]) * float64(nr1) * float64(g[1]) * float64(nr0) * float64(g[2]) * float64(p.K), nil
	}
	return products, nil
}

// CheckEmulateMACs refuses a workload whose emulation would execute more
// than max multiply-accumulates (EmulateMACs; max <= 0: DefaultMaxEmulateMACs),
// with an error giving the estimate and the --max-macs that accepts it.
func CheckEmulateMACs(w tile.Workload, kern tile.MetalKernel, k tile.Kernel, max float64) error {
	if max <= 0 {
		max = DefaultMaxEmulateMACs
	}
	macs, err := EmulateMACs(w, kern, k)
	if err != nil {
		return err
	}
	if macs <= max {
		return nil
	}
	e := math.Pow(10, math.Floor(math.Log10(macs))-1) // two significant digits, rounded up
	return fmt.Errorf("estimated %.3g multiply-accumulates (n x n_used x m x k, the tiles' padding included); past the bound of %.3g (--max-macs; the slowest kernel emulates about 4.3e7 a second on a 2-core machine); --max-macs %.2g accepts it",
		macs, max, math.Ceil(macs/e)*e)
}
