package accuracy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// constructedLog builds a test-backend-ops perf log in the console format
// (kernel-facts §10.5). It is CONSTRUCTED, not captured: the shapes are small
// versions of the perf suite's (n_mats=8, n_used=2, m=64, k=256 for
// MUL_MAT_ID; m=64, k=256 for MUL_MAT) so that the test is fast, and every
// time is a made-up 100 µs. MUL_MAT_ID rows run n = 8..512 (with their
// MUL_MAT_ID_FUSION twins), MUL_MAT rows n = 1..512 for q4_0, q8_0, f16, f32 and
// two iq types, so every kernel appears: mul_mv_id, mul_mm_id, mul_mv,
// mul_mv_ext, mul_mm.
func constructedLog(device string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Testing 2 devices\n\nBackend 1/2: MTL0\n  Device description: %s\n  Device memory: 16384 MB (16383 MB free)\n\n", device)
	line := func(op, vars string) {
		fmt.Fprintf(&b, "  %s(%s):                  1000 runs -   100.00 us/run -  10.00 MFLOP/run - \x1b[1;34m100.00 GFLOPS\x1b[0m\n", op, vars)
	}
	for _, n := range []int{8, 16, 32, 64, 128, 256, 512} {
		v := fmt.Sprintf("type_a=q4_0,type_b=f32,n_mats=8,n_used=2,b=0,m=64,n=%d,k=256", n)
		line("MUL_MAT_ID", v)
		line("MUL_MAT_ID_FUSION", v+",o=1,mul=0")
	}
	for _, ta := range []string{"q4_0", "q8_0", "f16", "f32", "iq2_xs", "iq3_xxs"} {
		for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 512} {
			line("MUL_MAT", fmt.Sprintf("type_a=%s,type_b=f32,m=64,n=%d,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1", ta, n))
		}
	}
	line("MUL_MAT", "type_a=q4_0,type_b=f16,m=64,n=4,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1")
	b.WriteString("\nBackend 2/2: CPU\n  Skipping CPU backend\n")
	return b.String()
}

// TestEveryRowPredicted is issue 4's definition of done: on constructed logs
// of a simdgroup-path chip (M1 Pro) and a tensor-path chip (M5), every row gets
// a prediction, each from the kernel the host would run.
func TestEveryRowPredicted(t *testing.T) {
	want := map[string]map[int]string{ // op -> n -> kernel (q4_0)
		"MUL_MAT_ID": {8: KernelMulMVID, 16: KernelMulMVID, 32: KernelMulMMID, 512: KernelMulMMID},
		"MUL_MAT":    {1: KernelMulMV, 2: KernelMulMVExt, 8: KernelMulMVExt, 9: KernelMulMM, 512: KernelMulMM},
	}
	for _, device := range []string{"Apple M1 Pro", "Apple M5"} {
		lg, err := hw.ParseLog(strings.NewReader(constructedLog(device)), "constructed.log")
		if err != nil {
			t.Fatal(err)
		}
		if len(lg.Errors) > 0 {
			t.Fatalf("%s: log errors %v", device, lg.Errors)
		}
		cases, err := Match(lg.Rows, MatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
		if err != nil {
			t.Fatal(err)
		}
		// every row but q4_0 x f16 at n = 4, a mat-vec case without a kernel
		// (mul_mv has f16 activations for f16 weights only)
		if rep.Summary.NotModelled != 1 || rep.Summary.Modelled != len(lg.Rows)-1 || len(lg.Rows) != 63 {
			t.Errorf("%s: %d rows, %d modelled, %d not", device, len(lg.Rows), rep.Summary.Modelled, rep.Summary.NotModelled)
		}
		for _, r := range rep.Rows {
			if strings.Contains(r.Row.Params.Vars(), "type_a=q4_0,type_b=f16,m=64,n=4,") {
				if r.Modelled || !strings.Contains(r.Reason, "type_b = f16 with type_a = q4_0") {
					t.Errorf("%s line %d: modelled=%v, reason %q: want the missing kernel", device, r.Row.Line, r.Modelled, r.Reason)
				}
				continue
			}
			n, _ := r.Row.Params.Int("n")
			name := fmt.Sprintf("%s line %d %s(%s)", device, r.Row.Line, r.Row.Op, r.Row.Params.Vars())
			if !r.Modelled || r.PredictedUs <= 0 || r.Result == nil {
				t.Errorf("%s: modelled=%v predicted %.1f µs (%s)", name, r.Modelled, r.PredictedUs, r.Reason)
				continue
			}
			if r.Result.KernelName != r.Kernel {
				t.Errorf("%s: case kernel %s, timed %s", name, r.Kernel, r.Result.KernelName)
			}
			ta, _ := r.Row.Params.String("type_a")
			op := strings.TrimSuffix(r.Row.Op, "_FUSION")
			if k, ok := want[op][n]; ok && ta == "q4_0" && !strings.Contains(r.Row.Params.Vars(), "type_b=f16") && r.Kernel != k {
				t.Errorf("%s: kernel %s, want %s", name, r.Kernel, k)
			}
			if strings.HasPrefix(ta, "iq") && r.Kernel == KernelMulMVExt {
				t.Errorf("%s: iq types have no mul_mv_ext", name)
			}
			if r.Kernel == KernelMulMM && device == "Apple M5" && r.Result.Kernel.Path.String() != "tensor" {
				t.Errorf("%s: mul_mm on the M5 timed on the %s path", name, r.Result.Kernel.Path)
			}
		}
	}
}

// TestMatchMulMatReasons: MUL_MAT rows outside the plain case, with weight types
// metalsim cannot decode or with impossible shapes.
func TestMatchMulMatReasons(t *testing.T) {
	plain := "bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1"
	for _, tc := range []struct {
		vars, kernel, reason string
	}{
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256," + plain, KernelMulMV, ""},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256", KernelMulMV, ""}, // calibration files carry no bs, nr, ...
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,bs=[2,1],nr=[1,1],per=[0,1,2,3],v=0,o=1", KernelMulMV, "bs=[2,1]"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,bs=[1,1],nr=[1,2],per=[0,1,2,3],v=0,o=1", KernelMulMV, "nr=[1,2]"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,2,1,3],v=0,o=1", KernelMulMV, "per=[0,2,1,3]"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=1,o=1", KernelMulMV, "v=1"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=2", KernelMulMV, "o=2"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=256,k_v=8," + plain, KernelMulMV, "k_v=8"},
		{"type_a=q4_K,type_b=f32,m=64,n=4,k=256," + plain, KernelMulMVExt, ""},
		{"type_a=q4_K,type_b=f32,m=64,n=3,k=256," + plain, KernelMulMV, ""}, // the K-quants' mul_mv_ext starts at 4 tokens
		{"type_a=mxfp4,type_b=f32,m=64,n=16,k=256," + plain, KernelMulMM, ""},
		{"type_a=tq1_0,type_b=f32,m=64,n=16,k=256," + plain, KernelMulMM, "tq1_0: ggml's Metal backend has no matmul kernel"},
		{"type_a=nvfp4,type_b=f32,m=64,n=1,k=256," + plain, KernelMulMV, "nvfp4"},
		{"type_a=q4_K,type_b=f32,m=64,n=1,k=100," + plain, KernelMulMV, "multiple of the q4_K block size 256"},
		{"type_a=q4_K,type_b=f16,m=64,n=2,k=256," + plain, KernelMulMV, "type_b = f16 with type_a = q4_K"},
		{"type_a=q4_0,type_b=bf16,m=64,n=16,k=256," + plain, KernelMulMM, "bf16"},
		{"type_a=f16,type_b=f32,m=64,n=16,k=80," + plain, KernelMulMM, "bc_inp"},
		{"type_a=f16,type_b=f32,m=64,n=1,k=8," + plain, KernelMulMV, "k = 8"},
		{"type_a=iq2_xs,type_b=f32,m=64,n=4,k=256," + plain, KernelMulMV, ""},
	} {
		c, err := matchRow(hw.Row{Op: hw.OpMulMat, Params: mustParams(t, tc.vars)}, MatchOptions{Chip: m1pro(t)}, map[string]*chips.Chip{})
		if err != nil {
			t.Errorf("%s: %v", tc.vars, err)
			continue
		}
		if c.Kernel != tc.kernel || c.Modelled != (tc.reason == "") || !strings.Contains(c.Reason, tc.reason) {
			t.Errorf("%s: kernel %s modelled %v reason %q, want %s and reason containing %q", tc.vars, c.Kernel, c.Modelled, c.Reason, tc.kernel, tc.reason)
		}
	}
	// impossible shapes are errors naming the field
	for _, tc := range []struct{ vars, want string }{
		{"type_a=q4_0,type_b=f32,m=0,n=1,k=256," + plain, "m = 0"},
		{"type_a=q4_0,type_b=f32,m=64,n=-1,k=256," + plain, "n = -1"},
		{"type_a=q4_0,type_b=f32,m=64,n=1,k=0," + plain, "k = 0"},
		{"type_a=q4_0,type_b=f32,m=64,n=1," + plain, "parameter k missing"},
	} {
		_, err := matchRow(hw.Row{Op: hw.OpMulMat, Params: mustParams(t, tc.vars)}, MatchOptions{Chip: m1pro(t)}, map[string]*chips.Chip{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.vars, err, tc.want)
		}
	}
}

func mustParams(t *testing.T, vars string) hw.Params {
	t.Helper()
	_, p, err := hw.ParseCase("X(" + vars + ")")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func m1pro(t *testing.T) *chips.Chip {
	t.Helper()
	c := chips.MustLookup("M1 Pro 16-core GPU")
	return c
}

// TestDenseKernelRulesAgree: the host's choice as accuracy applies it to a row's
// parameters (for every type name) and as tile applies it to a problem (for the
// types metalsim decodes) agree.
func TestDenseKernelRulesAgree(t *testing.T) {
	for _, typ := range dequant.Types() {
		for _, tb := range []string{"f32", "f16"} {
			for _, k := range []int{48, 64, 256, 384} {
				if _, err := typ.RowBytes(k); err != nil {
					continue
				}
				for n := 1; n <= 12; n++ {
					vars := fmt.Sprintf("type_a=%s,type_b=%s,m=64,n=%d,k=%d", typ, tb, n, k)
					p := tile.DenseProblem{M: 64, N: n, K: k, TypeA: typ, HalfB: tb == "f16"}
					if got, want := denseKernel(mustParams(t, vars)), tile.DenseWorkload(p).Dispatch().String(); got != want {
						t.Errorf("%s: accuracy %s, tile %s", vars, got, want)
					}
				}
			}
		}
	}
}
