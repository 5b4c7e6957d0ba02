package hw

// The two calibration files under testdata/ are copies of the real
// measurement sets (docs/sources.md); every other TSV here is constructed to the
// documented format, not captured (see testdata/README.md).

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func parseTSVFile(t *testing.T, name string) ([]Row, error) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ParseTSV(f, name)
}

func TestParseTSVCalibration(t *testing.T) {
	tests := []struct {
		file, chip, path, stat string
		rows                   int
		firstN                 int
		firstUS                float64
	}{
		{"m1pro-16c-simdgroup-q4_0.tsv", "M1 Pro 16-core GPU", PathSimdgroup, "min-of-3", 12, 8, 301.4},
		{"m5-10c-tensor-q4_0.tsv", "M5 10-core GPU", PathTensor, "single-pass", 10, 32, 1118.0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			rows, err := parseTSVFile(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.rows {
				t.Fatalf("%d rows, want %d", len(rows), tc.rows)
			}
			for i, r := range rows {
				if r.Chip != tc.chip || r.GPUPath != tc.path || r.Statistic != tc.stat || r.Op != OpMulMatID ||
					!r.HasTime || r.HasDelta || r.Line != i+2 || r.Source != tc.file {
					t.Errorf("row %d = %+v", i, r)
				}
				if want := []string{"upstream", "halftile"}[i%2]; r.Variant != want {
					t.Errorf("row %d variant %q, want %q", i, r.Variant, want)
				}
				if !strings.HasPrefix(r.Params.Vars(), "type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=") ||
					!strings.HasSuffix(r.Params.Vars(), ",k=2048") {
					t.Errorf("row %d params %s", i, r.Params.Vars())
				}
			}
			if n := mustInt(t, rows[0].Params, "n"); n != tc.firstN || rows[0].USPerRun != tc.firstUS {
				t.Errorf("first row n=%d us=%v", n, rows[0].USPerRun)
			}
		})
	}
}

func TestParseTSVReorderedMatchesOriginal(t *testing.T) {
	orig, err := parseTSVFile(t, "m1pro-16c-simdgroup-q4_0.tsv")
	if err != nil {
		t.Fatal(err)
	}
	re, err := parseTSVFile(t, "m1pro-reordered.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(re) != len(orig) {
		t.Fatalf("%d rows, want %d", len(re), len(orig))
	}
	for i := range orig {
		a, b := orig[i], re[i]
		if !a.Params.Equal(b.Params) || a.Chip != b.Chip || a.GPUPath != b.GPUPath || a.Variant != b.Variant ||
			a.USPerRun != b.USPerRun || a.Statistic != b.Statistic || a.Op != b.Op {
			t.Errorf("row %d differs:\n%+v\n%+v", i, a, b)
		}
	}
	// Comment, header, 6 rows, blank, comment, 6 rows.
	if re[0].Line != 3 || re[6].Line != 11 {
		t.Errorf("lines %d, %d; want 3, 11", re[0].Line, re[6].Line)
	}
}

// TestParseTSVTrailingTabs: a trailing tab on the header and on rows (as
// spreadsheet exports write them) names no column and holds no cell.
func TestParseTSVTrailingTabs(t *testing.T) {
	orig, err := parseTSVFile(t, "m1pro-16c-simdgroup-q4_0.tsv")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/m1pro-16c-simdgroup-q4_0.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		b.WriteString(line)
		if strings.Contains(line, "\t") {
			b.WriteString("\t")
		}
		b.WriteString("\n")
	}
	rows, err := ParseTSV(strings.NewReader(b.String()), "trailing.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(orig) {
		t.Fatalf("%d rows, want %d", len(rows), len(orig))
	}
	for i := range orig {
		if a, b := orig[i], rows[i]; !a.Params.Equal(b.Params) || a.Variant != b.Variant || a.USPerRun != b.USPerRun || a.Statistic != b.Statistic {
			t.Errorf("row %d differs:\n%+v\n%+v", i, a, b)
		}
	}
}

func TestParseTSVRelative(t *testing.T) {
	rows, err := parseTSVFile(t, "m1pro-relative.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-1.0, -37.3, -38.5, -37.9, -20.8, -11.1}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.HasTime || !r.HasDelta || r.DeltaPct != want[i] || r.Baseline != "upstream" || r.Variant != "halftile" {
			t.Errorf("row %d = %+v", i, r)
		}
	}
}

func TestParseTSVMalformedFiles(t *testing.T) {
	rows, err := parseTSVFile(t, "bad-cells.tsv")
	if err == nil || rows != nil {
		t.Fatalf("want an error and no rows, got %d rows", len(rows))
	}
	want := []string{
		`bad-cells.tsv: line 3: column "us_per_run": value "abc": want a positive decimal number`,
		`bad-cells.tsv: line 4: column "n": value "-32": want a positive integer`,
		`bad-cells.tsv: line 5: column "op": value "MUL_MAT_IDX": want MUL_MAT_ID, MUL_MAT_ID_FUSION or MUL_MAT`,
		`bad-cells.tsv: line 6: column "gpu_path": value "gpu"`,
		`bad-cells.tsv: line 7: 12 cells, the header has 13 columns`,
		`bad-cells.tsv: line 8: duplicate of line 2`,
		`bad-cells.tsv: line 9: column "n_used": value "256": want at most n_experts (128)`,
		`bad-cells.tsv: line 10: column "us_per_run": value "NaN"`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if got := strings.Count(msg, "\n") + 1; got != len(want) {
		t.Errorf("%d errors, want %d:\n%s", got, len(want), msg)
	}
	var le *LineError
	var ce *CellError
	if !errors.As(err, &le) || le.Line != 3 || !errors.As(err, &ce) || ce.Column != "us_per_run" || ce.Value != "abc" {
		t.Errorf("errors.As: %+v %+v", le, ce)
	}

	_, err = parseTSVFile(t, "missing-column.tsv")
	if err == nil || !strings.Contains(err.Error(), "missing required column(s) k") ||
		!strings.Contains(err.Error(), "header has: chip, gpu_path, op, type_a, type_b, n_experts, n_used, m, n, variant, us_per_run") {
		t.Errorf("missing column: %v", err)
	}
}

const tsvHead = "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"

func TestParseTSVCases(t *testing.T) {
	tests := []struct {
		name  string
		input string
		rows  int
		err   string // non-empty: error containing this, and no rows
		check func(t *testing.T, rows []Row)
	}{
		{"empty", "", 0, "empty file", nil},
		{"blank only", "\n\n  \n", 0, "empty file", nil},
		{"comments only", "# just a comment\n", 0, "no header line", nil},
		{"header only", tsvHead, 0, "header but no data rows", nil},
		{"data before header", "M5\tMUL_MAT_ID\n" + tsvHead, 0, "line 1: data before the header", nil},
		{"duplicate column", "# chip\tchip\top\n", 0, `names column "chip" twice`, nil},
		{"empty column name", "# chip\t\top\n", 0, "column 2 has no name", nil},
		{"no measurement columns", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\n", 0,
			"want either (variant, us_per_run) or (baseline, variant, delta_pct)", nil},
		{"good with b and crlf", strings.ReplaceAll("# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tb\tvariant\tus_per_run\textra\n"+
			"M5\tMUL_MAT_ID\tq4_0\tf32\t32\t4\t2880\t2880\t512\t1\tupstream\t533.28\twhatever\n", "\n", "\r\n"), 1, "",
			func(t *testing.T, rows []Row) {
				if b, _ := rows[0].Params.Bool("b"); !b || rows[0].GPUPath != "" || rows[0].Statistic != "" {
					t.Errorf("row = %+v", rows[0])
				}
			}},
		{"fusion defaults", tsvHead + "M5\tMUL_MAT_ID_FUSION\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1118\n", 1, "",
			func(t *testing.T, rows []Row) {
				if got := rows[0].Params.Vars(); got != "type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048,o=1,mul=0" {
					t.Errorf("params %s", got)
				}
			}},
		{"dense without moe columns", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tvariant\tus_per_run\n" +
			"M5\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\t240.12\n", 1, "",
			func(t *testing.T, rows []Row) {
				if got := rows[0].Params.Vars(); got != "type_a=q4_0,type_b=f32,m=4096,n=8,k=14336" {
					t.Errorf("params %s", got)
				}
			}},
		{"moe row without moe columns", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tvariant\tus_per_run\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t768\t2048\t32\tupstream\t1\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t768\t2048\t64\tupstream\t1\n", 0,
			"missing column(s) n_experts, n_used, required for MUL_MAT_ID rows (first at line 2); header has: chip, op", nil},
		{"dense row with moe cells", tsvHead + "M5\tMUL_MAT\tq4_0\tf32\t8\t2\t4096\t14336\t8\tupstream\t240\n", 0,
			`column "n_experts": value "8": want empty on a MUL_MAT row`, nil},
		{"mixed file", tsvHead + "M5\tMUL_MAT\tq4_0\tf32\t\t\t4096\t14336\t8\tupstream\t240\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1118\n", 2, "", nil},
		{"zero time", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t0\n", 0, `value "0": want a positive decimal`, nil},
		{"tiny time", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1e-300\n", 0,
			`line 2: column "us_per_run": value "1e-300": want a positive decimal number of microseconds per run, in [0.001, 1e+09]`, nil},
		{"huge time", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1e300\n", 0,
			`line 2: column "us_per_run": value "1e300": want a positive decimal number of microseconds per run, in [0.001, 1e+09]`, nil},
		{"times at the bounds", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t0.001\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t64\tupstream\t1e9\n", 2, "", nil},
		{"inf time", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\tInf\n", 0, `value "Inf"`, nil},
		{"bad b", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tb\tvariant\tus_per_run\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\t2\tupstream\t5\n", 0, `column "b": value "2": want 0, 1 or empty`, nil},
		{"bad type", tsvHead + "M5\tMUL_MAT_ID\tq4 0\tf32\t128\t8\t768\t2048\t32\tupstream\t5\n", 0, `column "type_a": value "q4 0"`, nil},
		{"empty chip and variant", tsvHead + "\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\t\t5\n", 0, `column "chip"`, nil},
		{"plus sign int", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t+768\t2048\t32\tupstream\t5\n", 0, `column "m": value "+768"`, nil},
		{"relative missing baseline", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\t\thalftile\t-37\n", 0, `column "baseline": value ""`, nil},
		{"relative self baseline", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\thalftile\thalftile\t-37\n", 0, `a variant other than "halftile"`, nil},
		{"relative below -100", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\thalftile\t-100\n", 0, `value "-100": want a decimal percentage above -100`, nil},
		{"relative above +10000", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\thalftile\t1e300\n", 0,
			`line 2: column "delta_pct": value "1e300": want a decimal percentage above -100 and at most 10000`, nil},
		{"relative at the bounds", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\thalftile\t10000\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t64\tupstream\thalftile\t-99.99\n", 2, "", nil},
		{"both forms, one each", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tus_per_run\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\t\tupstream\t1118\t\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\thalftile\t\t-1.2\n", 2, "",
			func(t *testing.T, rows []Row) {
				if !rows[0].HasTime || rows[0].HasDelta || rows[1].HasTime || !rows[1].HasDelta {
					t.Errorf("rows = %+v", rows)
				}
			}},
		{"both forms, neither", "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tbaseline\tvariant\tus_per_run\tdelta_pct\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\t\tupstream\t\t\n", 0, `column "delta_pct": value ""`, nil},
		{"kernel columns", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tbaseline\tvariant\tdelta_pct\tkernel\tbaseline_kernel\n" +
			"M4 Pro\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\tupstream\t-50.5\tmul_mm\tmul_mv_ext\n" +
			"M4 Pro\tMUL_MAT\tq4_0\tf32\t4096\t14336\t5\tupstream\ttile64x8\t-37.1\tmul_mm\t\n", 2, "",
			func(t *testing.T, rows []Row) {
				if rows[0].Kernel != "mul_mm" || rows[0].BaselineKernel != "mul_mv_ext" || rows[1].Kernel != "mul_mm" || rows[1].BaselineKernel != "" {
					t.Errorf("kernels %q/%q and %q/%q", rows[0].Kernel, rows[0].BaselineKernel, rows[1].Kernel, rows[1].BaselineKernel)
				}
			}},
		{"self baseline on one kernel", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tbaseline\tvariant\tdelta_pct\tkernel\tbaseline_kernel\n" +
			"M4 Pro\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\tupstream\t-50.5\tmul_mm\tmul_mm\n", 0, "or a baseline_kernel other than the kernel", nil},
		{"baseline_kernel on an absolute row", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tvariant\tus_per_run\tbaseline_kernel\n" +
			"M4 Pro\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\t506.4\tmul_mm\n", 0, `column "baseline_kernel": value "mul_mm": want empty on a row without delta_pct`, nil},
		{"bad kernel", "# chip\top\ttype_a\ttype_b\tm\tk\tn\tvariant\tus_per_run\tkernel\n" +
			"M4 Pro\tMUL_MAT\tq4_0\tf32\t4096\t14336\t8\tupstream\t506.4\tmul mm\n", 0, `column "kernel": value "mul mm": want a kernel name`, nil},
		{"all errors kept", tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\tx\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t64\tupstream\t5\n" +
			"M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\ty\n", 0, "line 4: column \"us_per_run\": value \"y\"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseTSV(strings.NewReader(tc.input), "c.tsv")
			if tc.err != "" {
				if err == nil || rows != nil {
					t.Fatalf("want error %q, got %d rows, err %v", tc.err, len(rows), err)
				}
				if !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "c.tsv: ") {
					t.Errorf("error %q, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.rows {
				t.Fatalf("%d rows, want %d", len(rows), tc.rows)
			}
			if tc.check != nil {
				tc.check(t, rows)
			}
		})
	}
}

func TestParseTSVReadError(t *testing.T) {
	if _, err := ParseTSV(failingReader{}, "f.tsv"); err == nil || !strings.Contains(err.Error(), "f.tsv") {
		t.Errorf("read failure: %v", err)
	}
}

// TestParseTSVNearMissColumns: an unknown column that is a near miss of a
// known one the header lacks is an error naming both; unrelated extra columns,
// near misses of a column the header has and of statistic (which changes no
// prediction) are ignored.
func TestParseTSVNearMissColumns(t *testing.T) {
	const row = "M5\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1118\tx\n"
	head := func(path, extra string) string {
		return "# chip\t" + path + "\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\t" + extra + "\n"
	}
	for _, tc := range []struct{ path, extra, near string }{
		{"gpu-path", "notes", "gpu_path"},
		{"GPU_Path", "notes", "gpu_path"},
		{"gpu path", "notes", "gpu_path"},
		{"gpu_pth", "notes", "gpu_path"},
		{"gpu_path", "baselin", "baseline"},
		{"gpu_path", "Baseline", "baseline"},
		{"gpu_path", "O", "o"},
		{"gpu_path", "Mul", "mul"},
		{"gpu_path", "mull", "mul"},
	} {
		in := head(tc.path, tc.extra) + row
		bad := tc.extra
		if tc.path != "gpu_path" {
			bad = tc.path
		}
		rows, err := ParseTSV(strings.NewReader(in), "c.tsv")
		want := "c.tsv: line 1: column \"" + bad + "\" is not a known column but is close to \"" + tc.near + "\""
		if err == nil || rows != nil || !strings.Contains(err.Error(), want) {
			t.Errorf("header with %q: rows %d, error %v; want %q", bad, len(rows), err, want)
		}
	}
	for _, extra := range []string{"notes", "extra", "x", "os", "bs", "ms", "nr", "date", "commit", "machine", "runs", "us_per_run_2", "type_c_note",
		// near misses of columns the header has, and of statistic
		"us_per_run2", "ms_per_run", "Variants", "M", "statisitc", "statistics"} {
		rows, err := ParseTSV(strings.NewReader(head("gpu_path", extra)+row), "c.tsv")
		if err != nil || len(rows) != 1 {
			t.Errorf("extra column %q: rows %d, error %v; want it ignored", extra, len(rows), err)
		}
	}
}

func TestWithinOneEdit(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true}, {"a", "", true}, {"", "ab", false}, {"abc", "abc", true},
		{"abc", "abd", true}, {"abc", "xbc", true}, {"abc", "ab", true}, {"abc", "bc", true}, {"abc", "abxc", true},
		{"abc", "bac", true}, {"abc", "acb", true}, {"abcd", "badc", false}, {"abc", "cba", false},
		{"abc", "xyc", false}, {"abc", "abcde", false},
	} {
		if got := withinOneEdit(tc.a, tc.b); got != tc.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := withinOneEdit(tc.b, tc.a); got != tc.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestParseTSVUnusedShapeCells: a shape cell the row's op does not use may be
// empty or hold its neutral value; any other value is an error naming the
// column and the op, as n_experts on a MUL_MAT row always was.
func TestParseTSVUnusedShapeCells(t *testing.T) {
	const head = "# chip\top\ttype_a\ttype_b\tn_experts\tn_used\tb\tm\tk\tn\to\tmul\tvariant\tus_per_run\n"
	moe := func(op, b, o, mul string) string {
		return "M5\t" + op + "\tq4_0\tf32\t128\t8\t" + b + "\t768\t2048\t32\t" + o + "\t" + mul + "\tupstream\t1118\n"
	}
	dense := func(b, o, mul string) string {
		return "M5\tMUL_MAT\tq4_0\tf32\t\t\t" + b + "\t4096\t14336\t8\t" + o + "\t" + mul + "\tupstream\t240\n"
	}
	for _, tc := range []struct{ name, row, want string }{
		{"o on MUL_MAT_ID", moe(OpMulMatID, "0", "5", ""), `line 2: column "o": value "5": want empty or 1 on a MUL_MAT_ID row, which does not use o`},
		{"mul on MUL_MAT_ID", moe(OpMulMatID, "", "", "1"), `line 2: column "mul": value "1": want empty or 0 on a MUL_MAT_ID row, which does not use mul`},
		{"b on MUL_MAT", dense("1", "", ""), `line 2: column "b": value "1": want empty or 0 on a MUL_MAT row, which does not use b`},
		{"o on MUL_MAT", dense("", "2", ""), `line 2: column "o": value "2": want empty or 1 on a MUL_MAT row, which does not use o`},
		{"mul on MUL_MAT", dense("", "", "x"), `line 2: column "mul": value "x": want empty or 0 on a MUL_MAT row, which does not use mul`},
		{"neutral values", moe(OpMulMatID, "1", "1", "0") + dense("0", "1", "0") + moe(OpMulMatIDFusion, "0", "5", "1"), ""},
		{"empty cells", moe(OpMulMatID, "", "", "") + dense("", "", ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseTSV(strings.NewReader(head+tc.row), "c.tsv")
			if tc.want == "" {
				if err != nil || len(rows) != strings.Count(tc.row, "\n") {
					t.Fatalf("rows %d, error %v", len(rows), err)
				}
				return
			}
			if err == nil || rows != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("rows %d, error %v; want %q", len(rows), err, tc.want)
			}
		})
	}
}
