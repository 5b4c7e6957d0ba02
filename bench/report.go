package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Report is what a bench run prints: every test's estimate for one model,
// chip and variant, in llama-bench's output formats (llama-bench.cpp
// @0104b151, its csv, json, jsonl and markdown printers).
type Report struct {
	Model   *Model
	Chip    string
	Variant string
	Results []*Result
}

// Backend is what the report names the backend: llama-bench's backend
// column with the chip the estimate is for.
func (r *Report) Backend() string { return "Metal (metalsim: " + r.Chip + ")" }

// Formats are the output formats (-o).
var Formats = []string{"md", "csv", "json", "jsonl"}

// Write prints the report in a format of Formats.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "md":
		return r.writeMarkdown(w)
	case "csv":
		return r.writeCSV(w)
	case "json":
		return r.writeJSON(w, false)
	case "jsonl":
		return r.writeJSON(w, true)
	}
	return fmt.Errorf("-o %q: allowed %s", format, strings.Join(Formats, ", "))
}

// fieldKind is how a field's value is printed in JSON (llama-bench's
// get_field_type).
type fieldKind uint8

const (
	fString fieldKind = iota
	fInt
	fFloat
)

// fields are llama-bench's fields that the estimate defines, in its order
// (the CPU, thread, device and split fields have nothing simulated behind
// them and the wall-clock test_time would make output differ from run to
// run), then chip and variant.
var fields = []struct {
	name string
	kind fieldKind
}{
	{"build_commit", fString}, {"build_number", fInt}, {"gpu_info", fString}, {"backends", fString},
	{"model_filename", fString}, {"model_type", fString}, {"model_size", fInt}, {"model_n_params", fInt},
	{"n_batch", fInt}, {"n_ubatch", fInt}, {"type_k", fString}, {"type_v", fString}, {"n_gpu_layers", fInt},
	{"flash_attn", fInt}, {"n_prompt", fInt}, {"n_gen", fInt}, {"n_depth", fInt},
	{"avg_ns", fInt}, {"stddev_ns", fInt}, {"avg_ts", fFloat}, {"stddev_ts", fFloat},
	{"chip", fString}, {"variant", fString},
}

// values returns a result's field values as llama-bench prints them
// (std::to_string: integers, floats with six decimals).
func (r *Report) values(res *Result) []string {
	fa := 0
	if res.Setup.FlashAttn {
		fa = 1
	}
	i := strconv.Itoa
	return []string{"metalsim", "0", r.Chip, r.Backend(), r.Model.Filename, r.Model.Type(),
		strconv.FormatInt(r.Model.Size(), 10), strconv.FormatInt(r.Model.Params(), 10),
		i(res.Setup.Batch), i(res.Setup.Ubatch), "f16", "f16", "99", i(fa), i(res.Test.Prompt), i(res.Test.Gen), "0",
		strconv.FormatInt(res.avgNs(), 10), "0", fmt.Sprintf("%f", res.TS), fmt.Sprintf("%f", 0.0), r.Chip, r.Variant}
}

func (res *Result) avgNs() int64 { return int64(math.Round(res.Us * 1e3)) }

func (r *Report) writeCSV(w io.Writer) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	if _, err := fmt.Fprintln(w, strings.Join(names, ",")); err != nil {
		return err
	}
	for _, res := range r.Results {
		vals := r.values(res)
		for i, v := range vals {
			vals[i] = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
		}
		if _, err := fmt.Fprintln(w, strings.Join(vals, ",")); err != nil {
			return err
		}
	}
	return nil
}

// jsonValue formats a field value as llama-bench's JSON printers do.
func jsonValue(kind fieldKind, v string) string {
	if kind == fString {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

// rounded returns the breakdown with µs to the nanosecond and shares to
// 1e-6, as the JSON outputs print it.
func rounded(lines []Line) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		l.Us, l.Share = math.Round(l.Us*1e3)/1e3, math.Round(l.Share*1e6)/1e6
		out[i] = l
	}
	return out
}

// breakdownJSON renders the breakdown's lines on one line each.
func breakdownJSON(lines []Line, indent string) string {
	var parts []string
	for _, l := range rounded(lines) {
		b, _ := json.Marshal(l)
		parts = append(parts, indent+string(b))
	}
	return strings.Join(parts, ",\n")
}

func (r *Report) writeJSON(w io.Writer, lines bool) error {
	var b strings.Builder
	if !lines {
		b.WriteString("[\n")
	}
	for n, res := range r.Results {
		vals := r.values(res)
		samplesNs, samplesTs := strconv.FormatInt(res.avgNs(), 10), strconv.FormatFloat(res.TS, 'g', 6, 64)
		if lines {
			b.WriteString("{")
			for i, f := range fields {
				fmt.Fprintf(&b, "%q: %s, ", f.name, jsonValue(f.kind, vals[i]))
			}
			fmt.Fprintf(&b, "\"samples_ns\": [ %s ],\"samples_ts\": [ %s ],", samplesNs, samplesTs)
			bd, _ := json.Marshal(rounded(res.Breakdown))
			fmt.Fprintf(&b, "\"breakdown\": %s}\n", bd)
			continue
		}
		if n > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  {\n")
		for i, f := range fields {
			fmt.Fprintf(&b, "    %q: %s,\n", f.name, jsonValue(f.kind, vals[i]))
		}
		fmt.Fprintf(&b, "    \"samples_ns\": [ %s ],\n    \"samples_ts\": [ %s ],\n", samplesNs, samplesTs)
		fmt.Fprintf(&b, "    \"breakdown\": [\n%s\n    ]\n  }", breakdownJSON(res.Breakdown, "      "))
	}
	if !lines {
		b.WriteString("\n]\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdColumns are the markdown table's columns with llama-bench's widths
// (negative: left-aligned).
var mdColumns = []struct {
	name  string
	width int
}{{"model", -30}, {"size", 10}, {"params", 10}, {"backend", -10}, {"fa", 3}, {"n_ubatch", 8}, {"test", 15}, {"t/s", 20}}

// sizeString is llama-bench's size column: MiB below 1 GiB, else GiB.
func sizeString(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// paramsString is llama-bench's params column: millions below 1e9, else
// billions.
func paramsString(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	row := func(vals []string) {
		b.WriteString("|")
		for i, c := range mdColumns {
			// Go pads by runes, so "±" needs no allowance (llama-bench adds
			// one byte for it)
			fmt.Fprintf(&b, " %*s |", c.width, vals[i])
		}
		b.WriteString("\n")
	}
	names := make([]string, len(mdColumns))
	for i, c := range mdColumns {
		names[i] = c.name
	}
	row(names)
	b.WriteString("|")
	for _, c := range mdColumns {
		end := "-"
		if c.width > 0 {
			end = ":"
		}
		fmt.Fprintf(&b, " %s%s |", strings.Repeat("-", abs(c.width)-1), end)
	}
	b.WriteString("\n")
	for _, res := range r.Results {
		fa := "0"
		if res.Setup.FlashAttn {
			fa = "1"
		}
		row([]string{r.Model.Type(), sizeString(r.Model.Size()), paramsString(r.Model.Params()), r.Backend(), fa,
			strconv.Itoa(res.Setup.Ubatch), res.Test.Name(), fmt.Sprintf("%.2f ± %.2f", res.TS, 0.0)})
	}
	fmt.Fprintf(&b, "\nbuild: metalsim estimate (%s, variant %s; no hardware ran)\n", r.Chip, r.Variant)
	_, err := io.WriteString(w, b.String())
	return err
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
