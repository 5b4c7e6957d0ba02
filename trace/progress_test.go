package trace

import (
	"bytes"
	"testing"

	"github.com/metalsim/metalsim/sim"
)

// TestProgressLine: the progress line's text, and no line off a terminal (the
// tests' buffers), so outputs stay the same bytes.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		want        string
	}{
		{0, 0, "simulating"},
		{0, 48000000, "simulating:   0 % of 4.8e+07 threadgroups"},
		{16384, 48000000, "simulating:   0 % of 4.8e+07 threadgroups"},
		{24000000, 48000000, "simulating:  50 % of 4.8e+07 threadgroups"},
		{48000001, 48000000, "simulating: 100 % of 4.8e+07 threadgroups"},
	} {
		if got := ProgressLine(tc.done, tc.total); got != tc.want {
			t.Errorf("ProgressLine(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
	var errb bytes.Buffer
	stop := StartProgress(&errb, sim.NewSimulator())
	stop()
	if terminal(&errb) != nil || errb.Len() != 0 {
		t.Errorf("a buffer is no terminal: %q", errb.String())
	}
}
