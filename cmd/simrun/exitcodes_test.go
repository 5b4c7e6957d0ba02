package main

// The exit-code rule (README, "Exit codes"): 0 done; 1 the command ran and
// a check it makes failed; 2 bad input or an output that could not be
// written, and then no result on stdout.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodeRule runs every command on inputs of each class and checks its
// exit code, and that a command exiting 2 prints no result.
func TestExitCodeRule(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("x", 300)) // longer than a file name may be
	const head = "Backend 1/1: MTL0\n  Device description: Apple M1 Pro\n"
	const perf = "  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - 100.00 us/run - 2.10 MFLOP/run - 21.00 GFLOPS\n"
	cut := sweepWriteFile(t, dir, "cut.log", head+perf+perf[:50])
	noisy := sweepWriteFile(t, dir, "noisy.log", head+perf[:50]+"\n"+perf)
	old := sweepWriteFile(t, dir, "old.png", "the previous picture")
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"help"}, exitOK, ""},
		{[]string{"chips", "--show", "M5"}, exitOK, ""},
		// a flag given an empty value is an error, never its default
		{[]string{"chips", "--show", ""}, exitBadUsed, `--show "": empty`},
		{[]string{"variants", "--show", ""}, exitBadUsed, `--show "": empty`},
		{[]string{"validate", "--variant", "", noisy}, exitBadUsed, `--variant "": empty`},
		{[]string{"occupancy", "--plot", " "}, exitBadUsed, `--plot " ": empty`},
		{[]string{"nosuchcommand"}, exitBadUsed, "unknown command"},
		{[]string{"simulate", "--nosuchflag"}, exitBadUsed, "flag provided but not defined"},
		// an output that cannot be written is exit 2, like bad input
		{[]string{"occupancy", "--plot", long + ".png"}, exitBadUsed, "file name too long"},
		{[]string{"trace", "--n", "32", "--out", long + ".json"}, exitBadUsed, "file name too long"},
		{[]string{"compare", "upstream", "halftile", "--n", "32", "--plot", long + ".svg"}, exitBadUsed, "file name too long"},
		{[]string{"trace", "--n", "32", "--m", "64", "--experts", "16", "--used", "4", "--k", "256", "--window", "10000:11000", "--sample", "100", "--png", old}, exitBadUsed, "--png: timeline picture"},
		// a log cut inside its last line is not whole; a malformed line
		// inside a log is skipped with a warning
		{[]string{"validate", "--draws", "1", cut}, exitBadUsed, "cut.log: line 4: "},
		{[]string{"validate", "--draws", "1", noisy}, exitOK, "noisy.log: line 3: "},
		// checks that failed
		{[]string{"occupancy", "--threads", "1024", "--regs", "128"}, exitFailed, ""},
		{[]string{"sweep", "--variant", "halftile-dual", "--n", "32", "--draws", "1"}, exitFailed, "1 of 1 points failed"},
	} {
		code, out, errb := simrun(tc.args...)
		if code != tc.code || !strings.Contains(errb, tc.want) || code == exitBadUsed && out != "" {
			t.Errorf("simrun %s: exit %d, stderr %q, %d bytes of output; want exit %d and %q",
				strings.Join(tc.args, " "), code, errb, len(out), tc.code, tc.want)
		}
	}
	if b, _ := os.ReadFile(old); string(b) != "the previous picture" {
		t.Errorf("a picture that could not be drawn replaced the previous file: %q", b)
	}
}
