package hw

import (
	"fmt"
	"strings"
)

// sqlTable is the table test-backend-ops --output sql inserts into.
const sqlTable = "test_backend_ops"

// sqlValue is one value of an INSERT statement.
type sqlValue struct {
	text string
	null bool
}

// sqlInsert handles one "INSERT INTO test_backend_ops (...) VALUES (...);" line.
func (lp *logParser) sqlInsert(n int, text string) {
	cols, vals, err := parseInsert(text)
	if err != nil {
		lp.errorf(n, text, "sql: %w", err)
		return
	}
	get := func(name string) string {
		for i, c := range cols {
			if c == name && !vals[i].null {
				return vals[i].text
			}
		}
		return ""
	}
	has := func(name string) bool {
		for _, c := range cols {
			if c == name {
				return true
			}
		}
		return false
	}
	for _, c := range []string{"op_name", "test_mode"} {
		if !has(c) {
			lp.errorf(n, text, "sql: missing column %s; have %s", c, strings.Join(cols, ", "))
			return
		}
	}
	op := get("op_name")
	if !isWord(op) {
		lp.errorf(n, text, "sql: op_name %q: want an op name such as MUL_MAT_ID", op)
		return
	}
	known := isKnownOp(op)
	backend, desc := get("backend_name"), get("device_description")
	lp.sqlBackend(backend, desc)

	var params Params
	if ps := get("op_params"); ps != "" {
		_, p, err := ParseCase(op + "(" + ps + ")")
		if err != nil && known {
			lp.errorf(n, text, "sql: op_params: %w", err)
			return
		}
		params = p
	}
	supported := true
	if has("supported") {
		if supported, err = sqlBool("supported", get("supported")); err != nil {
			lp.errorf(n, text, "sql: %w", err)
			return
		}
	}
	mode := get("test_mode")
	skip := Skipped{Line: n, Op: op, Text: text, Params: params, Backend: backend}
	unsupported := ""
	if !supported {
		unsupported = "not supported"
	}
	if lp.setAside(skip, unsupported, known) {
		return
	}
	switch mode {
	case "perf":
		row, err := sqlPerfRow(get)
		if err != nil {
			lp.errorf(n, text, "sql: %w", err)
			return
		}
		row.Source, row.Line, row.Op, row.Params = lp.source, n, op, params
		row.Chip, row.Backend = desc, backend
		lp.log.Rows = append(lp.log.Rows, row)
	case "test":
		pass, err := sqlBool("passed", get("passed"))
		if err != nil {
			lp.errorf(n, text, "sql: %w", err)
			return
		}
		lp.log.Tests = append(lp.log.Tests, TestResult{
			Line: n, Op: op, Params: params, Pass: pass,
			Detail: get("error_message"), Backend: backend,
		})
	case "grad", "support":
		skip.Reason = mode + " mode"
		lp.log.Skipped = append(lp.log.Skipped, skip)
	default:
		lp.errorf(n, text, "sql: test_mode %q: want perf, test, grad or support", mode)
	}
}

func sqlPerfRow(get func(string) string) (Row, error) {
	var row Row
	var err error
	t := get("time_us")
	if t == "" {
		return row, fmt.Errorf("time_us: missing on a perf row")
	}
	if row.USPerRun, err = parseUSPerRun("time_us", t); err != nil {
		return row, err
	}
	row.HasTime = true
	if v := get("n_runs"); v != "" {
		if row.Runs, err = parseCount("n_runs", v); err != nil {
			return row, err
		}
	}
	for _, f := range []struct {
		col string
		dst *float64
	}{{"flops", &row.FLOPS}, {"memory_kb", &row.KBPerRun}, {"bandwidth_gb_s", &row.GBPerS}} {
		if v := get(f.col); v != "" {
			if *f.dst, err = parseMeasure(f.col, v); err != nil {
				return row, err
			}
		}
	}
	row.FLOPPerRun = row.FLOPS * row.USPerRun / 1e6
	return row, nil
}

func (lp *logParser) sqlBackend(name, desc string) {
	if name == "" && desc == "" {
		return
	}
	for i, b := range lp.log.Backends {
		if b.Name == name && b.Description == desc {
			lp.cur = i
			return
		}
	}
	lp.log.Backends = append(lp.log.Backends, Backend{Name: name, Description: desc})
	lp.cur = len(lp.log.Backends) - 1
}

func sqlBool(col, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, fmt.Errorf("%s %q: want 1, 0, true or false", col, v)
}

// parseInsert parses `INSERT INTO test_backend_ops (c1, c2, ...) VALUES (v1,
// v2, ...);` with values 'quoted' (” escapes a quote), NULL, or bare.
func parseInsert(s string) (cols []string, vals []sqlValue, err error) {
	sc := sqlScanner{s: s}
	if err := sc.keyword("INSERT"); err != nil {
		return nil, nil, err
	}
	if err := sc.keyword("INTO"); err != nil {
		return nil, nil, err
	}
	table := sc.ident()
	if table != sqlTable {
		return nil, nil, fmt.Errorf("table %q: want %s", table, sqlTable)
	}
	err = sc.list(func() error {
		c := sc.ident()
		if c == "" {
			return fmt.Errorf("column %d: want a column name at offset %d", len(cols)+1, sc.i)
		}
		for _, prev := range cols {
			if prev == c {
				return fmt.Errorf("column %s named twice", c)
			}
		}
		cols = append(cols, c)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := sc.keyword("VALUES"); err != nil {
		return nil, nil, err
	}
	err = sc.list(func() error {
		v, err := sc.value()
		if err != nil {
			return fmt.Errorf("value %d: %w", len(vals)+1, err)
		}
		vals = append(vals, v)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if sc.peek() == ';' {
		sc.i++
	}
	if sc.skipSpace(); sc.i != len(s) {
		return nil, nil, fmt.Errorf("unexpected text %q after the values", s[sc.i:])
	}
	if len(cols) != len(vals) {
		return nil, nil, fmt.Errorf("%d columns but %d values (truncated line?)", len(cols), len(vals))
	}
	return cols, vals, nil
}

type sqlScanner struct {
	s string
	i int
}

func (sc *sqlScanner) skipSpace() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (sc *sqlScanner) peek() byte {
	sc.skipSpace()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *sqlScanner) keyword(w string) error {
	sc.skipSpace()
	if !hasPrefixFold(sc.s[sc.i:], w) {
		return fmt.Errorf("want %s at offset %d", w, sc.i)
	}
	sc.i += len(w)
	return nil
}

func (sc *sqlScanner) punct(c byte) error {
	if sc.peek() != c {
		if sc.i >= len(sc.s) {
			return fmt.Errorf("want %q, got end of line (truncated line?)", c)
		}
		return fmt.Errorf("want %q at offset %d, got %q", c, sc.i, sc.s[sc.i])
	}
	sc.i++
	return nil
}

// list parses a parenthesised, comma-separated list, calling item for each
// element.
func (sc *sqlScanner) list(item func() error) error {
	if err := sc.punct('('); err != nil {
		return err
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if sc.peek() != ',' {
			break
		}
		sc.i++
	}
	return sc.punct(')')
}

func (sc *sqlScanner) ident() string {
	sc.skipSpace()
	j := sc.i
	for j < len(sc.s) && isWordByte(sc.s[j]) {
		j++
	}
	id := sc.s[sc.i:j]
	sc.i = j
	return id
}

func (sc *sqlScanner) value() (sqlValue, error) {
	sc.skipSpace()
	if sc.i >= len(sc.s) {
		return sqlValue{}, fmt.Errorf("end of line (truncated line?)")
	}
	if sc.s[sc.i] == '\'' {
		var b strings.Builder
		for j := sc.i + 1; j < len(sc.s); j++ {
			if sc.s[j] != '\'' {
				b.WriteByte(sc.s[j])
				continue
			}
			if j+1 < len(sc.s) && sc.s[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			sc.i = j + 1
			return sqlValue{text: b.String()}, nil
		}
		return sqlValue{}, fmt.Errorf("unterminated string starting at offset %d", sc.i)
	}
	j := sc.i
	for j < len(sc.s) && sc.s[j] != ',' && sc.s[j] != ')' {
		j++
	}
	v := strings.TrimSpace(sc.s[sc.i:j])
	sc.i = j
	if v == "" {
		return sqlValue{}, fmt.Errorf("empty value at offset %d", j)
	}
	if strings.EqualFold(v, "NULL") {
		return sqlValue{null: true}, nil
	}
	return sqlValue{text: v}, nil
}
