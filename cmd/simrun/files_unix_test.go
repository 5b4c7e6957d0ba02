//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readerArgs are the commands that read a file, with the file given as f.
func readerArgs(f string) [][]string {
	return [][]string{
		{"validate", "--draws", "1", f},
		{"fit", "--param", "sg_launch_clk@M1 Pro 16-core GPU", f},
		{"validate", "--baseline", f, "--variant", "halftile", f + "2"},
		{"merge", f},
		{"simulate", "--chip-file", f},
		{"chips", "--chip-file", f},
		{"simulate", "--variant", f},
		{"sweep", "--routing", "file:" + f, "--n", "32"},
		{"model", "--gguf", f},
		{"bench", "--validate", f},
	}
}

// TestReadersRefuseDevicesAndPipes: every reader of a file exits 2 at once on
// a device, a directory and a named pipe without a writer, naming the file
// and what it is.
func TestReadersRefuseDevicesAndPipes(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "/dev/zero: is a device, not a regular file"},
		{fifo, fifo + ": is a named pipe, not a regular file"},
		{dir, dir + ": is a directory"},
	} {
		for _, args := range readerArgs(tc.file) {
			done := make(chan [3]string, 1)
			go func() {
				code, out, errb := simrun(args...)
				done <- [3]string{string(rune('0' + code)), out, errb}
			}()
			select {
			case r := <-done:
				if r[0] != "2" || r[1] != "" || !strings.Contains(r[2], tc.want) {
					t.Errorf("simrun %s: exit %s\n%s%s\nwant exit 2 and %q", strings.Join(args, " "), r[0], r[1], r[2], tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("simrun %s: still running after 20 s", strings.Join(args, " "))
			}
		}
	}
}
