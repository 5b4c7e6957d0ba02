package study

import (
	"math"
	"strconv"
)

// The decimals CSV outputs write a float with, by what it measures: enough
// for any use of the number, without the binary noise of a float64
// (104726528.0000003 bytes). Rounding to fixed decimals is idempotent, so a
// merge that reads a CSV row and writes it again gives the same bytes. JSON
// outputs keep every digit.
const (
	usDecimals     = 3 // µs: to the nanosecond
	pctDecimals    = 3 // percent: to a thousandth of a point
	tflopsDecimals = 4 // TFLOPS: to 0.1 GFLOPS
	bytesDecimals  = 0 // bytes: whole bytes
)

// csvFloat renders v with the given decimals; a value that rounds to zero
// has no minus sign ("0.000", never "-0.000").
func csvFloat(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if r, err := strconv.ParseFloat(s, 64); err == nil && r == 0 && math.Signbit(r) {
		s = strconv.FormatFloat(0, 'f', decimals, 64)
	}
	return s
}
