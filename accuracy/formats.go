package accuracy

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
)

// Formats are the report's output formats (Write).
var Formats = []string{"text", "json", "markdown", "doc"}

// Write prints the report in a format of Formats: text (tables width
// characters wide, 0: every column), json, markdown, or doc (the whole of
// docs/accuracy.md, which names the command that made it).
func (rep *Report) Write(w io.Writer, format string, width int, command string) error {
	switch format {
	case "json":
		return rep.WriteJSON(w)
	case "markdown":
		return rep.WriteMarkdown(w)
	case "doc":
		chipList, err := chips.All()
		if err != nil {
			return err
		}
		return rep.WriteAccuracyDoc(w, command, chipList)
	}
	if err := CheckFormat(format); err != nil {
		return err
	}
	return rep.WriteText(w, width)
}

// CheckFormat reports a format not in Formats, naming the flag.
func CheckFormat(format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("--format %q: allowed %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// ValidateCalibration validates the embedded calibration sets (the
// headline experiment).
func ValidateCalibration(s *sim.Simulator, opt sim.Options) (*Report, error) {
	rows, err := hw.CalibrationRows()
	if err != nil {
		return nil, err
	}
	cases, err := Match(rows, MatchOptions{})
	if err != nil {
		return nil, err
	}
	return Validate(cases, s, opt)
}
