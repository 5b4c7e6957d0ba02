package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestTrainRows: the embedded copy parses, and it is still the shared file
// (when the shared documents are beside the clone, as in CI).
func TestTrainRows(t *testing.T) {
	rows, err := TrainRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 33 || rows[0].Chip != "M1 Pro 16-core GPU" || rows[0].Test != (Test{Prompt: 512}) || rows[0].TS != 302.14 || rows[0].FA {
		t.Fatalf("%d rows, first %+v", len(rows), rows[0])
	}
	for _, r := range rows {
		if _, err := r.Preset(); err != nil {
			t.Error(err)
		}
	}
	shared, err := os.ReadFile("../../shared/docs/calibration/llama-bench/train.tsv")
	if os.IsNotExist(err) {
		t.Skip("../shared is not beside the clone")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, trainTSV) {
		t.Errorf("%s differs from ../shared/docs/calibration/llama-bench/train.tsv: copy it again (and refit)", TrainFile)
	}
}

func TestParseRowsErrors(t *testing.T) {
	good := "M1 Pro 16-core GPU\tsimdgroup\tLLaMA-2 7B\tllama\tF16\tpp512\t512\t0\tb\t302.14\tsrc"
	for _, c := range []struct{ line, want string }{
		{"a\tb", "f:1: columns: 2 tab-separated columns, want 11"},
		{strings.Replace(good, "pp512", "pq512", 1), `f:1: test: "pq512"`},
		{strings.Replace(good, "\t512\t0", "\tx\t0", 1), `f:1: n_ubatch: "x"`},
		{strings.Replace(good, "\t512\t0", "\t512\t2", 1), `f:1: flash_attn: "2": want 0 or 1`},
		{strings.Replace(good, "302.14", "-3", 1), `f:1: avg_ts: "-3"`},
		{strings.Replace(good, "simdgroup", "metal", 1), `f:1: gpu_path: "metal"`},
	} {
		if _, err := ParseRows(strings.NewReader(c.line), "f"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.line, err, c.want)
		}
	}
	rows, err := ParseRows(strings.NewReader("# comment\n\n"+strings.Replace(good, "pp512", "pp512+tg128", 1)+"\n"), "f")
	if err != nil || len(rows) != 1 || rows[0].Test != (Test{512, 128}) || rows[0].Line != 3 {
		t.Errorf("rows %+v %v", rows, err)
	}
}

// FuzzParseRows: any file gives rows whose fields are in range, or an error
// naming the file and line; never a panic.
func FuzzParseRows(f *testing.F) {
	f.Add(string(trainTSV))
	f.Add("M5\ttensor\tgemma-3-4b\tgemma3\tQ4_0\tpp512+tg128\t512\t1\tb\t1.5\ts\n")
	f.Add("a\tb\tc\n# x\n")
	f.Add("x\tsimdgroup\tm\ta\tF16\ttg0\t1\t0\tb\t1\ts")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ParseRows(strings.NewReader(s), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, r := range rows {
			if !(r.TS > 0) || r.Ubatch < 1 || r.Test.Tokens() < 1 || r.Test.Tokens() > 2*MaxTokens {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
