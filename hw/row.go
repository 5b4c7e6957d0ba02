package hw

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Ops whose measurements this package turns into rows. Lines of every other op
// are counted in [Log.Skipped].
const (
	OpMulMatID       = "MUL_MAT_ID"
	OpMulMatIDFusion = "MUL_MAT_ID_FUSION"
	OpMulMat         = "MUL_MAT"
)

// GPU paths a calibration row may name in its gpu_path column.
const (
	PathSimdgroup = "simdgroup"
	PathTensor    = "tensor"
)

// isKnownOp reports whether op is one of the ops rows are made of.
func isKnownOp(op string) bool {
	switch op {
	case OpMulMatID, OpMulMatIDFusion, OpMulMat:
		return true
	}
	return false
}

// Row is one measured case, from a calibration TSV or a test-backend-ops log.
type Row struct {
	Source string // file name given by the caller
	Line   int    // 1-based line number in the source
	// Chip as written: the TSV "chip" column (e.g. "M1 Pro 16-core GPU"), or
	// the log's "Device description" with the leading "Apple " kept (e.g.
	// "Apple M1 Pro"); "" if unknown.
	Chip     string
	GPUPath  string // "simdgroup", "tensor", or "" when not given (always "" for logs)
	Op       string // "MUL_MAT_ID", "MUL_MAT_ID_FUSION" or "MUL_MAT"
	Params   Params // the case parameters, with test-backend-ops keys
	Variant  string // TSV "variant" column (e.g. "upstream", "halftile"); "" for logs
	Baseline string // relative-only TSV rows: the baseline variant name
	// Kernel and BaselineKernel (TSV "kernel", "baseline_kernel") name the
	// Metal kernel a measurement ran where the build did not follow
	// llama.cpp's choice (a patched build): Kernel the row's (a relative
	// row's variant's), BaselineKernel a relative row's baseline's; "" means
	// the kernel llama.cpp dispatches. Names are checked where rows are
	// matched to problems.
	Kernel, BaselineKernel string

	USPerRun float64 // measured microseconds per run; valid if HasTime
	HasTime  bool
	DeltaPct float64 // relative-only rows: (variant-baseline)/baseline*100; valid if HasDelta
	HasDelta bool

	Statistic string // TSV "statistic" column, e.g. "min-of-3", "single-pass"
	Runs      int    // logs: the "N runs" field (sql: n_runs)

	// Logs, FLOP form, SI prefixes applied (33.97 GFLOP -> 33.97e9). For sql
	// rows FLOPS is the flops column and FLOPPerRun = FLOPS*USPerRun/1e6, the
	// same derivation the console printer uses.
	FLOPPerRun, FLOPS float64
	KBPerRun          float64 // logs, memory form: kB per run (sql: memory_kb)
	GBPerS            float64 // logs, memory form: GB/s (sql: bandwidth_gb_s)
	Backend           string  // logs: backend name, e.g. "MTL0"
}

// LineError is one malformed line of a log or calibration file.
type LineError struct {
	Source string // file name given by the caller; may be ""
	Line   int    // 1-based line number
	Text   string // the line, ANSI codes and line end removed
	Err    error
}

// Error returns "SOURCE: line N: ERR" (without "SOURCE: " when Source is empty).
func (e LineError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s: line %d: %v", e.Source, e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e LineError) Unwrap() error { return e.Err }

// parseMeasure parses a non-negative finite decimal number such as "533.28".
// field names it in errors.
func parseMeasure(field, s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil && math.IsNaN(f):
		return 0, fmt.Errorf("%s %q: NaN", field, s)
	case err == nil && math.IsInf(f, 0):
		return 0, fmt.Errorf("%s %q: infinite", field, s)
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%s %q: out of range", field, s)
	case err != nil || !isDecimal(s):
		return 0, fmt.Errorf("%s %q: want a decimal number", field, s)
	case f < 0:
		return 0, fmt.Errorf("%s %q: negative", field, s)
	}
	return f, nil
}

// The plausible range of a measured time per run, in microseconds: one rule
// for a calibration TSV's us_per_run, a console log's us/run and an --output
// sql row's time_us. A Metal dispatch alone costs microseconds, so no
// measured run takes 1 ns (0.001 µs; test-backend-ops prints two decimals, so
// a run it timed prints at least 0.01); 1e9 µs is 1000 s for one run, far
// beyond any kernel test-backend-ops repeats within its one-second window.
// A time outside the range is a failed or truncated measurement ("0.00"), a
// unit slip or garbage, and would make the error % infinite or meaningless.
const (
	minUSPerRun = 0.001
	maxUSPerRun = 1e9
)

// wantUSPerRun describes the allowed measured times in error messages.
var wantUSPerRun = fmt.Sprintf("a positive decimal number of microseconds per run, in [%g, %g]", minUSPerRun, maxUSPerRun)

// parseUSPerRun parses a measured time per run and checks it against the
// plausible range; field names it in errors.
func parseUSPerRun(field, s string) (float64, error) {
	us, err := parseMeasure(field, s)
	switch {
	case err != nil:
	case us == 0:
		err = fmt.Errorf("%s %q: zero", field, s)
	case us < minUSPerRun:
		err = fmt.Errorf("%s %q: below %g", field, s, minUSPerRun)
	case us > maxUSPerRun:
		err = fmt.Errorf("%s %q: above %g", field, s, maxUSPerRun)
	default:
		return us, nil
	}
	return 0, fmt.Errorf("%w; want %s", err, wantUSPerRun)
}

// The allowed range of a relative row's delta_pct, (variant - baseline) /
// baseline * 100. Above -100 since both times are positive; at most +10000 %,
// a variant 101 times as slow as its baseline on the same problem: kernel
// variants of one op differ by well under 10x (the calibration sets by under
// 2x), so a larger delta is a broken build or a unit slip (µs against ms is
// +99900 %).
const (
	minDeltaPct = -100 // exclusive
	maxDeltaPct = 10000
)

// wantDeltaPct describes the allowed deltas in error messages.
var wantDeltaPct = fmt.Sprintf("a decimal percentage above %d and at most %d, e.g. -37.3", minDeltaPct, maxDeltaPct)

// parseCount parses a non-negative decimal integer.
func parseCount(field, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || !isDigits(s) {
		if len(s) > 1 && s[0] == '-' && isDigits(s[1:]) {
			return 0, fmt.Errorf("%s %q: negative", field, s)
		}
		return 0, fmt.Errorf("%s %q: want a non-negative integer", field, s)
	}
	return n, nil
}

// isDecimal accepts what printf %f and %e print: digits, '.', signs and exponents.
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
