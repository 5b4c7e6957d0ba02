package accuracy

import (
	"cmp"
	"slices"

	"github.com/metalsim/metalsim/tile"
)

// crossValidate holds out each problem (every variant of one chip, path and
// shape) in turn, fits the others, and predicts the held-out rows.
func crossValidate(cases []Case, params []FitParam, start []float64, opt FitOptions, res *FitResult) error {
	type fold struct {
		chip  string
		path  tile.Path
		prob  tile.Problem
		dense tile.DenseProblem
	}
	key := func(c Case) fold { return fold{c.Chip.Name, c.Path, c.Problem, c.Dense} }
	var folds []fold
	seen := map[fold]bool{}
	for _, c := range cases {
		if !c.Modelled {
			continue
		}
		f := key(c)
		if !seen[f] {
			seen[f] = true
			folds = append(folds, f)
		}
	}
	slices.SortFunc(folds, func(a, b fold) int {
		return cmp.Or(cmp.Compare(a.chip, b.chip), cmp.Compare(a.path, b.path), cmp.Compare(a.prob.Tokens, b.prob.Tokens),
			cmp.Compare(a.prob.String(), b.prob.String()), cmp.Compare(a.dense.N, b.dense.N), cmp.Compare(a.dense.String(), b.dense.String()))
	})
	sub := opt
	sub.CV = false
	var sum float64
	for _, f := range folds {
		var train, test []Case
		for _, c := range cases {
			if c.Modelled && key(c) == f {
				test = append(test, c)
			} else {
				train = append(train, c)
			}
		}
		// parameters of a chip with no training rows left stay at their start
		var ps []FitParam
		var st []float64
		rows := independentRows(train)
		for i, p := range params {
			if rows[p.Chip] > 0 {
				ps = append(ps, p)
				st = append(st, start[i])
			}
		}
		vals := start
		if len(ps) > 0 {
			best, _, _, err := minimize(train, ps, st, sub)
			if err != nil {
				return err
			}
			vals = append([]float64(nil), start...)
			for i, p := range params {
				for j, q := range ps {
					if p == q {
						vals[i] = best[j]
					}
				}
			}
		}
		rep, err := evaluate(test, params, vals, opt.Sim)
		if err != nil {
			return err
		}
		cf := CVFold{Chip: f.chip, Problem: f.prob, Dense: f.dense, Rows: rep.Summary.Modelled, MAPE: rep.Summary.MAPE, DeltaErr: rep.Summary.MeanDeltaPP}
		res.CV = append(res.CV, cf)
		sum += cf.MAPE
	}
	if len(res.CV) > 0 {
		res.CVMAPE = sum / float64(len(res.CV))
	}
	return nil
}
