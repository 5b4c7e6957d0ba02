package hw

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CellError is a bad cell of a calibration TSV; it is wrapped in a
// [LineError] that gives the line.
type CellError struct {
	Column string // column name from the header
	Value  string // the cell as written
	Want   string // the allowed form
}

// Error returns `column "C": value "V": want W`.
func (e *CellError) Error() string {
	return fmt.Sprintf("column %q: value %q: want %s", e.Column, e.Value, e.Want)
}

// TSV column names.
const (
	colChip      = "chip"
	colGPUPath   = "gpu_path"
	colOp        = "op"
	colTypeA     = "type_a"
	colTypeB     = "type_b"
	colNExperts  = "n_experts"
	colNUsed     = "n_used"
	colB         = "b"
	colM         = "m"
	colK         = "k"
	colN         = "n"
	colO         = "o"
	colMul       = "mul"
	colVariant   = "variant"
	colBaseline  = "baseline"
	colUSPerRun  = "us_per_run"
	colDeltaPct  = "delta_pct"
	colStatistic = "statistic"
	colKernel    = "kernel"
	colBaseKern  = "baseline_kernel"
)

// tsvColumns are the columns ParseTSV reads; any other column is ignored.
var tsvColumns = []string{colChip, colGPUPath, colOp, colTypeA, colTypeB, colNExperts, colNUsed, colB, colM, colK, colN,
	colO, colMul, colVariant, colBaseline, colUSPerRun, colDeltaPct, colStatistic, colKernel, colBaseKern}

// nearColumn returns the known column an unknown column name is a near miss
// of, or "": the same after lower-casing and mapping '-' and ' ' to '_', or,
// for known names of three or more letters, one edit (insertion, deletion,
// substitution or swap of neighbours) away from it. One- and two-letter
// names (op, b, m, k, n, o) only match by case and separators: every other
// short column would be an edit away from one of them.
func nearColumn(name string) string {
	norm := strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return '_'
		}
		return r
	}, strings.ToLower(name))
	for _, c := range tsvColumns {
		if norm == c || len(c) >= 3 && withinOneEdit(norm, c) {
			return c
		}
	}
	return ""
}

// withinOneEdit reports whether a and b differ by at most one inserted,
// deleted or substituted byte, or one swap of neighbouring bytes.
func withinOneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i:] == b[i:] || a[i+1:] == b[i+1:] ||
			i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	}
	return a[i:] == b[i+1:]
}

// ParseTSV reads a calibration file: tab-separated cells, column names in a
// header line that starts with "#" (the first "#" line holding a tab; earlier
// "#" lines without a tab are comments). Columns may come in any order and
// unknown columns are ignored, except one whose name is a near miss of a
// known column the header lacks ("gpu-path", "Variant", "n_use": the same
// after lower-casing and mapping '-' and ' ' to '_', or one edit from a known
// name of three or more letters), which is an error naming both, since a typo
// would otherwise change results silently (a near miss of statistic, which
// changes no prediction, is a column of its own). Trailing tabs after the
// last column, in the header or in rows, are ignored.
// Blank lines and later "#" lines are skipped. A UTF-8 byte-order mark at the
// start of the file is ignored.
//
// Required columns: chip, op, type_a, type_b, n_experts, n_used, m, k, n, and
// either (variant, us_per_run) or (baseline, variant, delta_pct). Optional:
// gpu_path ("simdgroup", "tensor" or empty), statistic, b (0 or 1, default
// 0), kernel and, on relative rows, baseline_kernel (Row.Kernel), and for
// MUL_MAT_ID_FUSION rows o (default 1) and mul (0 or 1, default 0). A file whose rows are all MUL_MAT may omit n_experts and n_used; in a
// mixed file those cells are empty on MUL_MAT rows. A shape cell the row's op
// does not use (b, o, mul on MUL_MAT rows; o, mul on MUL_MAT_ID rows) must be
// empty or hold its neutral value (b 0, o 1, mul 0). When both us_per_run and
// delta_pct columns exist a row needs at least one of them filled.
// us_per_run must be in [0.001, 1e9] µs, the plausible range the log readers
// apply too; delta_pct above -100 and at most 10000.
//
// Row.Params gets the keys test-backend-ops prints: type_a, type_b, n_mats,
// n_used, b, m, n, k for MUL_MAT_ID (plus o, mul for MUL_MAT_ID_FUSION), and
// type_a, type_b, m, n, k for MUL_MAT (the bs, nr, per, v, o keys of a MUL_MAT
// log case are not in a calibration file).
//
// A calibration file must be clean: on any bad row ParseTSV returns no rows
// and all row errors joined with [errors.Join], each a [*LineError] naming
// the line (cell errors wrap a [*CellError]). A missing column, a missing
// header, an empty file or a header without rows is an error.
func ParseTSV(r io.Reader, source string) ([]Row, error) {
	t := tsvParser{source: source, seen: map[string]int{}}
	err := eachLine(r, source, func(n int, line string) error { return t.line(n, line) })
	if err != nil {
		return nil, err
	}
	return t.finish()
}

type tsvParser struct {
	source   string
	header   []string
	col      map[string]int
	nonBlank bool
	rows     []Row
	errs     []error
	seen     map[string]int // duplicate detection: key -> first line
	moeErr   bool           // the missing n_experts/n_used error was reported
}

func (t *tsvParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{t.source}, args...)...)
}

func (t *tsvParser) line(n int, line string) error {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	t.nonBlank = true
	if strings.HasPrefix(line, "#") {
		if t.header == nil && strings.Contains(line, "\t") {
			return t.setHeader(n, line)
		}
		return nil
	}
	if t.header == nil {
		return t.errorf("line %d: data before the header; want a first line like \"# chip\\top\\ttype_a\\t...\"", n)
	}
	t.row(n, line)
	return nil
}

func (t *tsvParser) setHeader(n int, line string) error {
	names := strings.Split(strings.TrimPrefix(line, "#"), "\t")
	// a trailing tab (spreadsheet exports write one) names no column
	for len(names) > 1 && strings.TrimSpace(names[len(names)-1]) == "" {
		names = names[:len(names)-1]
	}
	t.col = make(map[string]int, len(names))
	for i, name := range names {
		name = strings.TrimSpace(name)
		names[i] = name
		if name == "" {
			return t.errorf("line %d: header column %d has no name", n, i+1)
		}
		if _, dup := t.col[name]; dup {
			return t.errorf("line %d: header names column %q twice", n, name)
		}
		t.col[name] = i
	}
	for _, name := range names {
		if slices.Contains(tsvColumns, name) {
			continue
		}
		// a near miss of a column the file also has, or of one that does
		// not change a prediction, is a column of the user's own
		if c := nearColumn(name); c != "" && !t.has(c) && c != colStatistic {
			return t.errorf("line %d: column %q is not a known column but is close to %q: rename it to %q, "+
				"or, if it is a column of your own, to a name less like a known column (a misspelt column is ignored, silently changing the results)",
				n, name, c, c)
		}
	}
	t.header = names
	var missing []string
	for _, c := range []string{colChip, colOp, colTypeA, colTypeB, colM, colK, colN} {
		if !t.has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return t.errorf("line %d: missing required column(s) %s; header has: %s",
			n, strings.Join(missing, ", "), strings.Join(names, ", "))
	}
	abs := t.has(colVariant) && t.has(colUSPerRun)
	rel := t.has(colBaseline) && t.has(colVariant) && t.has(colDeltaPct)
	if !abs && !rel {
		return t.errorf("line %d: missing columns: want either (variant, us_per_run) or (baseline, variant, delta_pct); header has: %s",
			n, strings.Join(names, ", "))
	}
	return nil
}

func (t *tsvParser) has(c string) bool {
	_, ok := t.col[c]
	return ok
}

// cell returns the trimmed cell of column c, or "" when the column is absent.
func cell(cells []string, col map[string]int, c string) string {
	i, ok := col[c]
	if !ok {
		return ""
	}
	return strings.TrimSpace(cells[i])
}

func (t *tsvParser) row(n int, line string) {
	cells := strings.Split(line, "\t")
	// trailing empty cells past the header's columns (a trailing tab)
	for len(cells) > len(t.header) && strings.TrimSpace(cells[len(cells)-1]) == "" {
		cells = cells[:len(cells)-1]
	}
	lineErr := func(err error) {
		t.errs = append(t.errs, &LineError{Source: t.source, Line: n, Text: line, Err: err})
	}
	if len(cells) != len(t.header) {
		lineErr(fmt.Errorf("%d cells, the header has %d columns", len(cells), len(t.header)))
		return
	}
	get := func(c string) string { return cell(cells, t.col, c) }
	bad := func(c, want string) {
		lineErr(&CellError{Column: c, Value: get(c), Want: want})
	}
	before := len(t.errs)

	row := Row{Source: t.source, Line: n}
	row.Chip = get(colChip)
	if row.Chip == "" {
		bad(colChip, "a chip name")
	}
	row.GPUPath = get(colGPUPath)
	if row.GPUPath != "" && row.GPUPath != PathSimdgroup && row.GPUPath != PathTensor {
		bad(colGPUPath, `"simdgroup", "tensor" or empty`)
	}
	row.Op = get(colOp)
	if !isKnownOp(row.Op) {
		bad(colOp, "MUL_MAT_ID, MUL_MAT_ID_FUSION or MUL_MAT")
	}
	typeOf := func(c string) string {
		v := get(c)
		if !isWord(v) {
			bad(c, "a ggml type name such as q4_0 or f32")
		}
		return v
	}
	typeA, typeB := typeOf(colTypeA), typeOf(colTypeB)
	posInt := func(c string) string {
		v := get(c)
		if k, err := strconv.Atoi(v); err != nil || k <= 0 || !isDigits(v) {
			bad(c, "a positive integer")
		}
		return v
	}
	bit := func(c, def string) string {
		v := get(c)
		switch v {
		case "":
			return def
		case "0", "1":
			return v
		}
		bad(c, "0, 1 or empty")
		return v
	}
	m, k, nTok := posInt(colM), posInt(colK), posInt(colN)

	// unused: a shape cell the row's op does not use may only hold its
	// neutral value (or be empty), so that a value meant for it is not
	// silently dropped
	unused := func(c, neutral string) {
		if v := get(c); v != "" && v != neutral {
			bad(c, fmt.Sprintf("empty or %s on a %s row, which does not use %s", neutral, row.Op, c))
		}
	}
	var pairs []Param
	if row.Op == OpMulMat {
		for _, c := range []string{colNExperts, colNUsed} {
			if get(c) != "" {
				bad(c, "empty on a MUL_MAT row")
			}
		}
		unused(colB, "0")
		unused(colO, "1")
		unused(colMul, "0")
		pairs = []Param{{"type_a", typeA}, {"type_b", typeB}, {"m", m}, {"n", nTok}, {"k", k}}
	} else {
		if missing := t.missingMoE(); missing != nil {
			if !t.moeErr {
				t.moeErr = true
				t.errs = append(t.errs, t.errorf("missing column(s) %s, required for %s rows (first at line %d); header has: %s",
					strings.Join(missing, ", "), row.Op, n, strings.Join(t.header, ", ")))
			}
			return
		}
		nMats, nUsed := posInt(colNExperts), posInt(colNUsed)
		if a, _ := strconv.Atoi(nMats); a > 0 {
			if u, _ := strconv.Atoi(nUsed); u > a {
				bad(colNUsed, fmt.Sprintf("at most n_experts (%s)", nMats))
			}
		}
		pairs = []Param{{"type_a", typeA}, {"type_b", typeB}, {"n_mats", nMats}, {"n_used", nUsed},
			{"b", bit(colB, "0")}, {"m", m}, {"n", nTok}, {"k", k}}
		if row.Op == OpMulMatIDFusion {
			o := get(colO)
			if o == "" {
				o = "1"
			} else {
				posInt(colO)
			}
			pairs = append(pairs, Param{"o", o}, Param{"mul", bit(colMul, "0")})
		} else {
			unused(colO, "1")
			unused(colMul, "0")
		}
	}

	row.Variant = get(colVariant)
	if row.Variant == "" {
		bad(colVariant, "a variant name such as upstream or halftile")
	}
	row.Statistic = get(colStatistic)
	kernelName := func(c string) string {
		v := get(c)
		if v != "" && !isWord(v) {
			bad(c, "a kernel name such as mul_mm or mul_mv_ext, or empty")
		}
		return v
	}
	row.Kernel, row.BaselineKernel = kernelName(colKernel), kernelName(colBaseKern)
	if v := get(colUSPerRun); v != "" || !t.has(colDeltaPct) {
		us, err := parseUSPerRun(colUSPerRun, v)
		if err != nil {
			bad(colUSPerRun, wantUSPerRun)
		}
		row.USPerRun, row.HasTime = us, true
	}
	if v := get(colDeltaPct); v != "" || (t.has(colDeltaPct) && !row.HasTime) {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !isDecimal(v) || math.IsInf(d, 0) || !(d > minDeltaPct && d <= maxDeltaPct) {
			bad(colDeltaPct, wantDeltaPct)
		}
		row.DeltaPct, row.HasDelta = d, true
		row.Baseline = get(colBaseline)
		if row.Baseline == "" {
			bad(colBaseline, "the baseline variant name on a row with delta_pct")
		} else if row.Baseline == row.Variant && row.BaselineKernel == row.Kernel {
			bad(colBaseline, fmt.Sprintf("a variant other than %q, or a baseline_kernel other than the kernel", row.Variant))
		}
	} else if row.BaselineKernel != "" {
		bad(colBaseKern, "empty on a row without delta_pct (it names a relative row's baseline kernel)")
	}
	if len(t.errs) > before {
		return
	}
	p, err := NewParams(pairs...)
	if err != nil {
		lineErr(err)
		return
	}
	row.Params = p
	key := strings.Join([]string{row.Chip, row.GPUPath, row.Op, p.Vars(), row.Variant, row.Baseline, row.Statistic, row.Kernel, row.BaselineKernel}, "\x00")
	if first, dup := t.seen[key]; dup {
		lineErr(fmt.Errorf("duplicate of line %d (same chip, gpu_path, op, shape, variant, baseline, statistic and kernels)", first))
		return
	}
	t.seen[key] = n
	t.rows = append(t.rows, row)
}

// missingMoE lists the absent MoE columns, or nil.
func (t *tsvParser) missingMoE() []string {
	var missing []string
	for _, c := range []string{colNExperts, colNUsed} {
		if !t.has(c) {
			missing = append(missing, c)
		}
	}
	return missing
}

func (t *tsvParser) finish() ([]Row, error) {
	switch {
	case len(t.errs) > 0:
		return nil, errors.Join(t.errs...)
	case !t.nonBlank:
		return nil, t.errorf("empty file; want a calibration TSV with a \"# chip\\top\\t...\" header line")
	case t.header == nil:
		return nil, t.errorf("no header line; want a first line like \"# chip\\top\\ttype_a\\t...\"")
	case len(t.rows) == 0:
		return nil, t.errorf("no measurement rows (header but no data rows)")
	}
	return t.rows, nil
}

// utf8BOM is the UTF-8 byte-order mark some editors and spreadsheets write
// at the start of a text file.
const utf8BOM = "\ufeff"

// eachLine calls fn with every line of r (1-based number, line end and a
// trailing CR removed, and a UTF-8 byte-order mark at the start of line 1).
// It stops at the first error of fn or of r.
func eachLine(r io.Reader, source string, fn func(n int, line string) error) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if n == 1 {
			line = strings.TrimPrefix(line, utf8BOM)
		}
		if len(line) > 0 {
			line = strings.TrimSuffix(line, "\n")
			line = strings.TrimSuffix(line, "\r")
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: read line %d: %w", source, n, err)
		}
	}
}
