package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTracePictures draws a small trace to PNG and SVG and checks the files.
func TestTracePictures(t *testing.T) {
	dir := t.TempDir()
	pngFile, svgFile := filepath.Join(dir, "t.png"), filepath.Join(dir, "t.svg")
	args := append([]string{"trace", "--variant", "halftile", "--window", "0:30", "--png", pngFile, "--svg", svgFile}, smallTraceArgs...)
	code, stdout, errb := simrun(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, w := range []string{"no JSON", "wrote " + pngFile + " (PNG", "wrote " + svgFile + " (SVG", "simdgroup rows",
		"share of the simdgroup time drawn", "barrier wait", "sg3 rows"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
	f, err := os.Open(pngFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", pngFile, err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 200 {
		t.Errorf("PNG is %dx%d", b.Dx(), b.Dy())
	}
	svg, err := os.ReadFile(svgFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	paths := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", svgFile, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			paths++
		}
	}
	if paths < 100 || len(svg) < 10_000 {
		t.Errorf("SVG has %d paths in %d bytes", paths, len(svg))
	}
	// only the pictures were asked for
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the output directory, want 2", len(entries))
	}
}

// TestTracePictureAndJSON writes the JSON too when --out is given, and a
// picture to standard output with the summary on standard error.
func TestTracePictureAndJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.json")
	args := append([]string{"trace", "--window", "0:20", "--cores", "0", "--rows", "4", "--out", out, "--png", "-"}, smallTraceArgs...)
	code, stdout, errb := simrun(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if _, err := png.Decode(strings.NewReader(stdout)); err != nil {
		t.Fatalf("standard output is not a PNG: %v", err)
	}
	for _, w := range []string{"wrote " + out, "wrote standard output (PNG", "4 simdgroup rows (", "more not drawn"} {
		if !strings.Contains(errb, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil || !json.Valid(data) {
		t.Fatalf("--out %s: %v, valid JSON %v", out, err, json.Valid(data))
	}
}

func TestTracePictureBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--png", filepath.Join(dir, "t.jpg")}, `--png "` + filepath.Join(dir, "t.jpg") + `": want a .png file`},
		{[]string{"--svg", filepath.Join(dir, "t.png")}, `--svg "` + filepath.Join(dir, "t.png") + `": want a .svg file`},
		{[]string{"--png", filepath.Join(dir, "no", "t.png")}, "--png"},
		{[]string{"--svg", filepath.Join(dir, "no", "t.svg")}, "--svg"},
		{[]string{"--png", "-", "--svg", "-"}, "only one of --out, --png and --svg may be -"},
		{[]string{"--out", "-", "--png", "-"}, "only one of --out, --png and --svg may be -"},
		{[]string{"--png", filepath.Join(dir, "t.png"), "--rows", "0"}, "--rows = 0"},
		{[]string{"--png", filepath.Join(dir, "t.png"), "--rows", "5000"}, "--rows = 5000: must be in [1, 1024]"},
		{[]string{"--png", filepath.Join(dir, "t.png"), "--rows", "x"}, `invalid value "x" for flag -rows`},
	} {
		args := append(append([]string{"trace"}, tc.args...), smallTraceArgs...)
		requireBadUse(t, args, tc.want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad flags left %d files", len(entries))
	}
}
