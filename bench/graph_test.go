package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/tile"
)

// graphNodes builds one evaluation of a preset's graph.
func graphNodes(t *testing.T, preset, ftype string, e eval) []Node {
	t.Helper()
	m, err := FromPreset(preset, ftype)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGraph(m)
	if err != nil {
		t.Fatal(err)
	}
	var out []Node
	g.build(e, func(n Node) { out = append(out, n) })
	return out
}

// sig is a node's op and kernel (matmuls: their weight tensor).
func sig(n Node) string {
	if n.Kind == KindMatmul {
		return n.Op + " " + n.Tensor
	}
	return n.Op + " " + n.Kernel
}

func dispatches(ns []Node) int {
	d := 0
	for _, n := range ns {
		d += n.Dispatches
	}
	return d
}

// TestLlamaGraph checks LLaMA-2 7B's pp512 evaluation with flash attention
// against docs/llama-graph.md §6's worked count: 18 dispatches per layer, 7
// of them matmuls; the last layer's FFN on the one output row; then the
// output norm and the [4096, 32000] output matmul.
func TestLlamaGraph(t *testing.T) {
	ns := graphNodes(t, "llama2-7b", "F16", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 1, FA: true})
	layer := ns[:18]
	want := []string{"RMS_NORM rms_norm_mul", "MUL_MAT blk.0.attn_q.weight", "MUL_MAT blk.0.attn_k.weight", "MUL_MAT blk.0.attn_v.weight",
		"ROPE rope", "ROPE rope", "SET_ROWS set_rows_f16", "SET_ROWS set_rows_f16", "FLASH_ATTN_EXT flash_attn_ext_blk", "FLASH_ATTN_EXT flash_attn_ext",
		"MUL_MAT blk.0.attn_output.weight", "ADD bin_add", "RMS_NORM rms_norm_mul", "MUL_MAT blk.0.ffn_up.weight", "MUL_MAT blk.0.ffn_gate.weight",
		"GLU glu_swiglu", "MUL_MAT blk.0.ffn_down.weight", "ADD bin_add"}
	for i, n := range layer {
		if sig(n) != want[i] {
			t.Errorf("layer 0 node %d: %s, want %s", i, sig(n), want[i])
		}
	}
	if d := dispatches(layer); d != 18 {
		t.Errorf("layer 0: %d dispatches, want 18", d)
	}
	mm := 0
	for _, n := range layer {
		if n.Kind == KindMatmul {
			mm++
		}
	}
	if mm != 7 {
		t.Errorf("layer 0: %d matmuls, want 7", mm)
	}
	// shapes: q [4096 → 4096], up [4096 → 11008], down [11008 → 4096], all on 512 tokens
	for _, c := range []struct {
		i       int
		m, k, n int
	}{{1, 4096, 4096, 512}, {13, 11008, 4096, 512}, {16, 4096, 11008, 512}} {
		p := layer[c.i].Matmul.Dense
		if p.M != c.m || p.K != c.k || p.N != c.n || layer[c.i].Matmul.Dispatch() != tile.KernelMulMM {
			t.Errorf("node %d: %s, want m=%d k=%d n=%d on mul_mm", c.i, p, c.m, c.k, c.n)
		}
	}
	// the attention: 512 queries in 64 blocks of 8, 288 of the 512 KV-block pairs per head run (§6)
	a := layer[9].Attn
	if a.pairs() != 288 || a.H != 32 || a.Hkv != 32 || a.Dk != 128 || a.Vec {
		t.Errorf("attention %+v: %d pairs, want 288 per head", a, a.pairs())
	}
	// 31 full layers, the last layer's attention block (11 nodes), two
	// GET_ROWS, its 7 tail nodes on one row, output norm and output
	if len(ns) != 31*18+11+2+7+2 {
		t.Fatalf("%d nodes, want %d", len(ns), 31*18+11+2+7+2)
	}
	tail := ns[31*18+11:]
	for i, n := range tail[:2] {
		if sig(n) != "GET_ROWS get_rows_f32" {
			t.Errorf("last layer node %d: %s, want the out_ids GET_ROWS", 11+i, sig(n))
		}
	}
	for _, n := range tail {
		if n.Kind == KindMatmul && (n.Matmul.Dense.N != 1 || n.Matmul.Dispatch() != tile.KernelMulMV) {
			t.Errorf("%s: n = %d (%s), want one row on mul_mv", n.Tensor, n.Matmul.Dense.N, n.Matmul.Dispatch())
		}
	}
	out := ns[len(ns)-1]
	if out.Tensor != "output.weight" || out.Matmul.Dense.M != 32000 || out.Matmul.Dense.K != 4096 || out.Matmul.Dense.N != 1 {
		t.Errorf("output: %s %s", out.Tensor, out.Matmul.Dense)
	}
	// no output rows (the first ubatches of a long prompt): the last layer's tail is dropped
	ns0 := graphNodes(t, "llama2-7b", "F16", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 0, FA: true})
	if len(ns0) != 31*18+11 {
		t.Errorf("O = 0: %d nodes, want %d", len(ns0), 31*18+11)
	}
}

// TestLlamaGraphNoFA: without flash attention the scores are batched f16
// MUL_MATs over the heads around a SOFT_MAX, the V store is a scatter, and the
// result is made contiguous (docs/llama-graph.md §3.5).
func TestLlamaGraphNoFA(t *testing.T) {
	ns := graphNodes(t, "llama2-7b", "F16", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 1, FA: false})
	var got []string
	for _, n := range ns[6:13] {
		got = append(got, sig(n))
	}
	want := []string{"SET_ROWS set_rows_f16", "SET_ROWS set_rows_f16", "MUL_MAT KV cache K", "SOFT_MAX soft_max_f32", "MUL_MAT KV cache V", "CPY cpy_f32_f32", "MUL_MAT blk.0.attn_output.weight"}
	if !slices.Equal(got, want) {
		t.Fatalf("attention nodes %v, want %v", got, want)
	}
	kq, kqv := ns[8].Matmul.Dense, ns[10].Matmul.Dense
	if kq.M != 512 || kq.K != 128 || kq.N != 512 || kq.Matrices() != 32 || kq.PerMatrix() != 1 || kq.TypeA.String() != "f16" {
		t.Errorf("KQ %s", kq)
	}
	if kqv.M != 128 || kqv.K != 512 || kqv.N != 512 || kqv.Matrices() != 32 {
		t.Errorf("KQV %s", kqv)
	}
	// softmax over 512 × 32 rows of 512: 28 bytes per element
	if b := ns[9].Bytes; b != 28*512*32*512 {
		t.Errorf("soft_max bytes %.0f", b)
	}
	// two more dispatches per layer than with flash attention: KQ, SOFT_MAX,
	// KQV and CPY instead of the mask pre-pass and the attention kernel
	if sig(ns[20]) != "RMS_NORM rms_norm_mul" || sig(ns[21]) != "MUL_MAT blk.1.attn_q.weight" || dispatches(ns[:20]) != 20 {
		t.Errorf("layer 0 without FA: %d dispatches before %s, want 20", dispatches(ns[:20]), sig(ns[21]))
	}
}

// TestQwen3MoEGraph checks one qwen3moe layer: Q/K norms, the MoE block of
// docs/llama-graph.md §2.4 with softmax gating and renormalisation, the
// expert matmuls' shapes, map0 + mul_mm_id as two dispatches, and the 7
// expert-sum ADDs fused into one.
func TestQwen3MoEGraph(t *testing.T) {
	ns := graphNodes(t, "qwen3-30b-a3b", "Q8_0", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 1, FA: true})
	var got []string
	for _, n := range ns[:31] {
		got = append(got, sig(n))
	}
	want := []string{"RMS_NORM rms_norm_mul", "MUL_MAT blk.0.attn_q.weight", "MUL_MAT blk.0.attn_k.weight", "MUL_MAT blk.0.attn_v.weight",
		"RMS_NORM rms_norm_mul", "RMS_NORM rms_norm_mul", "ROPE rope", "ROPE rope", "SET_ROWS set_rows_f16", "SET_ROWS set_rows_f16",
		"FLASH_ATTN_EXT flash_attn_ext_blk", "FLASH_ATTN_EXT flash_attn_ext", "MUL_MAT blk.0.attn_output.weight", "ADD bin_add", "RMS_NORM rms_norm_mul",
		"MUL_MAT blk.0.ffn_gate_inp.weight", "SOFT_MAX soft_max_f32", "ARGSORT argsort_f32_i32", "GET_ROWS get_rows_f32",
		"SUM_ROWS sum_rows", "CLAMP clamp", "DIV bin_div",
		"MUL_MAT_ID blk.0.ffn_up_exps.weight", "MUL_MAT_ID blk.0.ffn_gate_exps.weight", "GLU glu_swiglu", "MUL_MAT_ID blk.0.ffn_down_exps.weight",
		"MUL bin_mul", "ADD bin_fuse", "ADD bin_add", "RMS_NORM rms_norm_mul", "MUL_MAT blk.1.attn_q.weight"}
	if !slices.Equal(got, want) {
		t.Fatalf("layer 0:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := dispatches(ns[:29]); d != 32 {
		t.Errorf("layer 0: %d dispatches, want 32 (three map0 + mul_mm_id pairs)", d)
	}
	up, down := ns[22].Matmul.MoE, ns[25].Matmul.MoE
	if up.Experts != 128 || up.Used != 8 || up.M != 768 || up.K != 2048 || up.Tokens != 512 || !up.Broadcast || ns[22].Dispatches != 2 {
		t.Errorf("up experts %s", up)
	}
	if down.M != 2048 || down.K != 768 || down.Broadcast {
		t.Errorf("down experts %s", down)
	}
	if r := ns[15].Matmul.Dense; r.M != 128 || r.K != 2048 || r.TypeA.String() != "f32" {
		t.Errorf("router %s", r)
	}
	// the query heads: 32 of head size 128 over 4 KV heads
	if a := ns[11].Attn; a.H != 32 || a.Hkv != 4 || a.Dk != 128 {
		t.Errorf("attention %+v", a)
	}
	// generation: the expert matmuls run as mul_mv_id, one dispatch each
	tg := graphNodes(t, "qwen3-30b-a3b", "Q8_0", eval{T: 1, Pos: 10, S: 256, SSWA: 256, O: 1, FA: true})
	for _, n := range tg {
		if n.Op == "MUL_MAT_ID" && (n.Matmul.Dispatch() != tile.KernelMulMVID || n.Dispatches != 1) {
			t.Fatalf("%s at one token: %s, %d dispatches", n.Tensor, n.Matmul.Dispatch(), n.Dispatches)
		}
		if n.Op == "FLASH_ATTN_EXT" && n.Kind == KindAttn && !n.Attn.Vec {
			t.Fatal("one token: the vector attention kernel")
		}
	}
}

// TestSlidingWindowGraphs: Gemma 3's sliding layers see the SWA cache with
// its window, the global ones the full cache; gpt-oss alternates and adds
// its biases and ADD_IDs.
func TestSlidingWindowGraphs(t *testing.T) {
	ns := graphNodes(t, "gemma3-4b", "Q8_0", eval{T: 512, Pos: 1536, S: 2048, SSWA: 1536, O: 1, FA: true})
	var windows []string
	for _, n := range ns {
		if n.Kind == KindAttn {
			windows = append(windows, fmt.Sprintf("%d/%d", n.Attn.S, n.Attn.Window))
		}
	}
	if len(windows) != 34 || windows[0] != "1536/1024" || windows[5] != "2048/0" || windows[6] != "1536/1024" || windows[29] != "2048/0" {
		t.Errorf("gemma3 attention S/window by layer: %v", windows)
	}
	oss := graphNodes(t, "gpt-oss-20b", "Q8_0", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 1, FA: true})
	addID, windowed := 0, 0
	for _, n := range oss {
		if n.Op == "ADD_ID" {
			addID++
		}
		if n.Kind == KindAttn && n.Attn.Window == 128 {
			windowed++
		}
	}
	if addID != 3*23+3 || windowed != 12 {
		t.Errorf("gpt-oss: %d ADD_IDs (want 3 per layer), %d sliding layers (want 12 of 24)", addID, windowed)
	}
}

// TestMLAGraph: DeepSeek-V2-Lite's absorbed attention reads a 576-wide
// latent cache with one KV head, absorbs per head with batched matmuls, and
// its first layer is dense.
func TestMLAGraph(t *testing.T) {
	ns := graphNodes(t, "deepseek-v2-lite", "Q8_0", eval{T: 512, Pos: 0, S: 512, SSWA: 512, O: 1, FA: true})
	var kb, vb *Node
	for i := range ns {
		switch ns[i].Tensor {
		case "blk.0.attn_k_b.weight":
			kb = &ns[i]
		case "blk.0.attn_v_b.weight":
			vb = &ns[i]
		}
		if ns[i].Kind == KindAttn && (ns[i].Attn.Dk != 576 || ns[i].Attn.Dv != 512 || ns[i].Attn.Hkv != 1) {
			t.Fatalf("MLA attention %+v", ns[i].Attn)
		}
		if strings.HasPrefix(ns[i].Tensor, "blk.0.ffn_") && !strings.Contains(ns[i].Tensor, "ffn_gate.") && !strings.Contains(ns[i].Tensor, "ffn_up.") && !strings.Contains(ns[i].Tensor, "ffn_down.") {
			t.Errorf("layer 0 is dense: %s", ns[i].Tensor)
		}
	}
	if kb == nil || vb == nil {
		t.Fatal("no absorption matmuls")
	}
	if p := kb.Matmul.Dense; p.M != 512 || p.K != 128 || p.Matrices() != 16 {
		t.Errorf("k_b %s", p)
	}
	if p := vb.Matmul.Dense; p.M != 128 || p.K != 512 || p.Matrices() != 16 {
		t.Errorf("v_b %s", p)
	}
}

// TestAttentionBlocks checks the computed-block counts by hand: queries see
// the keys up to their own position, or the last window of them.
func TestAttentionBlocks(t *testing.T) {
	for _, c := range []struct {
		a           Attention
		pairs, keys int
	}{
		{Attention{T: 16, Pos: 0, S: 256}, 2, 16},                            // both query blocks within key block 0
		{Attention{T: 8, Pos: 64, S: 256}, 2, 72},                            // keys 0..71: blocks 0 and 1
		{Attention{T: 8, Pos: 200, S: 256, Window: 64}, 2, 71},               // keys 137..207: blocks 2 and 3
		{Attention{T: 512, Pos: 0, S: 512}, 288, 512},                        // docs/llama-graph.md §6
		{Attention{T: 512, Pos: 1536, S: 1536, Window: 1024}, 64 * 17, 1535}, // each query block spans 17 key blocks
	} {
		if p, k := c.a.pairs(), c.a.keys(); p != c.pairs || k != c.keys {
			t.Errorf("%+v: %d pairs, %d keys; want %d, %d", c.a, p, k, c.pairs, c.keys)
		}
	}
	for _, c := range []struct {
		a      Attention
		chunks int
	}{
		{Attention{T: 1, Pos: 300, S: 512, Vec: true}, 10},             // keys 0..300: chunks 0..9
		{Attention{T: 1, Pos: 300, S: 512, Window: 128, Vec: true}, 5}, // keys 173..300: chunks 5..9
		{Attention{T: 2, Pos: 31, S: 256, Vec: true}, 1 + 2},           // position 31: chunk 0; 32: chunks 0, 1
	} {
		if n := c.a.chunks(); n != c.chunks {
			t.Errorf("%+v: %d chunks, want %d", c.a, n, c.chunks)
		}
	}
}
