package tile

import (
	"strings"
	"testing"
)

// TestActivationNames: the activation names round trip; others are refused
// with the allowed ones.
func TestActivationNames(t *testing.T) {
	for _, halfB := range []bool{false, true} {
		if got, err := ParseActivation(ActivationName(halfB)); err != nil || got != halfB {
			t.Errorf("halfB %v: %q parses to %v, %v", halfB, ActivationName(halfB), got, err)
		}
	}
	if _, err := ParseActivation("bf16"); err == nil || !strings.Contains(err.Error(), "(allowed: f32, f16)") {
		t.Errorf("bf16: %v", err)
	}
}
