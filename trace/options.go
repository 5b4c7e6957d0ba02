package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/chips"
)

// ParseWindow reads a trace window START:END in µs from the dispatch start,
// 0 <= START < END <= 1e9; label names the input in errors.
func ParseWindow(label, s string) (float64, float64, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("%s %q: want START:END in µs, e.g. 0:200", label, s)
	}
	start, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	end, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%s %q: START and END must be numbers (µs)", label, s)
	}
	if !(start >= 0) || !(end > start) || end > 1e9 {
		return 0, 0, fmt.Errorf("%s %q: want 0 <= START < END <= 1e9 µs", label, s)
	}
	return start, end, nil
}

// ParseCores reads the cores of chip to trace: numbers and ranges separated
// by commas (0,2,4-7), or all; the result is sorted, each core once. label
// names the input in errors.
func ParseCores(label, s string, chip *chips.Chip) ([]int, error) {
	n := int(chip.Cores.Value)
	if strings.TrimSpace(s) == "all" {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || f == "" {
			return nil, fmt.Errorf("%s %q: %q is not a core number or range (e.g. 0,2,4-7 or all)", label, s, f)
		}
		if isRange && b < a {
			return nil, fmt.Errorf("%s %q: range %q: want LO-HI with LO <= HI", label, s, f)
		}
		if a < 0 || b >= n {
			return nil, fmt.Errorf("%s %q: %q: %s has cores 0..%d", label, s, f, chip.Name, n-1)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// CheckFlags checks simrun trace's recording flags, with errors naming them:
// --max-events in [1, maxEvents] (about 1 KB of memory per event while the
// trace is written), --idle in [0, 1e9] ns, --sample in (0, 1e6] µs and
// leaving room for the events under --max-events.
func (o RecordOptions) CheckFlags(maxEvents int) error {
	if o.MaxEvents < 1 || o.MaxEvents > maxEvents {
		return fmt.Errorf("--max-events = %d: must be in [1, %d] (about 1 KB of memory per event while the trace is written)", o.MaxEvents, maxEvents)
	}
	if !(o.IdleNs >= 0) || o.IdleNs > 1e9 {
		return fmt.Errorf("--idle = %g: must be in [0, 1e9] ns", o.IdleNs)
	}
	if !(o.SampleUs > 0) || o.SampleUs > 1e6 {
		return fmt.Errorf("--sample = %g: must be in (0, 1e6] µs", o.SampleUs)
	}
	if n := (o.EndUs - o.StartUs) / o.SampleUs; n >= float64(o.MaxEvents) {
		return fmt.Errorf("--sample = %g: %.0f DRAM samples over the window leave no room under --max-events = %d", o.SampleUs, n, o.MaxEvents)
	}
	return nil
}
