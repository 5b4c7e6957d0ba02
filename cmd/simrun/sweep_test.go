package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

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
		code, full, errb := simrun(sweepArgs("--format", format)...)
		if code != exitOK {
			t.Fatalf("%s sweep: exit %d: %s", format, code, errb)
		}
		// off a terminal stderr has no progress lines: only the closing
		// rate line (trace.WriteRates), one line
		if !strings.HasPrefix(errb, "  simulation ") || strings.Count(errb, "\n") != 1 {
			t.Errorf("%s sweep wrote more than its rate line to stderr (not a terminal): %q", format, errb)
		}
		if code, one, _ := simrun(sweepArgs("--format", format, "--workers", "1")...); code != exitOK || one != full {
			t.Fatalf("%s: --workers 1 output differs from the default", format)
		}
		var shards []string
		for _, i := range []string{"2", "0", "1"} {
			out, _ := simrunOK(t, sweepArgs("--format", format, "--shard", i+"/3", "--workers", "3")...)
			shards = append(shards, sweepWriteFile(t, dir, "shard"+i+"."+format, out))
		}
		code, merged, errb := simrun(append([]string{"merge"}, shards...)...)
		if code != exitOK {
			t.Fatalf("merge: exit %d: %s", code, errb)
		}
		if merged != full {
			t.Fatalf("%s: merged shards differ from the unsharded sweep:\n%s\nvs\n%s", format, merged, full)
		}
		// the unsharded output is a shard 0/1 of itself, and 7 shards (some
		// holding 6 points, some 5) merge to the same bytes
		fullFile := sweepWriteFile(t, dir, "full."+format, full)
		if code, again, errb := simrun("merge", fullFile); code != exitOK || again != full {
			t.Fatalf("%s: merge of the unsharded output: exit %d, %s", format, code, errb)
		}
		shards = nil
		for i := range 7 {
			s := fmt.Sprintf("%d/7", i)
			out, _ := simrunOK(t, sweepArgs("--format", format, "--shard", s, "--workers", "2")...)
			shards = append([]string{sweepWriteFile(t, dir, fmt.Sprintf("seven%d.%s", i, format), out)}, shards...)
		}
		if code, merged, errb := simrun(append([]string{"merge"}, shards...)...); code != exitOK || merged != full {
			t.Fatalf("%s: 7 shards: exit %d, %s; output equal to the unsharded run: %t", format, code, errb, merged == full)
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
	out, _ := simrunOK(t, sweepArgs()...)
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
	code, one, errb := simrun(append(args, "--n", "64", "--variant", "halftile", "--chip", "M5", "--routing", "zipf:1")...)
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
	code, out, errb := simrun(append(args, "--n", "32", "--variant", "upstream", "--routing", "file:"+file+",uniform")...)
	if code != exitOK || !strings.Contains(out, "file:"+file) {
		t.Fatalf("file routing: exit %d: %s", code, errb)
	}
	// halftile-dual is tensor-path only: the M1 Pro point fails, the M5 one runs
	code, out, errb = simrun(append(args, "--n", "32", "--variant", "halftile-dual", "--chip", "M1 Pro,M5")...)
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
		{[]string{"--routing", "file:" + filepath.Join(dir, "none.csv")}, "none.csv: no such file or directory"},
		{[]string{"--routing", "file:" + bad}, "bad.csv:2: token 1 slot 2: expert 5 repeats slot 1"},
		{[]string{"--routing", "file:" + ids, "--n", "32"}, "--n 32: --routing file:" + ids + " holds 2 tokens (a file routing fixes n; use --n 2)"},
		{[]string{"--format", "xml"}, `--format "xml": allowed csv, json`},
		{[]string{"--variant", "nope"}, `--variant: unknown variant "nope"`},
		{[]string{"--variant", ""}, `--variant "": empty; give a value (`},
		{[]string{"--chip", "M9"}, `--chip: unknown chip "M9"`},
		{[]string{"--chip", "x.json"}, "--chip: chip file x.json: no such file or directory"},
		{[]string{"--path", "diagonal"}, `--path: unknown gpu path "diagonal"`},
		{[]string{"--workers", "-1"}, "--workers = -1: must be >= 0"},
		{[]string{"--experts", "0"}, "--experts: problem: n_mats (experts) = 0"},
		{[]string{"--k", "48"}, "--k: problem: k = 48: must be a positive multiple of the q4_0 block size 32"},
		{[]string{"--type", "q5_k"}, `--type: unknown weight type "q5_k"`},
		{[]string{"--draws", "0"}, "--draws = 0"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
	} {
		args := append([]string{"sweep", "--experts", "16", "--used", "4", "--n", "32"}, tc.args...)
		if tc.args[0] == "--k" || tc.args[0] == "--type" {
			args = append([]string{"sweep", "--n", "32"}, tc.args...)
		}
		requireBadUse(t, args, tc.want)
	}
}

func TestSweepHelp(t *testing.T) {
	code, _, errb := simrun("sweep", "-h")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "GNU parallel", "simrun merge", "-shard", "-skew",
		"-routing", "-workers", "-format", "-chip", "-variant", "-n string", "-engine", "-draws", "-seed", "-type", "-b\t", "-plot"} {
		if !strings.Contains(errb, w) {
			t.Errorf("sweep -h does not mention %q", w)
		}
	}
	if strings.Contains(errb, "-chip-file") {
		t.Error("sweep -h lists a flag sweep does not have")
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	shard := func(format, s string, extra ...string) string {
		args := append(sweepArgs("--format", format, "--shard", s), extra...)
		out, _ := simrunOK(t, args...)
		return sweepWriteFile(t, dir, strings.ReplaceAll(s, "/", "of")+strings.Join(extra, "")+"."+format, out)
	}
	s0, s1 := shard("csv", "0/2"), shard("csv", "1/2")
	j0 := shard("json", "0/2")
	other := shard("csv", "1/2", "--n", "32")
	// more shards than points: empty shards are fine to merge or to leave out
	args := append([]string{"sweep"}, sweepSmallShape...)
	code, out, _ := simrun(append(args, "--n", "32", "--variant", "upstream", "--shard", "4/5")...)
	empty := sweepWriteFile(t, dir, "empty.csv", out)
	code2, one, _ := simrun(append(args, "--n", "32", "--variant", "upstream", "--shard", "0/5")...)
	onlyOne := sweepWriteFile(t, dir, "one.csv", one)
	code3, whole, _ := simrun(append(args, "--n", "32", "--variant", "upstream")...)
	if code != exitOK || code2 != exitOK || code3 != exitOK {
		t.Fatal("small shards failed")
	}
	if code, merged, errb := simrun("merge", onlyOne, empty); code != exitOK || merged != whole {
		t.Fatalf("merge with an empty shard: exit %d %s", code, errb)
	}
	code, out, _ = simrun(append(args, "--n", "32", "--variant", "upstream", "--shard", "4/5", "--format", "json")...)
	emptyJSON := sweepWriteFile(t, dir, "empty.json", out)
	code2, one, _ = simrun(append(args, "--n", "32", "--variant", "upstream", "--shard", "0/5", "--format", "json")...)
	onlyOneJSON := sweepWriteFile(t, dir, "one.json", one)
	code3, whole, _ = simrun(append(args, "--n", "32", "--variant", "upstream", "--format", "json")...)
	if code != exitOK || code2 != exitOK || code3 != exitOK {
		t.Fatal("small JSON shards failed")
	}
	if code, merged, errb := simrun("merge", emptyJSON, onlyOneJSON); code != exitOK || merged != whole {
		t.Fatalf("merge with an empty JSON shard: exit %d %s", code, errb)
	}
	junk := sweepWriteFile(t, dir, "junk.csv", "a,b\n1,2\n")
	broken := sweepWriteFile(t, dir, "broken.json", `{"points":3,"sweep_id":"0123456789abcdef","rows":[{"index":0}]}`)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{nil, "no shard files"},
		{[]string{s0}, "are in no file (a shard missing?)"},
		{[]string{s0, s0}, "is in both"},
		{[]string{s0, j0}, "is JSON but"},
		{[]string{s0, other}, "1of2--n32.csv: sweep_id "},
		{[]string{junk}, "junk.csv: CSV header"},
		{[]string{broken}, `broken.json: row 0 (line 1): field "points" missing`},
		{[]string{filepath.Join(dir, "missing.csv")}, "missing.csv"},
		{[]string{sweepWriteFile(t, dir, "blank.csv", "\n")}, "blank.csv: empty"},
	} {
		code, out, errb := simrun(append([]string{"merge"}, tc.files...)...)
		if code != exitBadUsed || !strings.Contains(errb, tc.want) || out != "" {
			t.Errorf("merge %v: exit %d, %q, want exit 2 and %q", tc.files, code, errb, tc.want)
		}
	}
	if code, _, _ := simrun("merge", s1, s0); code != exitOK {
		t.Fatal("merge of a complete set failed")
	}
	code, _, errb := simrun("merge", "-h")
	for _, w := range []string{"sweep_id", "foreign file", "truncated shard", "text after the JSON document"} {
		if code != exitOK || !strings.Contains(errb, w) {
			t.Errorf("merge -h: exit %d, does not mention %q", code, w)
		}
	}
}

// sweepIDOf runs a small sweep and returns the sweep_id its rows share.
func sweepIDOf(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"sweep"}, sweepSmallShape...)
	args = append(args, "--n", "32", "--variant", "upstream", "--chip", "M1 Pro")
	code, out, errb := simrun(append(args, extra...)...)
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
	code, chip, errb := simrun("chips", "--show", "M1 Pro 16-core GPU")
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
	// the built-in upstream variant as a spec file: a point's error names it as given
	upstreamSpec := sweepWriteFile(t, dir, "upstream.toml", "name = \"upstream\"\nbase = \"upstream\"\n")
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
		{"--engine", "fast"}, {"--seed", "1"}, {"--routing", "uniform"},
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
		{"--m", "128"}, {"--k", "128"}, {"--type", "q8_0"}, {"--type-b", "f16"}, {"-b"}, {"--variant", upstreamSpec},
	} {
		id := sweepIDOf(t, other...)
		if prev, ok := seen[id]; ok {
			t.Errorf("%v: sweep_id %s, the same as %s", other, id, prev)
		}
		seen[id] = fmt.Sprint(other)
	}
}

// totalUsJSON and digestJSON find a JSON row's total_us and digest fields.
var (
	totalUsJSON = regexp.MustCompile(`"total_us":[^,]*,`)
	digestJSON  = regexp.MustCompile(`,"digest":"[0-9a-f]*"}`)
)

// editTotal sets a CSV row's total_us (column 19) to 100, as simrun sweep
// would write that value.
func editTotal(l string) string {
	f := strings.Split(l, ",")
	f[19] = "100.000"
	return strings.Join(f, ",")
}

// dropDigests removes a CSV shard's digest column.
func dropDigests(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.LastIndex(l, ","); j >= 0 {
			lines[i] = l[:j]
		}
	}
	return strings.Join(lines, "\n")
}

// merge refuses, naming the file (and the line, row, column or field), a
// shard of another sweep, a row not as simrun sweep writes it, an edited row
// and a file that is not the rows of one shard.
func TestMergeRejectsForeignAndMalformedShards(t *testing.T) {
	dir := t.TempDir()
	shard := func(name, format, s string, extra ...string) string {
		t.Helper()
		out, _ := simrunOK(t, append(sweepArgs("--format", format, "--shard", s), extra...)...)
		return sweepWriteFile(t, dir, name, out)
	}
	// mutate writes a copy of file with edit applied, which must change it
	mutate := func(name, file string, edit func(string) string) string {
		t.Helper()
		in := readFile(t, file)
		out := edit(in)
		if out == in {
			t.Fatalf("%s: the edit changes nothing", name)
		}
		return sweepWriteFile(t, dir, name, out)
	}
	// line edits line n (1-based) of a file
	line := func(n int, edit func(string) string) func(string) string {
		return func(s string) string {
			lines := strings.Split(s, "\n")
			lines[n-1] = edit(lines[n-1])
			return strings.Join(lines, "\n")
		}
	}
	dropLine := func(n int) func(string) string {
		return func(s string) string {
			lines := strings.Split(s, "\n")
			return strings.Join(append(lines[:n-1:n-1], lines[n:]...), "\n")
		}
	}
	c0, c1, c2 := shard("c0.csv", "csv", "0/3"), shard("c1.csv", "csv", "1/3"), shard("c2.csv", "csv", "2/3")
	j0, j1, j2 := shard("j0.json", "json", "0/3"), shard("j1.json", "json", "1/3"), shard("j2.json", "json", "2/3")
	id := strings.Split(strings.Split(readFile(t, c0), "\n")[1], ",")[2]
	jLines := strings.Count(readFile(t, j0), "\n")
	// rows of another sweep: other flags, the same number of points
	seedCSV := shard("seed2.csv", "csv", "0/3", "--seed", "2")
	nCSV := shard("othern.csv", "csv", "1/3", "--n", "32,128")
	seedJSON := shard("seed2.json", "json", "0/3", "--seed", "2")
	nJSON := shard("othern.json", "json", "1/3", "--n", "32,128")
	drawsCSV := shard("draws2.csv", "csv", "2/3", "--draws", "2")
	// a JSON shard without rows still names its sweep
	args := append([]string{"sweep"}, sweepSmallShape...)
	out, _ := simrunOK(t, append(args, "--n", "32", "--variant", "upstream", "--shard", "4/5", "--format", "json")...)
	emptyJSON := sweepWriteFile(t, dir, "empty-other.json", out)
	h0 := shard("h0.csv", "csv", "0/2")
	anotherID := strings.Split(strings.Split(readFile(t, seedCSV), "\n")[1], ",")[2]

	sameSweep := "not a shard of the same sweep"
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		// foreign shards (the review's reproduction), in either format
		{[]string{seedCSV, c1, c2}, []string{"seed2.csv: sweep_id ", sameSweep}},
		{[]string{c0, nCSV, c2}, []string{"othern.csv: sweep_id ", sameSweep}},
		{[]string{c0, c1, drawsCSV}, []string{"draws2.csv: sweep_id ", sameSweep}},
		{[]string{seedJSON, j1, j2}, []string{"seed2.json: sweep_id ", sameSweep}},
		{[]string{j0, nJSON, j2}, []string{"othern.json: sweep_id ", sameSweep}},
		{[]string{j0, j1, j2, emptyJSON}, []string{"empty-other.json: sweep_id ", sameSweep}},
		// shards of different N
		{[]string{h0, c1, c2}, []string{"c1.csv is a shard of N = 3", "h0.csv is one of N = 2"}},
		// JSON: unknown, missing, repeated, null, mistyped or re-encoded fields; text after the document
		{[]string{mutate("bogus.json", j0, line(2, func(l string) string { return strings.Replace(l, `"index":0,`, `"index":0,"bogus":1,`, 1) })), j1, j2},
			[]string{`bogus.json: row 0 (line 2): unknown field "bogus"`}},
		{[]string{mutate("case.json", j0, line(2, func(l string) string { return strings.Replace(l, `"index":`, `"Index":`, 1) })), j1, j2},
			[]string{`case.json: row 0 (line 2): unknown field "Index"`}},
		{[]string{mutate("garbage.json", j0, func(s string) string { return s + "garbage\n" }), j1, j2},
			[]string{fmt.Sprintf("garbage.json: line %d: text after the JSON document", jLines+1)}},
		{[]string{mutate("twodocs.json", j0, func(s string) string { return s + s }), j1, j2},
			[]string{fmt.Sprintf("twodocs.json: line %d: text after the JSON document", jLines+1)}},
		{[]string{mutate("missing.json", j0, line(3, func(l string) string { return strings.Replace(l, `,"error":""`, "", 1) })), j1, j2},
			[]string{`missing.json: row 1 (line 3): field "error" missing`}},
		{[]string{mutate("twice.json", j0, line(2, func(l string) string { return strings.Replace(l, `"chip":`, `"n":32,"chip":`, 1) })), j1, j2},
			[]string{`twice.json: row 0 (line 2): field "n" appears twice`}},
		{[]string{mutate("null.json", j0, line(2, func(l string) string { return strings.Replace(l, `"draws":1`, `"draws":null`, 1) })), j1, j2},
			[]string{`null.json: row 0 (line 2): field "draws" null: want an integer`}},
		{[]string{mutate("type.json", j0, line(2, func(l string) string { return strings.Replace(l, `"n":32`, `"n":"32"`, 1) })), j1, j2},
			[]string{`type.json: row 0 (line 2): field "n" "32": want an integer`}},
		{[]string{mutate("float.json", j0, line(2, func(l string) string { return strings.Replace(l, `"dispatch_us":8.4`, `"dispatch_us":8.40`, 1) })), j1, j2},
			[]string{`float.json: row 0 (line 2): field "dispatch_us" 8.40: not as simrun sweep writes it (8.4`}},
		{[]string{mutate("spaced.json", j0, line(2, func(l string) string { return strings.Replace(l, `"index":0,`, `"index": 0,`, 1) })), j1, j2},
			[]string{"spaced.json: row 0 (line 2): not as simrun sweep writes it"}},
		{[]string{mutate("header.json", j0, line(1, func(l string) string { return strings.Replace(l, `"rows"`, `"shard":"0/3","rows"`, 1) })), j1, j2},
			[]string{`header.json: line 1: unknown field "shard" in the JSON header`}},
		{[]string{mutate("noid.json", j0, line(1, func(l string) string { return strings.Replace(l, `"sweep_id":"`+id+`",`, "", 1) })), j1, j2},
			[]string{`noid.json: not a sweep JSON output: no "sweep_id" field`}},
		{[]string{mutate("rowid.json", j0, line(4, func(l string) string { return strings.Replace(l, id, anotherID, 1) })), j1, j2},
			[]string{"rowid.json: row 2 (line 4): sweep_id " + anotherID + ", but the JSON header says " + id}},
		{[]string{mutate("cut.json", j0, func(s string) string { return s[:len(s)/2] }), j1, j2},
			[]string{"cut.json: line ", "unexpected end of the file (a truncated output?)"}},
		// CSV: malformed, re-encoded or foreign values; rows out of order; truncated shards
		{[]string{mutate("n.csv", c0, line(2, func(l string) string { return strings.Replace(l, ",32,", ",x32,", 1) })), c1, c2},
			[]string{`n.csv: line 2: column n "x32": want an integer`}},
		{[]string{mutate("id.csv", c0, line(2, func(l string) string { return strings.Replace(l, id, "xyz", 1) })), c1, c2},
			[]string{`id.csv: line 2: column sweep_id "xyz": want 16 hex digits`}},
		{[]string{mutate("zero.csv", c0, line(3, func(l string) string { return "0" + l })), c1, c2},
			[]string{`zero.csv: line 3: column index "03": not as simrun sweep writes it ("3"`}},
		{[]string{mutate("rowid.csv", c0, line(3, func(l string) string { return strings.Replace(l, id, anotherID, 1) })), c1, c2},
			[]string{"rowid.csv: line 3: sweep_id " + anotherID + ", but earlier rows say " + id}},
		{[]string{mutate("points.csv", c0, line(3, func(l string) string { return strings.Replace(l, "3,40,", "3,41,", 1) })), c1, c2},
			[]string{"points.csv: line 3: points = 41, but earlier rows say 40"}},
		{[]string{mutate("order.csv", c0, func(s string) string {
			lines := strings.Split(s, "\n")
			lines[2], lines[3] = lines[3], lines[2]
			return strings.Join(lines, "\n")
		}), c1, c2}, []string{"order.csv: line 4: index 3 after index 6: simrun sweep writes rows in index order"}},
		{[]string{mutate("extra.csv", c0, line(2, func(l string) string { return l + ",x" })), c1, c2},
			[]string{"extra.csv: record on line 2: wrong number of fields"}},
		{[]string{mutate("last.csv", c0, dropLine(15)), c1, c2},
			[]string{"last.csv: line 14: index 36 is the last, but shard 0/3 also holds 39 (< points = 40): a truncated shard?"}},
		{[]string{mutate("first.csv", c0, dropLine(2)), c1, c2},
			[]string{"first.csv: line 2: index 3 is the first, but the file's indices are 3 apart: shard 0/3 starts at 0"}},
		{[]string{mutate("gap.csv", c0, dropLine(5)), c1, c2},
			[]string{"gap.csv: line 5: index 12 follows 6, but the file's first indices are 3 apart"}},
		// an edited row (a value changed, still as simrun sweep writes one)
		// does not match its digest; a shard without digests is refused
		{[]string{mutate("edited.csv", c0, line(3, editTotal)), c1, c2},
			[]string{"edited.csv: line 3: digest ", "does not match the row's values", "a row edited after simrun sweep wrote it?"}},
		{[]string{j0, mutate("edited.json", j1, line(2, func(l string) string { return totalUsJSON.ReplaceAllString(l, `"total_us":100,`) })), j2},
			[]string{"edited.json: row 0 (line 2): digest ", "does not match the row's values"}},
		{[]string{mutate("nodigest0.csv", c0, dropDigests), mutate("nodigest1.csv", c1, dropDigests), c2},
			[]string{"nodigest0.csv: no digest column (or field): not a shard output"}},
		{[]string{mutate("halfdigest.json", j0, line(3, func(l string) string { return digestJSON.ReplaceAllString(l, "}") })), j1, j2},
			[]string{`halfdigest.json: row 1 (line 3): a "digest" field in some rows but not in others`}},
	} {
		code, out, errb := simrun(append([]string{"merge"}, tc.files...)...)
		ok := code == exitBadUsed && out == ""
		for _, w := range tc.want {
			ok = ok && strings.Contains(errb, w)
		}
		if !ok {
			t.Errorf("merge %v: exit %d, %d bytes out, stderr %q; want exit 2 and %q", tc.files, code, len(out), errb, tc.want)
		}
	}
	// the unmodified shards merge
	for _, files := range [][]string{{c0, c1, c2}, {j2, j0, j1}} {
		if code, _, errb := simrun(append([]string{"merge"}, files...)...); code != exitOK {
			t.Fatalf("merge %v: %s", files, errb)
		}
	}
}

// Rows with an error (quoted CSV fields) and file routings merge to the bytes
// of the unsharded run too, and the merge fails as the unsharded run does.
func TestMergeErrorRowsAndFileRoutings(t *testing.T) {
	dir := t.TempDir()
	ids := sweepWriteFile(t, dir, "ids.csv", strings.Repeat("0,1,2,3\n", 32))
	args := append([]string{"sweep"}, sweepSmallShape...)
	args = append(args, "--n", "32", "--variant", "upstream,halftile-dual", "--chip", "M1 Pro,M5", "--routing", "file:"+ids+",uniform")
	for _, format := range []string{"csv", "json"} {
		code, full, _ := simrun(append(args, "--format", format)...)
		if code != exitFailed || !strings.Contains(full, `dual_descriptor: applies to the tensor path only`) {
			t.Fatalf("%s: exit %d, want error rows", format, code)
		}
		var shards []string
		for i := range 3 {
			_, out, _ := simrun(append(args, "--format", format, "--shard", fmt.Sprintf("%d/3", i))...)
			shards = append(shards, sweepWriteFile(t, dir, fmt.Sprintf("e%d.%s", i, format), out))
		}
		if code, merged, errb := simrun(append([]string{"merge"}, shards...)...); code != exitFailed || merged != full || !strings.Contains(errb, "2 of 8 points failed") {
			t.Fatalf("%s: exit %d, %s; merged output equal to the unsharded run: %t", format, code, errb, merged == full)
		}
	}
}

// TestMergeOnlyEmptyShards: CSV shards that hold no point cannot tell the
// sweep's points count (it is in the rows), so merging only them is an error,
// as it is for JSON shards, not a header-only table.
func TestMergeOnlyEmptyShards(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, i := range []string{"50", "60"} { // the sweep has 40 points
		code, out, errb := simrun(sweepArgs("--n", "32,64", "--format", "csv", "--shard", i+"/90")...)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", i, code, errb)
		}
		files = append(files, sweepWriteFile(t, dir, "empty"+i+".csv", out))
	}
	if code, out, errb := simrun(append([]string{"merge"}, files...)...); code != exitBadUsed || out != "" || !strings.Contains(errb, "holds a point") {
		t.Errorf("merge of empty CSV shards: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

// TestSweepEveryKernel: a mul_mat sweep runs the kernel llama.cpp dispatches
// at each n (the kernel column), its shards merge to the unsharded bytes,
// and merge checks the kernel and op columns: a row whose kernel does not
// compute its op is rejected, naming the column.
func TestSweepEveryKernel(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--op", "mul_mat", "--m", "64", "--k", "256", "--n", "1,4,16", "--variant", "upstream,tile64x8", "--draws", "1"}
	code, full, errb := simrun(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	recs, err := csv.NewReader(strings.NewReader(full)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	for i, want := range []string{"mul_mv", "mul_mv_ext", "mul_mm", "mul_mv", "mul_mv_ext", "mul_mm"} {
		r := recs[i+1]
		if r[col("kernel")] != want || r[col("op")] != "mul_mat" || r[col("experts")] != "0" || r[col("routing")] != "" || r[col("seed")] != "0" {
			t.Errorf("row %d: kernel %s op %s experts %s routing %q seed %s; want %s, mul_mat, 0, empty, 0", i, r[col("kernel")], r[col("op")], r[col("experts")], r[col("routing")], r[col("seed")], want)
		}
		if (want == "mul_mm") != (r[col("path")] == "simdgroup") || (i >= 3 && want != "mul_mm") != strings.Contains(r[col("note")], "do not apply to "+want) {
			t.Errorf("row %d (%s): path %q, note %q", i, want, r[col("path")], r[col("note")])
		}
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		out, _ := simrunOK(t, append(args, "--shard", s)...)
		shards = append(shards, sweepWriteFile(t, dir, strings.ReplaceAll(s, "/", "of")+".csv", out))
	}
	if code, merged, errb := simrun(append([]string{"merge"}, shards...)...); code != exitOK || merged != full {
		t.Fatalf("merge: exit %d %s; equal to the unsharded run: %t", code, errb, merged == full)
	}
	bad := sweepWriteFile(t, dir, "bad.csv", strings.Replace(readFile(t, shards[0]), ",mul_mat,1,1,mul_mv,", ",mul_mat,1,1,mul_mm_id,", 1))
	if code, _, errb := simrun("merge", bad, shards[1]); code != exitBadUsed || !strings.Contains(errb, `column kernel "mul_mm_id": not a kernel of op mul_mat`) {
		t.Errorf("merge of a row with a mul_mat_id kernel: exit %d, %s", code, errb)
	}
}
