package trace

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
)

func m1Pro(t testing.TB) *chips.Chip {
	t.Helper()
	c := chips.MustLookup("M1 Pro 16-core GPU")
	return c
}

func TestParseOptions(t *testing.T) {
	if s, e, err := ParseWindow("--window", " 5 : 20.5"); err != nil || s != 5 || e != 20.5 {
		t.Fatalf("window: %g %g %v", s, e, err)
	}
	chip := m1Pro(t)
	if cs, err := ParseCores("--cores", "4-6, 0,5", chip); err != nil || !slices.Equal(cs, []int{0, 4, 5, 6}) {
		t.Fatalf("cores: %v %v", cs, err)
	}
	if cs, err := ParseCores("--cores", "all", chip); err != nil || len(cs) != 16 || cs[15] != 15 {
		t.Fatalf("all cores: %v %v", cs, err)
	}
	if lo, hi, step, err := ParseRegisterRange("--table", "16:128:4"); err != nil || lo != 16 || hi != 128 || step != 4 {
		t.Fatalf("register range: %d %d %d %v", lo, hi, step, err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{third(ParseWindow("--window", "5")), `--window "5": want START:END in µs, e.g. 0:200`},
		{third(ParseWindow("--window", "a:b")), "START and END must be numbers"},
		{third(ParseWindow("--window", "5:5")), "want 0 <= START < END <= 1e9 µs"},
		{third(ParseWindow("--window", "NaN:5")), "want 0 <= START < END"},
		{second(ParseCores("--cores", "3-1", chip)), `--cores "3-1": range "3-1": want LO-HI with LO <= HI`},
		{second(ParseCores("--cores", "16", chip)), `"16": M1 Pro 16-core GPU has cores 0..15`},
		{second(ParseCores("--cores", "0,,1", chip)), `"" is not a core number or range`},
		{fourth(ParseRegisterRange("--table", "16:8:4")), `--table "16:8:4": want MIN:MAX:STEP register counts`},
		{fourth(ParseRegisterRange("--table", "1:300:4")), "MAX <= 256"},
		{fourth(ParseRegisterRange("--table", "1:2")), "STEP >= 1"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error                 { return err }
func third[T, U any](_ T, _ U, err error) error          { return err }
func fourth[T, U, V any](_ T, _ U, _ V, err error) error { return err }

// FuzzParseWindow: a window either fails, naming the flag, or is within
// 0 <= start < end <= 1e9.
func FuzzParseWindow(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		start, end, err := ParseWindow("--window", s)
		if failed(t, s, err, "--window") {
			return
		}
		if !(start >= 0 && end > start && end <= 1e9) {
			t.Fatalf("%q: window %g:%g", s, start, end)
		}
	})
}

// FuzzParseCores: a core list either fails, naming the flag, or holds
// distinct cores of the chip in increasing order.
func FuzzParseCores(f *testing.F) {
	chip := m1Pro(f)
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseCores("--cores", s, chip)
		if failed(t, s, err, "--cores") {
			return
		}
		if len(cs) == 0 {
			t.Fatalf("%q: no cores", s)
		}
		for i, c := range cs {
			if c < 0 || c >= 16 || i > 0 && c <= cs[i-1] {
				t.Fatalf("%q: cores %v", s, cs)
			}
		}
	})
}

// FuzzParseRegisterRange: a range either fails, naming the flag, or is
// 1 <= lo <= hi <= 256 with a positive step.
func FuzzParseRegisterRange(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, step, err := ParseRegisterRange("--table", s)
		if failed(t, s, err, "--table") {
			return
		}
		if lo < 1 || hi < lo || hi > 256 || step < 1 {
			t.Fatalf("%q: %d:%d:%d", s, lo, hi, step)
		}
	})
}

// failed reports whether a parser refused input s, failing the test when its
// error does not start with the label it was given.
func failed(t *testing.T, s string, err error, label string) bool {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), label) {
		t.Fatalf("%q: error %q does not name the flag %s", s, err, label)
	}
	return err != nil
}
