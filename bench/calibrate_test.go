package bench

import (
	"bytes"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/metalsim/metalsim/sim"
)

// trainCases prices the embedded training rows once for the tests that need
// them (about 4 s on 2 cores).
var trainCases = sync.OnceValues(func() ([]Case, error) {
	rows, err := TrainRows()
	if err != nil {
		return nil, err
	}
	return Cases(rows, sim.Options{})
})

func cases(t *testing.T) []Case {
	t.Helper()
	cs, err := trainCases()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestFitRecovers: measurements made from the profiles with known
// parameters and known per-chip bandwidth errors give those parameters back.
func TestFitRecovers(t *testing.T) {
	truth, err := DefaultParams()
	if err != nil {
		t.Fatal(err)
	}
	truth.DispatchUs.Value, truth.MemFraction.Value = 2, 0.8
	scale := map[string]float64{"M1 Pro 16-core GPU": 1.1, "M2 Max 38-core GPU": 0.85}
	var synth []Case
	for _, c := range cases(t) {
		if c.Err != nil {
			continue
		}
		s := scale[c.Row.Chip]
		if s == 0 {
			s = 1
		}
		c.Row.TS = c.predict(truth, s)
		synth = append(synth, c)
	}
	got, scales, err := Fit(synth, truth, "test", "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	// golden-section search to ~1e-4 of each range, and the stored rounding
	if math.Abs(got.DispatchUs.Value-2) > 0.02 || math.Abs(got.MemFraction.Value-0.8) > 0.002 {
		t.Errorf("fit: dispatch %.3f µs, fraction %.4f; want 2, 0.8", got.DispatchUs.Value, got.MemFraction.Value)
	}
	// the residuals use the chip files as they are: exact where they were right
	for _, r := range got.Fit.Residuals {
		onScaled := strings.Contains(r.Row, "M1 Pro") || strings.Contains(r.Row, "M2 Max")
		if !onScaled && math.Abs(r.ErrorPct) > 0.2 {
			t.Errorf("%s: %.2f %% off with the true parameters", r.Row, r.ErrorPct)
		}
	}
	for _, s := range scales {
		want := scale[s.Chip]
		if want == 0 {
			want = 1
		}
		if math.Abs(s.MatVec-want) > 0.005 {
			t.Errorf("%s: mat-vec scale %.3f, want %.2f", s.Chip, s.MatVec, want)
		}
	}
	if _, _, err := Fit(synth[:1], truth, "test", "one row"); err == nil {
		t.Error("a fit on one row")
	}
}

// TestParamsAreTheFit: bench/params.json is what `simrun bench --fit` writes
// for the embedded training set, so the stored values can be re-made.
func TestParamsAreTheFit(t *testing.T) {
	par, err := DefaultParams()
	if err != nil {
		t.Fatal(err)
	}
	fitted, _, err := Fit(cases(t), par, "go run ./cmd/simrun bench --fit "+TrainFile, TrainFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fitted.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, paramsJSON) {
		t.Errorf("bench/params.json is not the fit's output: re-run `go run ./cmd/simrun bench --fit %s > bench/params.json`", TrainFile)
	}
}

// Markers of docs/bench.md's generated section.
const (
	docBegin = "<!-- begin generated: " + DocCommand + " -->\n"
	docEnd   = "<!-- end generated -->\n"
)

// TestDocTable: docs/bench.md's measured-vs-predicted section is the
// command's output for the embedded parameters.
func TestDocTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), docBegin)
	section, _, ok2 := strings.Cut(rest, docEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/bench.md lacks the markers %q ... %q", docBegin, docEnd)
	}
	par, err := DefaultParams()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteDocTable(&b, cases(t), par); err != nil {
		t.Fatal(err)
	}
	if section != b.String() {
		t.Errorf("docs/bench.md's generated section is stale: replace it with the output of `%s`", DocCommand)
	}
}
