package accuracy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/sim"
)

func TestValidateReport(t *testing.T) {
	cases := sampleCases(t)
	rep, err := Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Rows != 4 || s.Modelled != 3 || s.NotModelled != 1 || s.Pairs != 1 {
		t.Fatalf("summary %+v: want 4 rows, 3 modelled, 1 not modelled, 1 pair", s)
	}
	for _, r := range rep.Rows[:3] {
		if r.PredictedUs <= 0 || r.Result == nil {
			t.Errorf("row %d: no prediction", r.Row.Line)
		}
	}
	p := rep.Pairs[0]
	if p.MeasuredDeltaPct != 100*(90.0/120.0-1) {
		t.Errorf("measured delta %v, want -25", p.MeasuredDeltaPct)
	}
	var text, js, md bytes.Buffer
	if err := rep.WriteText(&text, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "not modelled") || !strings.Contains(text.String(), "MAPE") {
		t.Errorf("text report lacks not-modelled rows or the summary:\n%s", text.String())
	}
	// narrower than its needed columns: the optional ones go, and a note says which
	var narrow bytes.Buffer
	if err := rep.WriteText(&narrow, 60); err != nil {
		t.Fatal(err)
	}
	n := narrow.String()
	header, _, _ := strings.Cut(n, "\n")
	_, note, _ := strings.Cut(n, "(left out to fit 60 columns: ")
	if strings.Contains(header, "regs/thread") || !strings.Contains(note, "regs/thread") || !strings.HasSuffix(note, "; --wide shows every column)\n") {
		t.Errorf("a 60-column report:\n%s", n)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Rows []struct {
			Chip        string   `json:"chip"`
			GPUPath     string   `json:"gpu_path"`
			NExperts    *int     `json:"n_experts"`
			N           int      `json:"n"`
			Variant     string   `json:"variant"`
			MeasuredUs  *float64 `json:"measured_us"`
			PredictedUs *float64 `json:"predicted_us"`
			ErrorPct    *float64 `json:"error_pct"`
			Modelled    bool     `json:"modelled"`
			Reason      string   `json:"reason"`
		} `json:"rows"`
		Pairs []struct {
			Baseline          string  `json:"baseline"`
			MeasuredDeltaPct  float64 `json:"measured_delta_pct"`
			PredictedDeltaPct float64 `json:"predicted_delta_pct"`
		} `json:"pairs"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js.String())
	}
	if len(out.Rows) != 4 || len(out.Pairs) != 1 || out.Summary["mape_pct"] == nil {
		t.Fatalf("JSON rows/pairs/summary: %d/%d/%v", len(out.Rows), len(out.Pairs), out.Summary)
	}
	if r := out.Rows[3]; r.Modelled || r.PredictedUs != nil || r.Reason == "" || r.MeasuredUs == nil {
		t.Errorf("not-modelled JSON row %+v: want measured, no prediction, a reason", r)
	}
	if r := out.Rows[0]; r.PredictedUs == nil || r.ErrorPct == nil || *r.NExperts != 32 || r.GPUPath != "simdgroup" {
		t.Errorf("modelled JSON row %+v", r)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| chip | path |") {
		t.Errorf("markdown report:\n%s", md.String())
	}
}

func TestValidateRelativeRows(t *testing.T) {
	tsv := "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
		"M5 10-core GPU\tMUL_MAT_ID\tq8_0\tf32\t32\t4\t256\t512\t64\tupstream\thalftile\t-3.0\n"
	cases := matchTSV(t, tsv, "rel.tsv")
	rep, err := Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 1 || rep.Pairs[0].MeasuredDeltaPct != -3 || rep.Summary.Modelled != 0 || rep.Summary.Relative != 1 {
		t.Fatalf("relative row: pairs %+v summary %+v", rep.Pairs, rep.Summary)
	}
	// the JSON shows the row's prediction, as the text does, and counts it
	var out strings.Builder
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"relative": 1`) || strings.Contains(out.String(), `"predicted_us": null`) {
		t.Errorf("relative row in JSON: want its predicted_us and summary.relative 1:\n%s", out.String())
	}
	if cases[0].Path.String() != "tensor" {
		t.Errorf("M5 without gpu_path: path %s, want the chip's default tensor", cases[0].Path)
	}
}

// TestValidateRelativeDenseRows: a relative MUL_MAT row times its baseline and
// its variant each: where the kernel llama.cpp dispatches takes the variant's
// knobs (mul_mm, n > 8) the predicted delta is the variant's; where it takes
// none (mul_mv_ext at n = 8) the delta is 0 and the row's note says why.
func TestValidateRelativeDenseRows(t *testing.T) {
	tsv := "# chip\top\ttype_a\ttype_b\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
		"M1 Pro 16-core GPU\tMUL_MAT\tq4_0\tf32\t4096\t4096\t16\tupstream\ttile64x8\t-10\n" +
		"M1 Pro 16-core GPU\tMUL_MAT\tq4_0\tf32\t4096\t4096\t8\tupstream\ttile64x8\t-10\n"
	cases := matchTSV(t, tsv, "rel-dense.tsv")
	rep, err := Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 2 {
		t.Fatalf("pairs %+v", rep.Pairs)
	}
	if p := rep.Pairs[0]; p.Kernel != KernelMulMM || p.PredictedDeltaPct == 0 {
		t.Errorf("n = 16: kernel %s, predicted delta %.2f%%: want mul_mm timed with each variant", p.Kernel, p.PredictedDeltaPct)
	}
	if p := rep.Pairs[1]; p.Kernel != KernelMulMVExt || p.PredictedDeltaPct != 0 || !strings.Contains(cases[1].Note, "do not apply to mul_mv_ext") {
		t.Errorf("n = 8: kernel %s, predicted delta %.2f%%, note %q: want mul_mv_ext, 0 and the knob note", p.Kernel, p.PredictedDeltaPct, cases[1].Note)
	}
}

// TestMap0LimitIsNotModelled: a row whose map0 threadgroup cannot launch
// (more experts than threads per threadgroup) is listed as not modelled with
// the field named, and the other rows of the file are still predicted.
func TestMap0LimitIsNotModelled(t *testing.T) {
	tsv := "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n" +
		"M1 Pro 16-core GPU\tMUL_MAT_ID\tq4_0\tf32\t2048\t8\t64\t64\t32\tupstream\t100\n" +
		"M1 Pro 16-core GPU\tMUL_MAT_ID\tq4_0\tf32\t8\t2\t64\t64\t32\tupstream\t10\n"
	cases := matchTSV(t, tsv, "map0.tsv")
	if cases[0].Modelled || !strings.Contains(cases[0].Reason, "n_mats = 2048: must be in [1, 1024]") {
		t.Errorf("2048 experts: modelled %v, reason %q", cases[0].Modelled, cases[0].Reason)
	}
	rep, err := Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Modelled != 1 || rep.Rows[1].PredictedUs <= 0 {
		t.Errorf("the other row: summary %+v, predicted %v", rep.Summary, rep.Rows[1].PredictedUs)
	}
}
