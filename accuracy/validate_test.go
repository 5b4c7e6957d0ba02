package accuracy

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
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

// TestValidateForcedKernels: a row's kernel and baseline_kernel columns run
// the kernels a patched build ran. docs/checks/pr25377-m4pro.tsv pairs
// PR #25377's mul_mm rows with master's mul_mv_ext rows, and each side times
// as RunWorkload forcing its kernel does; a relative row of one variant on
// two kernels compares the kernels.
func TestValidateForcedKernels(t *testing.T) {
	b, err := os.ReadFile("../docs/checks/pr25377-m4pro.tsv")
	if err != nil {
		t.Fatal(err)
	}
	s := sim.NewSimulator()
	cases := matchTSV(t, string(b), "pr25377-m4pro.tsv")
	rep, err := Validate(cases, s, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 2 {
		t.Fatalf("pairs %+v, want n = 5 and 8", rep.Pairs)
	}
	chip := cases[0].Chip
	timeAs := func(p tile.DenseProblem, v tile.Variant, kern tile.MetalKernel) float64 {
		r, err := s.RunWorkload(tile.DenseWorkload(p), tile.Kernel{Variant: v, Path: tile.Simdgroup}, kern, chip, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.TotalUs
	}
	for _, p := range rep.Pairs {
		want := 100 * (timeAs(p.Dense, tile.Tile64x8(), tile.KernelMulMM)/timeAs(p.Dense, tile.Upstream(), tile.KernelMulMVExt) - 1)
		if p.Kernel != KernelMulMM || p.BaselineKernel != KernelMulMVExt || p.PredictedDeltaPct != want || p.kernels() != "mul_mm vs mul_mv_ext" {
			t.Errorf("n = %d: %s vs %s, predicted %.3f%%, want mul_mm vs mul_mv_ext at %.3f%%", p.Dense.N, p.Kernel, p.BaselineKernel, p.PredictedDeltaPct, want)
		}
	}
	rel := "# chip\top\ttype_a\ttype_b\tm\tk\tn\tbaseline\tvariant\tdelta_pct\tkernel\tbaseline_kernel\n" +
		"M4 Pro 20-core GPU\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\tupstream\t-10\tmul_mm\tmul_mv_ext\n"
	rep, err = Validate(matchTSV(t, rel, "rel.tsv"), s, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Pairs[0].Dense
	if want := 100 * (timeAs(d, tile.Upstream(), tile.KernelMulMM)/timeAs(d, tile.Upstream(), tile.KernelMulMVExt) - 1); rep.Pairs[0].PredictedDeltaPct != want {
		t.Errorf("upstream as mul_mm vs as mul_mv_ext: %.3f%%, want %.3f%%", rep.Pairs[0].PredictedDeltaPct, want)
	}
}

// TestForcedKernelErrors: a kernel column that names no kernel, a kernel of
// the other op or one outside its limits is an error naming the column and
// the rule; a forced mul_mm on a K tail the model does not time is a row
// not modelled, with the reason.
func TestForcedKernelErrors(t *testing.T) {
	head := "# chip\top\ttype_a\ttype_b\tm\tk\tn\tvariant\tus_per_run\tkernel\n"
	row := func(typ, k, n, kern string) string {
		return head + "M4 Pro 20-core GPU\tMUL_MAT\t" + typ + "\tf32\t4096\t" + k + "\t" + n + "\tupstream\t100\t" + kern + "\n"
	}
	for _, tc := range []struct{ tsv, want string }{
		{row("q4_0", "4096", "8", "mul_mx"), `kernel: unknown kernel "mul_mx"`},
		{row("q4_0", "4096", "8", "mul_mv_id"), "kernel: kernel mul_mv_id: computes mul_mat_id"},
		{row("q4_0", "4096", "64", "mul_mv_ext"), "kernel: mul_mv_ext: n = 64: must be in [2, 8]"},
	} {
		rows, err := hw.ParseTSV(strings.NewReader(tc.tsv), "k.tsv")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Match(rows, MatchOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "k.tsv: line 2") {
			t.Errorf("%q: %v, want an error naming line 2 and %q", tc.tsv, err, tc.want)
		}
	}
	c := matchTSV(t, row("f16", "4100", "8", "mul_mm"), "tail.tsv")[0]
	if c.Modelled || !strings.Contains(c.Reason, "K tail") {
		t.Errorf("f16 mul_mm at k = 4100: modelled %v, reason %q", c.Modelled, c.Reason)
	}
	moe := "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\tkernel\n" +
		"M1 Pro 16-core GPU\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t8\tupstream\t300\tmul_mm_id\n"
	if c := matchTSV(t, moe, "moe.tsv")[0]; c.Kernel != KernelMulMMID || c.Note != "kernel mul_mm_id is forced: llama.cpp runs mul_mv_id here (n < 32 tokens)" {
		t.Errorf("mul_mm_id at n = 8: %s, note %q", c.Kernel, c.Note)
	}
	if c := matchTSV(t, row("q4_0", "4096", "8", "auto"), "auto.tsv")[0]; c.Kernel != KernelMulMVExt || c.Note != "" {
		t.Errorf("kernel auto: %s, note %q: want llama.cpp's choice", c.Kernel, c.Note)
	}
}
