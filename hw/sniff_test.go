package hw

import (
	"os"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	files := []struct {
		file string
		want Format
	}{
		{"m1pro-16c-simdgroup-q4_0.tsv", FormatTSV},
		{"m1pro-reordered.tsv", FormatTSV},
		{"m1pro-relative.tsv", FormatTSV},
		{"perf-m1pro.log", FormatConsole},
		{"test-m5.log", FormatConsole},
		{"malformed.log", FormatConsole},
		{"perf-m5.sql", FormatSQL},
	}
	for _, tc := range files {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(data); got != tc.want {
			t.Errorf("Sniff(%s) = %v, want %v", tc.file, got, tc.want)
		}
	}
	inline := []struct {
		name, data string
		want       Format
	}{
		{"empty", "", FormatUnknown},
		{"prose", "hello\nworld\n", FormatUnknown},
		{"comment only", "# note\n", FormatUnknown},
		{"case line only", "\x1b[0m  MUL_MAT(type_a=f16): \x1b[1;32mOK\x1b[0m\n", FormatConsole},
		{"backend header", "Backend 1/1: MTL0\n", FormatConsole},
		{"sql after console noise", "Testing 1 devices\nINSERT INTO test_backend_ops (a) VALUES (1);\n", FormatSQL},
		{"create table", "CREATE TABLE IF NOT EXISTS test_backend_ops (\n", FormatSQL},
		{"sql beyond the window", strings.Repeat("x\n", sniffLimit) + "INSERT INTO test_backend_ops (a) VALUES (1);\n", FormatUnknown},
	}
	for _, tc := range inline {
		if got := Sniff([]byte(tc.data)); got != tc.want {
			t.Errorf("Sniff(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	for f, want := range map[Format]string{FormatUnknown: "unknown", FormatTSV: "tsv", FormatConsole: "console", FormatSQL: "sql", Format(99): "unknown"} {
		if f.String() != want {
			t.Errorf("Format(%d).String() = %q, want %q", int(f), f.String(), want)
		}
	}
}
