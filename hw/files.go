package hw

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/metalsim/metalsim/fileio"
)

// Measurements is what [ReadFiles] read.
type Measurements struct {
	Rows  []Row
	Files []string // the files read, as given (the embedded sets' names without files)
	// Notes are what was read but not kept, one line each for the user: a
	// log's malformed lines ("warning: ... (line skipped)"), the lines of ops
	// that are not matmuls, the cases the backend does not support.
	Notes []string
}

// ReadFiles reads measurement files of any supported format (calibration
// TSV, test-backend-ops console log, its --output sql form), each with
// fileio.ReadFile (a regular file, or - for standard input, under the
// measurement-file cap); with no files it returns the embedded calibration
// sets. A log's malformed lines are skipped with a note; every other problem
// is an error naming the file: a malformed TSV, a log cut off inside a line
// that does not parse, a file that yields no measurement rows, a file of no
// supported format, and a file given twice (the same cleaned path, or the
// same content), whose rows would count twice. With an error, the notes of
// what was read before it are still returned.
func ReadFiles(files []string) (*Measurements, error) {
	if len(files) == 0 {
		rows, err := CalibrationRows()
		return &Measurements{Rows: rows, Files: CalibrationFiles()}, err
	}
	byPath := map[string]string{}
	for _, f := range files {
		if prev, dup := byPath[filepath.Clean(f)]; dup {
			if prev == f {
				return nil, fmt.Errorf("%s: given twice; give each measurement file once", f)
			}
			return nil, fmt.Errorf("%s: given twice (as %s and %s); give each measurement file once", f, prev, f)
		}
		byPath[filepath.Clean(f)] = f
	}
	m := &Measurements{Files: files}
	byContent := map[[sha256.Size]byte]string{}
	for _, f := range files {
		data, err := fileio.ReadFile(f, fileio.Measurements)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		if prev, dup := byContent[sum]; dup && len(data) > 0 {
			return nil, fmt.Errorf("%s: the same content as %s (a copy or a link?); give each measurement file once", f, prev)
		}
		byContent[sum] = f
		if err := m.read(f, data); err != nil {
			return m, err
		}
	}
	return m, nil
}

// read parses one file's data into m.
func (m *Measurements) read(f string, data []byte) error {
	switch Sniff(data) {
	case FormatTSV:
		r, err := ParseTSV(bytes.NewReader(data), f)
		if err != nil {
			return err
		}
		m.Rows = append(m.Rows, r...)
		return nil
	case FormatConsole, FormatSQL:
		lg, err := ParseLog(bytes.NewReader(data), f)
		if err != nil {
			return err
		}
		if lg.Cut != nil {
			return fmt.Errorf("%v: the file ends inside this line (cut off while test-backend-ops was writing it?); give the whole log", *lg.Cut)
		}
		for _, e := range lg.Errors {
			m.Notes = append(m.Notes, fmt.Sprintf("warning: %v (line skipped)", e))
		}
		for _, s := range lg.SkippedOps() {
			why := "not a matmul op"
			if s.Reason != "other op" {
				why = s.Reason // the sql rows of another mode (grad, support)
			}
			op := s.Op
			if op == "" {
				op = "backend notices"
			}
			m.Notes = append(m.Notes, fmt.Sprintf("%s: %d lines of %s skipped (%s)", f, s.Lines, op, why))
		}
		for _, u := range lg.Unsupported {
			m.Notes = append(m.Notes, fmt.Sprintf("%s: line %d: %s not supported by the backend", f, u.Line, u.Op))
		}
		if err := lg.CheckRows(f); err != nil {
			return err
		}
		m.Rows = append(m.Rows, lg.Rows...)
		return nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	switch {
	case first == "":
		return fmt.Errorf("%s: empty file (want a calibration TSV, a test-backend-ops log or its --output sql form)", f)
	case strings.Contains(first, "\t"):
		return fmt.Errorf("%s: its first line has tabs but does not start with #: a calibration TSV's header line is \"# \" and the column names (\"# chip<TAB>gpu_path<TAB>op ...\"); nor is it a test-backend-ops log or its --output sql form", f)
	}
	return fmt.Errorf("%s: not a calibration TSV, a test-backend-ops log or its --output sql form", f)
}
