package main

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/sim"
)

// TestHelpTerms: simrun help terms explains every term and limiter, within
// 100 columns (trace's TestGlossaryInREADME: the README holds the same words).
func TestHelpTerms(t *testing.T) {
	out, _ := simrunOK(t, "help", "terms")
	for _, w := range []string{"map0", "SLC", "TGs/core", "WMAPE", "R²(log)", "broadcast b", "n_mats"} {
		if !strings.Contains(out, "  "+w+" ") {
			t.Errorf("help terms does not explain %s", w)
		}
	}
	flat := strings.Join(strings.Fields(out), " ") // the meanings unwrapped
	for _, l := range sim.Limiters() {
		if !strings.Contains(out, "  "+l.String()+" ") || !strings.Contains(flat, l.String()+" "+l.Meaning()) {
			t.Errorf("help terms does not name the limiter %s", l)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a line of %d characters: %q", n, line)
		}
	}
	if code, _, errb := simrun("help", "nope"); code != exitBadUsed || !strings.Contains(errb, `unknown topic "nope"`) {
		t.Errorf("help nope: exit %d, %q", code, errb)
	}
}
