package main

// Measurement files given to validate and fit: the checks every file gets
// whatever its format. The files are constructed here, not captured.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// measureTSVHead and measureTSVRow make a one-row calibration TSV.
const (
	measureTSVHead = "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"
	measureTSVRow  = "M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t64\t256\t32\tupstream\t100\n"
)

// hasSummary reports whether validate's summary table has the line of name
// (a chip and path, or "all") with rows rows, modelled of them modelled.
func hasSummary(out, name string, rows, modelled int) bool {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^%s +%d +%d `, regexp.QuoteMeta(name), rows, modelled)).MatchString(out)
}

// TestValidateReadsByteOrderMark: a calibration TSV saved with a UTF-8
// byte-order mark validates like the same file without one.
func TestValidateReadsByteOrderMark(t *testing.T) {
	f := sweepWriteFile(t, t.TempDir(), "bom.tsv", "\xef\xbb\xbf"+measureTSVHead+measureTSVRow)
	code, out, errb := simrun("validate", "--draws", "1", f)
	if code != exitOK || !hasSummary(out, "all", 1, 1) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
}

// TestValidateRejectsImplausibleTimes: a measured time outside [0.001, 1e9]
// µs is an error naming the file, line, field and range in a TSV, and a
// skipped line with the same range in a log.
func TestValidateRejectsImplausibleTimes(t *testing.T) {
	dir := t.TempDir()
	huge := sweepWriteFile(t, dir, "huge.tsv", measureTSVHead+strings.Replace(measureTSVRow, "\t100\n", "\t1e300\n", 1))
	code, out, errb := simrun("validate", "--draws", "1", huge)
	want := `huge.tsv: line 2: column "us_per_run": value "1e300": want a positive decimal number of microseconds per run, in [0.001, 1e+09]`
	if code != exitBadUsed || out != "" || !strings.Contains(errb, want) {
		t.Errorf("exit %d\n%s\n%s\nwant exit 2 and %q", code, out, errb, want)
	}
	log := sweepWriteFile(t, dir, "zero.log", "Backend 1/1: MTL0\n  Device description: Apple M1 Pro\n"+
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - 0.00 us/run - 2.10 MFLOP/run - 1.00 GFLOPS\n"+
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=64,k=256): 10 runs - 100.00 us/run - 4.19 MFLOP/run - 41.90 GFLOPS\n")
	code, out, errb = simrun("validate", "--draws", "1", log)
	want = `zero.log: line 3: MUL_MAT_ID perf line: us/run "0.00": zero; want a positive decimal number of microseconds per run, in [0.001, 1e+09] (line skipped)`
	if code != exitOK || !strings.Contains(errb, want) || !hasSummary(out, "all", 1, 1) || strings.Contains(out, "Inf") {
		t.Errorf("exit %d\n%s\n%s\nwant exit 0, one row and %q", code, out, errb, want)
	}
}

// TestEmptyMeasurementFiles: a measurement file of any format that yields no
// rows is exit 2 with an error naming the file and what was skipped, in
// validate and fit and for a --baseline file, before the follow-on checks
// (the chip of fit's --param, validate's --variant) can misdirect.
func TestEmptyMeasurementFiles(t *testing.T) {
	dir := t.TempDir()
	const head = "Testing 1 devices\nBackend 1/1: MTL0\n  Device description: Apple M1 Pro\n"
	const perf = "  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - 100.00 us/run - 2.10 MFLOP/run - 21.00 GFLOPS\n"
	headerOnly := sweepWriteFile(t, dir, "header.log", head)
	truncated := sweepWriteFile(t, dir, "truncated.log", head+perf[:len(perf)-40]+"\n")
	sql := sweepWriteFile(t, dir, "truncated.sql", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES "+
		"('MUL_MAT_ID', 'type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256', 'perf', 10\n")
	tsv := sweepWriteFile(t, dir, "header.tsv", measureTSVHead)
	good := sweepWriteFile(t, dir, "good.log", head+perf)
	m1 := "sg_launch_clk@M1 Pro 16-core GPU"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", headerOnly}, "header.log: no measurement rows (no perf line of MUL_MAT_ID"},
		{[]string{"validate", truncated}, "truncated.log: no measurement rows (1 line skipped: 1 malformed (line 4))"},
		{[]string{"validate", sql}, "truncated.sql: no measurement rows (1 line skipped: 1 malformed (line 1))"},
		{[]string{"validate", tsv}, "header.tsv: no measurement rows (header but no data rows)"},
		{[]string{"validate", good, headerOnly}, "header.log: no measurement rows"},
		{[]string{"validate", "--baseline", headerOnly, "--variant", "halftile", good}, "header.log: no measurement rows"},
		{[]string{"validate", "--variant", "halftile", headerOnly}, "header.log: no measurement rows"},
		{[]string{"fit", "--param", m1, headerOnly}, "header.log: no measurement rows"},
		{[]string{"fit", "--param", m1, sql}, "truncated.sql: no measurement rows"},
	} {
		code, out, errb := simrun(tc.args...)
		if code != exitBadUsed || out != "" || !strings.Contains(errb, tc.want) ||
			strings.Contains(errb, "is not among the chips") || strings.Contains(errb, "every row names its variant") {
			t.Errorf("simrun %s: exit %d\nstdout %q\nstderr %q\nwant exit 2, no output and %q",
				strings.Join(tc.args, " "), code, out, errb, tc.want)
		}
	}
}

// TestMeasurementFileGivenTwice: a file given twice, under the same or
// another path to it, or a copy of another file, is exit 2 naming it: its
// rows would count twice (or pair with themselves as --baseline).
func TestMeasurementFileGivenTwice(t *testing.T) {
	dir := t.TempDir()
	a := sweepWriteFile(t, dir, "a.tsv", measureTSVHead+measureTSVRow)
	b := sweepWriteFile(t, dir, "b.tsv", measureTSVHead+measureTSVRow)
	dotA := dir + string(filepath.Separator) + "." + string(filepath.Separator) + "a.tsv"
	const head = "Backend 1/1: MTL0\n  Device description: Apple M1 Pro\n"
	const perfCase = "  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - "
	base := sweepWriteFile(t, dir, "base.log", head+perfCase+"100.00 us/run - 2.10 MFLOP/run - 21.00 GFLOPS\n")
	variant := sweepWriteFile(t, dir, "variant.log", head+perfCase+"90.00 us/run - 2.10 MFLOP/run - 23.30 GFLOPS\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", a, a}, "a.tsv: given twice; give each measurement file once"},
		{[]string{"validate", a, dotA}, "a.tsv: given twice (as " + a + " and " + dotA + ")"},
		{[]string{"validate", a, b}, "b.tsv: the same content as " + a},
		{[]string{"validate", "--baseline", base, "--variant", "halftile", base}, "base.log: given twice"},
		{[]string{"fit", "--param", "sg_launch_clk@M1 Pro 16-core GPU", a, a}, "a.tsv: given twice"},
	} {
		code, out, errb := simrun(tc.args...)
		if code != exitBadUsed || out != "" || !strings.Contains(errb, tc.want) {
			t.Errorf("simrun %s: exit %d\nstdout %q\nstderr %q\nwant exit 2, no output and %q",
				strings.Join(tc.args, " "), code, out, errb, tc.want)
		}
	}
	// distinct files still pair: the baseline's rows are upstream
	code, out, errb := simrun("validate", "--draws", "1", "--baseline", base, "--variant", "halftile", variant)
	if code != exitOK || !strings.Contains(out, "halftile vs upstream") || !hasSummary(out, "all", 2, 2) {
		t.Errorf("--baseline: exit %d\n%s\n%s", code, out, errb)
	}
}

// TestValidateMisspeltColumn: a TSV column that is a near miss of a known
// one (gpu-path for gpu_path) stops validate instead of being ignored, which
// would simulate the chip's default path; an unrelated extra column is fine.
func TestValidateMisspeltColumn(t *testing.T) {
	dir := t.TempDir()
	typo := sweepWriteFile(t, dir, "typo.tsv", strings.Replace(measureTSVHead, "gpu_path", "gpu-path", 1)+measureTSVRow)
	code, out, errb := simrun("validate", "--draws", "1", typo)
	want := `typo.tsv: line 1: column "gpu-path" is not a known column but is close to "gpu_path"`
	if code != exitBadUsed || out != "" || !strings.Contains(errb, want) {
		t.Errorf("exit %d\n%s\n%s\nwant exit 2 and %q", code, out, errb, want)
	}
	extra := sweepWriteFile(t, dir, "extra.tsv", strings.Replace(measureTSVHead, "\n", "\tnotes\n", 1)+
		strings.Replace(measureTSVRow, "\n", "\tmeasured twice\n", 1))
	if code, out, errb := simrun("validate", "--draws", "1", extra); code != exitOK || !hasSummary(out, "all", 1, 1) {
		t.Errorf("extra column: exit %d\n%s\n%s", code, out, errb)
	}
}

// TestValidateSaysWhySQLRowsAreSkipped: sql rows of the grad and support
// modes are skipped with their mode named, not as "not a matmul op".
func TestValidateSaysWhySQLRowsAreSkipped(t *testing.T) {
	data := readFile(t, filepath.Join("..", "..", "hw", "testdata", "perf-m5.sql"))
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	var grad string
	for _, l := range lines {
		if strings.HasPrefix(l, "INSERT") {
			grad = strings.Replace(l, "'perf'", "'grad'", 1)
			break
		}
	}
	if grad == "" {
		t.Fatal("no INSERT line in perf-m5.sql")
	}
	f := sweepWriteFile(t, t.TempDir(), "grad.sql", data+grad+"\n")
	code, _, errb := simrun("validate", f)
	if code != exitOK || !strings.Contains(errb, "1 lines of MUL_MAT_ID skipped (grad mode)") || strings.Contains(errb, "MUL_MAT_ID skipped (not a matmul op)") {
		t.Errorf("exit %d, stderr %q; want the grad row skipped as grad mode", code, errb)
	}
}
