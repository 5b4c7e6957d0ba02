package accuracy

import (
	"cmp"
	"math"
	"slices"

	"github.com/metalsim/metalsim/tile"
)

// Summary aggregates the errors of a report.
type Summary struct {
	Rows        int     // rows read
	Modelled    int     // absolute rows with a prediction
	Relative    int     // relative rows (a measured delta only) with a prediction
	NotModelled int     // rows listed with a reason instead
	MAPE        float64 // mean |error| %
	WMAPE       float64 // Σ|pred - meas| / Σ meas, %
	MaxErrPct   float64 // largest |error| %
	R2Log       float64 // R² of log(predicted) against log(measured)
	Pairs       int
	MaxDeltaPP  float64 // largest |delta error|, percentage points
	MeanDeltaPP float64 // mean |delta error|
}

// ChipSummary is the summary of one chip and path.
type ChipSummary struct {
	Chip string
	Path tile.Path
	Summary
}

func summarize(rows []RowResult, prs []PairResult) Summary {
	s := Summary{Rows: len(rows), Pairs: len(prs)}
	var sumAbs, sumMeas, sumAbsDiff float64
	var lx, ly []float64
	for _, r := range rows {
		if !r.Modelled {
			s.NotModelled++
			continue
		}
		if !r.Row.HasTime {
			s.Relative++
			continue
		}
		s.Modelled++
		e := math.Abs(r.ErrorPct)
		sumAbs += e
		s.MaxErrPct = math.Max(s.MaxErrPct, e)
		sumMeas += r.MeasuredUs
		sumAbsDiff += math.Abs(r.PredictedUs - r.MeasuredUs)
		lx = append(lx, math.Log(r.MeasuredUs))
		ly = append(ly, math.Log(r.PredictedUs))
	}
	if s.Modelled > 0 {
		s.MAPE = sumAbs / float64(s.Modelled)
		s.WMAPE = 100 * sumAbsDiff / sumMeas
		s.R2Log = r2(lx, ly)
	}
	var sumPP float64
	for _, p := range prs {
		e := math.Abs(p.ErrorPP)
		sumPP += e
		s.MaxDeltaPP = math.Max(s.MaxDeltaPP, e)
	}
	if len(prs) > 0 {
		s.MeanDeltaPP = sumPP / float64(len(prs))
	}
	return s
}

// r2 is the coefficient of determination of predictions y against
// measurements x: 1 - Σ(y-x)² / Σ(x-mean x)².
func r2(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ssRes, ssTot float64
	for i := range x {
		ssRes += (y[i] - x[i]) * (y[i] - x[i])
		ssTot += (x[i] - mean) * (x[i] - mean)
	}
	if ssTot == 0 {
		return math.NaN()
	}
	return 1 - ssRes/ssTot
}

func perChip(rows []RowResult, prs []PairResult) []ChipSummary {
	type key struct {
		chip string
		path tile.Path
	}
	byKey := map[key][]RowResult{}
	for _, r := range rows {
		if r.Chip == nil {
			continue
		}
		k := key{r.Chip.Name, r.Path}
		byKey[k] = append(byKey[k], r)
	}
	var out []ChipSummary
	for k, rs := range byKey {
		var ps []PairResult
		for _, p := range prs {
			if p.Chip == k.chip && p.Path == k.path {
				ps = append(ps, p)
			}
		}
		out = append(out, ChipSummary{Chip: k.chip, Path: k.path, Summary: summarize(rs, ps)})
	}
	slices.SortFunc(out, func(a, b ChipSummary) int {
		return cmp.Or(cmp.Compare(a.Chip, b.Chip), cmp.Compare(a.Path, b.Path))
	})
	return out
}
