package hw

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Log is what [ParseLog] found in the output of test-backend-ops.
type Log struct {
	// Backends from the "Backend i/N: NAME" headers with their "Device
	// description" and "Device memory" lines. For --output sql input, one
	// entry per distinct (backend_name, device_description) in order of first
	// appearance, with Index, Count, MemoryMB and FreeMB left 0 (not printed).
	Backends []Backend
	// Rows are the perf measurements of MUL_MAT_ID, MUL_MAT_ID_FUSION and
	// MUL_MAT, with Chip and Backend taken from the current backend header.
	Rows []Row
	// Tests are the test-mode (OK/FAIL) lines of the same ops.
	Tests []TestResult
	// Unsupported are the "OP(...): not supported" lines, of any op.
	Unsupported []Skipped
	// Skipped are the lines of other ops, and "Skipping CPU backend" lines
	// (Op "", Reason "backend skipped").
	Skipped []Skipped
	// Errors are the malformed lines; every other line is still parsed.
	Errors []LineError
	// Cut is the last of Errors when it is the input's last line and no line
	// end follows it: the log was cut off inside that line (a copy taken
	// while test-backend-ops was still writing, a partial download), so the
	// file is not whole. nil otherwise.
	Cut *LineError
}

// Backend is one backend header of a console log.
type Backend struct {
	Index, Count int    // from "Backend i/N: NAME"
	Name         string // e.g. "MTL0"
	Description  string // "Device description", e.g. "Apple M1 Pro"
	// From "Device memory: X MB (Y MB free)".
	MemoryMB, FreeMB int
	// Skipped is set when a "Skipping ..." line followed the header (the CPU
	// backend without -b).
	Skipped bool
}

// TestResult is one test-mode line of a known op.
type TestResult struct {
	Line   int
	Op     string
	Params Params
	Pass   bool
	// Detail is the failure detail printed before the verdict, e.g.
	// "[MUL_MAT_ID] ERR = 0.0006 > 0.0005" or "[MUL_MAT_ID] NaN at index 3
	// (MTL0=nan CPU=0.5)"; several are joined with "; ". For sql input, the
	// error_message column.
	Detail  string
	Backend string
}

// Skipped is a line that holds no measurement this package keeps.
type Skipped struct {
	Line int
	Op   string // the op of the case, "" for backend lines
	Text string // the line, ANSI codes removed
	// Reason: "not supported ..." as printed for unsupported cases, "other
	// op" for lines of ops other than MUL_MAT_ID, MUL_MAT_ID_FUSION and
	// MUL_MAT, "backend skipped", or "<mode> mode" for sql rows of the grad
	// and support modes.
	Reason  string
	Params  Params // the case parameters when they parsed, else empty
	Backend string // the current backend name, "" if none
}

// ParseLog reads the raw output of test-backend-ops in perf or test mode:
// console output (possibly with ANSI colour codes, CRLF line ends, several
// backends, unrelated lines such as ggml init messages, which are ignored) or
// the --output sql form ("INSERT INTO test_backend_ops (...) VALUES (...);",
// one per line, columns mapped by name). Both forms may be mixed. A UTF-8
// byte-order mark at the start of the input is ignored.
//
// Perf lines have the form
//
//	OP(k=v,...):   N runs - T us/run - F [kMGT]FLOP/run - R [kMGT]FLOPS
//	OP(k=v,...):   N runs - T us/run - K kB/run - B GB/s
//
// A line of a known op that does not parse (truncated, a field missing, a
// NaN, infinite, negative or non-numeric number, a time per run outside the
// plausible [0.001, 1e9] µs, unbalanced parens) goes to [Log.Errors] with its
// line number; the other lines are kept. The sql form's time_us has the same
// range.
//
// The error is non-nil only for a read failure or an input that holds no
// test-backend-ops output at all (empty, or nothing recognisable).
func ParseLog(r io.Reader, source string) (*Log, error) {
	lp := logParser{source: source, log: &Log{}, cur: -1}
	tail := &lastByteReader{r: r}
	last := 0
	err := eachLine(tail, source, func(n int, line string) error {
		lp.line(n, line)
		last = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	if errs := lp.log.Errors; len(errs) > 0 && errs[len(errs)-1].Line == last && tail.n > 0 && tail.last != '\n' {
		lp.log.Cut = &errs[len(errs)-1]
	}
	if !lp.recognized {
		const want = "want test-backend-ops console output (\"Backend 1/2: MTL0\" headers, lines like " +
			"\"  MUL_MAT_ID(type_a=q4_0,...): 8 runs - 3258.60 us/run - ...\" or \"...: OK\") " +
			"or --output sql rows (\"INSERT INTO test_backend_ops (...) VALUES (...);\")"
		switch {
		case !lp.nonBlank:
			return nil, fmt.Errorf("%s: empty input; %s", source, want)
		case lp.tsvLike:
			return nil, fmt.Errorf("%s: looks like a calibration TSV (read it with ParseTSV), not a log; %s", source, want)
		}
		return nil, fmt.Errorf("%s: no test-backend-ops output found; %s", source, want)
	}
	return lp.log, nil
}

// lastByteReader remembers the last byte read through it.
type lastByteReader struct {
	r    io.Reader
	n    int64
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.n += int64(n)
		l.last = p[n-1]
	}
	return n, err
}

type logParser struct {
	source      string
	log         *Log
	cur         int      // index of the current backend in log.Backends, -1 before any
	pending     []string // failure details printed on lines of their own
	failingList bool     // inside the "Failing tests:" list
	inCreate    bool     // inside a multi-line CREATE TABLE statement
	recognized  bool
	nonBlank    bool
	tsvLike     bool
}

func (lp *logParser) backendName() string {
	if lp.cur < 0 {
		return ""
	}
	return lp.log.Backends[lp.cur].Name
}

// setAside files a case that yields neither a row nor a test result: a case
// the backend does not support (unsupported is the reason) in
// [Log.Unsupported], a case of an op rows are not made of in [Log.Skipped].
// It reports whether it filed the case; a supported case of a known op is
// left to the caller.
func (lp *logParser) setAside(skip Skipped, unsupported string, known bool) bool {
	switch {
	case unsupported != "":
		skip.Reason = unsupported
		lp.log.Unsupported = append(lp.log.Unsupported, skip)
	case !known:
		skip.Reason = "other op"
		lp.log.Skipped = append(lp.log.Skipped, skip)
	default:
		return false
	}
	return true
}

func (lp *logParser) errorf(n int, text, format string, args ...any) {
	lp.recognized = true
	lp.log.Errors = append(lp.log.Errors, LineError{Source: lp.source, Line: n, Text: text, Err: fmt.Errorf(format, args...)})
}

func (lp *logParser) line(n int, raw string) {
	text := stripANSI(raw)
	text = strings.TrimRight(text, "\r")
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return
	}
	if !lp.nonBlank && strings.HasPrefix(trimmed, "#") && strings.Contains(trimmed, "\t") {
		lp.tsvLike = true
	}
	lp.nonBlank = true
	if lp.inCreate {
		lp.inCreate = !strings.HasSuffix(trimmed, ";")
		return
	}
	wasFailingList := lp.failingList
	lp.failingList = false
	switch {
	case hasPrefixFold(trimmed, "INSERT INTO"):
		lp.recognized = true
		lp.sqlInsert(n, trimmed)
	case hasPrefixFold(trimmed, "CREATE TABLE"):
		lp.recognized = true
		lp.inCreate = !strings.HasSuffix(trimmed, ";")
	case strings.HasPrefix(trimmed, "Testing ") && isTestingLine(trimmed):
		lp.recognized = true
	case strings.HasPrefix(trimmed, "Backend "):
		lp.backendLine(n, trimmed)
	case strings.HasPrefix(trimmed, "Device description:"):
		lp.recognized = true
		if lp.cur < 0 {
			lp.errorf(n, text, "device description before any \"Backend i/N: NAME\" header")
			return
		}
		lp.log.Backends[lp.cur].Description = strings.TrimSpace(strings.TrimPrefix(trimmed, "Device description:"))
	case strings.HasPrefix(trimmed, "Device memory:"):
		lp.recognized = true
		lp.memoryLine(n, text, strings.TrimPrefix(trimmed, "Device memory:"))
	case strings.HasPrefix(trimmed, "Skipping"):
		lp.recognized = true
		if lp.cur >= 0 {
			lp.log.Backends[lp.cur].Skipped = true
		}
		lp.log.Skipped = append(lp.log.Skipped, Skipped{Line: n, Text: text, Reason: "backend skipped", Backend: lp.backendName()})
	case trimmed == "Failing tests:":
		lp.recognized = true
		lp.failingList = true
	default:
		lp.caseLine(n, text, wasFailingList)
	}
}

// isTestingLine matches "Testing N devices" (or "device").
func isTestingLine(s string) bool {
	f := strings.Fields(s)
	return len(f) == 3 && f[0] == "Testing" && isDigits(f[1]) && (f[2] == "devices" || f[2] == "device")
}

// backendLine handles "Backend i/N: NAME" headers and "Backend NAME: OK|FAIL"
// summary lines.
func (lp *logParser) backendLine(n int, trimmed string) {
	rest := strings.TrimPrefix(trimmed, "Backend ")
	idx, name, ok := strings.Cut(rest, ":")
	if !ok {
		return // prose, not ours
	}
	idx = strings.TrimSpace(idx)
	name = strings.TrimSpace(name)
	si, sn, isHeader := strings.Cut(idx, "/")
	if !isHeader {
		if name == "OK" || name == "FAIL" {
			lp.recognized = true // test-mode summary
		}
		return
	}
	lp.recognized = true
	i, err1 := strconv.Atoi(si)
	c, err2 := strconv.Atoi(sn)
	switch {
	case err1 != nil || err2 != nil || !isDigits(si) || !isDigits(sn):
		lp.errorf(n, trimmed, "backend header %q: want \"Backend i/N: NAME\" with integers i and N", trimmed)
		return
	case i < 1 || i > c:
		lp.errorf(n, trimmed, "backend header %q: index %d outside 1..%d", trimmed, i, c)
		return
	case name == "" || strings.ContainsAny(name, " \t"):
		lp.errorf(n, trimmed, "backend header %q: want a backend name such as MTL0", trimmed)
		return
	}
	lp.log.Backends = append(lp.log.Backends, Backend{Index: i, Count: c, Name: name})
	lp.cur = len(lp.log.Backends) - 1
	lp.pending = nil
}

// memoryLine parses " X MB (Y MB free)".
func (lp *logParser) memoryLine(n int, text, rest string) {
	f := strings.Fields(rest)
	if len(f) != 5 || f[1] != "MB" || !strings.HasPrefix(f[2], "(") || f[3] != "MB" || f[4] != "free)" {
		lp.errorf(n, text, "device memory %q: want \"X MB (Y MB free)\"", strings.TrimSpace(rest))
		return
	}
	total, err := parseCount("device memory", f[0])
	if err != nil {
		lp.errorf(n, text, "%w", err)
		return
	}
	free, err := parseCount("free device memory", f[2][1:])
	if err != nil {
		lp.errorf(n, text, "%w", err)
		return
	}
	if lp.cur < 0 {
		lp.errorf(n, text, "device memory before any \"Backend i/N: NAME\" header")
		return
	}
	lp.log.Backends[lp.cur].MemoryMB = total
	lp.log.Backends[lp.cur].FreeMB = free
}

// caseLine handles lines holding a case "OP(...)", with what follows it, and
// failure details printed on lines of their own.
func (lp *logParser) caseLine(n int, text string, inFailingList bool) {
	start, op, ok := findCase(text)
	if !ok {
		if isDetail(strings.TrimSpace(text)) {
			lp.recognized = true
			lp.pending = append(lp.pending, strings.TrimSpace(text))
		}
		return
	}
	known := isKnownOp(op)
	prefix := strings.TrimSpace(text[:start])
	end, err := matchClose(text, start+len(op))
	if err != nil {
		if known {
			lp.errorf(n, text, "%s case: %w", op, err)
		}
		return
	}
	caseStr := text[start : end+1]
	after := text[end+1:]
	if !strings.HasPrefix(after, ":") {
		if strings.TrimSpace(after) != "" || prefix != "" {
			return // prose mentioning an op, not a result line
		}
		lp.recognized = true
		if inFailingList {
			lp.failingList = true
			return
		}
		if known {
			lp.errorf(n, text, "%s case without \": <result>\" (truncated line?)", op)
		}
		return
	}
	lp.recognized = true
	rest := strings.TrimSpace(after[1:])
	details := append(lp.pending, prefix)
	lp.pending = nil
	_, params, perr := ParseCase(caseStr)
	unsupported := ""
	if strings.HasPrefix(rest, "not supported") {
		if known && perr != nil {
			lp.errorf(n, text, "%w", perr)
			return
		}
		unsupported = rest
	}
	if lp.setAside(Skipped{Line: n, Op: op, Text: text, Params: params, Backend: lp.backendName()}, unsupported, known) {
		return
	}
	if perr != nil {
		lp.errorf(n, text, "%w", perr)
		return
	}
	if verdict, detail, ok := splitVerdict(rest); ok {
		details = append(details, detail)
		lp.log.Tests = append(lp.log.Tests, TestResult{
			Line: n, Op: op, Params: params, Pass: verdict == "OK",
			Detail: joinDetails(details), Backend: lp.backendName(),
		})
		return
	}
	if rest == "" {
		lp.errorf(n, text, "%s case: nothing after ':'; want \"N runs - T us/run - ...\", OK, FAIL or \"not supported\" (truncated line?)", op)
		return
	}
	pf, err := parsePerf(rest)
	if err != nil {
		lp.errorf(n, text, "%s perf line: %w", op, err)
		return
	}
	if prefix != "" {
		lp.errorf(n, text, "%s perf line: unexpected text %q before the case", op, prefix)
		return
	}
	row := Row{
		Source: lp.source, Line: n, Op: op, Params: params,
		USPerRun: pf.us, HasTime: true, Runs: pf.runs,
		FLOPPerRun: pf.flop, FLOPS: pf.flops, KBPerRun: pf.kb, GBPerS: pf.gbs,
	}
	if lp.cur >= 0 {
		row.Chip = lp.log.Backends[lp.cur].Description
		row.Backend = lp.log.Backends[lp.cur].Name
	}
	lp.log.Rows = append(lp.log.Rows, row)
}

// findCase finds the first "OP(" in text whose op starts with an upper-case
// letter and follows the start of the line or white space.
func findCase(text string) (start int, op string, ok bool) {
	for i := 0; i < len(text); i++ {
		if text[i] < 'A' || text[i] > 'Z' || i > 0 && text[i-1] != ' ' && text[i-1] != '\t' {
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		if j < len(text) && text[j] == '(' {
			return i, text[i:j], true
		}
		i = j
	}
	return 0, "", false
}

// isDetail reports whether s is a failure detail of the compare callback.
func isDetail(s string) bool {
	if strings.HasPrefix(s, "sentinel mismatch") {
		return true
	}
	if !strings.HasPrefix(s, "[") {
		return false
	}
	end := strings.IndexByte(s, ']')
	return end > 1 && isWord(s[1:end])
}

// splitVerdict splits a test-mode result "... OK" or "... FAIL" into the
// verdict and the text before it (a failure detail printed after the case).
func splitVerdict(rest string) (verdict, detail string, ok bool) {
	for _, v := range []string{"OK", "FAIL"} {
		if rest == v {
			return v, "", true
		}
		if strings.HasSuffix(rest, " "+v) && !startsWithDigit(rest) {
			return v, strings.TrimSpace(strings.TrimSuffix(rest, v)), true
		}
	}
	return "", "", false
}

func startsWithDigit(s string) bool { return s != "" && '0' <= s[0] && s[0] <= '9' }

func joinDetails(parts []string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "; ")
}

// perf holds the numbers of one perf line.
type perf struct {
	runs        int
	us          float64
	flop, flops float64
	kb, gbs     float64
}

// parsePerf parses "N runs - T us/run - F uFLOP/run - R uFLOPS" or
// "N runs - T us/run - K kB/run - B GB/s", white space runs tolerated.
func parsePerf(rest string) (perf, error) {
	var p perf
	tok := strings.Fields(rest)
	i := 0
	next := func(what string) (string, error) {
		if i >= len(tok) {
			return "", fmt.Errorf("truncated: want %s after %q", what, rest)
		}
		i++
		return tok[i-1], nil
	}
	expect := func(word string) error {
		t, err := next(fmt.Sprintf("%q", word))
		if err != nil {
			return err
		}
		if t != word && i == len(tok) && strings.HasPrefix(word, t) {
			return fmt.Errorf("truncated: want %q, the line ends with %q", word, t)
		}
		if t != word {
			return fmt.Errorf("want %q, got %q in %q", word, t, rest)
		}
		return nil
	}
	if !startsWithDigit(rest) && !strings.HasPrefix(rest, "-") {
		return p, fmt.Errorf("result %q: want \"N runs - T us/run - ...\", OK, FAIL or \"not supported\"", rest)
	}
	t, _ := next("")
	runs, err := parseCount("runs", t)
	if err != nil {
		return p, err
	}
	p.runs = runs
	if err := expect("runs"); err != nil {
		return p, err
	}
	if err := expect("-"); err != nil {
		return p, err
	}
	if t, err = next("us/run value"); err != nil {
		return p, err
	}
	if p.us, err = parseUSPerRun("us/run", t); err != nil {
		return p, err
	}
	if err := expect("us/run"); err != nil {
		return p, err
	}
	// measure reads the next " - VALUE UNIT" field, what naming it in errors
	measure := func(what string) (num, unit string, err error) {
		if err = expect("-"); err != nil {
			return "", "", err
		}
		if num, err = next(what + " value"); err != nil {
			return "", "", err
		}
		unit, err = next(what + " unit")
		return num, unit, err
	}
	num3, unit3, err := measure("FLOP/run or kB/run")
	if err != nil {
		return p, err
	}
	memory := unit3 == "kB/run"
	var scale3 float64
	if !memory {
		if scale3, err = siUnit(unit3, "FLOP/run"); err != nil {
			return p, err
		}
	}
	v3, err := parseMeasure(unit3, num3)
	if err != nil {
		return p, err
	}
	num4, unit4, err := measure("rate")
	if err != nil {
		return p, err
	}
	if memory {
		if unit4 != "GB/s" {
			return p, fmt.Errorf("want \"GB/s\" after kB/run, got %q", unit4)
		}
		if p.gbs, err = parseMeasure("GB/s", num4); err != nil {
			return p, err
		}
		p.kb = v3
	} else {
		scale4, err := siUnit(unit4, "FLOPS")
		if err != nil {
			return p, err
		}
		v4, err := parseMeasure(unit4, num4)
		if err != nil {
			return p, err
		}
		p.flop, p.flops = v3*scale3, v4*scale4
	}
	if i < len(tok) {
		return p, fmt.Errorf("unexpected text %q after the rate", strings.Join(tok[i:], " "))
	}
	return p, nil
}

// siUnit returns the multiplier of unit = one of k, M, G, T followed by base.
func siUnit(unit, base string) (float64, error) {
	if len(unit) == len(base)+1 && strings.HasSuffix(unit, base) {
		switch unit[0] {
		case 'k':
			return 1e3, nil
		case 'M':
			return 1e6, nil
		case 'G':
			return 1e9, nil
		case 'T':
			return 1e12, nil
		}
	}
	return 0, fmt.Errorf("unit %q: want k%s, M%s, G%s or T%s", unit, base, base, base, base)
}

// stripANSI removes ANSI CSI escape sequences (ESC '[' params final-byte),
// which covers the colour codes ESC[1;32m ... ESC[0m the console printer emits.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
				j++
			}
			if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
