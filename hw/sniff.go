package hw

import (
	"bytes"
	"strings"
)

// Format is the kind of a measurement file.
type Format int

// Formats told apart by [Sniff].
const (
	FormatUnknown Format = iota // nothing recognisable
	FormatTSV                   // calibration TSV, read with [ParseTSV]
	FormatConsole               // test-backend-ops console output, read with [ParseLog]
	FormatSQL                   // test-backend-ops --output sql, read with [ParseLog]
)

// String returns "unknown", "tsv", "console" or "sql".
func (f Format) String() string {
	switch f {
	case FormatTSV:
		return "tsv"
	case FormatConsole:
		return "console"
	case FormatSQL:
		return "sql"
	}
	return "unknown"
}

// sniffLimit is how much of the input Sniff looks at.
const sniffLimit = 64 << 10

// Sniff tells a calibration TSV from a test-backend-ops console log and its
// --output sql form by looking at the first 64 KiB of data:
//   - TSV: the first non-blank line that is not a "#" comment without a tab
//     is a "#" header line holding a tab;
//   - SQL: some line starts with "INSERT INTO test_backend_ops" or
//     "CREATE TABLE" ... "test_backend_ops";
//   - console: some line is a "Testing N devices", "Backend i/N: NAME" or
//     "Device description:" line, or a case line "  OP(...): ...".
//
// SQL wins over console when both appear. Anything else is FormatUnknown. A
// UTF-8 byte-order mark at the start is ignored, as the parsers ignore it.
func Sniff(data []byte) Format {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	if len(data) > sniffLimit {
		data = data[:sniffLimit]
	}
	lines := strings.Split(string(data), "\n")
	for _, raw := range lines {
		line := strings.TrimSpace(stripANSI(raw))
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
		if strings.Contains(line, "\t") {
			return FormatTSV
		}
	}
	console := false
	for _, raw := range lines {
		line := strings.TrimSpace(stripANSI(raw))
		switch {
		case hasPrefixFold(line, "INSERT INTO "+sqlTable),
			hasPrefixFold(line, "CREATE TABLE") && strings.Contains(line, sqlTable):
			return FormatSQL
		case console:
		case isTestingLine(line), strings.HasPrefix(line, "Device description:"), isBackendHeader(line):
			console = true
		default:
			if start, _, ok := findCase(line); ok {
				if end, err := matchClose(line, strings.IndexByte(line[start:], '(')+start); err == nil &&
					strings.HasPrefix(line[end+1:], ":") {
					console = true
				}
			}
		}
	}
	if console {
		return FormatConsole
	}
	return FormatUnknown
}

// isBackendHeader matches "Backend i/N: NAME" loosely.
func isBackendHeader(line string) bool {
	rest, ok := strings.CutPrefix(line, "Backend ")
	if !ok {
		return false
	}
	idx, _, ok := strings.Cut(rest, ":")
	si, sn, ok2 := strings.Cut(idx, "/")
	return ok && ok2 && isDigits(si) && isDigits(sn)
}
