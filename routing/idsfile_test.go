package routing

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseIDs(t *testing.T) {
	want := []int32{0, 5, 3, 1, 7, 2}
	var csv bytes.Buffer
	if err := WriteIDsCSV(&csv, 2, want); err != nil {
		t.Fatal(err)
	}
	if csv.String() != "0,5\n3,1\n7,2\n" {
		t.Fatalf("csv %q", csv.String())
	}
	for _, tc := range []struct {
		file string
		data []byte
	}{
		{"ids.csv", csv.Bytes()},
		{"ids", csv.Bytes()},
		{"ids", []byte("# header comment\n0, 5\r\n\n 3,1 \n7,2")},
		{"ids", append([]byte("\xef\xbb\xbf"), csv.Bytes()...)},
		{"ids.bin", EncodeIDsRaw(want)},
		{"ids", EncodeIDsRaw(want)},
	} {
		got, err := ParseIDs(tc.file, tc.data, 2, 8)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.file, tc.data, err)
		}
		if got.Tokens != 3 || got.Used != 2 || !slices.Equal(got.IDs, want) || got.File != tc.file {
			t.Fatalf("%s %q: got %+v", tc.file, tc.data, got)
		}
	}
}

func TestParseIDsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		data       []byte
		used, exp  int
		want       string
	}{
		{"empty", "a.csv", nil, 2, 8, "ids file a.csv: empty"},
		{"raw odd size", "a.bin", []byte{1, 0, 0, 0, 2, 0}, 2, 8, "ids file a.bin (raw int32): 6 bytes: not a whole number of 4-byte ids"},
		{"raw not n×n_used", "a.bin", EncodeIDsRaw([]int32{1, 2, 3}), 2, 8, "3 ids: must be n × n_used, a multiple of n_used = 2"},
		{"raw out of range", "a.bin", EncodeIDsRaw([]int32{1, 2, 3, 8}), 2, 8, "ids file a.bin (raw int32): token 1 slot 1: expert 8: must be in [0, n_mats = 8)"},
		{"raw negative", "a.bin", EncodeIDsRaw([]int32{-1, 2}), 2, 8, "token 0 slot 0: expert -1"},
		{"raw repeated", "a.bin", EncodeIDsRaw([]int32{1, 2, 4, 4}), 2, 8, "token 1 slot 1: expert 4 repeats slot 0"},
		{"csv fields", "a.csv", []byte("1,2\n3\n"), 2, 8, "ids file a.csv:2: token 1: 1 ids, want n_used = 2"},
		{"csv not int", "a.csv", []byte("1,x\n"), 2, 8, `ids file a.csv:1: token 0 slot 1: "x": not an integer expert id`},
		{"csv range", "a.csv", []byte("# c\n1,2\n\n1,9\n"), 2, 8, "ids file a.csv:4: token 1 slot 1: expert 9: must be in [0, n_mats = 8)"},
		{"csv repeat", "a.csv", []byte("3,3\n"), 2, 8, "ids file a.csv:1: token 0 slot 1: expert 3 repeats slot 0"},
		{"csv no tokens", "a.csv", []byte("# nothing\n\n"), 2, 8, "no tokens"},
		{"bad used", "a.csv", []byte("1\n"), 0, 8, "n_used = 0: must be in [1, n_mats = 8]"},
		{"used > experts", "a.csv", []byte("1\n"), 9, 8, "n_used = 9"},
		{"bad experts", "a.csv", []byte("1\n"), 1, 0, "n_mats = 0"},
	} {
		_, err := ParseIDs(tc.file, tc.data, tc.used, tc.exp)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestReadIDsFileAndCount(t *testing.T) {
	dir := t.TempDir()
	p := routingProblem(16, 4, 50)
	ids, err := ZipfIDs(p, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ids.i32")
	if err := os.WriteFile(file, EncodeIDsRaw(ids), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIDsFile(file, 4, 16)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CountIDs(p, got.IDs)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ZipfCounts(p, 1, 3)
	if !slices.Equal(c, want) {
		t.Fatal("counts of the file differ from the generator's")
	}
	if _, err := CountIDs(routingProblem(16, 4, 49), got.IDs); err == nil || !strings.Contains(err.Error(), "200 values, want n × n_used = 49 × 4 = 196") {
		t.Fatalf("wrong n: %v", err)
	}
	if _, err := ReadIDsFile(filepath.Join(dir, "missing.csv"), 4, 16); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Fatalf("missing file: %v", err)
	}
}

// FuzzParseIDs: any bytes and parameters give ids that pass every check, or an
// error; never a panic. Parsed ids survive a CSV and a raw round trip.
func FuzzParseIDs(f *testing.F) {
	f.Add([]byte("0,5\n3,1\n"), uint8(2), uint16(8))
	f.Add([]byte("# c\n1,2,3\n\n4,5,6\r\n"), uint8(3), uint16(8))
	f.Add(EncodeIDsRaw([]int32{0, 1, 2, 3}), uint8(2), uint16(4))
	f.Add(EncodeIDsRaw([]int32{0, 0}), uint8(2), uint16(4))
	f.Add([]byte("1,99999999999\n"), uint8(2), uint16(8))
	f.Add([]byte{0xef, 0xbb, 0xbf, '1', ',', '2'}, uint8(2), uint16(8))
	f.Fuzz(func(t *testing.T, data []byte, used uint8, experts uint16) {
		got, err := ParseIDs("fuzz", data, int(used), int(experts))
		if err != nil {
			if got != nil {
				t.Fatal("error with a result")
			}
			return
		}
		p := routingProblem(int(experts), int(used), got.Tokens)
		if got.Tokens < 1 || got.Used != int(used) || len(got.IDs) != got.Tokens*got.Used {
			t.Fatalf("inconsistent result %+v", got)
		}
		if _, err := CountIDs(p, got.IDs); err != nil {
			t.Fatalf("parsed ids fail the checks: %v", err)
		}
		var csv bytes.Buffer
		if err := WriteIDsCSV(&csv, got.Used, got.IDs); err != nil {
			t.Fatal(err)
		}
		for _, enc := range []struct {
			file string
			data []byte
		}{{"rt.csv", csv.Bytes()}, {"rt.bin", EncodeIDsRaw(got.IDs)}} {
			again, err := ParseIDs(enc.file, enc.data, got.Used, int(experts))
			if err != nil || !slices.Equal(again.IDs, got.IDs) {
				t.Fatalf("%s round trip: %v", enc.file, err)
			}
		}
	})
}
