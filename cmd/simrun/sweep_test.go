package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// simrunCmd runs simrun in-process and returns the exit code and outputs.
func simrunCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// sweepSmallShape is a problem small enough for sub-second test sweeps.
var sweepSmallShape = []string{"--experts", "16", "--used", "4", "--m", "64", "--k", "64", "--type", "f16", "--draws", "1"}

func sweepArgs(extra ...string) []string {
	args := append([]string{"sweep"}, sweepSmallShape...)
	args = append(args, "--n", "32,64", "--variant", "upstream,halftile", "--chip", "M1 Pro,M5",
		"--routing", "uniform,zipf,hot:4", "--skew", "0.5,1")
	return append(args, extra...)
}

func sweepWriteFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A sweep is the same bytes for any worker count, and 3 shards merged (in any
// order) are the bytes of the unsharded run, in both formats.
func TestSweepShardsMergeToTheSameBytes(t *testing.T) {
	dir := t.TempDir()
	for _, format := range []string{"csv", "json"} {
		code, full, errb := simrunCmd(sweepArgs("--format", format)...)
		if code != exitOK {
			t.Fatalf("%s sweep: exit %d: %s", format, code, errb)
		}
		if errb != "" {
			t.Errorf("%s sweep wrote to stderr (not a terminal): %q", format, errb)
		}
		if code, one, _ := simrunCmd(sweepArgs("--format", format, "--workers", "1")...); code != exitOK || one != full {
			t.Fatalf("%s: --workers 1 output differs from the default", format)
		}
		var shards []string
		for _, i := range []string{"2", "0", "1"} {
			code, out, errb := simrunCmd(sweepArgs("--format", format, "--shard", i+"/3", "--workers", "3")...)
			if code != exitOK {
				t.Fatalf("shard %s: exit %d: %s", i, code, errb)
			}
			shards = append(shards, sweepWriteFile(t, dir, "shard"+i+"."+format, out))
		}
		code, merged, errb := simrunCmd(append([]string{"merge"}, shards...)...)
		if code != exitOK {
			t.Fatalf("merge: exit %d: %s", code, errb)
		}
		if merged != full {
			t.Fatalf("%s: merged shards differ from the unsharded sweep:\n%s\nvs\n%s", format, merged, full)
		}
		if format == "json" {
			var doc struct {
				Points int              `json:"points"`
				Rows   []map[string]any `json:"rows"`
			}
			if err := json.Unmarshal([]byte(full), &doc); err != nil {
				t.Fatal(err)
			}
			// 2 chips x 2 variants x (uniform + zipf:0.5, zipf:1 + hot:4:0.5, hot:4:1) x 2 n
			if doc.Points != 40 || len(doc.Rows) != 40 {
				t.Fatalf("%d points, %d rows, want 40", doc.Points, len(doc.Rows))
			}
		}
	}
}

func TestSweepRowsAndSeeds(t *testing.T) {
	code, out, errb := simrunCmd(sweepArgs()...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	rows := recs[1:]
	if len(rows) != 40 {
		t.Fatalf("%d rows, want 40", len(rows))
	}
	// order: chip slowest, n fastest
	want := [][4]string{
		{"M1 Pro 16-core GPU", "upstream", "uniform", "32"},
		{"M1 Pro 16-core GPU", "upstream", "uniform", "64"},
		{"M1 Pro 16-core GPU", "upstream", "zipf:0.5", "32"},
		{"M1 Pro 16-core GPU", "upstream", "zipf:1", "32"},
		{"M1 Pro 16-core GPU", "upstream", "hot:4:0.5", "32"},
	}
	for i, w := range want {
		r := rows[[]int{0, 1, 2, 4, 6}[i]]
		got := [4]string{r[col["chip"]], r[col["variant"]], r[col["routing"]], r[col["n"]]}
		if got != w {
			t.Errorf("row %v, want %v", got, w)
		}
	}
	if r := rows[39]; r[col["chip"]] != "M5 10-core GPU" || r[col["variant"]] != "halftile" || r[col["path"]] != "tensor" || r[col["skew"]] != "1" {
		t.Errorf("last row %v", r)
	}
	// every chip and variant at one workload shares the seed; workloads differ
	seeds := map[string]string{}
	for _, r := range rows {
		key := r[col["routing"]] + "/" + r[col["n"]]
		if s, ok := seeds[key]; ok && s != r[col["seed"]] {
			t.Fatalf("%s: seeds %s and %s", key, s, r[col["seed"]])
		}
		seeds[key] = r[col["seed"]]
		if r[col["error"]] != "" || r[col["total_us"]] == "0" {
			t.Fatalf("row %v", r)
		}
	}
	if len(seeds) != 10 || seeds["uniform/32"] == seeds["uniform/64"] {
		t.Fatalf("seeds %v", seeds)
	}
	// a point gives the same numbers alone as in the sweep
	args := append([]string{"sweep"}, sweepSmallShape...)
	code, one, errb := simrunCmd(append(args, "--n", "64", "--variant", "halftile", "--chip", "M5", "--routing", "zipf:1")...)
	if code != exitOK {
		t.Fatalf("single point: %s", errb)
	}
	single, _ := csv.NewReader(strings.NewReader(one)).ReadAll()
	for _, r := range rows {
		if r[col["chip"]] == "M5 10-core GPU" && r[col["variant"]] == "halftile" && r[col["routing"]] == "zipf:1" && r[col["n"]] == "64" {
			if r[col["total_us"]] != single[1][col["total_us"]] || r[col["seed"]] != single[1][col["seed"]] {
				t.Fatalf("alone: %s µs seed %s; in the sweep: %s µs seed %s", single[1][col["total_us"]], single[1][col["seed"]], r[col["total_us"]], r[col["seed"]])
			}
		}
	}
}

func TestSweepFileRoutingAndPointErrors(t *testing.T) {
	dir := t.TempDir()
	var ids strings.Builder
	for tok := 0; tok < 32; tok++ {
		ids.WriteString("0,1,2,3\n")
	}
	file := sweepWriteFile(t, dir, "ids.csv", ids.String())
	args := append([]string{"sweep"}, sweepSmallShape...)
	code, out, errb := simrunCmd(append(args, "--n", "32", "--variant", "upstream", "--routing", "file:"+file+",uniform")...)
	if code != exitOK || !strings.Contains(out, "file:"+file) {
		t.Fatalf("file routing: exit %d: %s", code, errb)
	}
	// halftile-dual is tensor-path only: the M1 Pro point fails, the M5 one runs
	code, out, errb = simrunCmd(append(args, "--n", "32", "--variant", "halftile-dual", "--chip", "M1 Pro,M5")...)
	if code != exitFailed || !strings.Contains(errb, "1 of 2 points failed") || !strings.Contains(out, "dual_descriptor") {
		t.Fatalf("point error: exit %d, stderr %q", code, errb)
	}
}

func TestSweepFlagErrors(t *testing.T) {
	dir := t.TempDir()
	ids := sweepWriteFile(t, dir, "ids.csv", "0,1,2,3\n4,5,6,7\n")
	bad := sweepWriteFile(t, dir, "bad.csv", "0,1,2,3\n4,5,5,7\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3"}, `--shard "3/3": i = 3: must be in [0, 3)`},
		{[]string{"--shard", "-1/3"}, "i = -1: must be in [0, 3)"},
		{[]string{"--shard", "0/0"}, "N = 0: must be at least 1"},
		{[]string{"--shard", "x"}, `--shard "x": want i/N`},
		{[]string{"--n", "0"}, `--n: "0": must be an integer in [1, 16777216]`},
		{[]string{"--n", "32,abc"}, `--n: "abc"`},
		{[]string{"--n", ","}, "--n \",\": item 1 is empty"},
		{[]string{"--routing", "zipf"}, `--routing "zipf": needs its parameter (zipf:S, hot:H:F) or --skew values`},
		{[]string{"--routing", "zipf:9"}, `--routing "zipf:9": zipf s = 9: must be in [0, 8]`},
		{[]string{"--routing", "zipf:x"}, `--routing "zipf:x": S "x": not a number`},
		{[]string{"--routing", "hot:16:0.5"}, `--routing "hot:16:0.5": hot experts H = 16: must be in [1, n_mats-1 = 15]`},
		{[]string{"--routing", "hot:4:2"}, "hot fraction F = 2: must be in [0, 1]"},
		{[]string{"--routing", "hot:4", "--skew", "1.5"}, `--skew 1.5 for --routing "hot:4": hot fraction F = 1.5`},
		{[]string{"--routing", "bogus"}, `--routing "bogus": unknown routing (allowed: uniform, zipf:S, hot:H:F, file:PATH)`},
		{[]string{"--routing", "uniform:3"}, "uniform takes no parameter"},
		{[]string{"--skew", "1"}, "--skew: no --routing takes it"},
		{[]string{"--skew", "a"}, `--skew: "a": not a number`},
		{[]string{"--routing", "file:" + filepath.Join(dir, "none.csv")}, "--routing: ids file: open"},
		{[]string{"--routing", "file:" + bad}, "bad.csv:2: token 1 slot 2: expert 5 repeats slot 1"},
		{[]string{"--routing", "file:" + ids, "--n", "32"}, "--n 32: --routing file:" + ids + " holds 2 tokens (a file routing fixes n; use --n 2)"},
		{[]string{"--format", "xml"}, `--format "xml": allowed csv, json`},
		{[]string{"--variant", "nope"}, `--variant: unknown variant "nope"`},
		{[]string{"--variant", ""}, "--variant: want one or more variants"},
		{[]string{"--chip", "M9"}, `--chip: unknown chip "M9"`},
		{[]string{"--chip", "x.json"}, "--chip: open x.json"},
		{[]string{"--path", "diagonal"}, `--path: unknown gpu path "diagonal"`},
		{[]string{"--workers", "-1"}, "--workers = -1: must be >= 0"},
		{[]string{"--experts", "0"}, "--experts: problem: n_mats (experts) = 0"},
		{[]string{"--k", "48"}, "--k: problem: k = 48: must be a positive multiple of the q4_0 block size 32"},
		{[]string{"--type", "q5_1"}, `--type: unknown weight type "q5_1"`},
		{[]string{"--draws", "0"}, "--draws = 0"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
	} {
		args := append([]string{"sweep", "--experts", "16", "--used", "4", "--n", "32"}, tc.args...)
		if tc.args[0] == "--k" || tc.args[0] == "--type" {
			args = append([]string{"sweep", "--n", "32"}, tc.args...)
		}
		code, out, errb := simrunCmd(args...)
		if code != exitBadUsed || !strings.Contains(errb, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", tc.args, code, errb, tc.want)
		}
	}
}

func TestSweepHelp(t *testing.T) {
	code, _, errb := simrunCmd("sweep", "-h")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "GNU parallel", "simrun merge", "-shard", "-skew",
		"-routing", "-workers", "-format", "-chip", "-variant", "-n string", "-engine", "-draws", "-seed", "-type", "-b\t"} {
		if !strings.Contains(errb, w) {
			t.Errorf("sweep -h does not mention %q", w)
		}
	}
	if strings.Contains(errb, "-chip-file") || strings.Contains(errb, "-plot") {
		t.Error("sweep -h lists a flag sweep does not have")
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	shard := func(format, s string, extra ...string) string {
		args := append(sweepArgs("--format", format, "--shard", s), extra...)
		code, out, errb := simrunCmd(args...)
		if code != exitOK {
			t.Fatalf("shard %s: %s", s, errb)
		}
		return sweepWriteFile(t, dir, strings.ReplaceAll(s, "/", "of")+strings.Join(extra, "")+"."+format, out)
	}
	s0, s1 := shard("csv", "0/2"), shard("csv", "1/2")
	j0 := shard("json", "0/2")
	other := shard("csv", "1/2", "--n", "32")
	// more shards than points: empty shards are fine to merge or to leave out
	args := append([]string{"sweep"}, sweepSmallShape...)
	code, out, _ := simrunCmd(append(args, "--n", "32", "--variant", "upstream", "--shard", "4/5")...)
	empty := sweepWriteFile(t, dir, "empty.csv", out)
	code2, one, _ := simrunCmd(append(args, "--n", "32", "--variant", "upstream", "--shard", "0/5")...)
	onlyOne := sweepWriteFile(t, dir, "one.csv", one)
	if code != exitOK || code2 != exitOK {
		t.Fatal("small shards failed")
	}
	if code, merged, errb := simrunCmd("merge", onlyOne, empty); code != exitOK || merged != one {
		t.Fatalf("merge with an empty shard: exit %d %s", code, errb)
	}
	junk := sweepWriteFile(t, dir, "junk.csv", "a,b\n1,2\n")
	broken := sweepWriteFile(t, dir, "broken.json", `{"points":3,"rows":[{"index":0}]}`)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{nil, "no shard files"},
		{[]string{s0}, "are in no file (a shard missing?)"},
		{[]string{s0, s0}, "is in both"},
		{[]string{s0, j0}, "is JSON but"},
		{[]string{s0, other}, "a sweep of 20 points, but the other shards have 40"},
		{[]string{junk}, "junk.csv: CSV header"},
		{[]string{broken}, `broken.json: row 0: want an object with "index" and "points"`},
		{[]string{filepath.Join(dir, "missing.csv")}, "missing.csv"},
		{[]string{sweepWriteFile(t, dir, "blank.csv", "\n")}, "blank.csv: empty"},
	} {
		code, out, errb := simrunCmd(append([]string{"merge"}, tc.files...)...)
		if code != exitBadUsed || !strings.Contains(errb, tc.want) || out != "" {
			t.Errorf("merge %v: exit %d, %q, want exit 2 and %q", tc.files, code, errb, tc.want)
		}
	}
	if code, _, _ := simrunCmd("merge", s1, s0); code != exitOK {
		t.Fatal("merge of a complete set failed")
	}
}

// The CSV columns are the JSON fields, in the same order.
func TestSweepColumnsAreTheJSONFields(t *testing.T) {
	typ := reflect.TypeFor[sweepRow]()
	if typ.NumField() != len(sweepColumns) || len((&sweepRow{}).record()) != len(sweepColumns) {
		t.Fatalf("%d fields, %d record values, %d columns", typ.NumField(), len((&sweepRow{}).record()), len(sweepColumns))
	}
	for i, c := range sweepColumns {
		if tag := typ.Field(i).Tag.Get("json"); tag != c {
			t.Errorf("column %d: %q, JSON field %q", i, c, tag)
		}
	}
}

// sweepIDOf runs a small sweep and returns the sweep_id its rows share.
func sweepIDOf(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"sweep"}, sweepSmallShape...)
	args = append(args, "--n", "32", "--variant", "upstream", "--chip", "M1 Pro")
	code, out, errb := simrunCmd(append(args, extra...)...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", extra, code, errb)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][2] != "sweep_id" {
		t.Fatalf("%v: %v\n%s", extra, err, out)
	}
	for _, r := range recs[2:] {
		if r[2] != recs[1][2] {
			t.Fatalf("%v: rows with sweep_id %s and %s", extra, recs[1][2], r[2])
		}
	}
	return recs[1][2]
}

// The sweep_id column identifies the sweep's definition: every flag that
// changes the points or their values changes it; --shard, --workers and
// spellings of the same chip or variant do not.
func TestSweepIDCoversTheDefinition(t *testing.T) {
	dir := t.TempDir()
	base := sweepIDOf(t)
	if len(base) != 16 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("sweep_id %q: want 16 hex digits", base)
	}
	code, chip, errb := simrunCmd("chips", "--show", "M1 Pro 16-core GPU")
	if code != exitOK {
		t.Fatal(errb)
	}
	sameChip := sweepWriteFile(t, dir, "m1pro.json", chip)
	// the same parameters but one, under the same name
	otherChip := sweepWriteFile(t, dir, "m1pro-slower.json", strings.Replace(chip, `"dispatch_overhead_us": {
    "value": 4.2`, `"dispatch_overhead_us": {
    "value": 4.3`, 1))
	if readFile(t, otherChip) == chip {
		t.Fatal("the chip file edit did not apply")
	}
	var ids strings.Builder
	for range 32 {
		ids.WriteString("0,1,2,3\n")
	}
	idsA := sweepWriteFile(t, dir, "ids.csv", ids.String())
	idsB := sweepWriteFile(t, dir, "ids2.csv", strings.Replace(ids.String(), "0,1,2,3", "4,5,6,7", 1))
	withIDs := sweepIDOf(t, "--routing", "file:"+idsA)
	if err := os.WriteFile(idsA, []byte(readFile(t, idsB)), 0o644); err != nil {
		t.Fatal(err)
	}
	if sweepIDOf(t, "--routing", "file:"+idsA) == withIDs {
		t.Error("an ids file's content does not change the sweep_id")
	}
	for _, same := range [][]string{
		{"--shard", "0/1"}, {"--workers", "1"}, {"--workers", "7"},
		{"--chip", "Apple M1 Pro"}, {"--chip", sameChip},
		{"--engine", "fast"}, {"--seed", "1"}, {"--routing", "uniform"}, {"--path", ""},
	} {
		if id := sweepIDOf(t, same...); id != base {
			t.Errorf("%v: sweep_id %s, want %s as without it", same, id, base)
		}
	}
	seen := map[string]string{base: "the base sweep"}
	for _, other := range [][]string{
		{"--seed", "2"}, {"--draws", "2"}, {"--engine", "detailed"}, {"--n", "64"}, {"--n", "32,64"},
		{"--variant", "halftile"}, {"--variant", "upstream,halftile"}, {"--chip", "M1 Pro 14-core GPU"}, {"--chip", otherChip},
		{"--chip", "M1 Pro,M5"}, {"--path", "simdgroup"}, {"--routing", "zipf:1"}, {"--routing", "zipf", "--skew", "1"},
		{"--routing", "uniform,zipf:1"}, {"--routing", "file:" + idsA}, {"--experts", "32"}, {"--used", "2"},
		{"--m", "128"}, {"--k", "128"}, {"--type", "q8_0"}, {"--type-b", "f16"}, {"-b"},
	} {
		id := sweepIDOf(t, other...)
		if prev, ok := seen[id]; ok {
			t.Errorf("%v: sweep_id %s, the same as %s", other, id, prev)
		}
		seen[id] = fmt.Sprint(other)
	}
}
