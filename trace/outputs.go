package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/metalsim/metalsim/sim"
)

// Outputs are what simrun trace writes: the Perfetto JSON and the Gantt
// pictures, each a file name, "-" (standard output) or "" (none). Errors
// name them by the flags that set them (--out, --png, --svg).
type Outputs struct {
	JSON, PNG, SVG string
	MaxRows        int // most simdgroup rows in a picture
}

// output is one of Outputs: its flag, picture format ("" for the JSON) and
// file.
type output struct{ flag, format, file string }

func (o Outputs) list() []output {
	return []output{{"--out", "", o.JSON}, {"--png", "png", o.PNG}, {"--svg", "svg", o.SVG}}
}

// Check reports, before the run, an output that cannot be written: one the
// caller's check refuses (given its flag, file and extension: ".png",
// ".svg", "" for the JSON), more than one to standard output, two to one
// file (the second would overwrite the first).
func (o Outputs) Check(check func(flag, file, ext string) error) error {
	if o.MaxRows < 1 || o.MaxRows > MaxTimelineRows {
		return fmt.Errorf("--rows = %d: must be in [1, %d]", o.MaxRows, MaxTimelineRows)
	}
	toStdout := 0
	files := map[string]string{}
	for _, out := range o.list() {
		ext := ""
		if out.format != "" {
			ext = "." + out.format
		}
		switch {
		case out.file == "":
			continue
		case out.file == "-":
			toStdout++
			continue
		}
		if err := check(out.flag, out.file, ext); err != nil {
			return err
		}
		if other, ok := files[filepath.Clean(out.file)]; ok {
			return fmt.Errorf("%s %s: the same file as %s; give each output a file of its own", out.flag, out.file, other)
		}
		files[filepath.Clean(out.file)] = out.flag
	}
	if toStdout > 1 {
		return errors.New("only one of --out, --png and --svg may be - (standard output)")
	}
	return nil
}

// Write draws every output of a recorded run before writing any (so that one
// that cannot be drawn leaves every file as it was and prints no summary),
// writes them (write: a file name, or "-"), and prints their summaries to
// the writer it returns: stdout, or stderr when an output took stdout.
func (o Outputs) Write(stdout, stderr io.Writer, tl *Timeline, res *sim.GridResult, write func(file string, b []byte) error) (io.Writer, error) {
	outs := o.list()
	bufs := make([]bytes.Buffer, len(outs))
	var jsonSt PerfettoStats
	picSt := make([]TimelineStats, len(outs))
	summary := stdout
	for i, out := range outs {
		var err error
		switch {
		case out.file == "":
			continue
		case out.format == "":
			jsonSt, err = WritePerfetto(&bufs[i], tl)
		default:
			picSt[i], err = WriteTimeline(&bufs[i], tl, TimelineOptions{Format: out.format, MaxRows: o.MaxRows})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", out.flag, err)
		}
		if out.file == "-" {
			summary = stderr
		}
	}
	for i, out := range outs {
		if out.file != "" {
			if err := write(out.file, bufs[i].Bytes()); err != nil {
				return nil, fmt.Errorf("%s: %w", out.flag, err)
			}
		}
	}
	if o.JSON != "" {
		WritePerfettoSummary(summary, displayName(o.JSON), tl, jsonSt, res)
	} else {
		WriteRunSummary(summary, tl, res)
	}
	for i, out := range outs {
		if out.file != "" && out.format != "" {
			WriteTimelineSummary(summary, displayName(out.file), out.format, tl, picSt[i])
		}
	}
	return summary, nil
}

// displayName is how a summary names an output file: - is standard output.
func displayName(file string) string {
	if file == "-" {
		return "standard output"
	}
	return file
}
