package hw

// Fuzz targets. Seed corpora live in testdata/fuzz/<Name>/ (Go corpus format);
// they are cut from the constructed samples in testdata/, not captured logs.

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseCase(f *testing.F) {
	f.Add("MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048)")
	f.Add("MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=8,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1)")
	f.Add("X(a=[(1,2)],b=c=d)")
	f.Add("MUL_MAT(name=x,type=f32,ne=[64,1,1,1],op_params=[],sources=q4_K[256,64,1,1],f32[256,1,1,1])")
	f.Fuzz(func(t *testing.T, s string) {
		op, p, err := ParseCase(s)
		if err != nil {
			if op != "" || p.Len() != 0 {
				t.Fatalf("error %v with a result %q %q", err, op, p.Vars())
			}
			return
		}
		again := op + "(" + p.Vars() + ")"
		op2, p2, err := ParseCase(again)
		if err != nil || op2 != op || !p2.Equal(p) {
			t.Fatalf("round trip of %q via %q: %q %q %v", s, again, op2, p2.Vars(), err)
		}
		if q, err := NewParams(p.Pairs()...); err != nil || !q.Equal(p) {
			t.Fatalf("NewParams(%v): %v", p.Pairs(), err)
		}
		for _, k := range p.Keys() {
			v, err := p.String(k)
			if err != nil {
				t.Fatalf("String(%s): %v", k, err)
			}
			if n, err := p.Int(k); err == nil {
				if m, _ := strconv.Atoi(v); m != n {
					t.Fatalf("Int(%s) = %d for %q", k, n, v)
				}
			}
			_, _ = p.Bool(k)
			if l, err := p.Ints(k); err == nil && l == nil {
				t.Fatalf("Ints(%s) = nil without error", k)
			}
		}
		// the model-graph form: every operand parsed has a shape of positive
		// extents and no strides or four
		if srcs, err := p.Sources(); err == nil {
			for _, o := range srcs {
				if o.Type == "" || o.Ne[0] < 1 || o.Ne[1] < 1 || o.Ne[2] < 1 || o.Ne[3] < 1 || (o.Nb != nil && len(o.Nb) != 4) {
					t.Fatalf("operand %+v of %q", o, s)
				}
			}
		}
	})
}

// lineCount counts lines the way the parsers number them.
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

func FuzzParseLog(f *testing.F) {
	f.Add([]byte(perfCase + "   1878 runs -   533.28 us/run -  33.97 GFLOP/run -  63.71 TFLOPS\n"))
	f.Add([]byte("Backend 1/1: MTL0\n  Device description: Apple M5\n  Device memory: 1 MB (1 MB free)\n"))
	f.Add([]byte("INSERT INTO test_backend_ops (op_name, op_params, test_mode, time_us) VALUES ('MUL_MAT', 'n=1', 'perf', 5);\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Sniff(data)
		l, err := ParseLog(bytes.NewReader(data), "fuzz.log")
		if err != nil {
			if l != nil {
				t.Fatalf("error %v with a log", err)
			}
			return
		}
		lines := lineCount(data)
		inRange := func(what string, n int) {
			if n < 1 || n > lines {
				t.Fatalf("%s at line %d, input has %d lines", what, n, lines)
			}
		}
		for _, r := range l.Rows {
			inRange("row", r.Line)
			if !isKnownOp(r.Op) || !r.HasTime || r.Source != "fuzz.log" {
				t.Fatalf("row %+v", r)
			}
			if !(r.USPerRun >= minUSPerRun && r.USPerRun <= maxUSPerRun) {
				t.Fatalf("row %+v: time outside [%g, %g]", r, minUSPerRun, maxUSPerRun)
			}
			for _, v := range []float64{r.USPerRun, r.FLOPPerRun, r.FLOPS, r.KBPerRun, r.GBPerS} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("row %+v has a bad number", r)
				}
			}
			if r.Runs < 0 {
				t.Fatalf("row %+v", r)
			}
		}
		for _, tr := range l.Tests {
			inRange("test", tr.Line)
			if !isKnownOp(tr.Op) {
				t.Fatalf("test %+v", tr)
			}
		}
		for _, s := range append(append([]Skipped(nil), l.Unsupported...), l.Skipped...) {
			inRange("skipped", s.Line)
		}
		for _, e := range l.Errors {
			inRange("error", e.Line)
			if e.Err == nil || !strings.Contains(e.Error(), "line "+strconv.Itoa(e.Line)) {
				t.Fatalf("error %+v", e)
			}
		}
	})
}

func FuzzParseTSV(f *testing.F) {
	f.Add([]byte(tsvHead + "M5\tMUL_MAT_ID\tq4_0\tf32\t128\t8\t768\t2048\t32\tupstream\t1118\n"))
	f.Add([]byte("# chip\top\ttype_a\ttype_b\tm\tk\tn\tbaseline\tvariant\tdelta_pct\nM5\tMUL_MAT\tf16\tf32\t1\t2\t3\tup\thalf\t-3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseTSV(bytes.NewReader(data), "fuzz.tsv")
		if (err == nil) == (len(rows) == 0) {
			t.Fatalf("rows %d, err %v: want exactly one", len(rows), err)
		}
		lines := lineCount(data)
		for _, r := range rows {
			if r.Line < 1 || r.Line > lines || !isKnownOp(r.Op) || r.Chip == "" || r.Variant == "" || !(r.HasTime || r.HasDelta) {
				t.Fatalf("row %+v", r)
			}
			if r.HasTime && !(r.USPerRun >= minUSPerRun && r.USPerRun <= maxUSPerRun) {
				t.Fatalf("row %+v: time", r)
			}
			if r.HasDelta && (!(r.DeltaPct > minDeltaPct && r.DeltaPct <= maxDeltaPct) || r.Baseline == "") {
				t.Fatalf("row %+v: delta", r)
			}
			if _, p, err := ParseCase(r.Op + "(" + r.Params.Vars() + ")"); err != nil || !p.Equal(r.Params) {
				t.Fatalf("row %+v: params do not reparse: %v", r, err)
			}
			for _, k := range []string{"m", "n", "k"} {
				if v, err := r.Params.Int(k); err != nil || v <= 0 {
					t.Fatalf("row %+v: %s: %v", r, k, err)
				}
			}
		}
	})
}
