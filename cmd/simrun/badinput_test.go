package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputFailsEarly: bad flags, arguments and files are exit 2 with an
// error naming the flag (or field) and its allowed range, before anything
// runs: nothing on stdout, no panic, no silent default.
func TestBadInputFailsEarly(t *testing.T) {
	dir := t.TempDir()
	noDir := filepath.Join(dir, "no", "such")
	hugeJSON := sweepWriteFile(t, dir, "huge.json", `{"points":2000000000000,"sweep_id":"0123456789abcdef","rows":[]}`)
	negJSON := sweepWriteFile(t, dir, "neg.json", `{"points":-1,"sweep_id":"0123456789abcdef","rows":[]}`)
	// a real row (of a one-point sweep) claiming to be point 1 of 9e18
	code, row, errb := simrun(append(append([]string{"sweep"}, sweepSmallShape...), "--n", "32", "--variant", "upstream")...)
	if code != exitOK || !strings.Contains(row, "\n0,1,") {
		t.Fatalf("one-point sweep: exit %d: %s", code, errb)
	}
	hugeCSV := sweepWriteFile(t, dir, "huge.csv", strings.Replace(row, "\n0,1,", "\n1,9000000000000000000,", 1))
	oneRow := sweepWriteFile(t, dir, "one.tsv", "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"+
		"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t64\t256\t32\tupstream\t100\n")
	noHash := sweepWriteFile(t, dir, "noHash.tsv", strings.TrimPrefix(readFile(t, oneRow), "# "))
	empty := sweepWriteFile(t, dir, "empty.tsv", "\n \n")
	badChip := sweepWriteFile(t, dir, "bad-chip.json", `{"name": "x"}`)
	chipFile := filepath.Join(dir, "chip.json")
	if code, out, errb := simrun("chips", "--show", "M1 Pro 14-core GPU"); code != exitOK {
		t.Fatal(errb)
	} else if err := os.WriteFile(chipFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	m1 := "M1 Pro 16-core GPU"
	for _, tc := range []struct {
		args []string
		want string
	}{
		// stray arguments of commands that take none
		{[]string{"simulate", "extra"}, `unexpected argument "extra" (simulate takes flags only)`},
		{[]string{"emulate", "extra"}, `unexpected argument "extra" (emulate takes flags only)`},
		{[]string{"--draws", "1", "extra"}, `unexpected argument "extra" (headline takes flags only)`},
		{[]string{"chips", "extra"}, `unexpected argument "extra" (chips takes flags only)`},
		{[]string{"isa", "extra"}, `unexpected argument "extra" (isa takes flags only)`},
		{[]string{"golden", "a", "b"}, "want one golden directory, got 2 arguments"},
		{[]string{"golden", dir}, "holds no tables/, dequant/ or mulmatid/ folder"}, // and no summary of nothing
		// problem errors name the flag
		{[]string{"simulate", "--n", "0"}, "--n: problem: n (tokens) = 0: must be in [1, 16777216]"},
		{[]string{"simulate", "--experts", "100000"}, "--experts: problem: n_mats (experts) = 100000: must be in [1, 4096]"},
		{[]string{"emulate", "--m", "0"}, "--m: problem: m (rows) = 0: must be in [1, 1048576]"},
		{[]string{"emulate", "--used", "17"}, "--used: problem: n_used (experts per token) = 17: must be in [1, 16]"},
		{[]string{"emulate", "--seed", "0"}, "--seed = 0: must be positive"},
		{[]string{"trace", "--k", "100"}, "--k: problem: k = 100: must be a positive multiple of the q4_0 block size 32"},
		// chip flags
		{[]string{"simulate", "--chip", "M0"}, `--chip: unknown chip "M0"`},
		// --chip takes a chip file too: a missing or malformed one names itself
		{[]string{"simulate", "--chip", filepath.Join(dir, "missing.json")}, "--chip: chip file " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{[]string{"occupancy", "--chip", badChip}, "--chip: chip file " + badChip + ": family: missing"},
		// an empty chip flag is an error, not the default (it panicked in
		// simulate, trace and occupancy)
		{[]string{"simulate", "--chip", ""}, `--chip "": empty; give a value (`},
		{[]string{"trace", "--chip", " ", "--out", filepath.Join(dir, "t.json")}, `--chip " ": empty; give a value (`},
		{[]string{"occupancy", "--chip", ""}, `--chip "": empty; give a value (`},
		{[]string{"validate", "--chip", "", oneRow}, `--chip "": empty; give a value (`},
		{[]string{"simulate", "--chip-file", ""}, `--chip-file "": empty; give a value (`},
		// the tile's k check names --k too (it comes from the plan, not the
		// problem's own validation)
		{[]string{"simulate", "--type", "f32", "--k", "80"}, "--k: problem: k = 80: must be a multiple of the tile's nk = 32"},
		{[]string{"emulate", "--type", "f32", "--k", "80"}, "--k: problem: k = 80: must be a multiple of the tile's nk = 32"},
		{[]string{"trace", "--type", "f32", "--k", "80"}, "--k: problem: k = 80"},
		{[]string{"trace", "--window", "0:5", "--out", filepath.Join(dir, "same.svg"), "--svg", filepath.Join(dir, "same.svg")}, "the same file as --out"},
		// an empty --path is not the chip's default path
		{[]string{"sweep", "--path", ""}, `--path "": empty; give a value (`},
		{[]string{"compare", "--path", " ", "upstream", "halftile"}, `--path " ": empty`},
		{[]string{"model", "--preset", "qwen3-30b", "--path", ""}, `--path "": empty`},
		// an empty list item is an error, not dropped; an empty --shapes is
		// not the default shape
		{[]string{"sweep", "--n", "32,,64"}, `--n "32,,64": item 2 is empty`},
		{[]string{"sweep", "--routing", "zipf", "--skew", "1,,2"}, `--skew "1,,2": item 2 is empty`},
		{[]string{"sweep", "--chip", "M5,,M1"}, `--chip "M5,,M1": item 2 is empty`},
		{[]string{"sweep", "--variant", "upstream,"}, `--variant "upstream,": item 2 is empty`},
		// an item given twice is an error too: compare dropped a repeated n and
		// repeated a repeated chip
		{[]string{"compare", "--n", "32,32", "upstream", "halftile"}, `--n "32,32": "32" is given twice`},
		{[]string{"sweep", "--chip", "M1 Pro, M1 Pro"}, `--chip "M1 Pro, M1 Pro": "M1 Pro" is given twice`},
		{[]string{"sweep", "--chip", "M1,M1 8-core GPU"}, `--chip: "M1 8-core GPU" is M1 8-core GPU, given already (a what-if chip file needs a name of its own)`},
		{[]string{"compare", "--chip", "M1,../../chips/data/m1-8c.json", "upstream", "halftile"}, `--chip: "../../chips/data/m1-8c.json" is M1 8-core GPU, given already`},
		{[]string{"compare", "--shapes", "", "upstream", "halftile"}, `--shapes "": empty; give a value (`},
		// trace outputs are checked before the run: a directory, an empty name
		{[]string{"trace", "--full", "--out", dir}, "is a directory, want a file name"},
		{[]string{"trace", "--out", ""}, `--out "": empty; give a value (`},
		{[]string{"trace", "--svg", ""}, `--svg "": empty; give a value (`},
		{[]string{"simulate", "--chip-file", filepath.Join(dir, "none.json")}, "--chip-file: chip file " + filepath.Join(dir, "none.json") + ": no such file or directory"},
		{[]string{"simulate", "--chip", "M5", "--chip-file", chipFile}, `--chip "M5" and --chip-file ` + chipFile + ": give one"},
		{[]string{"trace", "--chip", "M5", "--chip-file", chipFile}, "give one"},
		{[]string{"occupancy", "--chip", "M5", "--chip-file", chipFile}, "give one"},
		{[]string{"validate", "--chip", "M5", "--chip-file", chipFile, oneRow}, "give one"},
		{[]string{"validate", "--chip", "M0", oneRow}, `--chip: unknown chip "M0"`},
		{[]string{"validate", noHash}, `noHash.tsv: its first line has tabs but does not start with #: a calibration TSV's header line is "# " and the column names`},
		{[]string{"validate", empty}, `empty.tsv: empty file`},
		{[]string{"chips", "--show", "M0"}, `--show: unknown chip "M0"`},
		{[]string{"chips", "--show", "M5", "--chip-file", chipFile}, `--show "M5" and --chip-file ` + chipFile + ": give one"},
		{[]string{"chips", "--chip-file", filepath.Join(dir, "none.json")}, "--chip-file: chip file " + filepath.Join(dir, "none.json") + ": no such file or directory"},
		// --variant of validate and fit: checked, and only where rows need it
		{[]string{"validate", "--variant", "nope"}, `--variant: unknown variant "nope"`},
		{[]string{"validate", "--variant", "halftile"}, "--variant halftile: every row names its variant"},
		{[]string{"fit", "--variant", "halftile", "--param", "sg_launch_clk@" + m1}, "--variant halftile: every row names its variant"},
		// fit: bounds and the output directory before the fit runs
		{[]string{"fit", "--param", "sg_launch_clk@" + m1 + "=0:1e300"}, "sg_launch_clk = 1e+300: must be in [0, 1e+06]"},
		// bounds are numbers and nothing else; one parameter once; the chip
		// not found lists the files' chips
		{[]string{"fit", "--param", "sg_launch_clk@" + m1 + "=0:2000xyz"}, `bounds "0:2000xyz": want LO:HI with LO < HI`},
		{[]string{"fit", "--param", "sg_launch_clk@" + m1 + "=0:NaN"}, `bounds "0:NaN": want LO:HI`},
		{[]string{"fit", "--param", "sg_launch_clk@" + m1 + "=0:100", "--param", "sg_launch_clk@" + m1 + "=20:200"}, "sg_launch_clk@M1 Pro 16-core GPU is given twice"},
		{[]string{"fit", "--param", "sg_launch_clk@M1 Pro", "--param", "sg_launch_clk@" + m1}, "is given twice"}, // the alias resolves
		{[]string{"fit", "--param", "sg_launch_clk@M2 10-core GPU"}, `chip "M2 10-core GPU" is not among the chips of the measurement files ("M1 Pro 16-core GPU", "M5 10-core GPU")`},
		{[]string{"fit", "--out-dir", noDir, "--param", "sg_launch_clk@" + m1}, `--out-dir "` + noDir + `": not a directory`},
		// output files checked before the run
		{append(compareArgs("upstream", "halftile"), "--plot", filepath.Join(noDir, "c.png")), "--plot"},
		{[]string{"occupancy", "--plot", filepath.Join(noDir, "o.png")}, "--plot"},
		// map0's threadgroup must launch: one thread per expert, n_mats x n_used ids in threadgroup memory
		{[]string{"simulate", "--experts", "2048"}, "--experts = 2048: must be in [1, 1024] on M1 Pro 16-core GPU (map0 runs a thread per expert"},
		{[]string{"simulate", "--experts", "1024", "--used", "17"}, "--used = 17: must be in [1, 16] with --experts = 1024 on M1 Pro 16-core GPU"},
		{[]string{"compare", "--experts", "2048", "--n", "32", "upstream", "halftile"}, "--experts = 2048: must be in [1, 1024]"},
		// emulate holds every operand in memory
		{[]string{"emulate", "--m", "65536", "--k", "65536"}, "--experts, --m, --k, --n: 39.3 GB in memory"},
		// the reference's float64 copies of the activations count too: this
		// case was let through at 4.3 GB and peaked at 21 GB
		{[]string{"emulate", "--n", "1048576", "--m", "1", "--k", "1024", "--experts", "1", "--used", "1"}, "21.5 GB in memory"},
		{[]string{"emulate", "--n", "16777216"}, "allows at most 8 GiB"},
		// merge works over the rows a shard holds, not the count it claims
		{[]string{"merge", hugeJSON}, "points 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 1999999999990 more of 2000000000000 are in no file"},
		{[]string{"merge", hugeCSV}, "of 9000000000000000000 are in no file"},
		{[]string{"merge", negJSON}, `"points" = -1: must be >= 0`},
		// one routing for compare and model; --list alone
		{append(compareArgs("upstream", "halftile"), "--routing", "uniform,zipf:1"), "compare takes one routing (simrun sweep takes a list)"},
		{[]string{"model", "--preset", "mixtral", "--routing", "uniform,zipf:1"}, "model takes one routing"},
		{[]string{"model", "--list", "--n", "0"}, "--list: give it alone, without --n"},
		// ops and kernels: a kernel that cannot run a type, a forced kernel
		// outside its limits, a shape a kernel rejects, a kernel of the other
		// op, flags a mul_mat has no use for
		{[]string{"simulate", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--type", "iq2_xs", "--n", "4"}, "--kernel: mul_mv_ext: type_a = iq2_xs: no mul_mv_ext kernel"},
		{[]string{"simulate", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--type-b", "f16", "--n", "4"}, "--kernel: mul_mv_ext: type_b = f16 with type_a = q4_0: no such kernel"},
		{[]string{"emulate", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--n", "16"}, "--kernel: mul_mv_ext: n = 16: must be in [2, 8] for type_a = q4_0"},
		{[]string{"trace", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--n", "4", "--k", "320"}, "--kernel: mul_mv_ext: k = 320: must be a multiple of 128"},
		{[]string{"occupancy", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--n", "9"}, "--kernel: mul_mv_ext: n = 9: must be in [2, 8]"},
		{[]string{"sweep", "--op", "mul_mat", "--kernel", "mul_mm", "--type", "f32", "--k", "80"}, "--kernel: mul_mm: k = 80: must be a multiple of 32"},
		{[]string{"compare", "--kernel", "mul_mm_id", "--type", "f32", "--k", "80", "upstream", "halftile"}, "--kernel: mul_mm_id: k = 80: must be a multiple of 32"},
		{[]string{"model", "--preset", "qwen3-30b", "--op", "mul_mat", "--kernel", "mul_mv_ext", "--n", "1"}, "--kernel: mul_mv_ext: n = 1: must be in [2, 8]"},
		{[]string{"simulate", "--kernel", "mul_mm"}, "--kernel mul_mm: computes mul_mat, not --op mul_mat_id (give --op mul_mat, or a kernel of mul_mat_id)"},
		{[]string{"simulate", "--op", "mul_mat", "--kernel", "mul_mv_id"}, "--kernel mul_mv_id: computes mul_mat_id, not --op mul_mat"},
		{[]string{"simulate", "--kernel", "mul_mx"}, `--kernel: unknown kernel "mul_mx" (allowed: auto, mul_mv, mul_mv_ext, mul_mm, mul_mv_id, mul_mm_id)`},
		{[]string{"sweep", "--op", "dense"}, `--op: unknown op "dense" (allowed: mul_mat_id, mul_mat)`},
		{[]string{"sweep", "--op", "mul_mat", "--experts", "8"}, "--experts: applies to --op mul_mat_id only"},
		{[]string{"compare", "--op", "mul_mat", "--routing", "zipf:1", "upstream", "halftile"}, "--routing: applies to --op mul_mat_id only"},
		{[]string{"simulate", "--bs", "2"}, "--bs: applies to --op mul_mat only"},
		{[]string{"simulate", "--op", "mul_mat", "--nr", "-1"}, "--nr: problem: nr (broadcast) = -1: must be in [1, 65536]"},
		{[]string{"simulate", "--op", "mul_mat", "--bs", "0"}, "--bs: problem: bs (batch) = 0: must be in [1, 65536]"},
		{[]string{"sweep", "--op", "mul_mat", "--nr", "0"}, "--nr: problem: nr (broadcast) = 0: must be in [1, 65536]"},
		{[]string{"emulate", "--op", "mul_mat", "--bs", "2"}, "--bs: problem: bs (batch) = 2, nr (broadcast) = 1: the emulator runs one matmul"},
		{[]string{"simulate", "--op", "mul_mat", "--m", "0"}, "--m: problem: m = 0: must be in [1, 1048576]"},
		{[]string{"simulate", "--op", "mul_mat", "--n", "0"}, "--n: problem: n = 0: must be in [1, 16777216]"},
		// trace bounds
		{[]string{"trace", "--max-events", "2000000000"}, "--max-events = 2000000000: must be in [1, 5000000]"},
		{[]string{"trace", "--cores", "3-1"}, `range "3-1": want LO-HI with LO <= HI`},
	} {
		code, out, errb := simrun(tc.args...)
		if code != exitBadUsed || !strings.Contains(errb, tc.want) || out != "" {
			t.Errorf("simrun %s: exit %d, stdout %d bytes, stderr %q; want exit 2, no output and %q",
				strings.Join(tc.args, " "), code, len(out), errb, tc.want)
		}
	}
}

// TestSweepMap0PointError: a sweep point map0 cannot launch is a row with
// the error naming the flag, not the engine's threadgroup limit.
func TestSweepMap0PointError(t *testing.T) {
	code, out, errb := simrun("sweep", "--experts", "2048", "--n", "32", "--variant", "upstream", "--draws", "1")
	if code != exitFailed || !strings.Contains(out, "--experts = 2048: must be in [1, 1024]") || !strings.Contains(errb, "1 of 1 points failed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
}

// TestValidateChipReplacesEveryRow: --chip, like --chip-file, sets the chip
// of every row, also of rows that name one (docs/measuring.md: a log's "Apple
// M1 Pro" is the 16-core part; --chip picks the 14-core one).
func TestValidateChipReplacesEveryRow(t *testing.T) {
	tsv := sweepWriteFile(t, t.TempDir(), "one.tsv", "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\n"+
		"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t64\t256\t32\tupstream\t100\n")
	code, out, errb := simrun("validate", "--draws", "1", "--format", "json", "--chip", "M1 Pro 14-core GPU", tsv)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		Rows []struct {
			Chip string `json:"chip"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 1 || doc.Rows[0].Chip != "M1 Pro 14-core GPU" {
		t.Fatalf("rows %+v, want the one row on the M1 Pro 14-core GPU", doc.Rows)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
