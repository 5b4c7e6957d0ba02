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
