package hw

// The logs under testdata/ and in these tables are constructed to the
// documented format (kernel-facts.md section 10.5), not captured from a real
// run; see testdata/README.md.

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// parseCleanLog is parseLogFile for a log with no malformed line.
func parseCleanLog(t *testing.T, name string) *Log {
	t.Helper()
	l := parseLogFile(t, name)
	if len(l.Errors) != 0 {
		t.Fatalf("%s: errors: %v", name, l.Errors)
	}
	return l
}

func parseLogFile(t *testing.T, name string) *Log {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ParseLog(f, name)
	if err != nil {
		t.Fatalf("ParseLog(%s): %v", name, err)
	}
	return l
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func mustInt(t *testing.T, p Params, key string) int {
	t.Helper()
	v, err := p.Int(key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseLogPerf(t *testing.T) {
	l := parseCleanLog(t, "perf-m1pro.log")
	wantBackends := []Backend{
		{Index: 1, Count: 2, Name: "MTL0", Description: "Apple M1 Pro", MemoryMB: 21845, FreeMB: 21844},
		{Index: 2, Count: 2, Name: "CPU", Skipped: true},
	}
	if len(l.Backends) != len(wantBackends) {
		t.Fatalf("backends = %+v, want %+v", l.Backends, wantBackends)
	}
	for i, b := range wantBackends {
		if l.Backends[i] != b {
			t.Errorf("backend %d = %+v, want %+v", i, l.Backends[i], b)
		}
	}

	// MUL_MAT_ID rows at n = 8..512 with their FUSION twins, then 7 dense rows.
	count := map[string]int{}
	for _, r := range l.Rows {
		count[r.Op]++
		if r.Chip != "Apple M1 Pro" || r.Backend != "MTL0" || r.Source != "perf-m1pro.log" || !r.HasTime {
			t.Errorf("line %d: chip %q backend %q source %q hasTime %v", r.Line, r.Chip, r.Backend, r.Source, r.HasTime)
		}
	}
	if count[OpMulMatID] != 6 || count[OpMulMatIDFusion] != 6 || count[OpMulMat] != 7 {
		t.Errorf("rows per op = %v, want 6 MUL_MAT_ID, 6 MUL_MAT_ID_FUSION, 7 MUL_MAT", count)
	}
	wantUS := map[int]float64{8: 301.4, 32: 2703.9, 64: 3192.1, 128: 3258.6, 256: 3311.9, 512: 4829.7}
	for _, r := range l.Rows {
		if r.Op != OpMulMatID {
			continue
		}
		n := mustInt(t, r.Params, "n")
		if r.USPerRun != wantUS[n] {
			t.Errorf("n=%d: us/run %v, want %v", n, r.USPerRun, wantUS[n])
		}
		if got := r.Params.Vars(); !strings.HasPrefix(got, "type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=") {
			t.Errorf("n=%d: params %s", n, got)
		}
		// FLOP/run printed with 2 decimals in the unit chosen: within 0.5%.
		flop := 2.0 * 768 * 2048 * float64(n) * 8
		if math.Abs(r.FLOPPerRun-flop)/flop > 0.005 {
			t.Errorf("n=%d: FLOP/run %v, want about %v", n, r.FLOPPerRun, flop)
		}
	}
	first := l.Rows[0]
	if first.Line != 10 || first.Runs != 3479 || first.FLOPPerRun != 201.33e6 || first.FLOPS != 667.97e9 {
		t.Errorf("first row = line %d runs %d flop %v flops %v", first.Line, first.Runs, first.FLOPPerRun, first.FLOPS)
	}
	fusion := l.Rows[1]
	if o, _ := fusion.Params.Int("o"); fusion.Op != OpMulMatIDFusion || o != 1 {
		t.Errorf("second row %s %s, want the FUSION twin with o=1", fusion.Op, fusion.Params.Vars())
	}
	last := l.Rows[len(l.Rows)-1]
	if bs, _ := last.Params.Ints("bs"); last.Op != OpMulMat || mustInt(t, last.Params, "n") != 512 || len(bs) != 2 || last.FLOPS != 11.49e12 {
		t.Errorf("last row %s %s flops %v", last.Op, last.Params.Vars(), last.FLOPS)
	}

	if len(l.Unsupported) != 1 || l.Unsupported[0].Op != OpMulMat || l.Unsupported[0].Reason != "not supported" || l.Unsupported[0].Line != 29 {
		t.Errorf("unsupported = %+v", l.Unsupported)
	}
	if v, _ := l.Unsupported[0].Params.String("type_a"); v != "nvfp4" {
		t.Errorf("unsupported type_a = %q", v)
	}
	wantOps := []OpCount{{"ADD", "other op", 2}, {"SOFT_MAX", "other op", 1}}
	gotOps := l.SkippedOps()
	if len(gotOps) != len(wantOps) || gotOps[0] != wantOps[0] || gotOps[1] != wantOps[1] {
		t.Errorf("SkippedOps = %v, want %v", gotOps, wantOps)
	}
	var backendSkips int
	for _, s := range l.Skipped {
		if s.Op == "" {
			backendSkips++
			if s.Reason != "backend skipped" || s.Backend != "CPU" || !strings.Contains(s.Text, "Skipping CPU backend") {
				t.Errorf("backend skip = %+v", s)
			}
		}
	}
	if backendSkips != 1 {
		t.Errorf("%d backend skips, want 1", backendSkips)
	}
	if len(l.Tests) != 0 {
		t.Errorf("tests in a perf log: %v", l.Tests)
	}
}

func TestParseLogTestMode(t *testing.T) {
	l := parseCleanLog(t, "test-m5.log")
	if len(l.Backends) != 3 || l.Backends[0].Description != "Apple M5" || l.Backends[1].Name != "BLAS" || !l.Backends[2].Skipped {
		t.Errorf("backends = %+v", l.Backends)
	}
	want := []struct {
		line    int
		op      string
		typeA   string
		pass    bool
		detail  string
		backend string
	}{
		{7, OpMulMatID, "f16", true, "", "MTL0"},
		{8, OpMulMatID, "q4_0", false, "[MUL_MAT_ID] ERR = 0.000612345 > 0.000500000", "MTL0"},
		{9, OpMulMatID, "iq2_xxs", false, "[MUL_MAT_ID] NaN at index 17 (MTL0=nan CPU=0.250000)", "MTL0"},
		{11, OpMulMatIDFusion, "f16", true, "", "MTL0"},
		{12, OpMulMat, "f16", true, "", "MTL0"},
		{16, OpMulMatID, "f32", false, "[MUL_MAT_ID] inf mismatch: MTL0=inf CPU=1.000000", "MTL0"},
		{29, OpMulMat, "f32", true, "", "BLAS"},
	}
	if len(l.Tests) != len(want) {
		t.Fatalf("%d tests, want %d: %+v", len(l.Tests), len(want), l.Tests)
	}
	for i, w := range want {
		got := l.Tests[i]
		ta, _ := got.Params.String("type_a")
		if got.Line != w.line || got.Op != w.op || ta != w.typeA || got.Pass != w.pass || got.Detail != w.detail || got.Backend != w.backend {
			t.Errorf("test %d = %+v (type_a %s), want %+v", i, got, ta, w)
		}
	}
	if len(l.Unsupported) != 1 || l.Unsupported[0].Reason != "not supported [MTL0]" || l.Unsupported[0].Line != 10 {
		t.Errorf("unsupported = %+v", l.Unsupported)
	}
	if ops := l.SkippedOps(); len(ops) != 2 || ops[0].Op != "ADD" || ops[1].Op != "SOFT_MAX" {
		t.Errorf("SkippedOps = %v", ops)
	}
	if len(l.Rows) != 0 {
		t.Errorf("rows in a test log: %v", l.Rows)
	}
}

func TestParseLogSQL(t *testing.T) {
	l := parseCleanLog(t, "perf-m5.sql")
	if len(l.Backends) != 1 || l.Backends[0] != (Backend{Name: "MTL0", Description: "Apple M5"}) {
		t.Errorf("backends = %+v", l.Backends)
	}
	wantUS := []float64{1118.0, 1293.4, 1387.2, 1514.5, 2033.5}
	if len(l.Rows) != len(wantUS) {
		t.Fatalf("%d rows, want %d", len(l.Rows), len(wantUS))
	}
	for i, r := range l.Rows {
		n := mustInt(t, r.Params, "n")
		flop := 2.0 * 768 * 2048 * float64(n) * 8
		if r.USPerRun != wantUS[i] || r.Chip != "Apple M5" || r.Backend != "MTL0" || r.Op != OpMulMatID || r.Runs == 0 {
			t.Errorf("row %d = %+v", i, r)
		}
		if math.Abs(r.FLOPPerRun-flop)/flop > 1e-6 {
			t.Errorf("row %d: FLOP/run %v, want %v", i, r.FLOPPerRun, flop)
		}
	}
	if len(l.Unsupported) != 1 || l.Unsupported[0].Op != OpMulMatID {
		t.Errorf("unsupported = %+v", l.Unsupported)
	}
	if len(l.Skipped) != 1 || l.Skipped[0].Op != "ADD" {
		t.Errorf("skipped = %+v", l.Skipped)
	}
	if len(l.Tests) != 1 || l.Tests[0].Pass || l.Tests[0].Detail != "ERR = 0.000612345 > 0.000500000" {
		t.Errorf("tests = %+v", l.Tests)
	}
}

func TestParseLogMalformed(t *testing.T) {
	l := parseLogFile(t, "malformed.log")
	wantErr := map[int]string{
		8:  `truncated: want "us/run", the line ends with "us/ru"`,
		9:  `us/run "32x8.60": want a decimal number`,
		10: "unbalanced",
		12: `want "us/run", got "-"`,
		13: `us/run "nan": NaN`,
		14: `us/run "-176.40": negative`,
		15: `TFLOPS "inf": infinite`,
		16: "unbalanced",
		17: `duplicate key "type_a"`,
		18: `unit "XFLOP/run"`,
		20: "device memory",
		22: "backend header",
		24: "nothing after ':'",
		25: `unexpected text "extra"`,
	}
	if len(l.Errors) != len(wantErr) {
		t.Errorf("%d errors, want %d: %v", len(l.Errors), len(wantErr), l.Errors)
	}
	for _, e := range l.Errors {
		want, ok := wantErr[e.Line]
		msg := e.Error()
		if !ok || !strings.Contains(msg, want) {
			t.Errorf("line %d: error %q, want it to contain %q", e.Line, msg, want)
		}
		if !strings.HasPrefix(msg, "malformed.log: line ") {
			t.Errorf("error %q does not name the source and line", msg)
		}
		if e.Text == "" || strings.Contains(e.Text, "\x1b") {
			t.Errorf("line %d: text %q", e.Line, e.Text)
		}
	}
	var lines []int
	for _, r := range l.Rows {
		lines = append(lines, r.Line)
	}
	if want := []int{7, 11, 21, 23}; !equalInts(lines, want) {
		t.Errorf("good rows at lines %v, want %v", lines, want)
	}
	if len(l.Skipped) != 1 || l.Skipped[0].Line != 19 {
		t.Errorf("skipped = %+v", l.Skipped)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const perfCase = "  MUL_MAT_ID(type_a=mxfp4,type_b=f32,n_mats=32,n_used=4,b=0,m=2880,n=512,k=2880):"

func TestParseLogLines(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Row    // compared on Op, USPerRun, Runs, FLOPPerRun, FLOPS, KBPerRun, GBPerS
		err  string // non-empty: a LineError containing this
	}{
		{"doc example", perfCase + "               1878 runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 TFLOPS",
			Row{Op: OpMulMatID, USPerRun: 533.28, Runs: 1878, FLOPPerRun: 33.97e9, FLOPS: 63.71e12}, ""},
		{"ansi and crlf", perfCase + "    1878 runs -   533.28 us/run -  33.97 GFLOP/run - \x1b[1;34m 63.71 TFLOPS\x1b[0m\r",
			Row{Op: OpMulMatID, USPerRun: 533.28, Runs: 1878, FLOPPerRun: 33.97e9, FLOPS: 63.71e12}, ""},
		{"tabs and single spaces", "\tMUL_MAT(type_a=f16,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1): 5 runs - 1.5 us/run - 8.19 kFLOP/run - 5.46 MFLOPS\t",
			Row{Op: OpMulMat, USPerRun: 1.5, Runs: 5, FLOPPerRun: 8.19e3, FLOPS: 5.46e6}, ""},
		{"memory form", perfCase + "      24577 runs -    41.37 us/run -    24576 kB/run - \x1b[1;34m 608.30 GB/s\x1b[0m",
			Row{Op: OpMulMatID, USPerRun: 41.37, Runs: 24577, KBPerRun: 24576, GBPerS: 608.30}, ""},
		{"no leading space", strings.TrimSpace(perfCase) + " 1 runs - 2.00 us/run - 3.00 kFLOP/run - 1.50 GFLOPS",
			Row{Op: OpMulMatID, USPerRun: 2, Runs: 1, FLOPPerRun: 3e3, FLOPS: 1.5e9}, ""},
		{"truncated after runs", perfCase + "   1878 runs", Row{}, `want "-"`},
		{"truncated after us/run", perfCase + "   1878 runs -   533.28 us/run -", Row{}, "truncated: want FLOP/run or kB/run value"},
		{"us/run missing", perfCase + "   1878 runs -   533.28 -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, `want "us/run"`},
		{"non-numeric runs", perfCase + "   many runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, `want "N runs`},
		{"fractional runs", perfCase + "   18.5 runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, `runs "18.5": want a non-negative integer`},
		{"negative runs", perfCase + "   -3 runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, `runs "-3": negative`},
		{"NaN FLOP", perfCase + "   1878 runs -   533.28 us/run -    nan GFLOP/run -  63.71 TFLOPS", Row{}, `GFLOP/run "nan": NaN`},
		{"hex time", perfCase + "   1878 runs -   0x1p3 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, `us/run "0x1p3": want a decimal number`},
		{"huge time", perfCase + "   1878 runs -   1e999 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{}, "out of range"},
		{"zero time", perfCase + "   1878 runs -   0.00 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{},
			`us/run "0.00": zero; want a positive decimal number of microseconds per run, in [0.001, 1e+09]`},
		{"implausible time", perfCase + "   1 runs -   2000000000.00 us/run -  33.97 GFLOP/run -  63.71 TFLOPS", Row{},
			`us/run "2000000000.00": above 1e+09; want a positive decimal number of microseconds per run, in [0.001, 1e+09]`},
		{"mixed forms", perfCase + "   1878 runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 GB/s", Row{}, `unit "GB/s": want kFLOPS`},
		{"memory with FLOPS", perfCase + "   1878 runs -   533.28 us/run -  24576 kB/run -  63.71 TFLOPS", Row{}, `want "GB/s"`},
		{"unbalanced brackets", "  MUL_MAT(type_a=f16,bs=[1,1):   5 runs - 1.5 us/run - 8.19 kFLOP/run - 5.46 MFLOPS", Row{}, "unbalanced"},
		{"missing colon", strings.TrimSuffix(perfCase, ":"), Row{}, "without"},
		{"empty key", "  MUL_MAT_ID(=1,n=2): OK", Row{}, "empty key"},
		{"text before perf", "junk" + perfCase + " 1 runs - 2.00 us/run - 3.00 kFLOP/run - 1.50 GFLOPS", Row{}, `unexpected text "junk"`},
		{"result garbage", perfCase + " maybe", Row{}, `result "maybe"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLog(strings.NewReader(tc.line+"\n"), "x.log")
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != "" {
				if len(l.Errors) != 1 || len(l.Rows) != 0 {
					t.Fatalf("want one error, got rows %+v errors %v", l.Rows, l.Errors)
				}
				if e := l.Errors[0]; e.Line != 1 || !strings.Contains(e.Error(), tc.err) || !strings.Contains(e.Error(), "line 1") {
					t.Errorf("error %q (line %d), want it to contain %q", e.Error(), e.Line, tc.err)
				}
				return
			}
			if len(l.Errors) != 0 || len(l.Rows) != 1 {
				t.Fatalf("want one row, got rows %+v errors %v", l.Rows, l.Errors)
			}
			r := l.Rows[0]
			w := tc.want
			if r.Op != w.Op || !near(r.USPerRun, w.USPerRun) || r.Runs != w.Runs || !near(r.FLOPPerRun, w.FLOPPerRun) ||
				!near(r.FLOPS, w.FLOPS) || !near(r.KBPerRun, w.KBPerRun) || !near(r.GBPerS, w.GBPerS) || !r.HasTime || r.Line != 1 {
				t.Errorf("row = %+v, want %+v", r, w)
			}
			if r.Chip != "" || r.Backend != "" {
				t.Errorf("chip %q backend %q without a header", r.Chip, r.Backend)
			}
		})
	}
}

func TestParseLogOtherLines(t *testing.T) {
	tests := []struct {
		name                                    string
		input                                   string
		rows, tests, unsupported, skipped, errs int
	}{
		{"init noise ignored", "ggml_metal_init: found device: Apple M1 Pro\nTesting 1 devices\n", 0, 0, 0, 0, 0},
		{"assert is not a case", "Testing 1 devices\nGGML_ASSERT(ne00 == ne10) failed\n", 0, 0, 0, 0, 0},
		{"other op with odd vars", "  FOO(x=[1,2): 5 runs - garbage\n  BAR(a=1): whatever\n", 0, 0, 0, 1, 0},
		{"other op not supported", "  ADD(type=f32): not supported\n", 0, 0, 1, 0, 0},
		{"test verdict with detail after", "  MUL_MAT(type_a=f16): [MUL_MAT] ERR = 0.1 > 0.0005 FAIL\n", 0, 1, 0, 0, 0},
		{"bare case outside failing list", "  MUL_MAT(type_a=f16)\n", 0, 0, 0, 0, 1},
		{"failing list", "Failing tests:\n  MUL_MAT(type_a=f16)\n  MUL_MAT(type_a=f32)\n  1/3 tests passed\n", 0, 0, 0, 0, 0},
		{"description before header", "  Device description: Apple M1\n", 0, 0, 0, 0, 1},
		{"memory before header", "  Device memory: 1 MB (1 MB free)\n", 0, 0, 0, 0, 1},
		{"header index out of range", "Backend 3/2: MTL0\n", 0, 0, 0, 0, 1},
		{"header without name", "Backend 1/2: \n", 0, 0, 0, 0, 1},
		{"summary line", "  Backend MTL0: OK\n2/2 backends passed\n", 0, 0, 0, 0, 0},
		{"sql bad table", "INSERT INTO other (a) VALUES (1);\n", 0, 0, 0, 0, 1},
		{"sql truncated", "INSERT INTO test_backend_ops (op_name, test_mode, time_us) VALUES ('MUL_MAT_ID', 'perf'\n", 0, 0, 0, 0, 1},
		{"sql count mismatch", "INSERT INTO test_backend_ops (op_name, test_mode, time_us) VALUES ('MUL_MAT_ID', 'perf');\n", 0, 0, 0, 0, 1},
		{"sql negative time", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=1', 'perf', -3);\n", 0, 0, 0, 0, 1},
		{"sql zero time", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=1', 'perf', 0);\n", 0, 0, 0, 0, 1},
		{"sql huge time", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=1', 'perf', 1e308);\n", 0, 0, 0, 0, 1},
		{"sql time at the bounds", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=1', 'perf', 0.001);\n" +
			"INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=2', 'perf', 1000000000);\n", 2, 0, 0, 0, 0},
		{"sql missing time", "INSERT INTO test_backend_ops (op_name, op_params, test_mode) VALUES ('MUL_MAT_ID', 'n=1', 'perf');\n", 0, 0, 0, 0, 1},
		{"sql missing mode", "INSERT INTO test_backend_ops (op_name, op_params) VALUES ('MUL_MAT_ID', 'n=1');\n", 0, 0, 0, 0, 1},
		{"sql bad mode", "INSERT INTO test_backend_ops (op_name, test_mode) VALUES ('MUL_MAT_ID', 'fast');\n", 0, 0, 0, 0, 1},
		{"sql bad bool", "INSERT INTO test_backend_ops (op_name, test_mode, supported) VALUES ('MUL_MAT_ID', 'perf', 'maybe');\n", 0, 0, 0, 0, 1},
		{"sql bad params", "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT_ID', 'n=[1', 'perf', 5);\n", 0, 0, 0, 0, 1},
		{"sql quotes and null", "insert into test_backend_ops (op_name, op_params, test_mode, time_us, flops, n_runs, device_description) VALUES ('MUL_MAT', 'type_a=f16', 'perf', '12.5', NULL, 4, 'Bob''s GPU')\n", 1, 0, 0, 0, 0},
		{"sql test row", "INSERT INTO test_backend_ops (op_name, test_mode, passed, error_message) VALUES ('MUL_MAT_ID', 'test', true, '');\n", 0, 1, 0, 0, 0},
		{"sql grad row", "INSERT INTO test_backend_ops (op_name, test_mode) VALUES ('MUL_MAT_ID', 'grad');\n", 0, 0, 0, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLog(strings.NewReader(tc.input), "x.log")
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Rows) != tc.rows || len(l.Tests) != tc.tests || len(l.Unsupported) != tc.unsupported ||
				len(l.Skipped) != tc.skipped || len(l.Errors) != tc.errs {
				t.Errorf("rows %d tests %d unsupported %d skipped %d errors %d (%v), want %d %d %d %d %d",
					len(l.Rows), len(l.Tests), len(l.Unsupported), len(l.Skipped), len(l.Errors), l.Errors,
					tc.rows, tc.tests, tc.unsupported, tc.skipped, tc.errs)
			}
		})
	}
}

// TestParseLogSQLTimeRange: time_us has the plausible range of the console
// form's us/run and the TSV's us_per_run, and the error names the field.
func TestParseLogSQLTimeRange(t *testing.T) {
	for v, want := range map[string]string{
		"0":     `t.sql: line 1: sql: time_us "0": zero; want a positive decimal number of microseconds per run, in [0.001, 1e+09]`,
		"1e308": `t.sql: line 1: sql: time_us "1e308": above 1e+09; want`,
		"1e-5":  `t.sql: line 1: sql: time_us "1e-5": below 0.001; want`,
	} {
		in := "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT', 'n=1', 'perf', " + v + ");\n"
		l, err := ParseLog(strings.NewReader(in), "t.sql")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Rows) != 0 || len(l.Errors) != 1 || !strings.Contains(l.Errors[0].Error(), want) {
			t.Errorf("time_us %s: rows %+v, errors %v; want one error containing %q", v, l.Rows, l.Errors, want)
		}
	}
}

func TestParseLogSQLQuoting(t *testing.T) {
	in := "INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us, device_description, backend_name) " +
		"VALUES ('MUL_MAT', 'type_a=f16', 'perf', '12.5', 'Bob''s GPU, (v2)', 'MTL0');"
	l, err := ParseLog(strings.NewReader(in), "q.sql")
	if err != nil || len(l.Rows) != 1 {
		t.Fatalf("err %v, log %+v", err, l)
	}
	if r := l.Rows[0]; r.Chip != "Bob's GPU, (v2)" || r.USPerRun != 12.5 || r.Backend != "MTL0" {
		t.Errorf("row = %+v", r)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseLogInputErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "empty input"},
		{"blank", "\n \r\n\t\n", "empty input"},
		{"prose", "hello world\nnothing here\n", "no test-backend-ops output found"},
		{"tsv", "# chip\top\n", "calibration TSV"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLog(strings.NewReader(tc.input), "in.log")
			if err == nil || l != nil {
				t.Fatalf("want an error, got %+v", l)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "in.log") || !strings.Contains(err.Error(), "want test-backend-ops") {
				t.Errorf("error %q, want it to contain %q, the source and what was expected", err, tc.want)
			}
		})
	}
	if _, err := ParseLog(failingReader{}, "f.log"); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("read failure: %v", err)
	}
}

func TestStripANSI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[1;32mOK\x1b[0m", "OK"},
		{"a\x1b[mb", "ab"},
		{"lone \x1b escape", "lone \x1b escape"},
		{"cut \x1b[1;3", "cut \x1b[1;3"},
	}
	for _, tc := range tests {
		if got := stripANSI(tc.in); got != tc.want {
			t.Errorf("stripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLogCheckRows: a log that parses but holds no measurement rows is an
// error naming the source and why its lines were skipped.
func TestLogCheckRows(t *testing.T) {
	const head = "Testing 1 devices\nBackend 1/1: MTL0\n  Device description: Apple M1 Pro\n"
	for _, tc := range []struct{ name, input, want string }{
		{"header only", head, `x.log: no measurement rows (no perf line of MUL_MAT_ID, MUL_MAT_ID_FUSION or MUL_MAT`},
		{"truncated perf line", head + perfCase + " 1878 runs - 533.2\n", "x.log: no measurement rows (1 line skipped: 1 malformed (line 4))"},
		{"truncated sql", "INSERT INTO test_backend_ops (op_name, test_mode, time_us) VALUES ('MUL_MAT_ID', 'perf'\n",
			"x.log: no measurement rows (1 line skipped: 1 malformed (line 1))"},
		{"test mode", head + perfCase + " OK\n" + perfCase + " FAIL\n  ADD(type=f32): OK\n  MUL_MAT(type_a=nvfp4): not supported\n",
			"x.log: no measurement rows (4 lines skipped: 2 test-mode results, 1 case not supported by the backend, 1 line of another op)"},
		{"many malformed", strings.Repeat(perfCase+" 1 runs\n", 7), "7 malformed (lines 1, 2, 3, 4, 5 and 2 more)"},
		{"one row", head + perfCase + " 1878 runs - 533.28 us/run - 33.97 GFLOP/run - 63.71 TFLOPS\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLog(strings.NewReader(tc.input), "x.log")
			if err != nil {
				t.Fatal(err)
			}
			err = l.CheckRows("x.log")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckRows: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckRows: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestParseLogCut: a log whose last line has no line end and does not parse
// was cut off inside that line (Log.Cut); the same line with its line end is
// only a malformed line, and a whole last line without one is no cut.
func TestParseLogCut(t *testing.T) {
	const head = "Backend 1/1: MTL0\n  Device description: Apple M1 Pro\n"
	const perf = "  MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=16,n_used=4,b=0,m=64,n=32,k=256): 10 runs - 100.00 us/run - 2.10 MFLOP/run - 21.00 GFLOPS"
	for _, tc := range []struct {
		text    string
		cutLine int // 0: not cut
	}{
		{head + perf + "\n" + perf[:60], 4},
		{head + perf + "\n" + perf[:60] + "\n", 0},
		{head + perf + "\n" + perf, 0},
		{head + perf[:60] + "\n" + perf + "\n", 0},
	} {
		lg, err := ParseLog(strings.NewReader(tc.text), "cut.log")
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.cutLine == 0 && lg.Cut != nil:
			t.Errorf("%q: cut at %v, want no cut", tc.text, *lg.Cut)
		case tc.cutLine != 0 && (lg.Cut == nil || lg.Cut.Line != tc.cutLine):
			t.Errorf("%q: cut %v, want line %d", tc.text, lg.Cut, tc.cutLine)
		}
	}
}
