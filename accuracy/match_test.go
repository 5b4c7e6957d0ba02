package accuracy

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/hw"
)

// a small constructed set: one absolute pair on the M1 Pro, a relative row, an
// n=8 row (mul_mv_id) and a weight type ggml's Metal backend has no matmul
// kernel for.
const sampleTSV = "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\tstatistic\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream\t120.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\thalftile\t90.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t8\tupstream\t30.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\ttq1_0\tf32\t32\t4\t256\t512\t64\tupstream\t150.0\tmin-of-3\n"

func sampleCases(t *testing.T) []Case {
	t.Helper()
	return matchTSV(t, sampleTSV, "sample.tsv")
}

func TestMatchKernelsAndReasons(t *testing.T) {
	cases := sampleCases(t)
	if len(cases) != 4 {
		t.Fatalf("%d cases, want 4", len(cases))
	}
	if !cases[0].Modelled || cases[0].Kernel != KernelMulMMID || cases[0].Problem.Tokens != 64 {
		t.Errorf("row 1: %+v, want a modelled mul_mm_id case", cases[0])
	}
	if !cases[2].Modelled || cases[2].Kernel != KernelMulMVID || cases[2].Problem.Tokens != 8 {
		t.Errorf("n=8 row: modelled=%v kernel=%s reason=%q, want a modelled mul_mv_id case", cases[2].Modelled, cases[2].Kernel, cases[2].Reason)
	}
	if cases[3].Modelled || !strings.Contains(cases[3].Reason, "tq1_0: ggml's Metal backend has no matmul kernel") {
		t.Errorf("tq1_0 row: modelled=%v reason=%q", cases[3].Modelled, cases[3].Reason)
	}
	if cases[0].Chip != cases[1].Chip {
		t.Error("rows of one chip must share one Chip value")
	}
}

func TestMatchErrors(t *testing.T) {
	for _, tc := range []struct {
		tsv, want string
	}{
		{strings.Replace(sampleTSV, "M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream", "M9 Hyper\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream", 1), "unknown chip \"M9 Hyper\""},
		{strings.Replace(sampleTSV, "\thalftile\t", "\tquartertile\t", 1), "unknown variant \"quartertile\""},
		{strings.Replace(sampleTSV, "M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream", "M1 Pro 16-core GPU\twarp\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream", 1), "gpu_path"},
	} {
		rows, err := hw.ParseTSV(strings.NewReader(tc.tsv), "bad.tsv")
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) && !strings.Contains(err.Error(), "gpu_path") {
				t.Errorf("parse: %v, want %q", err, tc.want)
			}
			continue
		}
		if _, err := Match(rows, MatchOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.tsv: line") {
			t.Errorf("Match: %v, want an error naming the line and %q", err, tc.want)
		}
	}
	// a log without a device description needs --chip
	rows := []hw.Row{{Source: "x.log", Line: 3, Op: hw.OpMulMatID}}
	if _, err := Match(rows, MatchOptions{}); err == nil || !strings.Contains(err.Error(), "no chip") {
		t.Errorf("Match without chip: %v", err)
	}
}

// TestMatchNotesMissingMap0: a mul_mm_id row whose n_used llama.cpp has no
// map0 kernel for is timed with a note saying so; others carry none.
func TestMatchNotesMissingMap0(t *testing.T) {
	tsv := "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n" +
		"M1 Pro 16-core GPU\tMUL_MAT_ID\tq4_0\tf32\t32\t3\t256\t512\t64\tupstream\t100\n" +
		"M1 Pro 16-core GPU\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t256\t512\t64\tupstream\t100\n"
	cases := matchTSV(t, tsv, "used.tsv")
	if !cases[0].Modelled || !strings.Contains(cases[0].Note, "n_used = 3") || cases[1].Note != "" {
		t.Errorf("notes: n_used 3 %q (modelled %v), n_used 4 %q", cases[0].Note, cases[0].Modelled, cases[1].Note)
	}
}

// matchTSV parses a calibration TSV and matches its rows to cases.
func matchTSV(t *testing.T, tsv, source string) []Case {
	t.Helper()
	rows, err := hw.ParseTSV(strings.NewReader(tsv), source)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Match(rows, MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cases
}
