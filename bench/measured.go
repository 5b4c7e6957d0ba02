package bench

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Row is one measured llama-bench result of a calibration file
// (../shared/docs/calibration/llama-bench/train.tsv; columns chip, gpu_path,
// model, arch, file_type, test, n_ubatch, flash_attn, build, avg_ts, source).
type Row struct {
	File     string
	Line     int
	Chip     string
	Path     string // simdgroup or tensor
	Model    string // as the source names it
	Arch     string
	FileType string
	Test     Test
	Ubatch   int
	FA       bool
	Build    string
	TS       float64 // avg_ts
	Source   string
}

// String names the row by file and line, chip, model and test.
func (r Row) String() string {
	return fmt.Sprintf("%s:%d %s %s %s %s", r.File, r.Line, r.Chip, r.Model, r.FileType, r.Test.Name())
}

// TrainFile is the name of the embedded calibration set.
const TrainFile = "bench/calibration/llama-bench-train.tsv"

// trainTSV is a copy of ../shared/docs/calibration/llama-bench/train.tsv.
//
//go:embed calibration/llama-bench-train.tsv
var trainTSV []byte

// TrainRows returns the embedded calibration rows.
func TrainRows() ([]Row, error) { return ParseRows(strings.NewReader(string(trainTSV)), TrainFile) }

// rowColumns is the number of tab-separated columns of a row.
const rowColumns = 11

// ParseRows reads a llama-bench results file: tab-separated, '#' comments,
// one measured test per line. Errors name the file, the line and the column.
func ParseRows(r io.Reader, name string) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Row
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		bad := func(col, format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s: %s", name, line, col, fmt.Sprintf(format, a...))
		}
		if len(cols) != rowColumns {
			return nil, bad("columns", "%d tab-separated columns, want %d (chip, gpu_path, model, arch, file_type, test, n_ubatch, flash_attn, build, avg_ts, source)", len(cols), rowColumns)
		}
		row := Row{File: name, Line: line, Chip: cols[0], Path: cols[1], Model: cols[2], Arch: cols[3], FileType: cols[4],
			Build: cols[8], Source: cols[10]}
		t, err := parseTestName(cols[5])
		if err != nil {
			return nil, bad("test", "%v", err)
		}
		row.Test = t
		if row.Ubatch, err = strconv.Atoi(cols[6]); err != nil || row.Ubatch < 1 || row.Ubatch > MaxBatch {
			return nil, bad("n_ubatch", "%q: want an integer in [1, %d]", cols[6], MaxBatch)
		}
		switch cols[7] {
		case "0":
		case "1":
			row.FA = true
		default:
			return nil, bad("flash_attn", "%q: want 0 or 1", cols[7])
		}
		if row.TS, err = strconv.ParseFloat(cols[9], 64); err != nil || !(row.TS > 0) || math.IsInf(row.TS, 0) {
			return nil, bad("avg_ts", "%q: want a positive number of tokens per second", cols[9])
		}
		if row.Path != "simdgroup" && row.Path != "tensor" {
			return nil, bad("gpu_path", "%q: want simdgroup or tensor", row.Path)
		}
		out = append(out, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// parseTestName reads llama-bench's test names: pp512, tg128, pp512+tg128.
func parseTestName(s string) (Test, error) {
	var t Test
	num := func(part, prefix string) (int, error) {
		v, err := strconv.Atoi(strings.TrimPrefix(part, prefix))
		if !strings.HasPrefix(part, prefix) || err != nil || v < 1 || v > MaxTokens {
			return 0, fmt.Errorf("%q: want pp<P>, tg<N> or pp<P>+tg<N> with counts in [1, %d]", s, MaxTokens)
		}
		return v, nil
	}
	var err error
	p, g, both := strings.Cut(s, "+")
	switch {
	case both:
		if t.Prompt, err = num(p, "pp"); err == nil {
			t.Gen, err = num(g, "tg")
		}
	case strings.HasPrefix(s, "tg"):
		t.Gen, err = num(s, "tg")
	default:
		t.Prompt, err = num(s, "pp")
	}
	return t, err
}

// presetOf maps a measured row's model to a preset, by the names the
// measurements use (docs/bench.md, "Calibration"). Qwen2.5-Coder-7B has
// Qwen2.5-7B's architecture and shapes.
var presetOf = []struct{ prefix, preset string }{
	{"LLaMA-2 7B", "llama2-7b"},
	{"Qwen3-Coder-30B-A3B", "qwen3-coder-30b-a3b"},
	{"Qwen2.5-Coder-7B", "qwen2.5-7b"},
	{"gemma-3-4b", "gemma3-4b"},
}

// Preset returns the preset a row measured.
func (r Row) Preset() (string, error) {
	for _, p := range presetOf {
		if strings.HasPrefix(r.Model, p.prefix) {
			return p.preset, nil
		}
	}
	return "", fmt.Errorf("%s:%d: model %q: no preset for it", r.File, r.Line, r.Model)
}
