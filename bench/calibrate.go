package bench

import (
	"errors"
	"fmt"
	"github.com/metalsim/metalsim/chips"
	"io"
	"math"
	"strings"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Calibration: the measured rows are priced once (Case: the test's profile
// on its chip), then the parameters are fitted over the profiles, which
// costs no simulation. One set of parameters serves every row: nothing is
// tuned per row, chip or model.

// Case is one measured row with its profile, or why it cannot be timed.
type Case struct {
	Row     Row
	Profile *Profile
	DRAMGBs float64
	Err     error // the row is not predicted (a weight type metalsim cannot time yet, ...)
}

// Cases prices every row: its preset with the row's file type on its chip
// (the upstream kernels on the row's path), llama-bench's default batch of
// 2048. Rows that cannot be timed keep their reason in Err; other failures
// are errors.
func Cases(rows []Row, opt sim.Options) ([]Case, error) {
	s := sim.NewSimulator()
	out := make([]Case, 0, len(rows))
	par, err := DefaultParams()
	if err != nil {
		return nil, err
	}
	type key struct{ chip, preset, ftype, path string }
	benches := map[key]*Bench{}
	for _, r := range rows {
		c := Case{Row: r}
		preset, err := r.Preset()
		if err != nil {
			return nil, err
		}
		chip, err := chips.Lookup(r.Chip)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", r.File, r.Line, err)
		}
		path, err := tile.ParsePath(r.Path)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", r.File, r.Line, err)
		}
		k := key{r.Chip, preset, r.FileType, r.Path}
		b := benches[k]
		if b == nil {
			m, err := FromPreset(preset, r.FileType)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", r.File, r.Line, err)
			}
			b, err = New(m, chip, tile.Kernel{Variant: tile.Upstream(), Path: path}, par, s, opt)
			if err != nil {
				if !errors.Is(err, ErrUntimed) {
					return nil, fmt.Errorf("%s:%d: %w", r.File, r.Line, err)
				}
				c.Err = err
				out = append(out, c)
				continue
			}
			benches[k] = b
		}
		c.DRAMGBs = b.pricer.rates.dramGBs
		if c.Profile, err = b.Profile(r.Test, Setup{Batch: 2048, Ubatch: r.Ubatch, FlashAttn: r.FA}); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", r.File, r.Line, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Predict returns a case's tokens per second with the parameters.
func (c Case) Predict(par Params) float64 { return c.predict(par, 1) }

// predict is Predict with the mat-vec kernels' time scaled.
func (c Case) predict(par Params, mvScale float64) float64 {
	return f(c.Row.Test.Tokens()) / (c.Profile.total(par, c.DRAMGBs, mvScale) * 1e-6)
}

// Ranges of the fitted parameters: the dispatch cost from none to 50 µs
// (well above any per-dispatch figure measured on Apple GPUs, a few µs); the
// bandwidth fraction from 0.5 to 1 (copy kernels reach 0.74 to 0.97 of the
// spec, docs/physics-evidence.md §4.1, and cannot beat the achievable
// streaming the chip file gives); a chip's mat-vec scale (a nuisance
// parameter, below) from half to twice the kernel model's time.
const (
	dispatchLo, dispatchHi = 0, 50
	fractionLo, fractionHi = 0.5, 1
	scaleLo, scaleHi       = 0.5, 2
)

// golden minimises a unimodal function on [lo, hi] to about 1e-4 of the
// interval.
func golden(lo, hi float64, fn func(float64) float64) float64 {
	const r = 0.6180339887498949
	a, b := lo, hi
	x1, x2 := b-r*(b-a), a+r*(b-a)
	f1, f2 := fn(x1), fn(x2)
	for i := 0; i < 40; i++ {
		if f1 < f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - r*(b-a)
			f1 = fn(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + r*(b-a)
			f2 = fn(x2)
		}
	}
	return (a + b) / 2
}

// sqLog is the sum of squared log ratios of predicted to measured rates: a
// factor too fast and the same factor too slow weigh the same.
func sqLog(cases []Case, par Params, mvScale float64) float64 {
	sum := 0.0
	for _, c := range cases {
		d := math.Log(c.predict(par, mvScale) / c.Row.TS)
		sum += d * d
	}
	return sum
}

// ChipScale is what a fit finds about one chip's mat-vec kernels: the factor
// their modelled time needed (the chip file's DRAM bandwidth error, for a
// streaming kernel) and the streaming bandwidth that implies.
type ChipScale struct {
	Chip       string  `json:"chip"`
	MatVec     float64 `json:"matvec_time_scale"`
	ImpliedGBs float64 `json:"implied_dram_gbs"`
	FileGBs    float64 `json:"chip_file_dram_gbs"`
}

// Fit fits the per-dispatch cost and the memory-bound ops' bandwidth
// fraction to the timed cases, minimising the squared log error of t/s. The
// generation rows are mostly weight streaming, and the chip files' DRAM
// bandwidths are estimates (spec × 0.78 for most chips): a chip whose file
// is 15 % off would pull the dispatch cost to a bound. So each chip gets a
// nuisance factor on its mat-vec kernels' time, fitted with the two global
// parameters and then discarded: the dispatch cost comes from the contrast
// between a chip's rows of different weight sizes (its intercept), not from
// its bandwidth. The factors are recorded (ChipScales) as what the
// measurements say of each chip file; predictions use the chip files as
// they are. EvalUs stays as in start.
func Fit(cases []Case, start Params, command, file string) (Params, []ChipScale, error) {
	byChip := map[string][]Case{}
	var chips []string
	timed := 0
	for _, c := range cases {
		if c.Err != nil {
			continue
		}
		if byChip[c.Row.Chip] == nil {
			chips = append(chips, c.Row.Chip)
		}
		byChip[c.Row.Chip] = append(byChip[c.Row.Chip], c)
		timed++
	}
	if timed < 2 {
		return start, nil, fmt.Errorf("fit: %d timed rows: need at least 2", timed)
	}
	par := start
	with := func(d, fr float64) Params {
		p := par
		p.DispatchUs.Value, p.MemFraction.Value = d, fr
		return p
	}
	bestScale := func(p Params, chip string) float64 {
		return golden(scaleLo, scaleHi, func(s float64) float64 { return sqLog(byChip[chip], p, s) })
	}
	objective := func(d, fr float64) float64 {
		p, sum := with(d, fr), 0.0
		for _, chip := range chips {
			sum += sqLog(byChip[chip], p, bestScale(p, chip))
		}
		return sum
	}
	bestD := func(fr float64) float64 {
		return golden(dispatchLo, dispatchHi, func(d float64) float64 { return objective(d, fr) })
	}
	fr := golden(fractionLo, fractionHi, func(fr float64) float64 { return objective(bestD(fr), fr) })
	d := bestD(fr)
	note := fmt.Sprintf("fitted by `%s` on %s (%d timed rows; docs/bench.md, \"Calibration\")", command, file, timed)
	par.DispatchUs = Param{Value: round(d, 2), Source: "calibrated", Note: note}
	par.MemFraction = Param{Value: round(fr, 3), Source: "calibrated", Note: note}
	var scales []ChipScale
	for _, chip := range chips {
		s := bestScale(par, chip)
		gbs := byChip[chip][0].DRAMGBs
		scales = append(scales, ChipScale{Chip: chip, MatVec: round(s, 3), ImpliedGBs: round(gbs/s, 1), FileGBs: gbs})
	}
	rec := &FitRecord{Command: command, File: file, Rows: timed, Skipped: len(cases) - timed, ChipScales: scales}
	sum := 0.0
	for _, c := range cases {
		if c.Err != nil {
			continue
		}
		p := c.Predict(par)
		e := 100 * (p/c.Row.TS - 1)
		sum += math.Log(p/c.Row.TS) * math.Log(p/c.Row.TS)
		rec.MAPE += math.Abs(e) / f(timed)
		rec.Residuals = append(rec.Residuals, Residual{Row: c.Row.String(), Measured: c.Row.TS, Predicted: round(p, 2), ErrorPct: round(e, 2)})
	}
	rec.RMSLog = round(math.Sqrt(sum/f(timed)), 4)
	rec.MAPE = round(rec.MAPE, 2)
	par.Fit = rec
	return par, scales, par.Validate()
}

func round(v float64, digits int) float64 {
	s := math.Pow(10, float64(digits))
	return math.Round(v*s) / s
}

// WriteTable prints the measured-vs-predicted table of docs/bench.md: one
// row per measurement (the untimed ones with their reason), then the mean
// absolute error by test kind.
func WriteTable(w io.Writer, cases []Case, par Params) error {
	var b strings.Builder
	b.WriteString("| chip | model | type | test | fa | ub | measured t/s | predicted t/s | error % | largest costs |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---|\n")
	type acc struct {
		sum float64
		n   int
	}
	kinds := map[string]*acc{"pp": {}, "tg": {}, "all": {}}
	for _, c := range cases {
		r := c.Row
		fa := "0"
		if r.FA {
			fa = "1"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %.2f | ", r.Chip, r.Model, r.FileType, r.Test.Name(), fa, r.Ubatch, r.TS)
		if c.Err != nil {
			fmt.Fprintf(&b, "not timed | | %s |\n", untimedReason(c.Err))
			continue
		}
		us, lines := c.Profile.Time(par, c.DRAMGBs)
		p := f(r.Test.Tokens()) / (us * 1e-6)
		e := 100 * (p/r.TS - 1)
		var top []string
		for _, l := range lines[:min(3, len(lines))] {
			top = append(top, fmt.Sprintf("%s %s %.0f %%", l.Op, l.Kernel, 100*l.Share))
		}
		fmt.Fprintf(&b, "%.2f | %+.1f | %s |\n", p, e, strings.Join(top, ", "))
		kind := "pp"
		if r.Test.Prompt == 0 {
			kind = "tg"
		}
		for _, k := range []string{kind, "all"} {
			kinds[k].sum += math.Abs(e)
			kinds[k].n++
		}
	}
	b.WriteString("\n| rows | timed | MAPE % |\n|---|---:|---:|\n")
	for _, k := range []string{"pp", "tg", "all"} {
		a := kinds[k]
		if a.n == 0 {
			fmt.Fprintf(&b, "| %s | 0 | |\n", k)
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f |\n", k, a.n, a.sum/f(a.n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// untimedReason names an untimed case's first weight metalsim cannot time.
func untimedReason(err error) string {
	var u *UntimedError
	if errors.As(err, &u) {
		return fmt.Sprintf("%s is %s, which ggml's Metal backend has no matmul kernel for", u.Tensors[0], u.Type)
	}
	return err.Error()
}

// DocCommand is the command that generates docs/bench.md's table.
const DocCommand = "go run ./cmd/simrun bench --validate " + TrainFile + " --doc"

// WriteDocTable prints docs/bench.md's generated section: the command that
// made it, the measured-vs-predicted table, and what the fit found of each
// chip file's bandwidth.
func WriteDocTable(w io.Writer, cases []Case, par Params) error {
	if _, err := fmt.Fprintf(w, "Generated by `%s` with bench/params.json (do not edit by hand).\n\n", DocCommand); err != nil {
		return err
	}
	if err := WriteTable(w, cases, par); err != nil {
		return err
	}
	if par.Fit == nil || len(par.Fit.ChipScales) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nWhat the fit's nuisance factors say of each chip file's DRAM bandwidth (the mat-vec kernels' time\nscale that fits the chip's generation rows, and the streaming bandwidth it implies; not applied):\n\n")
	b.WriteString("| chip | chip file GB/s | mat-vec time scale | implied GB/s |\n|---|---:|---:|---:|\n")
	scale := map[string]float64{}
	for _, s := range par.Fit.ChipScales {
		fmt.Fprintf(&b, "| %s | %.1f | %.3f | %.1f |\n", s.Chip, s.FileGBs, s.MatVec, s.ImpliedGBs)
		scale[s.Chip] = s.MatVec
	}
	// sensitivity: the mean error by test kind when one parameter moves,
	// with the chip files as they are and at their implied bandwidths
	mape := func(p Params, implied bool, kind string) string {
		sum, n := 0.0, 0
		for _, c := range cases {
			if c.Err != nil || (c.Row.Test.Prompt == 0) != (kind == "tg") {
				continue
			}
			s := 1.0
			if implied && scale[c.Row.Chip] > 0 {
				s = scale[c.Row.Chip]
			}
			sum += math.Abs(c.predict(p, s)/c.Row.TS - 1)
			n++
		}
		if n == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f", 100*sum/f(n))
	}
	b.WriteString("\nSensitivity: the MAPE % of the timed rows when one parameter moves, with the chip files as they are\nand at the implied bandwidths above:\n\n")
	b.WriteString("| dispatch_us | membound_fraction | pp | tg | tg, implied bandwidths |\n|---:|---:|---:|---:|---:|\n")
	d0, f0 := par.DispatchUs.Value, par.MemFraction.Value
	for _, v := range [][2]float64{{d0, f0}, {0, f0}, {d0 * 0.6, f0}, {d0 * 1.5, f0}, {d0, 0.75}, {d0, 1}} {
		p := par
		p.DispatchUs.Value, p.MemFraction.Value = v[0], v[1]
		fmt.Fprintf(&b, "| %.2f | %.3f | %s | %s | %s |\n", v[0], v[1], mape(p, false, "pp"), mape(p, false, "tg"), mape(p, true, "tg"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
