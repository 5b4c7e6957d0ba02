package accuracy

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// RowResult is one measured row next to its prediction.
type RowResult struct {
	Case
	MeasuredUs  float64     // absolute rows
	PredictedUs float64     // modelled absolute rows
	ErrorPct    float64     // (predicted - measured) / measured * 100
	Result      *sim.Result // the prediction's details (modelled rows)
}

// PairResult compares a variant with its baseline on the same chip, path and
// problem: measured (from two absolute rows, or one relative row) and predicted
// deltas.
type PairResult struct {
	Chip              string
	Path              tile.Path
	Kernel            string            // the Metal kernel of the variant's row
	BaselineKernel    string            // the Metal kernel of the baseline's row (Kernel unless a row names another)
	Problem           tile.Problem      // MUL_MAT_ID rows
	Dense             tile.DenseProblem // MUL_MAT rows
	Baseline, Variant string
	MeasuredDeltaPct  float64
	PredictedDeltaPct float64
	ErrorPP           float64 // predicted - measured, percentage points
	Source            string
	Line              int
}

// Report is the outcome of a validation.
type Report struct {
	Rows    []RowResult
	Pairs   []PairResult
	Summary Summary
	// PerChip summarises each chip and path separately ("M1 Pro 16-core
	// GPU/simdgroup"), in name order.
	PerChip []ChipSummary
}

// Validate predicts every modelled case (rows in parallel; the result is the
// same for any parallelism) and compares with the measurements.
func Validate(cases []Case, s *sim.Simulator, opt sim.Options) (*Report, error) {
	rep := &Report{Rows: make([]RowResult, len(cases))}
	// predictions needed: each modelled case, plus the baseline of relative rows
	type job struct {
		key predKey
		c   Case
	}
	need := map[predKey]*sim.Result{}
	var jobs []job
	add := func(c Case, kernel string, v tile.Variant) {
		k := keyOf(c, kernel, v)
		if _, ok := need[k]; ok {
			return
		}
		need[k] = nil
		cc := c
		cc.Kernel, cc.Variant = kernel, v
		jobs = append(jobs, job{k, cc})
	}
	for _, c := range cases {
		if !c.Modelled {
			continue
		}
		add(c, c.Kernel, c.Variant)
		if c.Row.HasDelta {
			add(c, c.BaselineKernel, c.Baseline)
		}
	}
	results := make([]*sim.Result, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				results[i], errs[i] = predict(s, j.c, opt)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: line %d: %w", j.c.Row.Source, j.c.Row.Line, errs[i])
		}
		need[j.key] = results[i]
	}
	for i, c := range cases {
		rr := RowResult{Case: c, MeasuredUs: c.Row.USPerRun}
		if c.Modelled {
			rr.Result = need[keyOf(c, c.Kernel, c.Variant)]
			if c.Row.HasTime {
				rr.PredictedUs = rr.Result.TotalUs
				rr.ErrorPct = 100 * (rr.PredictedUs - rr.MeasuredUs) / rr.MeasuredUs
			}
		}
		rep.Rows[i] = rr
	}
	rep.Pairs = pairs(rep.Rows, need)
	rep.Summary = summarize(rep.Rows, rep.Pairs)
	rep.PerChip = perChip(rep.Rows, rep.Pairs)
	return rep, nil
}

type predKey struct {
	chip    *chips.Chip
	kernel  string
	path    tile.Path
	problem tile.Problem
	dense   tile.DenseProblem
	variant string
	routing string // a MUL_MAT_ID row's routing (Case.Routing), "" for the default
}

// keyOf returns the prediction a case run as kernel with variant v needs.
// The variant and the path change only the mat-mat kernels (mul_mm_id and
// mul_mm, which take the knobs: tile.Knob.Applies): the mat-vec kernels' rows
// share one prediction, so a relative row of one, both sides on one kernel,
// compares the same time twice.
func keyOf(c Case, kernel string, v tile.Variant) predKey {
	k := predKey{chip: c.Chip, kernel: kernel, path: c.Path, problem: c.Problem, dense: c.Dense, variant: v.Name}
	if c.Routing != nil {
		k.routing = c.Routing.Name()
	}
	if kernel != KernelMulMMID && kernel != KernelMulMM {
		k.variant, k.path = "", tile.Simdgroup
	}
	return k
}

// predict times the kernel the host runs for a case.
func predict(s *sim.Simulator, c Case, opt sim.Options) (*sim.Result, error) {
	if c.Routing != nil {
		opt.Routing = c.Routing
	}
	switch c.Kernel {
	case KernelMulMMID:
		return s.Run(c.Problem, tile.Kernel{Variant: c.Variant, Path: c.Path}, c.Chip, opt)
	case KernelMulMVID:
		return s.RunMulMVID(c.Problem, c.Chip, opt)
	case KernelMulMM, KernelMulMV, KernelMulMVExt:
		// the row's variant applies where the kernel has its knobs (mul_mm)
		kern, err := tile.ParseMetalKernel(c.Kernel)
		if err != nil {
			return nil, err
		}
		return s.RunWorkload(tile.DenseWorkload(c.Dense), tile.Kernel{Variant: c.Variant, Path: c.Path}, kern, c.Chip, opt)
	}
	return nil, fmt.Errorf("kernel %q: not modelled", c.Kernel)
}

// pairs builds the variant-vs-baseline comparisons: every absolute non-baseline
// row with an "upstream" row of the same chip, path and problem, and every
// relative row.
func pairs(rows []RowResult, preds map[predKey]*sim.Result) []PairResult {
	var out []PairResult
	for _, r := range rows {
		if !r.Modelled {
			continue
		}
		if r.Row.HasDelta {
			base := preds[keyOf(r.Case, r.BaselineKernel, r.Baseline)]
			pr := PairResult{Chip: r.Chip.Name, Path: r.Path, Kernel: r.Kernel, BaselineKernel: r.BaselineKernel, Problem: r.Problem, Dense: r.Dense,
				Baseline: r.Baseline.Name, Variant: r.Variant.Name,
				MeasuredDeltaPct: r.Row.DeltaPct, PredictedDeltaPct: 100 * (r.Result.TotalUs/base.TotalUs - 1),
				Source: r.Row.Source, Line: r.Row.Line}
			pr.ErrorPP = pr.PredictedDeltaPct - pr.MeasuredDeltaPct
			out = append(out, pr)
			continue
		}
		if r.Variant.Name == "upstream" || !r.Row.HasTime {
			continue
		}
		// the upstream row of the problem on the same kernel, else on
		// another (a row of a patched build against llama.cpp's)
		bi := -1
		for i, b := range rows {
			if !b.Modelled || !b.Row.HasTime || b.Variant.Name != "upstream" || b.Chip != r.Chip || b.Path != r.Path ||
				b.Problem != r.Problem || b.Dense != r.Dense {
				continue
			}
			if bi < 0 || b.Kernel == r.Kernel && rows[bi].Kernel != r.Kernel {
				bi = i
			}
		}
		if bi >= 0 {
			b := rows[bi]
			pr := PairResult{Chip: r.Chip.Name, Path: r.Path, Kernel: r.Kernel, BaselineKernel: b.Kernel, Problem: r.Problem, Dense: r.Dense, Baseline: "upstream", Variant: r.Variant.Name,
				MeasuredDeltaPct:  100 * (r.MeasuredUs/b.MeasuredUs - 1),
				PredictedDeltaPct: 100 * (r.PredictedUs/b.PredictedUs - 1),
				Source:            r.Row.Source, Line: r.Row.Line}
			pr.ErrorPP = pr.PredictedDeltaPct - pr.MeasuredDeltaPct
			out = append(out, pr)
		}
	}
	return out
}
