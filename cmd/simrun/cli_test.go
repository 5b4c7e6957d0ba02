package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/accuracy"
)

func TestHelpListsCommands(t *testing.T) {
	out, _ := simrunOK(t, "help")
	for _, c := range commands() {
		if !strings.Contains(out, c.name) {
			t.Errorf("help does not list %s", c.name)
		}
	}
	if code, _, errb := simrun("frobnicate"); code != exitBadUsed || !strings.Contains(errb, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errb)
	}
}

func TestBadFlagsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--chip", "M9 Ultra"}, `unknown chip "M9 Ultra"`},
		{[]string{"simulate", "--n", "0"}, "n (tokens) = 0"},
		{[]string{"simulate", "--type", "q4_k"}, `unknown weight type "q4_k"`},
		{[]string{"simulate", "--type", "tq1_0"}, `unknown weight type "tq1_0"`},
		{[]string{"simulate", "--type", "q4_K", "--k", "2000"}, "k = 2000: must be a positive multiple of the q4_K block size 256"},
		{[]string{"emulate", "--type", "q1_0", "--k", "64"}, "k = 64: must be a positive multiple of the q1_0 block size 128"},
		{[]string{"simulate", "--type", "bf16", "--type-b", "f16"}, "type_b = f16 with type_a = bf16: no such kernel"},
		{[]string{"simulate", "--draws", "0"}, "--draws = 0"},
		{[]string{"simulate", "--variant", "thirdtile"}, `unknown variant "thirdtile"`},
		{[]string{"simulate", "--path", "warp"}, `unknown gpu path "warp"`},
		{[]string{"simulate", "--k", "100"}, "k = 100"},
		{[]string{"emulate", "--workers", "-1"}, "--workers = -1"},
		{[]string{"validate", "--format", "yaml"}, `--format "yaml"`},
		{[]string{"validate", "--baseline", "a.log"}, "also give --variant"},
		{[]string{"validate", "no-such-file.tsv"}, "no-such-file.tsv"},
		{[]string{"fit"}, "no --param"},
		{[]string{"fit", "--param", "cores@M1 Pro 16-core GPU"}, "structure"},
		{[]string{"chips", "--show", "M0"}, "unknown chip"},
		{[]string{"simulate", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		requireBadUse(t, tc.args, tc.want)
	}
}

func TestFitRefusesTooManyParameters(t *testing.T) {
	code, _, errb := simrun("fit",
		"--param", "barrier_clk@M1 Pro 16-core GPU=0:300",
		"--param", "sg_launch_clk@M1 Pro 16-core GPU=0:300",
		"--param", "dram_bandwidth_gbs@M1 Pro 16-core GPU=50:300",
		"--param", "tg_memory_bytes_per_clk@M1 Pro 16-core GPU=16:256",
		"--param", "l1_bytes_per_clk@M1 Pro 16-core GPU=16:256",
		filepath.Join("..", "..", "hw", "calibration", "m1pro-16c-simdgroup-q4_0.tsv"))
	if code != exitBadUsed || !strings.Contains(errb, "at most a third") {
		t.Fatalf("5 parameters on 12 rows: exit %d, %q", code, errb)
	}
}

// TestGoldenWithoutTablesAndRefs: a golden directory with only mulmatid cases
// and no ref_* files still verifies, with references computed here.
func TestGoldenWithoutTablesAndRefs(t *testing.T) {
	src := filepath.Join("..", "..", "golden", "testdata", "mulmatid")
	dir := t.TempDir()
	dst := filepath.Join(dir, "mulmatid")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.Contains(name, ".ref") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "manifest.json" {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			for _, c := range m["cases"].([]any) {
				delete(c.(map[string]any), "ref_f64")
				delete(c.(map[string]any), "ref_f16in")
			}
			var files []any
			for _, f := range m["files"].([]any) {
				if !strings.Contains(f.(map[string]any)["file"].(string), ".ref") {
					files = append(files, f)
				}
			}
			m["files"] = files
			if data, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errb := simrun("golden", dir)
	if code != exitOK || !strings.Contains(out, "golden: 6 passed, 0 failed (not in "+dir+", so not checked: tables/, dequant/)") || !strings.Contains(out, "computed references") {
		t.Fatalf("golden without refs: exit %d\n%s\n%s", code, out, errb)
	}
	if code, _, errb := simrun("golden", filepath.Join(dir, "nope")); code != exitBadUsed || !strings.Contains(errb, "not a readable directory") {
		t.Errorf("missing dir: exit %d, %q", code, errb)
	}
}

func TestEmulateCommand(t *testing.T) {
	code, out, errb := simrun("emulate", "--type", "iq3_xxs", "--experts", "4", "--used", "2", "--m", "64", "--k", "256", "--n", "20",
		"--variant", "halftile", "--kernel", "mul_mm_id")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"half-tiles skipped", "codebook loads, 4-byte", "max |dst - ref_f16in|", "note: kernel mul_mm_id is forced: llama.cpp runs mul_mv_id here (n < 32 tokens)"} {
		if !strings.Contains(out, want) {
			t.Errorf("emulate output lacks %q:\n%s", want, out)
		}
	}
}

// TestEmulateEveryKernel: emulate runs the kernel llama.cpp dispatches for
// each op and n, or the forced one, and checks it against its reference; a
// variant's knobs a mat-vec kernel does not take are named in a note.
func TestEmulateEveryKernel(t *testing.T) {
	small := []string{"emulate", "--m", "40", "--k", "256", "--type", "q4_0", "--seed", "3"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--experts", "4", "--used", "2", "--n", "5"}, []string{"kernel mul_mv_id", "max |dst - ref_kernel|"}},
		{[]string{"--op", "mul_mat", "--n", "1"}, []string{"MUL_MAT(type_a=q4_0,type_b=f32,m=40,n=1,k=256), kernel mul_mv,", "ref_kernel"}},
		{[]string{"--op", "mul_mat", "--n", "5", "--variant", "halftile"}, []string{"kernel mul_mv_ext", "note: variant halftile: half_skip, b_padding, codebook, b_extents do not apply to mul_mv_ext"}},
		{[]string{"--op", "mul_mat", "--n", "40", "--path", "tensor"}, []string{"kernel mul_mm, tensor path, variant upstream", "tensor MMAs (16x16x16) executed"}},
		{[]string{"--op", "mul_mat", "--n", "5", "--kernel", "mul_mm", "--variant", "tile64x8"},
			[]string{"kernel mul_mm, simdgroup path, variant tile64x8", "note: kernel mul_mm is forced: llama.cpp runs mul_mv_ext here"}},
	} {
		code, out, errb := simrun(append(small, tc.args...)...)
		if code != exitOK {
			t.Errorf("emulate %v: exit %d: %s\n%s", tc.args, code, errb, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("emulate %v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}

// TestEmulateFailsOnWrongValues: emulate is a correctness check. The upstream
// B view on a 16-token view (the bug llama.cpp PR #28301 fixed) gives wrong
// values: the command says why, prints FAIL and exits 1. Every built-in
// variant is right on both paths.
func TestEmulateFailsOnWrongValues(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "bug.toml")
	if err := os.WriteFile(spec, []byte("name = \"bug\"\nbase = \"halftile\"\nb_extents = \"upstream\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := []string{"--experts", "4", "--used", "2", "--m", "64", "--k", "256", "--n", "40"}
	code, out, errb := simrun(append([]string{"emulate", "--variant", spec, "--path", "tensor"}, small...)...)
	if code != exitFailed || !strings.Contains(errb, "FAIL") || !strings.Contains(out, "note: b_extents = upstream") {
		t.Errorf("wrong values: exit %d, stderr %q, output:\n%s\nwant exit 1, FAIL and the note", code, errb, out)
	}
	for _, v := range []string{"upstream", "halftile", "halftile-dual", "tile64x8"} {
		for _, path := range []string{"simdgroup", "tensor"} {
			if v == "halftile-dual" && path == "simdgroup" {
				continue
			}
			if code, out, errb := simrun(append([]string{"emulate", "--variant", v, "--path", path}, small...)...); code != exitOK || strings.Contains(out, "note: b_extents") {
				t.Errorf("%s on %s: exit %d, %s\n%s", v, path, code, errb, out)
			}
		}
	}
}

// TestSimulateNotesMissingMap0: an n_used llama.cpp has no map0 kernel for
// is timed, with a note saying so; an instantiated one has no note.
func TestSimulateNotesMissingMap0(t *testing.T) {
	small := []string{"simulate", "--experts", "16", "--m", "128", "--k", "256", "--n", "64", "--draws", "1"}
	for _, tc := range []struct {
		used string
		note bool
	}{{"3", true}, {"7", true}, {"4", false}, {"8", false}} {
		code, out, errb := simrun(append(small, "--used", tc.used)...)
		if code != exitOK || strings.Contains(out, "instantiates map0 only for n_used") != tc.note {
			t.Errorf("--used %s: exit %d %s, note shown %v, want %v", tc.used, code, errb, !tc.note, tc.note)
		}
	}
}

func TestOutsideBound(t *testing.T) {
	for _, tc := range []struct {
		worst float64
		fail  bool
	}{{0, false}, {0.5, false}, {1, false}, {1.01, true}, {math.Inf(1), true}, {math.NaN(), true}} {
		if got := outsideBound(tc.worst); got != tc.fail {
			t.Errorf("outsideBound(%v) = %v, want %v", tc.worst, got, tc.fail)
		}
	}
}

func TestChipsCommand(t *testing.T) {
	code, out, _ := simrun("chips")
	if code != exitOK || !strings.Contains(out, "M1 Pro 16-core GPU") || !strings.Contains(out, "from M1 Pro 16-core GPU") {
		t.Fatalf("chips: exit %d\n%s", code, out)
	}
	code, out, _ = simrun("chips", "--show", "Apple M5")
	if code != exitOK || !strings.Contains(out, `"calibration"`) {
		t.Fatalf("chips --show: exit %d\n%s", code, out)
	}
}

// TestValidateOutputDeterministic: the same JSON bytes whatever GOMAXPROCS.
func TestValidateOutputDeterministic(t *testing.T) {
	args := []string{"validate", "--format", "json", "--draws", "1", filepath.Join("..", "..", "hw", "calibration", "m5-10c-tensor-q4_0.tsv")}
	prev := runtime.GOMAXPROCS(1)
	code1, out1, err1 := simrun(args...)
	runtime.GOMAXPROCS(4)
	code2, out2, err2 := simrun(args...)
	runtime.GOMAXPROCS(prev)
	if code1 != exitOK || code2 != exitOK {
		t.Fatalf("exit %d/%d: %s %s", code1, code2, err1, err2)
	}
	if out1 != out2 {
		t.Fatal("validate --format json differs between GOMAXPROCS 1 and 4")
	}
}

// TestHeadlineOutputDeterministic: the main job's standard output (text, every
// calibration row, four draws) is the same bytes at GOMAXPROCS 1 and 4; its
// rate line, which holds wall-clock figures, goes to standard error.
func TestHeadlineOutputDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the headline twice")
	}
	prev := runtime.GOMAXPROCS(1)
	code1, out1, err1 := simrun()
	runtime.GOMAXPROCS(4)
	code2, out2, err2 := simrun()
	runtime.GOMAXPROCS(prev)
	if code1 != exitOK || code2 != exitOK {
		t.Fatalf("exit %d/%d: %s %s", code1, code2, err1, err2)
	}
	if out1 != out2 {
		t.Fatal("the headline's standard output differs between GOMAXPROCS 1 and 4")
	}
	if strings.Contains(out1, " s wall") || !strings.Contains(err1, " s wall") {
		t.Errorf("the rate line should be on standard error only: stdout has it %v, stderr %q", strings.Contains(out1, " s wall"), err1)
	}
}

// TestDocsCurrent regenerates the committed generated docs and compares.
func TestDocsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates docs/accuracy.md (a few seconds)")
	}
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"isa.md", []string{"isa"}},
		{"accuracy.md", []string{"validate", "--format", "doc"}},
	} {
		want, err := os.ReadFile(filepath.Join("..", "..", "docs", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errb := simrun(tc.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb)
		}
		if out != string(want) {
			t.Errorf("docs/%s is stale: re-run `go run ./cmd/simrun %s > docs/%s`", tc.file, strings.Join(tc.args, " "), tc.file)
		}
	}
	// the picture docs/accuracy.md embeds, redrawn by its command. Byte for
	// byte on amd64, where it is committed from: other architectures may
	// fuse multiply-adds and move an antialiased pixel.
	if runtime.GOARCH != "amd64" {
		t.Skipf("docs/%s is compared on amd64 only", accuracy.PictureFile)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", accuracy.PictureFile))
	if err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(t.TempDir(), "accuracy.png")
	if code, _, errb := simrun("validate", "--plot", png); code != exitOK {
		t.Fatalf("validate --plot: exit %d: %s", code, errb)
	}
	if got, err := os.ReadFile(png); err != nil || !bytes.Equal(got, want) {
		t.Errorf("docs/%s is stale (%v): re-run `%s`", accuracy.PictureFile, err, accuracy.PictureCommand)
	}
}

// TestSimulateNotesMulMVID: below 32 tokens simulate times mul_mv_id, as
// llama.cpp runs it, and says the variant's knobs do not apply to it; forced
// to mul_mm_id it says what llama.cpp runs instead; at 32 it says nothing.
func TestSimulateNotesMulMVID(t *testing.T) {
	small := []string{"simulate", "--draws", "1", "--experts", "16", "--used", "2", "--m", "128", "--k", "256"}
	for _, tc := range []struct {
		args       []string
		want, lack string
	}{
		{[]string{"--n", "8", "--variant", "halftile"}, "kernel mul_mv_id (fast engine, 1 routing draws)\n", ""},
		{[]string{"--n", "8", "--variant", "halftile"}, "note              variant halftile: half_skip, b_padding, codebook, b_extents do not apply to mul_mv_id", ""},
		{[]string{"--n", "8", "--kernel", "mul_mm_id"}, "note              kernel mul_mm_id is forced: llama.cpp runs mul_mv_id here (n < 32 tokens)", ""},
		{[]string{"--n", "32", "--variant", "halftile"}, "(mul_mm_id ", "note"},
	} {
		code, out, errb := simrun(append(small, tc.args...)...)
		if code != exitOK || !strings.Contains(out, tc.want) || tc.lack != "" && strings.Contains(out, tc.lack) {
			t.Errorf("simulate %v: exit %d, stderr %q, want %q and no %q:\n%s", tc.args, code, errb, tc.want, tc.lack, out)
		}
	}
}

// TestFitKeepsItsOwnValues: a chip that took its calibrated values from
// another (calibration_from) and is then fitted on measurements of its own is
// written as a chip file whose loading keeps the fit: calibration_from would
// copy the other chip's values over it.
func TestFitKeepsItsOwnValues(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "chips", "data", "m1-pro-14c.json"))
	if err != nil {
		t.Fatal(err)
	}
	chip := strings.Replace(string(src), `"name": "M1 Pro 14-core GPU"`, `"name": "M1 Pro 12-core GPU"`, 1)
	if chip == string(src) || !strings.Contains(chip, `"calibration_from"`) {
		t.Fatal("m1-pro-14c.json changed: the test needs its name line and calibration_from")
	}
	chipFile := filepath.Join(dir, "c12.json")
	rows := "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"
	for _, r := range []string{"32\tupstream\t3605.2", "32\thalftile\t2261.3", "64\tupstream\t4256.1", "64\thalftile\t2615.5"} {
		rows += "M1 Pro 12-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t" + r + "\n"
	}
	tsv := filepath.Join(dir, "r.tsv")
	if err := os.WriteFile(chipFile, []byte(chip), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tsv, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := simrun("fit", "--chip-file", chipFile, "--max-evals", "2", "--out-dir", dir,
		"--param", "barrier_clk@M1 Pro 12-core GPU=0:300", tsv)
	if code != exitOK {
		t.Fatalf("fit: exit %d\n%s%s", code, out, errb)
	}
	var written struct {
		From    string `json:"calibration_from"`
		Barrier struct {
			Value  float64 `json:"value"`
			Source string  `json:"source"`
		} `json:"barrier_clk"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "m1-pro-12-core-gpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatal(err)
	}
	if written.From != "" || written.Barrier.Source != "calibrated" {
		t.Fatalf("written chip: calibration_from %q, barrier_clk source %q; want none and calibrated", written.From, written.Barrier.Source)
	}
	out, _ = simrunOK(t, "chips", "--show", filepath.Join(dir, "m1-pro-12-core-gpu.json"))
	var loaded struct {
		Barrier struct {
			Value float64 `json:"value"`
		} `json:"barrier_clk"`
		Launch struct {
			Source string `json:"source"`
		} `json:"sg_launch_clk"`
	}
	if err := json.Unmarshal([]byte(out), &loaded); err != nil {
		t.Fatal(err)
	}
	if loaded.Barrier.Value != written.Barrier.Value {
		t.Errorf("loaded barrier_clk %g, the fit wrote %g", loaded.Barrier.Value, written.Barrier.Value)
	}
	if loaded.Launch.Source != "calibrated:M1 Pro 16-core GPU" {
		t.Errorf("sg_launch_clk source %q: the value taken from the 16-core chip should stay, with its source", loaded.Launch.Source)
	}
}

// failWriter fails every write, like a full disk.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestUnwritableOutputFails: a command whose output cannot be written exits 2
// and says so, whether or not it checks its prints (occupancy did not).
func TestUnwritableOutputFails(t *testing.T) {
	for _, args := range [][]string{{"occupancy"}, {"isa"}, {"chips"}} {
		var errb bytes.Buffer
		if code := run(args, failWriter{}, &errb); code != exitBadUsed || !strings.Contains(errb.String(), "file already closed") {
			t.Errorf("simrun %s to a failing writer: exit %d, stderr %q", args[0], code, errb.String())
		}
	}
}

// TestEmulateNotes: emulate says when llama.cpp would not run what it
// emulates (a forced mul_mm_id for n < 32, no map0 kernel for the n_used), and
// its MAC count leaves out the work the half-tile skips.
func TestEmulateNotes(t *testing.T) {
	small := []string{"emulate", "--experts", "8", "--m", "64", "--k", "256"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--used", "2", "--n", "8", "--kernel", "mul_mm_id"}, "llama.cpp runs mul_mv_id here (n < 32 tokens)"},
		{[]string{"--used", "3", "--n", "40"}, "with n_used = 3 it finds no kernel"},
	} {
		code, out, errb := simrun(append(small, tc.args...)...)
		if code != exitOK || !strings.Contains(out, "note: ") || !strings.Contains(out, tc.want) {
			t.Errorf("emulate %v: exit %d, want a note %q:\n%s%s", tc.args, code, tc.want, out, errb)
		}
	}
	macs := func(variant string) string {
		_, out, _ := simrun(append(small, "--used", "2", "--n", "40", "--variant", variant)...)
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "emulated ") {
				return strings.Fields(l)[1]
			}
		}
		return ""
	}
	if up, half := macs("upstream"), macs("halftile"); up == "" || up == half {
		t.Errorf("emulated MACs: upstream %q, halftile %q; the half-tile skips work", up, half)
	}
}

// TestEmulateStdoutDeterministic: emulate's standard output holds no
// wall-clock figure, so two runs print the same bytes; the rate is on stderr.
func TestEmulateStdoutDeterministic(t *testing.T) {
	args := []string{"emulate", "--experts", "8", "--m", "64", "--k", "256", "--used", "2", "--n", "40"}
	code, out1, errb := simrun(args...)
	_, out2, _ := simrun(args...)
	if code != exitOK || out1 != out2 {
		t.Fatalf("emulate twice: exit %d, stdout differs:\n%s\n---\n%s", code, out1, out2)
	}
	if strings.Contains(out1, "MAC/s") || !strings.Contains(errb, "MAC/s") {
		t.Errorf("the MAC/s rate belongs on stderr: stdout %q, stderr %q", out1, errb)
	}
}

// TestISADocCurrent: docs/isa.md is what `simrun isa` prints today, so the
// committed op table and its rendered expansions cannot drift from the code.
func TestISADocCurrent(t *testing.T) {
	code, out, errb := simrun("isa")
	if code != exitOK {
		t.Fatalf("simrun isa: exit %d: %s", code, errb)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "isa.md"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("docs/isa.md differs from `simrun isa` (regenerate: go run ./cmd/simrun isa > docs/isa.md): %s", firstDiff(want, []byte(out)))
	}
}
