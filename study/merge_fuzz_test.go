package study

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// fuzzRows are two rows of a sweep of three points, as a shard writes them.
func fuzzRows() []*Row {
	a := &Row{Index: 0, Points: 3, SweepID: "0123456789abcdef", Chip: "M1 Pro 16-core GPU", Variant: "upstream", Path: "simdgroup",
		Routing: "uniform", N: 32, Experts: 16, Used: 4, M: 64, K: 256, TypeA: "q4_0", TypeB: "f32", Engine: "fast", Draws: 1,
		Seed: 42, TotalUs: 12.5, KernelUs: 4, Map0Us: 0.1, DispatchUs: 8.4, TFLOPS: 0.01, DRAMBytes: 1e6, TGsPerCore: 6,
		OccupancyLimiter: "registers", Registers: 60, Limiter: "matrix", Threadgroups: 32, Tiles: 8, MMA8: 4096}
	b := *a
	b.Index, b.N, b.Error = 2, 64, `variant "x": a, "quoted" error`
	return []*Row{a, &b}
}

// FuzzReadSweepFile: merge's reader takes any bytes to an error naming the
// file, or to rows that write back (as merge writes them) and read again to
// the same rows. The seeds are shard outputs in both formats, with and
// without digests, and broken copies of them.
func FuzzReadSweepFile(f *testing.F) {
	for _, asJSON := range []bool{false, true} {
		for _, digests := range []bool{false, true} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, asJSON, 3, "0123456789abcdef", digests)
			if err != nil {
				f.Fatal(err)
			}
			for _, r := range fuzzRows() {
				if err := w.Write(r); err != nil {
					f.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
			f.Add(buf.Bytes()[:buf.Len()/2])
			f.Add(bytes.Replace(buf.Bytes(), []byte("12.5"), []byte("13"), 1))
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := readSweepFile("fuzz.csv", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(sf.rows) != len(sf.sums) || len(sf.rows) != len(sf.where) {
			t.Fatalf("%d rows, %d digests, %d places", len(sf.rows), len(sf.sums), len(sf.where))
		}
		_ = checkDigests([]*shardFile{sf})
		var buf bytes.Buffer
		points, id := sf.points, sf.id
		if id == "" { // a CSV file of no rows names no sweep
			points, id = 1, "0123456789abcdef"
		}
		w, err := NewWriter(&buf, sf.json, points, id, sf.digests == 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range sf.rows {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := readSweepFile("again", buf.Bytes())
		if err != nil {
			t.Fatalf("the rows written back do not read: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(again.rows, sf.rows) {
			t.Fatalf("rows changed on the way back:\n%+v\n%+v", sf.rows, again.rows)
		}
	})
}
