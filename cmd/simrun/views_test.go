package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/tile"
)

// simrun runs the command line with args and returns the exit code and outputs.
func simrun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// simrunOK runs simrun with args and requires exit 0; it returns standard
// output and standard error.
func simrunOK(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errb := simrun(args...)
	if code != exitOK {
		t.Fatalf("simrun %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errb)
	}
	return out, errb
}

// requireBadUse runs simrun with args and requires bad input's exit code 2,
// nothing on standard output and want in the error on standard error.
func requireBadUse(t *testing.T, args []string, want string) {
	t.Helper()
	code, out, errb := simrun(args...)
	if code != exitBadUsed || out != "" || !strings.Contains(errb, want) {
		t.Errorf("simrun %s: exit %d, stdout %q, stderr %q; want exit 2, no output and %q", strings.Join(args, " "), code, out, errb, want)
	}
}

// smallTraceArgs keep trace runs short in tests.
var smallTraceArgs = []string{"--experts", "16", "--used", "4", "--m", "256", "--k", "512", "--n", "48"}

func TestViewCommandsBadFlags(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(spec, []byte("nr1h = 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"variants", "--show", "thirdtile"}, `--show: unknown variant "thirdtile"`},
		{[]string{"variants", "--show", "missing.toml"}, "missing.toml"},
		{[]string{"variants", "--show", spec}, "nr1h = 12"},
		{[]string{"variants", "notatoml"}, `argument "notatoml"`},
		{[]string{"variants", "--show", "upstream", "x.toml"}, "--show takes one variant"},
		{[]string{"simulate", "--variant", spec}, "--variant: variant spec " + spec},
		{[]string{"simulate", "--variant", "halftile-dual", "--path", "simdgroup"}, "--variant halftile-dual on the simdgroup path"},
		{[]string{"trace", "--window", "5"}, `--window "5"`},
		{[]string{"trace", "--window", "10:5"}, `--window "10:5"`},
		{[]string{"trace", "--window", "a:b"}, `--window "a:b"`},
		{[]string{"trace", "--cores", "16"}, `--cores "16"`},
		{[]string{"trace", "--cores", "1,x"}, `--cores "1,x"`},
		{[]string{"trace", "--cores", "3-1"}, `--cores "3-1"`},
		{[]string{"trace", "--max-events", "0"}, "--max-events = 0"},
		{[]string{"trace", "--idle", "-1"}, "--idle = -1"},
		{[]string{"trace", "--sample", "0"}, "--sample = 0"},
		{[]string{"trace", "--sample", "0.0001", "--max-events", "1000"}, "--sample = 0.0001"},
		{[]string{"trace", "--seed", "0"}, "--seed = 0"},
		{[]string{"trace", "--variant", "nope"}, `--variant: unknown variant "nope"`},
		{[]string{"trace", "extra"}, `unexpected argument "extra" (trace takes flags only)`},
		{append([]string{"trace", "--out", filepath.Join(t.TempDir(), "no", "dir", "t.json")}, smallTraceArgs...), "--out"},
		{[]string{"occupancy", "--threads", "2000"}, "--threads = 2000: must be in [1, 1024] (max threads per threadgroup on M1 Pro 16-core GPU)"},
		{[]string{"occupancy", "--threads", "0"}, "--threads = 0"},
		{[]string{"occupancy", "--regs", "300"}, "--regs = 300"},
		{[]string{"occupancy", "--tg-mem", "40000"}, "--tg-mem = 40000: must be in [0, 32768]"},
		{[]string{"occupancy", "--table", "16:8:4"}, `--table "16:8:4"`},
		{[]string{"occupancy", "--table", "16:128"}, `--table "16:128"`},
		{[]string{"occupancy", "--plot", "occ.pdf"}, `--plot "occ.pdf"`},
		{[]string{"occupancy", "--type", "tq1_0"}, "--type"},
		{[]string{"occupancy", "--chip", "M0"}, "unknown chip"},
		{[]string{"occupancy", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		requireBadUse(t, tc.args, tc.want)
	}
}

func TestVariantsCommand(t *testing.T) {
	code, out, errb := simrun("variants")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, v := range tile.Builtin() {
		if !strings.Contains(out, v.Name+" ") {
			t.Errorf("variants does not list %s:\n%s", v.Name, out)
		}
	}
	for _, col := range []string{"nr0", "nr1h", "SG grid", "half-skip", "B padding", "codebook", "B extents", "dual desc"} {
		if !strings.Contains(out, col) {
			t.Errorf("no column %q", col)
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "docs", "variants", "*.toml"))
	if len(files) == 0 {
		t.Fatal("no docs/variants specs")
	}
	code, out, errb = simrun(append([]string{"variants"}, files...)...)
	if code != exitOK || !strings.Contains(out, "halftile-bytes") {
		t.Fatalf("variants FILES: exit %d %s\n%s", code, errb, out)
	}
	// --show prints a spec that reads back to the same variant
	for _, name := range []string{"halftile", files[0]} {
		code, out, errb = simrun("variants", "--show", name)
		if code != exitOK {
			t.Fatalf("--show %s: exit %d: %s", name, code, errb)
		}
		got, _, err := tile.ParseVariantSpec([]byte(out), "show")
		want, _, _ := tile.LoadVariant(name)
		if err != nil || got != want {
			t.Fatalf("--show %s reads back as %+v, %v; want %+v\n%s", name, got, err, want, out)
		}
	}
}

// TestVariantFileFlag: --variant takes a spec file, and its path wins over the
// chip's default but not over --path.
func TestVariantFileFlag(t *testing.T) {
	var kf kernelFlags
	fs := newFlags("x", "", &bytes.Buffer{})
	kf.register(fs, "")
	spec := filepath.Join("..", "..", "docs", "variants", "halftile-8sg.toml") // path = "simdgroup"
	if err := fs.Parse([]string{"--variant", spec}); err != nil {
		t.Fatal(err)
	}
	m5 := chips.MustLookup("M5 10-core GPU")
	k, err := kf.kernel(m5)
	if err != nil || k.Name != "halftile-8sg" || k.Path != tile.Simdgroup || k.NSG != 8 {
		t.Fatalf("kernel %v (%+v), %v", k, k.Variant, err)
	}
	if err := fs.Parse([]string{"--path", "tensor"}); err != nil {
		t.Fatal(err)
	}
	if k, err = kf.kernel(m5); err != nil || k.Path != tile.Tensor {
		t.Fatalf("--path tensor: %v, %v", k, err)
	}
	code, out, errb := simrun("simulate", "--variant", filepath.Join("..", "..", "docs", "variants", "halftile-bytes.toml"),
		"--experts", "16", "--used", "4", "--m", "256", "--k", "512", "--n", "32", "--draws", "1")
	if code != exitOK || !strings.Contains(out, "variant halftile-bytes") {
		t.Fatalf("simulate with a spec file: exit %d %s\n%s", code, errb, out)
	}
}

func TestTraceCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.json")
	args := append([]string{"trace", "--variant", "halftile", "--out", out, "--window", "0:40", "--cores", "0-1"}, smallTraceArgs...)
	code, stdout, errb := simrun(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, w := range []string{"wrote " + out, "barrier wait", "compute", "window 0-40 µs, cores 0,1", "ui.perfetto.dev"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []map[string]any `json:"traceEvents"`
		OtherData   map[string]any   `json:"otherData"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(f.TraceEvents) < 100 || f.OtherData["kernel"] != "halftile/simdgroup" {
		t.Fatalf("%d events, otherData %v", len(f.TraceEvents), f.OtherData)
	}

	// standard output, and the cap
	args = append([]string{"trace", "--out", "-", "--max-events", "200", "--sample", "10"}, smallTraceArgs...)
	code, stdout, errb = simrun(args...)
	if code != exitOK || !json.Valid([]byte(stdout)) {
		t.Fatalf("--out -: exit %d, valid JSON %v: %s", code, json.Valid([]byte(stdout)), errb)
	}
	if !strings.Contains(errb, "wrote standard output") || !strings.Contains(errb, "the cap of 200 events was hit") {
		t.Errorf("stderr lacks the summary or the cap message:\n%s", errb)
	}
}

func TestOccupancyCommand(t *testing.T) {
	out, _ := simrunOK(t, "occupancy")
	for _, w := range []string{"60 registers per thread", "6 threadgroups = 24 simdgroups per core", "limited by registers",
		"registers  threads/TG  TGs/core  SGs/core", "<- this kernel"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// every chip, with a plot in both formats
	chipList, err := chips.All()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, c := range chipList {
		args := []string{"occupancy", "--chip", c.Name}
		if i < 2 {
			args = append(args, "--plot", filepath.Join(dir, []string{"a.png", "b.svg"}[i]))
		}
		if code, out, errb := simrun(args...); code != exitOK || !strings.Contains(out, "resident") {
			t.Errorf("%s: exit %d %s\n%s", c.Name, code, errb, out)
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "a.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("a.png: %v", err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "b.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("b.svg: %v", err)
	}
	// what-if: a threadgroup that cannot launch is a result, exit 1
	code, out, _ := simrun("occupancy", "--threads", "1024", "--regs", "128")
	if code != exitFailed || !strings.Contains(out, "cannot launch") {
		t.Errorf("1024 threads x 128 registers: exit %d\n%s", code, out)
	}
	// threads not a multiple of 32 are fine
	if code, out, errb := simrun("occupancy", "--threads", "100", "--regs", "32", "--tg-mem", "0"); code != exitOK || !strings.Contains(out, "100 threads") {
		t.Errorf("100 threads: exit %d %s\n%s", code, errb, out)
	}
}

// TestWhatIfChipExample: the tutorial's what-if (docs/tutorial.md §6.5). The
// 64 KiB tile of docs/variants is refused on the M1 Pro with the chip field that
// limits it, times on the what-if chip file of docs/chips, limited by
// registers at one threadgroup per core, and emulates right with a note.
func TestWhatIfChipExample(t *testing.T) {
	spec := filepath.Join("..", "..", "docs", "variants", "tile128x128.toml")
	chip := filepath.Join("..", "..", "docs", "chips", "m1-pro-16c-64k.json")
	small := []string{"--experts", "16", "--used", "4", "--m", "256", "--k", "512", "--n", "256", "--draws", "1"}
	code, _, errb := simrun(append([]string{"simulate", "--variant", spec}, small...)...)
	if code != exitBadUsed || !strings.Contains(errb, "threadgroup memory = 65536 bytes: must be in [0, 32768] on M1 Pro 16-core GPU (its tg_memory_per_tg_bytes") {
		t.Errorf("on the M1 Pro: exit %d, %s; want the chip's limit named", code, errb)
	}
	code, out, errb := simrun(append([]string{"simulate", "--variant", spec, "--chip", chip}, small...)...) // --chip takes a file too
	if code != exitOK || !strings.Contains(out, "64 KiB threadgroups (what-if)") || !strings.Contains(out, "1 threadgroups = 8 simdgroups per core, limited by registers") {
		t.Errorf("on the what-if chip: exit %d, %s\n%s", code, errb, out)
	}
	// emulate has no chip: it computes the values (right: several B passes)
	// and says that no embedded chip launches the kernel
	code, out, errb = simrun(append([]string{"emulate", "--variant", spec}, small[:len(small)-2]...)...) // no --draws
	if code != exitOK || !strings.Contains(out, "note: the kernel needs 65536 bytes of threadgroup memory (tg_memory_per_tg_bytes is at most 32768)") {
		t.Errorf("emulate: exit %d, %s\n%s", code, errb, out)
	}
	// one simdgroup holding a 64 x 96 tile: 324 registers, above metalsim's bound
	deep := filepath.Join(t.TempDir(), "deep.toml")
	if err := os.WriteFile(deep, []byte("name = \"deep\"\npath = \"simdgroup\"\nnr1 = 96\nnr1h = 32\nsimdgroups = 1\nsg_rows = 1\nsg_cols = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb = simrun(append([]string{"emulate", "--variant", deep}, small[:len(small)-2]...)...)
	if code != exitOK || !strings.Contains(out, "note: the kernel needs 324 registers per thread, above metalsim's bound of 256") {
		t.Errorf("emulate deep: exit %d, %s\n%s", code, errb, out)
	}
	if code, out, _ = simrun(append([]string{"emulate"}, small[:len(small)-2]...)...); code != exitOK || strings.Contains(out, "note: the kernel needs") {
		t.Errorf("emulate upstream: exit %d, a limits note where none belongs:\n%s", code, out)
	}
}
