package trace

import (
	"fmt"
	"io"
	"math"

	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/tile"
)

// EmulationError is how far an emulated dst is from its float64 references
// (golden.Reference).
type EmulationError struct {
	MaxAbsF64   float64 // max |dst - ref_f64|: what the half staging costs
	MaxAbsF16In float64 // max |dst - ref_f16in|
	// Worst is the largest |dst - ref_f16in| in units of the float32
	// accumulation bound (golden.AccumulationTolerance): at most 1 when the
	// values are right; infinite for a nonzero value where every product is
	// zero, NaN for a NaN.
	Worst float64
}

// CompareEmulation measures dst, a mul_mat_id output with reduction length k,
// against its references.
func CompareEmulation(k int, dst []float32, ref golden.References) EmulationError {
	var e EmulationError
	for i, v := range dst {
		e.MaxAbsF64 = math.Max(e.MaxAbsF64, math.Abs(float64(v)-float64(ref.F64[i])))
		d := math.Abs(float64(v) - float64(ref.F16In[i]))
		e.MaxAbsF16In = math.Max(e.MaxAbsF16In, d)
		switch tol := golden.AccumulationTolerance(k, ref.SumAbs[i]); {
		case tol > 0:
			e.Worst = math.Max(e.Worst, d/tol) // a NaN stays NaN
		case d != 0: // every product is zero, so the exact sum is: any other value is wrong
			e.Worst = math.Inf(1)
		}
	}
	return e
}

// WriteEmulation prints an emulation under its title: the counters, the error
// against the references and the multiply-accumulates the matrix ops
// executed, which it returns (8x8x8 and 16x16x16: padding rows included,
// skipped half-tiles not).
func WriteEmulation(w io.Writer, title string, c tile.Counters, e EmulationError) (float64, error) {
	fmt.Fprintln(w, title)
	fmt.Fprintln(w, "counters:")
	if err := WriteCounters(w, c); err != nil {
		return 0, err
	}
	fmt.Fprintln(w, "error:")
	fmt.Fprintf(w, "  max |dst - ref_f64|     %.4g   (float64 sum of float32 weights x activations: half staging costs this)\n", e.MaxAbsF64)
	fmt.Fprintf(w, "  max |dst - ref_f16in|   %.4g   (%.3g x the float32 accumulation bound (K+1)·u·Σ|w·b|·(1+K·u), u = 2^-24)\n", e.MaxAbsF16In, e.Worst)
	macs := float64(c.Work.MMA8)*8*8*8 + float64(c.Work.MMA16)*16*16*16
	_, err := fmt.Fprintf(w, "emulated %.3g MACs (padding included, skipped work not)\n", macs)
	return macs, err
}
