package study

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/fileio"
	"github.com/metalsim/metalsim/tile"
)

// Merge reads the shard files of one sweep (CSV or JSON, as Writer wrote
// them; fileio.ReadFile: regular files or - for standard input, under the
// sweep-output cap), writes the rows as one unsharded run writes them, and returns them.
// It fails, naming the file (and the line, or the JSON row, and the column
// or field), on a foreign file, a row not as Writer writes it (an unknown,
// missing or re-encoded field; text after the JSON document), a row whose
// digest does not match its values (checkDigests), a duplicated point, a
// truncated shard, a format mix or a missing point. Shards may come
// in any order, and a shard that holds no point may be left out.
func Merge(files []string, w io.Writer) ([]*Row, error) {
	var all []*shardFile
	for _, f := range files {
		sf, err := fileio.Load(f, fileio.SweepOutput, func(data []byte) (*shardFile, error) { return readSweepFile(f, data) })
		if err != nil {
			return nil, err
		}
		all = append(all, sf)
	}
	first := all[0]
	// the reference sweep is the one most files hold, so that the message
	// names the odd file out
	count := map[string]int{}
	var ref *shardFile
	for _, sf := range all {
		if sf.id == "" {
			continue // a CSV shard without rows
		}
		if count[sf.id]++; ref == nil || count[sf.id] > count[ref.id] {
			ref = sf
		}
	}
	for _, sf := range all {
		if sf.json != first.json {
			return nil, fmt.Errorf("%s is %s but %s is %s: merge shards of one format", sf.name, formatName(sf.json), first.name, formatName(first.json))
		}
		if sf.id == "" {
			continue
		}
		if sf.id != ref.id {
			return nil, fmt.Errorf("%s: sweep_id %s, but %s has %s: not a shard of the same sweep (all shards need the same flags but --shard, --workers and --format, and the same chip and variant files)",
				sf.name, sf.id, ref.name, ref.id)
		}
		if sf.points != ref.points {
			return nil, fmt.Errorf("%s: a sweep of %d points, but %s has %d (an edited file?)", sf.name, sf.points, ref.name, ref.points)
		}
	}
	if ref == nil {
		// a CSV shard names its sweep and its points count only in its rows
		return nil, fmt.Errorf("no shard among %s holds a point, so the sweep's points cannot be told: merge the shards that hold them", strings.Join(files, ", "))
	}
	points, id := ref.points, ref.id
	if err := checkShards(all, points); err != nil {
		return nil, err
	}
	// work over the rows the files hold, never over the points count a file
	// claims: a corrupt count must not allocate or loop
	owner := map[int]*Row{}
	from := map[int]*shardFile{}
	for _, sf := range all {
		for _, r := range sf.rows {
			if o := from[r.Index]; o != nil {
				return nil, fmt.Errorf("point %d is in both %s and %s (the same shard twice?)", r.Index, o.name, sf.name)
			}
			owner[r.Index], from[r.Index] = r, sf
		}
	}
	if len(owner) < points {
		var missing []string
		for i := 0; i < points && len(missing) < 10; i++ {
			if owner[i] == nil {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		more := ""
		if n := points - len(owner); n > len(missing) {
			more = fmt.Sprintf(" and %d more", n-len(missing))
		}
		return nil, fmt.Errorf("points %s%s of %d are in no file (a shard missing?)", strings.Join(missing, ", "), more, points)
	}
	if err := checkDigests(all); err != nil {
		return nil, err
	}
	// the rows were checked to be as simrun sweep writes them, so writing
	// them with its writer gives its bytes
	sw, err := NewWriter(w, first.json, points, id, false)
	if err != nil {
		return nil, err
	}
	rows := make([]*Row, points)
	for i := range points {
		if err := sw.Write(owner[i]); err != nil {
			return nil, err
		}
		rows[i] = owner[i]
	}
	return rows, sw.Close()
}

// checkDigests checks every row's digest against its values: a shard of a
// sharded run carries one per row (Writer), and a row edited since does not
// match it. Only a file merged alone (an unsharded run) may go without.
func checkDigests(all []*shardFile) error {
	for _, sf := range all {
		if sf.digests == 0 && len(all) > 1 {
			return fmt.Errorf("%s: no %s column (or field): not a shard output (simrun sweep --shard i/N with N > 1 gives every row its digest), so its rows cannot be checked", sf.name, digestColumn)
		}
		for i, r := range sf.rows {
			if sf.digests == 1 && sf.sums[i] != r.Digest() {
				return fmt.Errorf("%s: %s: %s %q does not match the row's values (%s): a row edited after simrun sweep wrote it?", sf.name, sf.where[i], digestColumn, sf.sums[i], r.Digest())
			}
		}
	}
	return nil
}

// checkShards checks that every file holds the rows of one shard i/N of a
// sweep of points points: indices i, i+N, i+2N, ... up to the last point,
// with one N for all files. A file's N is the stride of its indices; a file
// of one row fits every N with i < N <= points - i.
func checkShards(all []*shardFile, points int) error {
	var strideFile *shardFile
	stride := 0
	for _, sf := range all {
		if len(sf.rows) < 2 {
			continue
		}
		d := sf.rows[1].Index - sf.rows[0].Index
		for j := 2; j < len(sf.rows); j++ {
			if got := sf.rows[j].Index - sf.rows[j-1].Index; got != d {
				return fmt.Errorf("%s: %s: index %d follows %d, but the file's first indices are %d apart: not the rows of one shard (--shard i/N writes i, i+N, i+2N, ...)",
					sf.name, sf.where[j], sf.rows[j].Index, sf.rows[j-1].Index, d)
			}
		}
		if i := sf.rows[0].Index; i >= d {
			return fmt.Errorf("%s: %s: index %d is the first, but the file's indices are %d apart: shard %d/%d starts at %d (its first rows missing?)",
				sf.name, sf.where[0], i, d, i%d, d, i%d)
		}
		if last := sf.rows[len(sf.rows)-1]; points-last.Index > d {
			return fmt.Errorf("%s: %s: index %d is the last, but shard %d/%d also holds %d (< points = %d): a truncated shard?",
				sf.name, sf.where[len(sf.rows)-1], last.Index, sf.rows[0].Index, d, last.Index+d, points)
		}
		if strideFile == nil {
			strideFile, stride = sf, d
		} else if d != stride {
			return fmt.Errorf("%s is a shard of N = %d (its indices are %d apart), but %s is one of N = %d: merge the shards of one --shard i/N",
				sf.name, d, d, strideFile.name, stride)
		}
	}
	if strideFile == nil {
		return nil
	}
	for _, sf := range all {
		if len(sf.rows) != 1 {
			continue
		}
		i := sf.rows[0].Index
		if i >= stride {
			return fmt.Errorf("%s: %s: index %d alone, but in shards of N = %d (as %s) it belongs to shard %d/%d, which starts at %d (its first rows missing?)",
				sf.name, sf.where[0], i, stride, strideFile.name, i%stride, stride, i%stride)
		}
		if points-i > stride {
			return fmt.Errorf("%s: %s: index %d alone, but shard %d/%d (N as in %s) also holds %d (< points = %d): a truncated shard?",
				sf.name, sf.where[0], i, i, stride, strideFile.name, i+stride, points)
		}
	}
	return nil
}

func formatName(isJSON bool) string {
	if isJSON {
		return "JSON"
	}
	return "CSV"
}

// ---------------------------------------------------------------------------
// Reading sweep outputs back.

// shardFile is one parsed sweep output.
type shardFile struct {
	name   string
	json   bool
	points int      // -1: unknown (a CSV shard without rows)
	id     string   // the sweep_id; "": unknown (a CSV shard without rows)
	rows   []*Row   // in file order: ascending index
	where  []string // each row's place in the file, for messages: "line 3", "row 2 (line 4)"
	// sums are the rows' digests as the file gives them (a shard of a
	// sharded run); digests says whether it gives them: -1 unknown (a JSON
	// shard without rows), 0 no, 1 yes
	sums    []string
	digests int
}

// readSweepFile parses a sweep output (CSV or JSON, told by its first
// non-blank byte) and checks that its rows are as simrun sweep writes them:
// every column or field, and nothing else, with canonically encoded values,
// rows of one sweep (points, sweep_id) in ascending index order.
func readSweepFile(name string, data []byte) (*shardFile, error) {
	sf := &shardFile{name: name, points: -1, digests: -1}
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 {
		return nil, fmt.Errorf("%s: empty (not a sweep output)", name)
	}
	if trim[0] == '{' {
		sf.json = true
		return sf, sf.readJSON(data)
	}
	return sf, sf.readCSV(data)
}

// add appends a parsed row after checking it against the file's sweep.
// unit names the file's fields in messages (column, field).
func (sf *shardFile) add(where, unit string, r *Row, sum string) error {
	at := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s: "+format, append([]any{sf.name, where}, a...)...)
	}
	if err := checkSweepID(r.SweepID); err != nil {
		return at("%s sweep_id %w", unit, err)
	}
	if r.Points < 1 {
		return at("%s points = %d: must be >= 1", unit, r.Points)
	}
	if sf.points < 0 {
		sf.points, sf.id = r.Points, r.SweepID
	}
	earlier := "earlier rows say"
	if sf.json {
		earlier = "the JSON header says"
	}
	if r.Points != sf.points {
		return at("points = %d, but %s %d (outputs of different sweeps?)", r.Points, earlier, sf.points)
	}
	if r.SweepID != sf.id {
		return at("sweep_id %s, but %s %s (outputs of different sweeps?)", r.SweepID, earlier, sf.id)
	}
	if r.Index < 0 || r.Index >= r.Points {
		return at("index %d: must be in [0, points = %d)", r.Index, r.Points)
	}
	if err := r.checkKernel(); err != nil {
		return at("%s %w", unit, err)
	}
	if n := len(sf.rows); n > 0 {
		switch prev := sf.rows[n-1].Index; {
		case r.Index == prev:
			return at("index %d appears twice", r.Index)
		case r.Index < prev:
			return at("index %d after index %d: simrun sweep writes rows in index order", r.Index, prev)
		}
	}
	sf.rows = append(sf.rows, r)
	sf.where = append(sf.where, where)
	sf.sums = append(sf.sums, sum)
	return nil
}

// checkKernel checks a row's op, kernel and path against each other: the
// kernel computes the op, and the path is a mat-mat kernel's body (empty for
// the mat-vec kernels). A row whose point failed may name no kernel.
func (r *Row) checkKernel() error {
	op, err := tile.ParseOp(r.Op)
	if err != nil {
		return fmt.Errorf("op: %w", err)
	}
	if r.Kernel == "" && r.Error != "" {
		return nil
	}
	kern, err := tile.ParseMetalKernel(r.Kernel)
	if err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	if kop, ok := kern.Op(); !ok || kop != op {
		return fmt.Errorf("kernel %q: not a kernel of op %s", r.Kernel, r.Op)
	}
	_, perr := tile.ParsePath(r.Path)
	switch hasPath := PathName(kern, tile.Simdgroup) != ""; {
	case hasPath && perr != nil:
		return fmt.Errorf("path %q: kernel %s runs on the simdgroup or the tensor path", r.Path, r.Kernel)
	case !hasPath && r.Path != "":
		return fmt.Errorf("path %q: kernel %s has no path (empty)", r.Path, r.Kernel)
	}
	return nil
}

// checkSweepID checks the form of a sweep_id: 16 lower-case hex digits.
func checkSweepID(id string) error {
	if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("%q: want 16 hex digits (simrun sweep's sweep_id)", id)
	}
	return nil
}

// fields returns pointers to the row's fields, in column order (the
// embedded Detail's in its place).
func (r *Row) fields() []any {
	v := reflect.ValueOf(r).Elem()
	var out []any
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.Anonymous {
			out = append(out, v.FieldByIndex(f.Index).Addr().Interface())
		}
	}
	return out
}

// kindName describes the value a field pointer holds, for messages.
func kindName(p any) string {
	switch p.(type) {
	case *int, *int64:
		return "an integer"
	case *uint64:
		return "a non-negative integer"
	case *float64:
		return "a number"
	}
	return "a string"
}

func (sf *shardFile) readCSV(data []byte) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1 // checked below, for a clearer message
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: not a sweep CSV output: %w", sf.name, err)
	}
	switch strings.Join(header, ",") {
	case strings.Join(columns, ","):
		sf.digests = 0
	case strings.Join(columns, ",") + "," + digestColumn:
		sf.digests = 1
	default:
		return fmt.Errorf("%s: CSV header %q: not simrun sweep's columns (%s, and %s in a shard output)", sf.name, strings.Join(header, ","), strings.Join(columns, ","), digestColumn)
	}
	cr.FieldsPerRecord = len(header)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sf.name, err)
		}
		line, _ := cr.FieldPos(0)
		where := fmt.Sprintf("line %d", line)
		sum := ""
		if sf.digests == 1 {
			rec, sum = rec[:len(rec)-1], rec[len(rec)-1]
		}
		r, err := parseSweepRecord(rec)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", sf.name, where, err)
		}
		if err := sf.add(where, "column", r, sum); err != nil {
			return err
		}
	}
}

// parseSweepRecord parses a CSV row; every value must be as simrun sweep
// writes it, so that the row writes back to the same bytes.
func parseSweepRecord(rec []string) (*Row, error) {
	r := &Row{}
	for i, p := range r.fields() {
		s := rec[i]
		var err error
		switch p := p.(type) {
		case *int:
			*p, err = strconv.Atoi(s)
		case *int64:
			*p, err = strconv.ParseInt(s, 10, 64)
		case *uint64:
			*p, err = strconv.ParseUint(s, 10, 64)
		case *float64:
			*p, err = strconv.ParseFloat(s, 64)
		case *string:
			*p = s
		}
		if err != nil {
			return nil, fmt.Errorf("column %s %q: want %s", columns[i], s, kindName(p))
		}
	}
	for i, want := range r.Record() {
		if rec[i] != want {
			return nil, fmt.Errorf("column %s %q: not as simrun sweep writes it (%q; an edited or re-saved file?)", columns[i], rec[i], want)
		}
	}
	return r, nil
}

// sweepHeaderFields are the fields of a JSON sweep output's document.
var sweepHeaderFields = []string{"points", "sweep_id", "rows"}

func (sf *shardFile) readJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	// at names the line of the input offset off (or of the next token after
	// it) in a message
	at := func(off int64, format string, a ...any) error {
		return fmt.Errorf("%s: line %d: "+format, append([]any{sf.name, lineAt(data, off)}, a...)...)
	}
	bad := func(err error) error {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return at(se.Offset-1, "not a sweep JSON output: %v", err)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return at(int64(len(data)), "not a sweep JSON output: unexpected end of the file (a truncated output?)")
		}
		return at(dec.InputOffset(), "not a sweep JSON output: %v", err)
	}
	delim := func(want json.Delim, what string) error {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		if tok != want {
			return at(off, "not a sweep JSON output: %s, found %v", what, tok)
		}
		return nil
	}
	if err := delim('{', "want an object"); err != nil {
		return err
	}
	type rawRow struct {
		raw  json.RawMessage
		line int
	}
	var rows []rawRow
	seen := map[string]bool{}
	var points int
	var id string
	for dec.More() {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := tok.(string)
		switch {
		case !slices.Contains(sweepHeaderFields, key):
			return at(off, "unknown field %q in the JSON header (simrun sweep writes %s)", key, strings.Join(sweepHeaderFields, ", "))
		case seen[key]:
			return at(off, "field %q appears twice", key)
		}
		seen[key] = true
		if key == "rows" {
			if err := delim('[', `"rows": want an array`); err != nil {
				return err
			}
			for dec.More() {
				line := lineAt(data, dec.InputOffset())
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return bad(err)
				}
				rows = append(rows, rawRow{raw, line})
			}
			if err := delim(']', `"rows": want the end of the array`); err != nil {
				return err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad(err)
		}
		switch key {
		case "points":
			if err := json.Unmarshal(raw, &points); err != nil || string(raw) == "null" {
				return at(off, "\"points\" %s: want an integer", short(raw))
			}
			if points < 0 {
				return fmt.Errorf("%s: \"points\" = %d: must be >= 0", sf.name, points)
			}
		case "sweep_id":
			if err := json.Unmarshal(raw, &id); err != nil || string(raw) == "null" {
				return at(off, "\"sweep_id\" %s: want a string", short(raw))
			}
			if err := checkSweepID(id); err != nil {
				return at(off, "\"sweep_id\" %w", err)
			}
		}
	}
	if err := delim('}', "want the end of the object"); err != nil {
		return err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return at(end, "text after the JSON document")
	}
	for _, f := range sweepHeaderFields {
		if !seen[f] {
			return fmt.Errorf("%s: not a sweep JSON output: no %q field", sf.name, f)
		}
	}
	sf.points, sf.id = points, id
	for i, rr := range rows {
		where := fmt.Sprintf("row %d (line %d)", i, rr.line)
		raw, sum, has := cutDigest(rr.raw)
		d := 0
		if has {
			d = 1
		}
		switch {
		case sf.digests < 0:
			sf.digests = d
		case sf.digests != d:
			return fmt.Errorf("%s: %s: a %q field in some rows but not in others", sf.name, where, digestColumn)
		}
		r, err := parseSweepObject(raw)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", sf.name, where, err)
		}
		if err := sf.add(where, "field", r, sum); err != nil {
			return err
		}
	}
	return nil
}

// cutDigest splits a JSON row as a shard output writes it, ending in
// ,"digest":"<16 characters>"}, into the row without the field and the
// digest; has is false for a row without it.
func cutDigest(raw []byte) (row []byte, sum string, has bool) {
	field := fmt.Sprintf(",%q:\"", digestColumn)
	n := len(raw) - len(field) - 16 - 2
	if n < 1 || string(raw[n:n+len(field)]) != field || !bytes.HasSuffix(raw, []byte(`"}`)) {
		return raw, "", false
	}
	return append(raw[:n:n], '}'), string(raw[n+len(field) : len(raw)-2]), true
}

// parseSweepObject parses a JSON row: every field of columns once and
// nothing else, none null, each value as simrun sweep writes it, so that the
// row writes back to the same bytes.
func parseSweepObject(raw json.RawMessage) (*Row, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("want an object")
	}
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if !slices.Contains(columns, key) {
			return nil, fmt.Errorf("unknown field %q (not a simrun sweep column)", key)
		}
		if vals[key] != nil {
			return nil, fmt.Errorf("field %q appears twice", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		vals[key] = v
	}
	r := &Row{}
	for i, p := range r.fields() {
		col := columns[i]
		v, ok := vals[col]
		if !ok {
			return nil, fmt.Errorf("field %q missing", col)
		}
		if err := json.Unmarshal(v, p); err != nil || string(v) == "null" {
			return nil, fmt.Errorf("field %q %s: want %s", col, short(v), kindName(p))
		}
		if want, err := json.Marshal(p); err != nil || !bytes.Equal(v, want) {
			return nil, fmt.Errorf("field %q %s: not as simrun sweep writes it (%s; an edited or re-formatted file?)", col, short(v), short(want))
		}
	}
	if want, err := json.Marshal(r); err != nil || !bytes.Equal(raw, want) {
		return nil, errors.New("not as simrun sweep writes it: its fields are out of order or spaced (an edited or re-formatted file?)")
	}
	return r, nil
}

// lineAt returns the 1-based line of the first byte at or after off that is
// not blank or a comma (the start of the next JSON token).
func lineAt(data []byte, off int64) int {
	i := int(min(max(off, 0), int64(len(data))))
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// short abbreviates a JSON value for a message.
func short(v []byte) string {
	if len(v) > 60 {
		return string(v[:57]) + "..."
	}
	return string(v)
}
