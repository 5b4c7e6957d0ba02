package hw

import (
	"bytes"
	"embed"
	"io/fs"
	"path"
	"slices"
)

// The calibration sets measured on real Apple hardware (described in
// docs/accuracy.md and docs/sources.md), embedded so the
// default experiment and `simrun validate` work on a fresh clone.
//
//go:embed calibration/*.tsv
var calibrationFS embed.FS

// CalibrationFiles returns the names of the embedded calibration sets.
func CalibrationFiles() []string {
	entries, _ := fs.ReadDir(calibrationFS, "calibration")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// CalibrationRows parses every embedded calibration set.
func CalibrationRows() ([]Row, error) {
	var rows []Row
	for _, name := range CalibrationFiles() {
		data, err := calibrationFS.ReadFile(path.Join("calibration", name))
		if err != nil {
			return nil, err
		}
		r, err := ParseTSV(bytes.NewReader(data), name)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}
