package main

// Measurement files given to validate and fit: the checks every file gets
// whatever its format. The files are constructed here, not captured.

import (
	"strings"
	"testing"
)

// measureTSVHead and measureTSVRow make a one-row calibration TSV.
const (
	measureTSVHead = "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"
	measureTSVRow  = "M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t64\t256\t32\tupstream\t100\n"
)

// TestValidateReadsByteOrderMark: a calibration TSV saved with a UTF-8
// byte-order mark validates like the same file without one.
func TestValidateReadsByteOrderMark(t *testing.T) {
	f := sweepWriteFile(t, t.TempDir(), "bom.tsv", "\xef\xbb\xbf"+measureTSVHead+measureTSVRow)
	code, out, errb := simrunCmd("validate", "--draws", "1", f)
	if code != exitOK || !strings.Contains(out, "all: 1 rows, 1 modelled") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
}

// TestValidateRejectsImplausibleTimes: a measured time outside [0.001, 1e9]
// µs is an error naming the file, line, field and range in a TSV, and a
// skipped line with the same range in a log.
func TestValidateRejectsImplausibleTimes(t *testing.T) {
	dir := t.TempDir()
	huge := sweepWriteFile(t, dir, "huge.tsv", measureTSVHead+strings.Replace(measureTSVRow, "\t100\n", "\t1e300\n", 1))
	code, out, errb := simrunCmd("validate", "--draws", "1", huge)
	want := `huge.tsv: line 2: column "us_per_run": value "1e300": want a positive decimal number of microseconds per run, in [0.001, 1e+09]`
	if code != exitBadUsed || out != "" || !strings.Contains(errb, want) {
		t.Errorf("exit %d\n%s\n%s\nwant exit 2 and %q", code, out, errb, want)
	}
	log := sweepWriteFile(t, dir, "zero.log", "Backend 1/1: MTL0\n  Device description: Apple M1 Pro\n"+
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - 0.00 us/run - 2.10 MFLOP/run - 1.00 GFLOPS\n"+
		"  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=64,k=256): 10 runs - 100.00 us/run - 4.19 MFLOP/run - 41.90 GFLOPS\n")
	code, out, errb = simrunCmd("validate", "--draws", "1", log)
	want = `zero.log: line 3: MUL_MAT_ID perf line: us/run "0.00": zero; want a positive decimal number of microseconds per run, in [0.001, 1e+09] (line skipped)`
	if code != exitOK || !strings.Contains(errb, want) || !strings.Contains(out, "all: 1 rows, 1 modelled") || strings.Contains(out, "Inf") {
		t.Errorf("exit %d\n%s\n%s\nwant exit 0, one row and %q", code, out, errb, want)
	}
}
