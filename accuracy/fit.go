package accuracy

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// FitResult is a fit's outcome.
type FitResult struct {
	Params    []FittedParam
	Before    *Report // with the starting values
	After     *Report // with the fitted values
	CV        []CVFold
	CVMAPE    float64 // mean over folds of the held-out rows' MAPE
	Evals     int
	Objective float64
	Chips     []*chips.Chip // the chips with fitted values
}

// FittedParam is one fitted value.
type FittedParam struct {
	FitParam
	Start, Value float64
}

// CVFold is one leave-one-problem-out fold: the held-out problem's rows
// predicted by parameters fitted to all other rows.
type CVFold struct {
	Chip     string
	Problem  tile.Problem      // the held-out MUL_MAT_ID problem, or
	Dense    tile.DenseProblem // the held-out MUL_MAT problem
	Rows     int
	MAPE     float64 // of the held-out rows
	DeltaErr float64 // mean |delta error| of the held-out pairs, pp
}

// MaxEvals bounds FitOptions.MaxEvals: an evaluation times every row (about
// a second on the calibration sets), and --cv repeats the fit per problem.
const MaxEvals = 1000

// CheckFlags checks the options as simrun fit's flags give them, with
// errors naming the flags (--max-evals, --delta-weight).
func (o FitOptions) CheckFlags() error {
	if !(o.DeltaWeight > 0 && o.DeltaWeight <= 100) {
		return fmt.Errorf("--delta-weight = %g: must be in (0, 100]", o.DeltaWeight)
	}
	if o.MaxEvals < 0 || o.MaxEvals > MaxEvals {
		return fmt.Errorf("--max-evals = %d: must be in [0, %d] (an evaluation times every row, about a second on the calibration sets)", o.MaxEvals, MaxEvals)
	}
	return nil
}

// FitOptions control a fit.
type FitOptions struct {
	Sim      sim.Options
	MaxEvals int  // objective evaluations per fit, start, grid and simplex together, in [0, MaxEvals] (0: the full grid and 40 simplex evaluations per parameter, at most MaxEvals)
	CV       bool // run leave-one-problem-out cross-validation
	// DeltaWeight weighs the variant-delta errors against the absolute errors
	// in the loss (0: 1).
	DeltaWeight float64
}

// independentRows counts, per chip, the rows that carry independent information
// (modelled absolute rows and relative rows).
func independentRows(cases []Case) map[string]int {
	m := map[string]int{}
	for _, c := range cases {
		if c.Modelled && (c.Row.HasTime || c.Row.HasDelta) {
			m[c.Chip.Name]++
		}
	}
	return m
}

// Fit adjusts the named chip parameters to the measured cases: it minimises the
// mean squared log error of absolute rows plus the mean squared error of the
// variant deltas (as fractions), with Nelder-Mead over bounded parameters. It
// refuses more parameters per chip than a third of that chip's independent rows.
func Fit(cases []Case, params []FitParam, opt FitOptions) (*FitResult, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("fit: no --param given")
	}
	rows := independentRows(cases)
	perChip := map[string]int{}
	for _, p := range params {
		perChip[p.Chip]++
	}
	for _, chip := range slices.Sorted(maps.Keys(perChip)) { // one error whatever the map's order
		if n := perChip[chip]; 3*n > rows[chip] {
			return nil, fmt.Errorf("fit: %d parameters for %s but only %d independent rows: at most a third of the rows (%d) may be fitted", n, chip, rows[chip], rows[chip]/3)
		}
	}
	if opt.MaxEvals < 0 || opt.MaxEvals > MaxEvals {
		return nil, fmt.Errorf("fit: max evaluations = %d: must be in [0, %d]", opt.MaxEvals, MaxEvals)
	}
	if opt.MaxEvals == 0 {
		opt.MaxEvals = defaultEvals(len(params))
	}
	if opt.DeltaWeight <= 0 {
		opt.DeltaWeight = 1
	}
	start := make([]float64, len(params))
	chipList := chipsOf(cases)
	for i, p := range params {
		v, err := chipList[p.Chip].Param(p.Name)
		if err != nil {
			return nil, err
		}
		start[i] = v.Value
	}
	res := &FitResult{}
	var err error
	if res.Before, err = evaluate(cases, params, start, opt.Sim); err != nil {
		return nil, err
	}
	best, obj, evals, err := minimize(cases, params, start, opt)
	if err != nil {
		return nil, err
	}
	res.Evals, res.Objective = evals, obj
	if res.After, err = evaluate(cases, params, best, opt.Sim); err != nil {
		return nil, err
	}
	for i, p := range params {
		res.Params = append(res.Params, FittedParam{FitParam: p, Start: start[i], Value: best[i]})
	}
	res.Chips, err = withParams(cases, params, best)
	if err != nil {
		return nil, err
	}
	if opt.CV {
		if err := crossValidate(cases, params, start, opt, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func chipsOf(cases []Case) map[string]*chips.Chip {
	m := map[string]*chips.Chip{}
	for _, c := range cases {
		if c.Chip != nil {
			m[c.Chip.Name] = c.Chip
		}
	}
	return m
}

// withParams returns copies of the cases' chips with the parameter values set.
func withParams(cases []Case, params []FitParam, vals []float64) ([]*chips.Chip, error) {
	orig := chipsOf(cases)
	names := slices.Sorted(maps.Keys(orig))
	var out []*chips.Chip
	for _, n := range names {
		c := orig[n].Clone()
		for i, p := range params {
			if p.Chip != n {
				continue
			}
			cur, _ := c.Param(p.Name)
			cur.Value = vals[i]
			if err := c.SetParam(p.Name, cur); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// evaluate validates the cases with the parameter values applied.
func evaluate(cases []Case, params []FitParam, vals []float64, opt sim.Options) (*Report, error) {
	chipList, err := withParams(cases, params, vals)
	if err != nil {
		return nil, err
	}
	byName := map[string]*chips.Chip{}
	for _, c := range chipList {
		byName[c.Name] = c
	}
	cs := make([]Case, len(cases))
	for i, c := range cases {
		cs[i] = c
		if c.Chip != nil {
			cs[i].Chip = byName[c.Chip.Name]
		}
	}
	return Validate(cs, sim.NewSimulator(), opt)
}

// objective is the fit's loss of a report: the mean squared log error of the
// absolute rows plus deltaWeight times the mean squared error of the variant
// deltas (as fractions).
func objective(rep *Report, deltaWeight float64) float64 {
	var sa, sd float64
	na, nd := 0, 0
	for _, r := range rep.Rows {
		if r.Modelled && r.Row.HasTime {
			l := math.Log(r.PredictedUs / r.MeasuredUs)
			sa += l * l
			na++
		}
	}
	for _, p := range rep.Pairs {
		d := p.ErrorPP / 100
		sd += d * d
		nd++
	}
	obj := 0.0
	if na > 0 {
		obj += sa / float64(na)
	}
	if nd > 0 {
		obj += deltaWeight * sd / float64(nd)
	}
	return obj
}

// The optimizer works on unbounded coordinates: value = lo + (hi-lo)·σ(x).
func toValue(p FitParam, x float64) float64 { return p.Lo + (p.Hi-p.Lo)/(1+math.Exp(-x)) }
func toX(p FitParam, v float64) float64 {
	f := (v - p.Lo) / (p.Hi - p.Lo)
	f = math.Min(math.Max(f, 1e-6), 1-1e-6)
	return math.Log(f / (1 - f))
}

// gridPoints returns the points per dimension of the coarse search that seeds
// the simplex: the model runs in whole cycles, so the loss has plateaus that can
// stall a simplex started far from the minimum.
func gridPoints(d int) int {
	switch d {
	case 1:
		return 9
	case 2:
		return 6
	case 3:
		return 4
	}
	return 3
}

// defaultEvals is the evaluation budget of a fit of d parameters when
// --max-evals is 0: the start, the full grid and 40 simplex evaluations per
// parameter, at most MaxEvals.
func defaultEvals(d int) int {
	return min(1+pow(gridPoints(d), d)+40*d, MaxEvals)
}

// pow returns b^e, saturated at MaxEvals+1 (the grids compared against a
// budget of at most MaxEvals evaluations).
func pow(b, e int) int {
	r := 1
	for range e {
		if r *= b; r > MaxEvals {
			return MaxEvals + 1
		}
	}
	return r
}

// gridSize returns the points per dimension of the coarse grid a budget of
// evals evaluations affords for d parameters: the most, up to gridPoints(d),
// that leave the start's evaluation and a first simplex (d+1 points) within
// the budget; 0 when not even one point fits.
func gridSize(d, evals int) int {
	for g := gridPoints(d); g > 0; g-- {
		if 1+pow(g, d)+d+1 <= evals {
			return g
		}
	}
	return 0
}

// minimize fits params to cases from start (search, with the fit's loss as
// the objective).
func minimize(cases []Case, params []FitParam, start []float64, opt FitOptions) ([]float64, float64, int, error) {
	loss := func(v []float64) (float64, error) {
		rep, err := evaluate(cases, params, v, opt.Sim)
		if err != nil {
			return 0, err
		}
		return objective(rep, opt.DeltaWeight), nil
	}
	return search(loss, params, start, opt.MaxEvals)
}

// search minimises loss over the parameters' box from start: a coarse grid,
// then a Nelder-Mead simplex, in at most maxEvals calls of loss in all (the
// start, the grid and the simplex). It returns the best values, their loss and
// the calls made.
func search(loss func([]float64) (float64, error), params []FitParam, start []float64, maxEvals int) ([]float64, float64, int, error) {
	x0 := make([]float64, len(params))
	for i, p := range params {
		x0[i] = toX(p, start[i])
	}
	vals := func(x []float64) []float64 {
		v := make([]float64, len(x))
		for i, p := range params {
			v[i] = toValue(p, x[i])
		}
		return v
	}
	var evalErr error
	evals := 0
	problem := optimize.Problem{Func: func(x []float64) float64 {
		evals++
		f, err := loss(vals(x))
		if err != nil {
			evalErr = err
			return math.Inf(1)
		}
		return f
	}}
	best := problem.Func(x0)
	// coarse grid in value space, keeping the start if it is better
	g := gridSize(len(params), maxEvals)
	idx := make([]int, len(params))
	for g > 0 && evalErr == nil {
		x := make([]float64, len(params))
		for i, p := range params {
			x[i] = toX(p, p.Lo+(float64(idx[i])+0.5)/float64(g)*(p.Hi-p.Lo))
		}
		if f := problem.Func(x); f < best {
			best, x0 = f, x
		}
		i := 0
		for ; i < len(idx); i++ {
			if idx[i]++; idx[i] < g {
				break
			}
			idx[i] = 0
		}
		if i == len(idx) {
			break
		}
	}
	if evalErr != nil {
		return nil, 0, evals, evalErr
	}
	left := maxEvals - evals
	if left <= 0 {
		return vals(x0), best, evals, nil
	}
	settings := &optimize.Settings{FuncEvaluations: left, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-4, Iterations: 20}}
	r, err := optimize.Minimize(problem, x0, settings, &optimize.NelderMead{SimplexSize: 4.0 / float64(max(g, 1))})
	if evalErr != nil {
		return nil, 0, evals, evalErr
	}
	if err != nil && r == nil {
		return nil, 0, evals, err
	}
	if r.F > best { // the simplex never beat its seed
		return vals(x0), best, evals, nil
	}
	return vals(r.X), r.F, evals, nil
}

// Record returns the provenance of a fit for the chip named chip.
func (r *FitResult) Record(chip, command string, files []string) *chips.CalibrationRecord {
	rec := &chips.CalibrationRecord{Command: command, Files: files, CVMAPE: r.CVMAPE}
	for _, p := range r.Params {
		if p.Chip == chip {
			rec.Params = append(rec.Params, chips.FittedValue{Name: p.Name, Start: p.Start, Value: p.Value})
		}
	}
	var sum, maxd float64
	for _, row := range r.After.Rows {
		if row.Chip == nil || row.Chip.Name != chip || !row.Modelled || !row.Row.HasTime {
			continue
		}
		n, _ := row.Row.Params.Get("n")
		rec.Residuals = append(rec.Residuals, chips.CalibrationRow{
			Row:        fmt.Sprintf("%s:%d n=%s %s", row.Row.Source, row.Row.Line, n, row.Variant.Name),
			MeasuredUs: row.MeasuredUs, ErrorPct: math.Round(row.ErrorPct*100) / 100})
		sum += math.Abs(row.ErrorPct)
		rec.Rows++
	}
	for _, p := range r.After.Pairs {
		if p.Chip == chip {
			maxd = math.Max(maxd, math.Abs(p.ErrorPP))
		}
	}
	if rec.Rows > 0 {
		rec.MAPE = math.Round(sum/float64(rec.Rows)*100) / 100
	}
	rec.MaxDelta = math.Round(maxd*100) / 100
	return rec
}
