package accuracy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/chips"
)

// FitParam is one chip parameter to fit, within bounds.
type FitParam struct {
	Chip   string  // chip name
	Name   string  // chip-file parameter name, e.g. "sg_launch_clk", "classes.mma8.issue_clk"
	Lo, Hi float64 // bounds (the optimizer stays strictly inside)
}

// parseBound reads one bound of --param: a finite number and nothing else.
func parseBound(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("%q is not finite", s)
	}
	return v, err
}

// ParseFitParam parses NAME@CHIP[=LO:HI]. Without bounds the parameter may move
// within a factor of 4 of its current value (or [0, 1000] when it is 0), and
// within the range the chip file allows.
func ParseFitParam(s string, chipList []*chips.Chip) (FitParam, error) {
	spec, bounds, hasBounds := strings.Cut(s, "=")
	name, chipName, ok := strings.Cut(spec, "@")
	if !ok || name == "" || chipName == "" {
		return FitParam{}, fmt.Errorf("--param %q: want NAME@CHIP[=LO:HI], e.g. sg_launch_clk@\"M1 Pro 16-core GPU\"=0:2000", s)
	}
	find := func(name string) *chips.Chip {
		for _, c := range chipList {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
	// the files' own chip names first (a chip file may be named like an
	// embedded chip's alias), then an alias of an embedded chip
	chip := find(chipName)
	if chip == nil {
		if c, err := chips.Lookup(chipName); err == nil {
			chipName = c.Name
			chip = find(chipName)
		}
	}
	var names []string
	for _, c := range chipList {
		names = append(names, fmt.Sprintf("%q", c.Name))
	}
	if chip == nil {
		return FitParam{}, fmt.Errorf("--param %q: chip %q is not among the chips of the measurement files (%s)", s, chipName, strings.Join(names, ", "))
	}
	if err := fittable(chip, name); err != nil {
		return FitParam{}, fmt.Errorf("--param %q: %w", s, err)
	}
	cur, _ := chip.Param(name)
	fp := FitParam{Chip: chip.Name, Name: name, Lo: cur.Value / 4, Hi: cur.Value * 4}
	if cur.Value == 0 {
		fp.Hi = 1000
	}
	if lo, hi, ok := chip.ParamRange(name); ok { // defaults stay inside what the chip file allows
		fp.Lo, fp.Hi = max(fp.Lo, lo), min(fp.Hi, hi)
	}
	if hasBounds {
		lo, hi, ok := strings.Cut(bounds, ":")
		var err1, err2 error
		if ok {
			fp.Lo, err1 = parseBound(lo)
			fp.Hi, err2 = parseBound(hi)
		}
		if !ok || err1 != nil || err2 != nil || !(fp.Lo < fp.Hi) {
			return FitParam{}, fmt.Errorf("--param %q: bounds %q: want LO:HI with LO < HI", s, bounds)
		}
	}
	if cur.Value < fp.Lo || cur.Value > fp.Hi {
		return FitParam{}, fmt.Errorf("--param %q: current value %g is outside [%g, %g]", s, cur.Value, fp.Lo, fp.Hi)
	}
	// both bounds must be values the chip file allows, or the fit fails
	// late, at the first evaluation outside them
	for _, b := range []float64{fp.Lo, fp.Hi} {
		probe, p := chip.Clone(), cur
		p.Value = b
		if err := probe.SetParam(name, p); err != nil {
			what := fmt.Sprintf("bounds %q", bounds)
			if !hasBounds {
				what = fmt.Sprintf("default bounds %g:%g (a quarter to four times the current value; give =LO:HI)", fp.Lo, fp.Hi)
			}
			return FitParam{}, fmt.Errorf("--param %q: %s: %w", s, what, err)
		}
	}
	return fp, nil
}

// structural names chip-file parameters that describe what the chip is, not how
// fast it does something (sizes, and the switches that choose between bounds):
// fitting them has no physical meaning.
var structural = []string{
	"cores", "schedulers_per_core", "simd_width", "max_threads_per_core", "max_threads_per_tg",
	"max_tgs_per_core", "tg_memory_per_core_bytes", "tg_memory_per_tg_bytes", "register_file_bytes",
	"occupancy_thread_granule", "l1_bytes", "l2_bytes", "slc_bytes", "clock_mhz", "dispatch_interval_clk",
	"sg_issue_interval_clk", "slc_resident_bytes", "matmul2d_regather", "matmul2d_accumulate_adds",
}

// fittable accepts the rate, latency and cost parameters of a chip file.
func fittable(c *chips.Chip, name string) error {
	if _, err := c.Param(name); err != nil {
		return fmt.Errorf("%w (fittable: a latency, bandwidth, issue or launch cost of the chip file)", err)
	}
	if slices.Contains(structural, name) {
		return fmt.Errorf("%s describes the chip's structure or a measured clock, not a cost: it is not fitted", name)
	}
	return nil
}
