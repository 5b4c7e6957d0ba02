package bench

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// Param is one model parameter of the whole-model estimate with where it
// comes from: "calibrated" (the note names the measurement file and the
// command) or a fixed choice (the note says why).
type Param struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
	Note   string  `json:"note"`
}

// Params are the few physically meaningful numbers the graph's time needs
// beyond the kernel models and the chip files (docs/bench.md, "Calibration").
type Params struct {
	// DispatchUs is the cost of one compute dispatch within a graph: the
	// encoder's launch, the barrier and the idle GPU between dependent
	// kernels, and whatever per-graph CPU work they stand for.
	DispatchUs Param `json:"dispatch_us"`
	// MemFraction is the fraction of the chip's achievable DRAM bandwidth
	// (dram_bandwidth_gbs) the memory-bound ops and attention's loads reach.
	MemFraction Param `json:"membound_fraction"`
	// EvalUs is a fixed cost per graph evaluation (one ubatch or one token).
	EvalUs Param `json:"eval_us"`
	// Fit records how the calibrated values were obtained.
	Fit *FitRecord `json:"fit,omitempty"`
}

// FitRecord is the provenance of a fit: the command, the file, the rows and
// their residuals.
type FitRecord struct {
	Command string  `json:"command"`
	File    string  `json:"file"`
	Rows    int     `json:"rows"`
	Skipped int     `json:"skipped"`
	RMSLog  float64 `json:"rms_log_error"`
	MAPE    float64 `json:"mape_pct"`
	// ChipScales are the per-chip mat-vec factors the fit used as nuisance
	// parameters (Fit), kept as what the measurements say of the chip files.
	ChipScales []ChipScale `json:"chip_scales"`
	Residuals  []Residual  `json:"residuals"`
}

// Residual is one measured row after the fit.
type Residual struct {
	Row       string  `json:"row"`
	Measured  float64 `json:"measured_ts"`
	Predicted float64 `json:"predicted_ts"`
	ErrorPct  float64 `json:"error_pct"`
}

//go:embed params.json
var paramsJSON []byte

// DefaultParams returns the embedded parameters (bench/params.json, written
// by `simrun bench --fit`).
func DefaultParams() (Params, error) { return ParseParams(paramsJSON) }

// ParseParams reads a parameter file; unknown fields, missing sources and
// values out of range are errors naming the field.
func ParseParams(data []byte) (Params, error) {
	var p Params
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("bench parameters: %w", err)
	}
	return p, p.Validate()
}

// Validate checks every parameter's range and source.
func (p Params) Validate() error {
	for _, c := range []struct {
		name   string
		p      Param
		lo, hi float64
	}{{"dispatch_us", p.DispatchUs, 0, 1000}, {"membound_fraction", p.MemFraction, 0.05, 1.5}, {"eval_us", p.EvalUs, 0, 1e6}} {
		if !(c.p.Value >= c.lo && c.p.Value <= c.hi) {
			return fmt.Errorf("bench parameters: %s = %g: must be in [%g, %g]", c.name, c.p.Value, c.lo, c.hi)
		}
		if c.p.Source == "" || strings.TrimSpace(c.p.Note) == "" {
			return fmt.Errorf("bench parameters: %s: needs a source and a note (the fit command, or why the value was chosen)", c.name)
		}
	}
	return nil
}

// MarshalIndent renders the parameters as a parameter file.
func (p Params) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	return append(b, '\n'), err
}
