package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// updatePins rewrites testdata/pinned from the current outputs. Use it only on
// purpose (a change meant to move these numbers), and say in the change which
// numbers moved and why:
//
//	go test ./cmd/simrun -run TestPinnedOutputs -update-pins
var updatePins = flag.Bool("update-pins", false, "rewrite testdata/pinned with the current outputs")

// pins are the commands whose standard output is pinned byte for byte: the
// headline, validation of both calibration sets and of a log with every kernel
// llama.cpp dispatches, sweeps, compare, traces, occupancy, emulation,
// simulation on both engines and paths, the golden check and the listings. A
// restructure must leave every one unchanged.
var pins = []struct {
	name string
	args []string
}{
	{"headline", nil},
	{"validate-m1pro-json", []string{"validate", "--format", "json", "../../hw/calibration/m1pro-16c-simdgroup-q4_0.tsv"}},
	{"validate-m5-json", []string{"validate", "--format", "json", "../../hw/calibration/m5-10c-tensor-q4_0.tsv"}},
	{"validate-log-json", []string{"validate", "--format", "json", "../../hw/testdata/perf-m1pro.log"}},
	{"sweep-csv", []string{"sweep", "--chip", "M1 Pro 16-core GPU,M5 10-core GPU", "--variant", "upstream,halftile", "--n", "32,256", "--format", "csv"}},
	{"sweep-json", []string{"sweep", "--chip", "M1 Pro 16-core GPU,M5 10-core GPU", "--variant", "upstream,halftile", "--n", "32,256", "--format", "json"}},
	{"sweep-iq-csv", []string{"sweep", "--chip", "M2 Max 38-core GPU", "--variant", "upstream,halftile", "--type", "iq2_xs", "--routing", "zipf:1", "--n", "64", "--format", "csv"}},
	{"compare-csv", []string{"compare", "upstream", "halftile", "--chip", "M1 Pro 16-core GPU,M5 10-core GPU", "--n", "32,128", "--format", "csv"}},
	{"trace-m1pro", []string{"trace", "--variant", "halftile", "--n", "32", "--window", "0:5", "--cores", "0", "--out", "-"}},
	{"trace-m5", []string{"trace", "--chip", "M5 10-core GPU", "--variant", "halftile", "--n", "32", "--window", "0:3", "--cores", "0", "--out", "-"}},
	{"occupancy-m1pro", []string{"occupancy", "--variant", "halftile"}},
	{"occupancy-m5", []string{"occupancy", "--chip", "M5 10-core GPU", "--variant", "halftile-dual"}},
	{"emulate-iq2xs", []string{"emulate", "--type", "iq2_xs", "--n", "64"}},
	{"emulate-tensor", []string{"emulate", "--type", "q4_0", "--n", "64", "--path", "tensor", "--variant", "halftile"}},
	{"emulate-mv-ext", []string{"emulate", "--op", "mul_mat", "--m", "256", "--k", "256", "--n", "3"}},
	{"emulate-mv-id", []string{"emulate", "--n", "8"}},
	{"simulate-m1pro", []string{"simulate", "--n", "64", "--variant", "halftile"}},
	{"simulate-m5", []string{"simulate", "--chip", "M5 10-core GPU", "--n", "256", "--variant", "halftile"}},
	{"simulate-m1pro-detailed", []string{"simulate", "--n", "32", "--m", "256", "--draws", "1", "--variant", "halftile", "--engine", "detailed"}},
	{"simulate-m5-detailed", []string{"simulate", "--chip", "M5 10-core GPU", "--n", "32", "--m", "256", "--draws", "1", "--variant", "halftile", "--engine", "detailed"}},
	{"simulate-mv", []string{"simulate", "--n", "8", "--type", "iq3_s"}},
	{"golden", []string{"golden", "../../golden/testdata"}},
	{"model", []string{"model", "--preset", "qwen3-30b", "--n", "512"}},
	{"variants", []string{"variants"}},
	{"variants-show", []string{"variants", "--show", "halftile"}},
	{"chips", []string{"chips"}},
}

// TestPinnedOutputs runs every pinned command and compares its standard output
// with testdata/pinned/NAME.out byte for byte.
func TestPinnedOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("pinned outputs take a few seconds")
	}
	dir := filepath.Join("testdata", "pinned")
	if *updatePins {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pins {
		t.Run(p.name, func(t *testing.T) {
			out, _ := simrunOK(t, p.args...)
			file := filepath.Join(dir, p.name+".out")
			if *updatePins {
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (regenerate on purpose with -update-pins)", err)
			}
			if !bytes.Equal([]byte(out), want) {
				t.Errorf("simrun %s: output differs from %s at %s (regenerate on purpose with -update-pins)",
					strings.Join(p.args, " "), file, firstDiff(want, []byte(out)))
			}
		})
	}
}

// firstDiff describes the first line where got differs from want.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + clip(w) + "\n  got  " + clip(g)
		}
	}
	return "(no differing line)"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
