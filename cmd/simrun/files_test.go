package main

// Every command that reads a file reads it through fileio: a device, a
// directory or a named pipe is refused at once (never read until memory
// runs out, never waited on), a file over its cap names the cap and how to
// raise it, and - reads standard input where a command takes a file.

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadersCapSize: a file over its kind's cap is exit 2 with the cap and
// METALSIM_MAX_READ, which raises it.
func TestReadersCapSize(t *testing.T) {
	f := sweepWriteFile(t, t.TempDir(), "rows.tsv", measureTSVHead+measureTSVRow)
	t.Setenv("METALSIM_MAX_READ", "64")
	code, out, errb := simrun("validate", "--draws", "1", f)
	want := "measurement file " + f + ": " + strconv.Itoa(len(measureTSVHead+measureTSVRow)) + " B: over the 64 B cap of a measurement file (METALSIM_MAX_READ=SIZE raises every cap"
	if code != exitBadUsed || out != "" || !strings.Contains(errb, want) {
		t.Errorf("exit %d\n%s%s\nwant exit 2 and %q", code, out, errb, want)
	}
	t.Setenv("METALSIM_MAX_READ", "1KiB")
	if code, out, errb := simrun("validate", "--draws", "1", f); code != exitOK {
		t.Errorf("METALSIM_MAX_READ=1KiB: exit %d\n%s%s", code, out, errb)
	}
}

// TestValidateReadsStdin: validate's - is standard input.
func TestValidateReadsStdin(t *testing.T) {
	f := sweepWriteFile(t, t.TempDir(), "rows.tsv", measureTSVHead+measureTSVRow)
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	code, out, errb := simrun("validate", "--draws", "1", "-")
	if code != exitOK || !regexp.MustCompile(`(?m)^all +1 +1 `).MatchString(out) {
		t.Errorf("exit %d\n%s%s", code, out, errb)
	}
}
