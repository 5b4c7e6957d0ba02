package chips

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/metalsim/metalsim/fileio"
)

// Reading chips: the embedded chip files, their bins and inheritance, and a
// user's chip file, with errors that name the file and the field.

//go:embed data/*.json
var chipFS embed.FS

// All returns every embedded chip, sorted by name. Each call returns copies
// of its own (Chip.Clone), which the caller may change.
func All() ([]*Chip, error) {
	chips, err := embeddedChips()
	if err != nil {
		return nil, err
	}
	out := make([]*Chip, len(chips))
	for i, c := range chips {
		out[i] = c.Clone()
	}
	return out, nil
}

// embeddedChips parses the embedded chip files once, for every validation
// row and sweep point that looks its chip up by name. Callers get clones,
// never these.
var embeddedChips = sync.OnceValues(parseEmbeddedChips)

func parseEmbeddedChips() ([]*Chip, error) {
	entries, err := fs.ReadDir(chipFS, "data")
	if err != nil {
		return nil, err
	}
	var out []*Chip
	for _, e := range entries {
		data, err := chipFS.ReadFile(path.Join("data", e.Name()))
		if err != nil {
			return nil, err
		}
		c, err := Parse(data, e.Name())
		if err != nil {
			return nil, err
		}
		bins, err := c.binChips()
		if err != nil {
			return nil, fmt.Errorf("chip file %s: %w", e.Name(), err)
		}
		out = append(out, c)
		out = append(out, bins...)
	}
	slices.SortFunc(out, func(a, b *Chip) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range out {
		if err := c.inherit(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// notInherited names calibrated parameters that calibration_from does not copy:
// the DRAM bandwidth describes the chip's memory system as a whole (a Max has
// twice a Pro's DRAM channels), so each chip keeps its own sourced value, and
// the per-simdgroup issue interval is each file's own (the M1 Pro's calibrated
// value on Apple7/8 chips, a what-if on Apple9). The per-core costs in cycles
// (barrier release, simdgroup launch) are the same core design across a
// generation and are copied.
var notInherited = []string{"dram_bandwidth_gbs", "sg_issue_interval_clk"}

// inherit copies the calibrated parameters of CalibrationFrom into c.
func (c *Chip) inherit(chips []*Chip) error {
	if c.CalibrationFrom == "" {
		return nil
	}
	var from *Chip
	for _, o := range chips {
		if o.Name == c.CalibrationFrom {
			from = o
		}
	}
	if from == nil || from == c || from.CalibrationFrom != "" {
		return fmt.Errorf("chip %s: calibration_from %q: must name another chip that has its own calibration", c.Name, c.CalibrationFrom)
	}
	for _, np := range from.ParamTable() {
		if np.Source != "calibrated" || slices.Contains(notInherited, np.Name) {
			continue
		}
		p := np.Param
		p.Note = fmt.Sprintf("taken from %s (%s); not measured on this chip", from.Name, np.Note)
		p.Source = "calibrated:" + from.Name
		if err := c.SetParam(np.Name, p); err != nil {
			return err
		}
	}
	return nil
}

// MustLookup is Lookup for a name fixed in the program (tests, examples): it
// panics when no embedded chip has that name, as regexp.MustCompile does for
// a bad pattern. Names that come from a user go through Lookup.
func MustLookup(name string) *Chip {
	c, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return c
}

// Lookup finds an embedded chip by name or alias (case-insensitive; a
// leading "Apple " is ignored).
func Lookup(name string) (*Chip, error) {
	chips, err := embeddedChips()
	if err != nil {
		return nil, err
	}
	norm := func(s string) string {
		return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "apple ")
	}
	want := norm(name)
	var names []string
	for _, c := range chips {
		if norm(c.Name) == want {
			return c.Clone(), nil
		}
		for _, a := range c.Aliases {
			if norm(a) == want {
				return c.Clone(), nil
			}
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("unknown chip %q (known: %s; or load one with --chip-file)", name, strings.Join(names, ", "))
}

// LoadFile reads a user's chip file (fileio.ReadFile: a regular file or -,
// under the chip-file cap); calibration_from may name an embedded chip.
func LoadFile(file string) (*Chip, error) {
	c, err := fileio.Load(file, fileio.ChipFile, func(data []byte) (*Chip, error) { return Parse(data, file) })
	if err != nil {
		return nil, err
	}
	if c.CalibrationFrom != "" {
		chips, err := embeddedChips() // read only: inherit copies from them
		if err != nil {
			return nil, err
		}
		if err := c.inherit(chips); err != nil {
			return nil, fmt.Errorf("chip file %s: %w", file, err)
		}
	}
	return c, nil
}

// Parse decodes and validates one chip file. Unknown fields, missing fields,
// missing sources and out-of-range values are errors naming the field.
func Parse(data []byte, file string) (*Chip, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("chip file %s: empty: a chip file holds one JSON object (simrun chips --show NAME prints one to start from)", file)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Chip
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("chip file %s: the file ends inside the chip object (a truncated file?)", file)
		}
		return nil, fmt.Errorf("chip file %s: %w", file, err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("chip file %s: content after the chip object (%v): a chip file holds one JSON object", file, tokOrErr(tok, err))
	}
	if err := errors.Join(c.Validate(), missingFields(data)); err != nil {
		return nil, fmt.Errorf("chip file %s: %w", file, err)
	}
	return &c, nil
}

// missingFields reports what decoding into a Chip cannot see: a required
// field that is absent (every field without omitempty; a missing tensor_path
// would read as false), and a number whose object has no "value" (it would
// read as 0). What Validate reports is left to it: numbers missing altogether
// (no source), an empty name or family, missing classes.
func missingFields(data []byte) error {
	// encoding/json matches keys to fields case-insensitively, and so must this
	object := func(data []byte) (map[string]json.RawMessage, bool) {
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return nil, false
		}
		low := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			low[strings.ToLower(k)] = v
		}
		return low, true
	}
	raw, ok := object(data)
	if !ok {
		return nil // not an object: decoding into Chip has already failed
	}
	var errs []error
	hasValue := func(field string, obj json.RawMessage) {
		keys, ok := object(obj)
		if !ok {
			return // not an object: decoding into Param has already failed
		}
		if _, ok := keys["value"]; !ok {
			errs = append(errs, fmt.Errorf("%s.value: missing (every number needs a value and a source)", field))
		}
	}
	validated := map[string]bool{"name": true, "family": true, "classes": true}
	t := reflect.TypeOf(Chip{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		if validated[name] {
			continue
		}
		v, ok := raw[name]
		switch {
		case f.Type == reflect.TypeOf(Param{}):
			if ok {
				hasValue(name, v)
			}
		case !ok && !strings.Contains(opts, "omitempty"):
			errs = append(errs, fmt.Errorf("%s: missing", name))
		}
	}
	var bins []json.RawMessage
	if json.Unmarshal(raw["bins"], &bins) == nil {
		for i, bin := range bins {
			b, _ := object(bin)
			for _, k := range []string{"name", "aliases", "cores"} {
				if _, ok := b[k]; !ok {
					errs = append(errs, fmt.Errorf("bins[%d].%s: missing", i, k))
				}
			}
			for _, k := range []string{"cores", "dram_bandwidth_gbs"} {
				if v, ok := b[k]; ok {
					hasValue(fmt.Sprintf("bins[%d].%s", i, k), v)
				}
			}
		}
	}
	if classes, ok := object(raw["classes"]); ok {
		for _, cl := range slices.Sorted(maps.Keys(classes)) { // errors in one order
			cc, _ := object(classes[cl])
			for _, k := range []string{"issue_clk", "latency_clk"} {
				if v, ok := cc[k]; ok {
					hasValue("classes."+cl+"."+k, v)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// tokOrErr describes what followed a chip object: the next token, or the
// decoding error that stopped at it.
func tokOrErr(tok json.Token, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v", tok)
}
