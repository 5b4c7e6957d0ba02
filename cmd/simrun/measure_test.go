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
