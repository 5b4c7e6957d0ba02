package accuracy

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestAccuracyByKernel: the accuracy document lists the error per kernel from
// hand-made results, and "no measurement yet" for kernels without timed rows.
func TestAccuracyByKernel(t *testing.T) {
	row := timedRow(t, "M1 Pro 16-core GPU")
	rep := &Report{Rows: []RowResult{row(KernelMulMMID, 2), row(KernelMulMMID, -4), row(KernelMulMV, 1)}}
	var b strings.Builder
	rep.writeByKernel(&b)
	out := b.String()
	for _, want := range []string{
		"| `mul_mm_id` | M1 Pro 16-core GPU / simdgroup | 2 | 3.00 | 4.00 |",
		"| `mul_mv` | M1 Pro 16-core GPU / simdgroup | 1 | 1.00 | 1.00 |",
		"| `mul_mm` | — | 0 | no measurement yet | |",
		"| `mul_mv_id` | — | 0 | no measurement yet | |",
		"| `mul_mv_ext` | — | 0 | no measurement yet | |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// TestGoalsOnMulMMIDRows: docs/accuracy.md's goal table holds only the rows
// llama.cpp runs with mul_mm_id; a mul_mv_id row and its pair are left out.
func TestGoalsOnMulMMIDRows(t *testing.T) {
	row := timedRow(t, "M1 Pro 16-core GPU")
	m5 := chips.MustLookup("M5 10-core GPU")
	unmodelled := row(KernelMulMMID, 0)
	unmodelled.Chip, unmodelled.Path, unmodelled.Modelled = m5, tile.Tensor, false
	rep := &Report{
		Rows:  []RowResult{row(KernelMulMMID, 1), row(KernelMulMMID, -1), row(KernelMulMVID, 30), unmodelled},
		Pairs: []PairResult{{Chip: "M1 Pro 16-core GPU", Kernel: KernelMulMVID, ErrorPP: 20}},
	}
	var b strings.Builder
	if err := rep.WriteAccuracyDoc(&b, "test", nil); err != nil {
		t.Fatal(err)
	}
	want := "| M1 Pro 16-core GPU / simdgroup | 2 | 1.00 | ≤ 2 | 1.00 | "
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "| 0 | – | ± 1.5 | yes |") {
		t.Errorf("goal table: want the two mul_mm_id rows only (%q) and no pairs, met:\n%s", want, b.String())
	}
	// a chip whose mul_mm_id rows are all unmodelled has no errors, not zero ones
	if want := "| M5 10-core GPU / tensor | 0 | – | ≤ 5 | – | – | 0 | – | ± 3.0 | no rows |"; !strings.Contains(b.String(), want) {
		t.Errorf("goal table: want %q in\n%s", want, b.String())
	}
}

// timedRow returns a maker of hand-made modelled rows with a measured time on
// chip: a kernel and an error (measured 100 µs).
func timedRow(t *testing.T, chip string) func(kernel string, errPct float64) RowResult {
	t.Helper()
	c := chips.MustLookup(chip)
	return func(kernel string, errPct float64) RowResult {
		var r RowResult
		r.Chip, r.Kernel, r.Modelled, r.Row.HasTime, r.ErrorPct = c, kernel, true, true, errPct
		r.MeasuredUs, r.PredictedUs, r.Result = 100, 100+errPct, &sim.Result{}
		return r
	}
}
