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

// TestByteOrderMark: a UTF-8 byte-order mark at the start of a file is
// ignored by Sniff and by both parsers, whatever the first line holds.
func TestByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	tsv, err := os.ReadFile("testdata/m1pro-16c-simdgroup-q4_0.tsv")
	if err != nil {
		t.Fatal(err)
	}
	perfLine := perfCase + " 1878 runs - 533.28 us/run - 33.97 GFLOP/run - 63.71 TFLOPS\n"
	sqlLine := "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT', 'type_a=f16,type_b=f32,m=64,n=32,k=256', 'perf', 5);\n"
	for _, tc := range []struct {
		name, data string
		format     Format
	}{
		{"tsv", string(tsv), FormatTSV},
		{"console", perfLine + perfLine, FormatConsole},
		{"sql", sqlLine + strings.Replace(sqlLine, "n=32", "n=64", 1), FormatSQL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sniff([]byte(bom + tc.data)); got != tc.format {
				t.Fatalf("Sniff = %v, want %v", got, tc.format)
			}
			parse := func(data string) ([]Row, error) {
				if tc.format == FormatTSV {
					return ParseTSV(strings.NewReader(data), "f")
				}
				l, err := ParseLog(strings.NewReader(data), "f")
				if err != nil {
					return nil, err
				}
				if len(l.Errors) > 0 {
					return nil, l.Errors[0]
				}
				return l.Rows, nil
			}
			plain, err := parse(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			marked, err := parse(bom + tc.data)
			if err != nil {
				t.Fatalf("with a byte-order mark: %v", err)
			}
			if len(marked) != len(plain) || len(marked) == 0 {
				t.Fatalf("%d rows with a byte-order mark, %d without", len(marked), len(plain))
			}
			for i := range plain {
				if marked[i].Line != plain[i].Line || !marked[i].Params.Equal(plain[i].Params) || marked[i].USPerRun != plain[i].USPerRun {
					t.Errorf("row %d: %+v with a byte-order mark, %+v without", i, marked[i], plain[i])
				}
			}
		})
	}
}
