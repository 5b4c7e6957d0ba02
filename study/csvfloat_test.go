package study

import (
	"math"
	"strconv"
	"testing"
)

// TestCSVFloat: fixed decimals, no binary noise, no "-0", and rendering the
// parsed text again gives the same text (so merge writes back what it read).
func TestCSVFloat(t *testing.T) {
	for _, tc := range []struct {
		v        float64
		decimals int
		want     string
	}{
		{104726528.0000003, bytesDecimals, "104726528"},
		{2838.2242973781285, usDecimals, "2838.224"},
		{-38.41253680572484, pctDecimals, "-38.413"},
		{0.283735985469478, tflopsDecimals, "0.2837"},
		{-0.0001, usDecimals, "0.000"},
		{math.Copysign(0, -1), usDecimals, "0.000"},
		{8.4, usDecimals, "8.400"},
	} {
		got := csvFloat(tc.v, tc.decimals)
		if got != tc.want {
			t.Errorf("csvFloat(%v, %d) = %q, want %q", tc.v, tc.decimals, got, tc.want)
		}
	}
	for _, v := range []float64{1e-9, 0.0005, 0.0015, 1.2345678, 999.9995, 123456789.123456, 3e12 + 0.0625} {
		for _, d := range []int{bytesDecimals, usDecimals, tflopsDecimals} {
			s := csvFloat(v, d)
			back, err := strconv.ParseFloat(s, 64)
			if err != nil || csvFloat(back, d) != s {
				t.Errorf("csvFloat(%v, %d) = %q reads back as %v, rendered %q", v, d, s, back, csvFloat(back, d))
			}
		}
	}
}
