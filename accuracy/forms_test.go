package accuracy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
)

// everyFormLog is a CONSTRUCTED perf log (docs/measuring.md §4): for every
// weight type the built-in cases' FLOPS form (MUL_MAT at n = 1, 2, 4, 8, 512;
// MUL_MAT_ID at n = 8 and 32) and the model-graph form of a --test-file run,
// printed in the memory form (MUL_MAT at n = 1 and 8, MUL_MAT_ID of 1 and 32
// tokens, gate-style with one activation row per token), then the same
// model-graph rows as --output sql. The shapes are small so the test is fast;
// kB/run is the real op size of each case, every time a made-up 100 µs.
func everyFormLog() (console, sql string) {
	var b, q strings.Builder
	b.WriteString("Testing 2 devices\n\nBackend 1/2: MTL0\n  Device description: Apple M1 Pro\n  Device memory: 16384 MB (16383 MB free)\n\n")
	flops := func(op, vars string) {
		fmt.Fprintf(&b, "  %s(%s):                  1000 runs -   100.00 us/run -  10.00 MFLOP/run - \x1b[1;34m100.00 GFLOPS\x1b[0m\n", op, vars)
	}
	memory := func(op, vars string, bytes int) {
		fmt.Fprintf(&b, "  %s(%s):                 8192 runs -   100.00 us/run - %8d kB/run - \x1b[1;34m%7.2f GB/s\x1b[0m\n", op, vars, bytes/1024, float64(bytes)/100e-6/(1<<30))
		fmt.Fprintf(&q, "INSERT INTO test_backend_ops (test_time, backend_name, op_name, op_params, test_mode, supported, passed, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description) VALUES ('2026-12-02T00:00:00Z', 'MTL0', '%s', '%s', 'perf', 1, 1, 100, 0, %.2f, %d, 8192, 'Apple M1 Pro');\n",
			op, vars, float64(bytes)/100e-6/(1<<30), bytes/1024)
	}
	for _, t := range dequant.Types() {
		const m, k = 256, 2048
		for _, n := range []int{1, 2, 4, 8, 512} {
			flops("MUL_MAT", fmt.Sprintf("type_a=%s,type_b=f32,m=%d,n=%d,k=%d,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1", t, m, n, k))
		}
		for _, n := range []int{8, 32} {
			flops("MUL_MAT_ID", fmt.Sprintf("type_a=%s,type_b=f32,n_mats=8,n_used=2,b=0,m=128,n=%d,k=512", t, n))
		}
		rb, _ := t.RowBytes(k)
		for _, n := range []int{1, 8} {
			memory("MUL_MAT", fmt.Sprintf("name=ffn_up-%d,type=f32,ne=[%d,%d,1,1],op_params=[],sources=%s[%d,%d,1,1],f32[%d,%d,1,1]", n, m, n, t, k, m, k, n),
				m*rb+4*k*n+4*m*n)
		}
		rbE, _ := t.RowBytes(512)
		for _, n := range []int{1, 32} {
			memory("MUL_MAT_ID", fmt.Sprintf("name=ffn_moe_gate-%d,type=f32,ne=[128,2,%d,1],op_params=[],sources=%s[512,128,8,1],f32[512,1,%d,1],i32[2,%d,1,1]", n, n, t, n, n),
				8*128*rbE+4*512*n+4*2*n+4*128*2*n)
		}
	}
	b.WriteString("\nBackend 2/2: CPU\n  Skipping CPU backend\n")
	return b.String(), q.String()
}

// TestEveryTypeEveryForm: every weight type's rows parse and get a
// prediction in every form test-backend-ops prints them in, each from the
// kernel the host runs, the model-graph rows as the built-in case with the
// same operands (MUL_MAT_ID with every token on the same experts).
func TestEveryTypeEveryForm(t *testing.T) {
	console, sql := everyFormLog()
	chip := m1pro(t)
	var graph []Case
	for _, src := range []struct{ name, text string }{{"forms.log", console}, {"forms.sql", sql}} {
		lg, err := hw.ParseLog(strings.NewReader(src.text), src.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(lg.Errors) > 0 {
			t.Fatalf("%s: %v", src.name, lg.Errors[0])
		}
		want := 26 * (5 + 2 + 2 + 2)
		if src.name == "forms.sql" {
			want = 26 * (2 + 2)
		}
		if len(lg.Rows) != want {
			t.Fatalf("%s: %d rows, want %d", src.name, len(lg.Rows), want)
		}
		cases, err := Match(lg.Rows, MatchOptions{Chip: chip})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			name := fmt.Sprintf("%s line %d %s(%s)", src.name, c.Row.Line, c.Row.Op, c.Row.Params.Vars())
			if !c.Modelled {
				t.Errorf("%s: not modelled: %s", name, c.Reason)
				continue
			}
			if !c.Row.Params.IsGraph() {
				continue
			}
			if c.Row.KBPerRun <= 0 || c.Row.GBPerS <= 0 {
				t.Errorf("%s: memory form %g kB/run, %g GB/s", name, c.Row.KBPerRun, c.Row.GBPerS)
			}
			graph = append(graph, c)
			// the built-in form of the same operands matches the same problem
			var plain string
			switch c.Row.Op {
			case hw.OpMulMat:
				d := c.Dense
				plain = fmt.Sprintf("type_a=%s,type_b=f32,m=%d,n=%d,k=%d", d.TypeA, d.M, d.N, d.K)
				if d.M != 256 || d.K != 2048 || (d.N != 1 && d.N != 8) {
					t.Errorf("%s: dense problem %s", name, d)
				}
			default:
				p := c.Problem
				plain = fmt.Sprintf("type_a=%s,type_b=f32,n_mats=8,n_used=2,b=1,m=128,n=%d,k=512", p.TypeA, p.Tokens)
				if _, ok := c.Routing.(routing.Shared); !ok || !p.Broadcast || p.Experts != 8 || p.Used != 2 {
					t.Errorf("%s: problem %s, routing %v: want b = 1 and the shared routing", name, p, c.Routing)
				}
			}
			pc, err := matchRow(hw.Row{Op: c.Row.Op, Params: mustParams(t, plain)}, MatchOptions{Chip: chip}, map[string]*chips.Chip{})
			if err != nil || pc.Kernel != c.Kernel || pc.Problem != c.Problem || pc.Dense != c.Dense {
				t.Errorf("%s: %s %+v, the built-in form %s %+v (%v)", name, c.Kernel, c.Problem, pc.Kernel, pc.Problem, err)
			}
		}
	}
	// the model-graph rows predict (the built-in ones are the kernels' tests)
	rep, err := Validate(graph, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if !r.Modelled || r.PredictedUs <= 0 || r.Result.KernelName != r.Kernel {
			t.Errorf("line %d %s(%s): predicted %.1f µs by %v", r.Row.Line, r.Row.Op, r.Row.Params.Vars(), r.PredictedUs, r.Result)
		}
	}
}

// TestGraphReasons: model-graph rows outside the plain case are listed with
// the reason; malformed ones are errors naming what is wrong.
func TestGraphReasons(t *testing.T) {
	for _, tc := range []struct {
		op, vars, reason, err string
	}{
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[0:10],sources=q4_K[256,64,1,1],f32[256,1,1,1]", "", ""},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[1:1],sources=f32[256,64,1,1],f32[256,1,1,1]", "Hadamard", ""},
		{"MUL_MAT", "type=f32,ne=[64,1,4,1],op_params=[],sources=q4_0[256,64,4,1],f32[256,1,4,1]", "batched", ""},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[],sources=f16[256,64,1,1]nb[2,1024,65536,65536],f32[256,1,1,1]", "strides", ""},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[],sources=tq1_0[256,64,1,1],f32[256,1,1,1]", "tq1_0", ""},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[],sources=q4_0[256,64,1,1],f32[128,1,1,1]", "", "do not multiply"},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[],sources=q4_0[256,64,1,1]", "", "want 2"},
		{"MUL_MAT", "type=f32,ne=[64,1,1,1],op_params=[],sources=q4_0[256,64,1],f32[256,1,1,1]", "", "3 values, want 4"},
		{"MUL_MAT_ID", "type=f32,ne=[64,4,3,1],op_params=[],sources=q8_0[256,64,16,1],f32[256,4,3,1],i32[4,3,1,1]", "", ""},
		{"MUL_MAT_ID", "type=f32,ne=[64,4,3,1],op_params=[],sources=q8_0[256,64,16,1],f32[256,2,3,1],i32[4,3,1,1]", "activation rows per token 2", ""},
	} {
		_, p, err := hw.ParseCase(tc.op + "(" + tc.vars + ")")
		if err != nil {
			t.Fatalf("%s: %v", tc.vars, err)
		}
		c, err := matchRow(hw.Row{Op: tc.op, Params: p}, MatchOptions{Chip: m1pro(t)}, map[string]*chips.Chip{})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.vars, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.vars, err)
		case tc.reason == "" && !c.Modelled:
			t.Errorf("%s: not modelled: %s", tc.vars, c.Reason)
		case tc.reason != "" && (c.Modelled || !strings.Contains(c.Reason, tc.reason)):
			t.Errorf("%s: modelled=%v reason %q, want %q", tc.vars, c.Modelled, c.Reason, tc.reason)
		}
	}
}
