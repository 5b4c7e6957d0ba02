package main

import (
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// wallClock matches the forms a wall-clock figure takes in simrun's messages
// ("0.23 s wall", "8.063s", "12ms", "1.17e+09 MAC/s", "(3.5e+07 /s)"); the
// model's own rates (GB/s, t/s) are results.
var wallClock = regexp.MustCompile(`\bwall\b|\d(ms|s)\b|MAC/s| /s\b`)

// TestStdoutIsDeterministic: every command's standard output is the same
// bytes at GOMAXPROCS 1 and 2 and holds no wall-clock figure (those go to
// standard error), for the commands the pinned outputs do not cover too.
func TestStdoutIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	calib := filepath.Join("..", "..", "hw", "calibration", "m1pro-16c-simdgroup-q4_0.tsv")
	shape := []string{"--experts", "16", "--used", "4", "--m", "64", "--k", "256", "--n", "32"}
	small := append(shape, "--draws", "1")
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		out, _ := simrunOK(t, append([]string{"sweep", "--shard", s}, small...)...)
		shards = append(shards, sweepWriteFile(t, dir, strings.ReplaceAll(s, "/", "of")+".csv", out))
	}
	for _, args := range [][]string{
		{"help"},
		{"isa"},
		{"chips", "--show", "M5"},
		{"variants", "--show", "tile64x8"},
		{"emulate", "--n", "32", "--m", "64", "--k", "256", "--experts", "4", "--used", "2"},
		append([]string{"simulate"}, small...),
		append([]string{"simulate", "--engine", "detailed"}, small...),
		append([]string{"compare", "upstream", "halftile"}, small...),
		append([]string{"sweep", "--format", "json"}, small...),
		append([]string{"merge"}, shards...),
		{"model", "--preset", "qwen3-30b", "--n", "32", "--draws", "1"},
		{"occupancy", "--variant", "tile64x8"},
		append([]string{"trace", "--out", "-", "--window", "0:2", "--cores", "0"}, shape...),
		{"validate", "--draws", "1", calib},
		{"fit", "--param", "sg_launch_clk@M1 Pro 16-core GPU", "--max-evals", "1", "--draws", "1", "--out-dir", dir, calib},
		{"bench", "--chip", "M1 Pro", "--preset", "qwen3-30b", "-p", "32", "-n", "8"},
	} {
		var outs [2]string
		for i, procs := range []int{1, 2} {
			prev := runtime.GOMAXPROCS(procs)
			out, _ := simrunOK(t, args...)
			runtime.GOMAXPROCS(prev)
			outs[i] = out
		}
		if outs[0] != outs[1] {
			t.Errorf("simrun %s: standard output differs between GOMAXPROCS 1 and 2 at %s", strings.Join(args, " "), firstDiff([]byte(outs[0]), []byte(outs[1])))
		}
		if m := wallClock.FindString(outs[0]); m != "" && args[0] != "help" && args[0] != "isa" {
			t.Errorf("simrun %s: standard output holds a wall-clock figure (%q)", strings.Join(args, " "), m)
		}
	}
}
