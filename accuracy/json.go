package accuracy

import (
	"encoding/json"
	"io"
	"math"
)

// JSON shapes of `simrun validate --format json`.
type jsonRow struct {
	Chip        string   `json:"chip"`
	GPUPath     string   `json:"gpu_path"`
	Op          string   `json:"op"`
	Kernel      string   `json:"kernel"`
	NExperts    *int     `json:"n_experts"`
	NUsed       *int     `json:"n_used"`
	M           int      `json:"m"`
	K           int      `json:"k"`
	N           int      `json:"n"`
	TypeA       string   `json:"type_a"`
	Variant     string   `json:"variant"`
	MeasuredUs  *float64 `json:"measured_us"`
	PredictedUs *float64 `json:"predicted_us"`
	ErrorPct    *float64 `json:"error_pct"`
	Modelled    bool     `json:"modelled"`
	Reason      string   `json:"reason,omitempty"`
	Note        string   `json:"note,omitempty"`
	Limiter     string   `json:"limiter,omitempty"`
	TGsPerCore  int      `json:"tgs_per_core,omitempty"`
	OccLimiter  string   `json:"occupancy_limiter,omitempty"`
	Registers   int      `json:"registers_per_thread,omitempty"`
	Source      string   `json:"source"`
	Line        int      `json:"line"`
}

type jsonPair struct {
	Chip              string  `json:"chip"`
	GPUPath           string  `json:"gpu_path"`
	NExperts          int     `json:"n_experts"`
	NUsed             int     `json:"n_used"`
	M                 int     `json:"m"`
	K                 int     `json:"k"`
	N                 int     `json:"n"`
	TypeA             string  `json:"type_a"`
	Baseline          string  `json:"baseline"`
	Variant           string  `json:"variant"`
	Kernel            string  `json:"kernel,omitempty"`          // where the sides ran different kernels: the variant's
	BaselineKernel    string  `json:"baseline_kernel,omitempty"` // and the baseline's
	MeasuredDeltaPct  float64 `json:"measured_delta_pct"`
	PredictedDeltaPct float64 `json:"predicted_delta_pct"`
	ErrorPP           float64 `json:"error_pp"`
}

type jsonSummary struct {
	Rows        int      `json:"rows"`
	Modelled    int      `json:"modelled"`
	Relative    int      `json:"relative"`
	NotModelled int      `json:"not_modelled"`
	MAPE        *float64 `json:"mape_pct"`
	WMAPE       *float64 `json:"wmape_pct"`
	MaxErrPct   *float64 `json:"max_error_pct"`
	R2Log       *float64 `json:"r2_log"`
	Pairs       int      `json:"pairs"`
	MeanDeltaPP *float64 `json:"mean_delta_error_pp"`
	MaxDeltaPP  *float64 `json:"max_delta_error_pp"`
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	r := math.Round(v*1e4) / 1e4
	return &r
}

func (s Summary) json() jsonSummary {
	j := jsonSummary{Rows: s.Rows, Modelled: s.Modelled, Relative: s.Relative, NotModelled: s.NotModelled, Pairs: s.Pairs}
	if s.Modelled > 0 {
		j.MAPE, j.WMAPE, j.MaxErrPct, j.R2Log = num(s.MAPE), num(s.WMAPE), num(s.MaxErrPct), num(s.R2Log)
	}
	if s.Pairs > 0 {
		j.MeanDeltaPP, j.MaxDeltaPP = num(s.MeanDeltaPP), num(s.MaxDeltaPP)
	}
	return j
}

// WriteJSON prints the report as one JSON object with rows, pairs and summary.
func (rep *Report) WriteJSON(w io.Writer) error {
	out := struct {
		Rows    []jsonRow              `json:"rows"`
		Pairs   []jsonPair             `json:"pairs"`
		Summary jsonSummary            `json:"summary"`
		PerChip map[string]jsonSummary `json:"per_chip"`
	}{Rows: []jsonRow{}, Pairs: []jsonPair{}, Summary: rep.Summary.json(), PerChip: map[string]jsonSummary{}}
	for _, r := range rep.Rows {
		p := r.Row.Params
		geti := func(k string) int { v, _ := p.Int(k); return v }
		ta, _ := p.String("type_a")
		jr := jsonRow{Chip: chipName(r), GPUPath: r.Path.String(), Op: r.Row.Op, Kernel: r.Kernel, M: geti("m"), K: geti("k"), N: geti("n"),
			TypeA: ta, Variant: r.Variant.Name, Modelled: r.Modelled, Reason: r.Reason, Note: r.Note, Source: r.Row.Source, Line: r.Row.Line}
		if p.Has("n_mats") {
			e, u := geti("n_mats"), geti("n_used")
			jr.NExperts, jr.NUsed = &e, &u
		}
		if r.Row.HasTime {
			jr.MeasuredUs = num(r.MeasuredUs)
		}
		switch {
		case r.Modelled && r.Row.HasTime:
			jr.PredictedUs, jr.ErrorPct = num(r.PredictedUs), num(r.ErrorPct)
		case r.Modelled:
			// a relative row: its prediction (as the text shows it), compared
			// only through its pair's delta
			jr.PredictedUs = num(r.Result.TotalUs)
		}
		if r.Result != nil {
			jr.Limiter, jr.TGsPerCore = r.Result.Limit.String(), r.Result.Occupancy.TGsPerCore
			jr.OccLimiter, jr.Registers = r.Result.Occupancy.Limiter, r.Result.Registers.Total
		}
		out.Rows = append(out.Rows, jr)
	}
	for _, p := range rep.Pairs {
		pr := p.Problem
		jp := jsonPair{Chip: p.Chip, GPUPath: p.Path.String(), NExperts: pr.Experts, NUsed: pr.Used, M: pr.M, K: pr.K, N: pr.Tokens,
			TypeA: pr.TypeA.String(), Baseline: p.Baseline, Variant: p.Variant,
			MeasuredDeltaPct: *num(p.MeasuredDeltaPct), PredictedDeltaPct: *num(p.PredictedDeltaPct), ErrorPP: *num(p.ErrorPP)}
		if p.BaselineKernel != "" && p.BaselineKernel != p.Kernel {
			jp.Kernel, jp.BaselineKernel = p.Kernel, p.BaselineKernel
		}
		if p.dense() {
			d := p.Dense
			jp.M, jp.K, jp.N, jp.TypeA = d.M, d.K, d.N, d.TypeA.String()
		}
		out.Pairs = append(out.Pairs, jp)
	}
	for _, cs := range rep.PerChip {
		out.PerChip[cs.Chip+"/"+cs.Path.String()] = cs.Summary.json()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
