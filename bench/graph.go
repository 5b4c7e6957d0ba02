package bench

import (
	"errors"
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/tile"
)

// The graph llama.cpp builds for one evaluation (a prompt ubatch or one
// generated token) and ggml-metal encodes: docs/llama-graph.md §2 for the
// architectures, §4.4 for what is fused into one dispatch, §5 for the bytes
// each memory-bound op moves. Views, reshapes and permutes are free (no
// dispatch); the token embedding's GET_ROWS runs on the CPU (§2.1) and is not
// a node.

// Kind says how a node is timed.
type Kind uint8

// The node kinds.
const (
	KindMatmul Kind = iota // a MUL_MAT or MUL_MAT_ID through the kernel models (sim.RunWorkload)
	KindAttn               // FLASH_ATTN_EXT's main kernel: compute or memory, whichever is longer
	KindMemory             // a memory-bound op: its bytes on the roofline of the achieved bandwidth
)

// Node is one compute node as ggml-metal encodes it (a fused chain is one).
type Node struct {
	Op     string // ggml op: MUL_MAT, RMS_NORM, FLASH_ATTN_EXT, ...
	Kernel string // Metal kernel; a matmul's is the one its dispatch rule picks, resolved when timed
	Kind   Kind
	Tensor string        // a matmul's weight tensor
	Matmul tile.Workload // KindMatmul
	Attn   Attention     // KindAttn
	// Bytes is what a memory-bound op (or attention) reads and writes in
	// device memory.
	Bytes float64
	// Dispatches is the compute dispatches the node encodes (MUL_MAT_ID's
	// map0 and matmul: 2; its time, from the kernel model, covers both).
	Dispatches int
}

// Attention is the shape of one FLASH_ATTN_EXT.
type Attention struct {
	T, Pos int // queries in the ubatch and the position of the first
	S      int // KV cells the kernel walks (padded)
	H, Hkv int
	Dk, Dv int
	Window int  // sliding window (0: full causal attention)
	Vec    bool // kernel_flash_attn_ext_vec (T < 20) instead of the matrix form
}

// eval is one graph evaluation.
type eval struct {
	T, Pos int  // tokens and the position of the first
	S      int  // KV length the full-attention layers see
	SSWA   int  // KV length the sliding-window layers see
	O      int  // rows that request output (0 or 1 for llama-bench)
	FA     bool // flash attention
}

// weight is one weight tensor as a matmul reads it.
type weight struct {
	name string
	typ  dequant.Type
}

// layer holds the weights of one block.
type layer struct {
	q, k, v, o          weight // o: attn_output; MLA: q and the two absorption matrices in kB, vB
	kvA, kB, vB         weight
	gate, up, down      weight // dense FFN
	router              weight
	gateX, upX, downX   weight // experts
	shGate, shUp, shDwn weight // shared expert
}

// graph builds a model's evaluations.
type graph struct {
	c      *models.Config
	layers []layer
	output weight
}

// newGraph resolves every weight the graph reads, so that a missing tensor,
// a wrong shape or a type metalsim cannot time is an error before anything
// runs.
func newGraph(m *Model) (*graph, error) {
	c := m.Config
	if err := c.Check(); err != nil {
		return nil, err
	}
	g := &graph{c: c, layers: make([]layer, c.Layers.Value)}
	E, H, Hkv := c.Embd.Value, c.Heads.Value, c.HeadsKV.Value
	var errs []error
	untimed := map[string]*UntimedError{} // by type, first seen first
	w := func(name string, dims ...int) weight {
		_, typ, err := m.weight(name, dims...)
		var u *UntimedError
		switch {
		case errors.As(err, &u):
			if untimed[u.Type] == nil {
				untimed[u.Type] = u
				errs = append(errs, u)
			} else {
				untimed[u.Type].Tensors = append(untimed[u.Type].Tensors, name)
			}
		case err != nil:
			errs = append(errs, err)
		}
		return weight{name, typ}
	}
	outName := "output.weight"
	if c.Tied.Value != 0 {
		outName = "token_embd.weight"
	}
	g.output = w(outName, E, c.Vocab.Value)
	for il := range g.layers {
		l := &g.layers[il]
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", il, s) }
		if c.MLA() {
			L, Dr, Dn, Dv := c.KVLoRA.Value, c.RopeDim.Value, c.NopeDim.Value, c.VHeadDim.Value
			l.q = w(b("attn_q.weight"), E, H*(Dn+Dr))
			l.kvA = w(b("attn_kv_a_mqa.weight"), E, L+Dr)
			l.kB = w(b("attn_k_b.weight"), Dn, L, H)
			l.vB = w(b("attn_v_b.weight"), L, Dv, H)
			l.o = w(b("attn_output.weight"), H*Dv, E)
		} else {
			D := c.HeadDim.Value
			l.q = w(b("attn_q.weight"), E, H*D)
			l.k = w(b("attn_k.weight"), E, Hkv*D)
			l.v = w(b("attn_v.weight"), E, Hkv*D)
			l.o = w(b("attn_output.weight"), H*D, E)
		}
		if c.DenseFFN(il) {
			F := c.FFN.Value
			l.gate, l.up, l.down = w(b("ffn_gate.weight"), E, F), w(b("ffn_up.weight"), E, F), w(b("ffn_down.weight"), F, E)
			continue
		}
		X, Fe := c.Experts.Value, c.ExpertFFN.Value
		l.router = w(b("ffn_gate_inp.weight"), E, X)
		l.gateX, l.upX, l.downX = w(b("ffn_gate_exps.weight"), E, Fe, X), w(b("ffn_up_exps.weight"), E, Fe, X), w(b("ffn_down_exps.weight"), Fe, E, X)
		if S := c.SharedFFN.Value; S > 0 {
			l.shGate, l.shUp, l.shDwn = w(b("ffn_gate_shexp.weight"), E, S), w(b("ffn_up_shexp.weight"), E, S), w(b("ffn_down_shexp.weight"), S, E)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", m.Config.Name, firstErrors(errs, 3))
	}
	return g, nil
}

// firstErrors keeps the first n distinct errors as one (a file type repeats
// its types over layers), saying how many more there were; errors.Is sees
// through it.
func firstErrors(errs []error, n int) error {
	seen := map[string]bool{}
	out := errList{}
	for _, e := range errs {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			if len(out.errs) < n {
				out.errs = append(out.errs, e)
			} else {
				out.more++
			}
		}
	}
	return out
}

// errList is errors shown on one line.
type errList struct {
	errs []error
	more int
}

func (e errList) Error() string {
	msg := ""
	for i, x := range e.errs {
		if i > 0 {
			msg += "; "
		}
		msg += x.Error()
	}
	if e.more > 0 {
		msg += fmt.Sprintf(" (and %d more)", e.more)
	}
	return msg
}

func (e errList) Unwrap() []error { return e.errs }

// nodes is a sink the graph emits its nodes into.
type nodes func(Node)

func (emit nodes) mm(w weight, m, k, n int) {
	emit(Node{Op: "MUL_MAT", Kind: KindMatmul, Tensor: w.name, Dispatches: 1,
		Matmul: tile.DenseWorkload(tile.DenseProblem{M: m, K: k, N: n, TypeA: w.typ})})
}

// mmBatched is a MUL_MAT over heads: batch weight matrices, each read by
// bcast activation batches (an f16 KV-cache view or an absorption matrix).
func (emit nodes) mmBatched(tensor string, typ dequant.Type, m, k, n, batch, bcast int) {
	emit(Node{Op: "MUL_MAT", Kind: KindMatmul, Tensor: tensor, Dispatches: 1,
		Matmul: tile.DenseWorkload(tile.DenseProblem{M: m, K: k, N: n, TypeA: typ, Batch: batch, Broadcast: bcast})})
}

func (emit nodes) mmID(w weight, experts, used, m, k, tokens int, bcast bool) {
	p := tile.Problem{Experts: experts, Used: used, M: m, K: k, Tokens: tokens, Broadcast: bcast, TypeA: w.typ}
	d := 1
	if !p.UsesMulMV() {
		d = 2 // map0, then the matmul
	}
	emit(Node{Op: "MUL_MAT_ID", Kind: KindMatmul, Tensor: w.name, Dispatches: d, Matmul: tile.MoEWorkload(p)})
}

// mem emits a memory-bound op moving bytes (float64: products of large
// dimensions).
func (emit nodes) mem(op, kernel string, bytes float64) {
	emit(Node{Op: op, Kernel: kernel, Kind: KindMemory, Bytes: bytes, Dispatches: 1})
}

// Byte counts of docs/llama-graph.md §5 (f32 activations: 4 B; f16 cache: 2 B).

// norm is RMS_NORM + MUL over r rows of w (+ a fused ADD): x is read twice.
func (emit nodes) norm(r, w int, add bool) {
	b, kernel := 8*f(r)*f(w)+4*f(w)+4*f(r)*f(w), "rms_norm_mul"
	if add {
		b, kernel = b+4*f(r)*f(w), "rms_norm_mul_add"
	}
	emit.mem("RMS_NORM", kernel, b)
}

// bin is an ADD, MUL or DIV of n elements with a same-size operand (a
// broadcast row is re-read per row, so it counts the same).
func (emit nodes) bin(op string, n float64) { emit.mem(op, "bin_"+lower(op), 12*n) }

// glu is a gated activation over r rows of w (gate and up read, one written).
func (emit nodes) glu(kernel string, r, w int) { emit.mem("GLU", kernel, 12*f(r)*f(w)) }

// rope rotates r tokens × h heads × d.
func (emit nodes) rope(r, h, d int) { emit.mem("ROPE", "rope", 8*f(r)*f(h)*f(d)+4*f(r)) }

// softmax is SOFT_MAX over rows of w: the source read twice, the output
// written twice and read once, a mask of mask bytes per element read twice.
func (emit nodes) softmax(rows, w int, mask float64) {
	emit.mem("SOFT_MAX", "soft_max_f32", (8+12+2*mask)*f(rows)*f(w))
}

// setRows stores t rows of w f32 values into the f16 cache.
func (emit nodes) setRows(t, w int) { emit.mem("SET_ROWS", "set_rows_f16", 6*f(t)*f(w)+8*f(t)) }

// getRows gathers r f32 rows of w.
func (emit nodes) getRows(r, w int) { emit.mem("GET_ROWS", "get_rows_f32", 8*f(r)*f(w)+4*f(r)) }

// cacheLine is the Apple GPU's global cache line (apple-gpu.md, table 2.2).
const cacheLine = 128

// build emits one evaluation's nodes in graph order.
func (g *graph) build(e eval, emit nodes) {
	c := g.c
	E, T, O := c.Embd.Value, e.T, e.O
	last := c.Layers.Value - 1
	if c.Arch == "gemma3" {
		emit.mem("SCALE", "scale", 8*f(E)*f(T)) // the embeddings times √E
	}
	for il := range g.layers {
		l := &g.layers[il]
		emit.norm(T, E, false)
		g.attention(il, l, e, emit)
		r := T // rows after the attention block
		if il == last {
			if O == 0 {
				return // the last layer's tail and the output have no rows: dropped
			}
			emit.getRows(O, E) // the attention output's rows that need logits
			emit.getRows(O, E) // and the residual's
			r = O
		}
		if c.PostNorms.Value != 0 {
			emit.norm(r, E, true) // attn_post_norm + the residual ADD
		} else {
			emit.bin("ADD", f(r)*f(E))
		}
		emit.norm(r, E, false) // ffn_norm (gpt-oss: its post-attention norm)
		if c.DenseFFN(il) {
			g.ffn(l.gate, l.up, l.down, c.FFN.Value, r, emit)
		} else {
			g.moe(l, r, emit)
		}
		if c.PostNorms.Value != 0 {
			emit.norm(r, E, true) // ffn_post_norm + the residual ADD
		} else {
			emit.bin("ADD", f(r)*f(E))
		}
	}
	emit.norm(O, E, false) // output_norm
	emit.mm(g.output, c.Vocab.Value, E, O)
}

// ffn is the dense gated FFN on r rows.
func (g *graph) ffn(gate, up, down weight, width, r int, emit nodes) {
	E := g.c.Embd.Value
	emit.mm(up, width, E, r)
	emit.mm(gate, width, E, r)
	kernel := "glu_swiglu"
	if g.c.Arch == "gemma3" {
		kernel = "glu_geglu"
	}
	emit.glu(kernel, r, width)
	emit.mm(down, E, width, r)
}

// moe is the MoE block of docs/llama-graph.md §2.4 on r rows.
func (g *graph) moe(l *layer, r int, emit nodes) {
	c := g.c
	E, X, K, Fe := c.Embd.Value, c.Experts.Value, c.ExpertsUsed.Value, c.ExpertFFN.Value
	R := f(r)
	emit.mm(l.router, X, E, r)
	oss := c.Arch == "gpt-oss"
	if c.RouterBias.Value != 0 {
		emit.bin("ADD", R*f(X))
	}
	if !oss {
		emit.softmax(r, X, 0) // the gating probabilities
	}
	emit.mem("ARGSORT", "argsort_f32_i32", 8*R*f(X)) // top-k: a full descending sort, then a view
	emit.mem("GET_ROWS", "get_rows_f32", 12*R*f(K))  // the selected experts' weights
	if oss {
		emit.softmax(r, K, 0) // SOFTMAX_WEIGHT: the softmax over the selected K
	}
	if c.NormTopK.Value != 0 {
		emit.mem("SUM_ROWS", "sum_rows", 4*R*f(K)+4*R)
		emit.mem("CLAMP", "clamp", 8*R)
		emit.mem("DIV", "bin_div", 8*R*f(K)+4*R)
	}
	emit.mmID(l.upX, X, K, Fe, E, r, true)
	if c.ExpertBias.Value != 0 {
		emit.mem("ADD_ID", "add_id", 12*f(Fe)*f(K)*R)
	}
	emit.mmID(l.gateX, X, K, Fe, E, r, true)
	if c.ExpertBias.Value != 0 {
		emit.mem("ADD_ID", "add_id", 12*f(Fe)*f(K)*R)
	}
	kernel := "glu_swiglu"
	if oss {
		kernel = "glu_swiglu_oai"
	}
	emit.glu(kernel, r*K, Fe)
	emit.mmID(l.downX, X, K, E, Fe, r, false)
	if c.ExpertBias.Value != 0 {
		emit.mem("ADD_ID", "add_id", 12*f(E)*f(K)*R)
	}
	emit.mem("MUL", "bin_mul", 8*f(E)*f(K)*R+4*f(K)*R) // weighting, broadcast over E
	// the K-1 ADDs of the expert views, up to 8 fused per dispatch (§4.4)
	for left := K - 1; left > 0; left -= 8 {
		n := min(left, 8)
		emit.mem("ADD", "bin_fuse", 4*f(E)*R*f(n+2))
	}
	if S := c.SharedFFN.Value; S > 0 {
		g.ffn(l.shGate, l.shUp, l.shDwn, S, r, emit)
		emit.bin("ADD", R*f(E))
	}
}

// attention emits one layer's attention block on the ubatch's T tokens:
// projections, norms, rope, the KV store, attention itself and the output
// projection.
func (g *graph) attention(il int, l *layer, e eval, emit nodes) {
	c := g.c
	E, H, Hkv, T := c.Embd.Value, c.Heads.Value, c.HeadsKV.Value, e.T
	S, window := e.S, 0
	if c.SWA(il) {
		S, window = e.SSWA, c.SlidingWindow.Value
	}
	if c.MLA() {
		g.attentionMLA(l, e, S, emit)
		return
	}
	D := c.HeadDim.Value
	emit.mm(l.q, H*D, E, T)
	emit.mm(l.k, Hkv*D, E, T)
	emit.mm(l.v, Hkv*D, E, T)
	if c.AttnBias.Value != 0 {
		emit.bin("ADD", f(T)*f(H*D))
		emit.bin("ADD", f(T)*f(Hkv*D))
		emit.bin("ADD", f(T)*f(Hkv*D))
	}
	if c.QKNorm.Value != 0 {
		emit.norm(T*H, D, false)
		emit.norm(T*Hkv, D, false)
	}
	emit.rope(T, H, D)
	emit.rope(T, Hkv, D)
	if c.Arch == "gemma3" {
		emit.mem("SCALE", "scale", 8*f(T)*f(H*D)) // q times f_attention_scale
	}
	emit.setRows(T, Hkv*D) // K
	if e.FA {
		emit.setRows(T, Hkv*D) // V
	} else {
		// the transposed V cache: one-element rows, an I64 index each; a
		// token's values land a cache row apart, so a line holds one
		// element's consecutive tokens
		n := f(T) * f(Hkv*D)
		emit.mem("SET_ROWS", "set_rows_f16", 12*n+n*max(2, cacheLine/f(T)))
	}
	g.scores(e, S, window, H, Hkv, D, D, emit)
	if !e.FA {
		emit.mem("CPY", "cpy_f32_f32", 8*f(H*D)*f(T)) // CONT of the permuted result
	}
	emit.mm(l.o, E, H*D, T)
	if c.AttnOutBias.Value != 0 {
		emit.bin("ADD", f(T)*f(E))
	}
}

// attentionMLA is DeepSeek-2's absorbed multi-head latent attention
// (docs/llama-graph.md §2.2, deepseek2): one cached latent row of L + Dr per
// token, attention with dk = L + Dr and dv = L, then the per-head V
// absorption.
func (g *graph) attentionMLA(l *layer, e eval, S int, emit nodes) {
	c := g.c
	E, H, T := c.Embd.Value, c.Heads.Value, e.T
	L, Dr, Dn, Dv := c.KVLoRA.Value, c.RopeDim.Value, c.NopeDim.Value, c.VHeadDim.Value
	emit.mm(l.q, H*(Dn+Dr), E, T)
	emit.mm(l.kvA, L+Dr, E, T)
	emit.rope(T, H, Dr) // q_pe
	emit.rope(T, 1, Dr) // k_pe
	emit.norm(T, L, false)
	emit.mmBatched(l.kB.name, l.kB.typ, L, Dn, T, H, 1) // q_nope absorbed into the latent, per head
	emit.mem("CONCAT", "concat", 8*f(T)*f(H)*f(L+Dr))
	emit.mem("CONCAT", "concat", 8*f(T)*f(L+Dr))
	emit.setRows(T, L+Dr) // the K-only cache; V is a view of its first L values
	if !e.FA {
		emit.mem("CPY", "cpy_f16_f16", 4*f(S)*f(L)) // the transposed V view made contiguous
	}
	g.scores(e, S, 0, H, 1, L+Dr, L, emit)
	emit.mmBatched(l.vB.name, l.vB.typ, Dv, L, T, H, 1) // the V absorption, per head
	emit.mem("CPY", "cpy_f32_f32", 8*f(H*Dv)*f(T))      // CONT of the permuted result
	emit.mm(l.o, E, H*Dv, T)
}

// scores emits attention itself (docs/llama-graph.md §2.3, §3): with flash
// attention the mask pre-pass and kernel_flash_attn_ext (or its vector form
// and reduce for T < 20), else KQ, SOFT_MAX and KQV as batched MUL_MATs over
// the f16 cache.
func (g *graph) scores(e eval, S, window, H, Hkv, dk, dv int, emit nodes) {
	T := e.T
	if !e.FA {
		emit.mmBatched("KV cache K", dequant.F16, S, dk, T, Hkv, H/Hkv)
		emit.softmax(T*H, S, 4) // f32 mask
		emit.mmBatched("KV cache V", dequant.F16, dv, S, T, Hkv, H/Hkv)
		return
	}
	a := Attention{T: T, Pos: e.Pos, S: S, H: H, Hkv: Hkv, Dk: dk, Dv: dv, Window: window, Vec: T < 20 && dk%32 == 0}
	if a.Vec {
		emit(Node{Op: "FLASH_ATTN_EXT", Kernel: "flash_attn_ext_vec", Kind: KindAttn, Attn: a, Bytes: a.vecBytes(), Dispatches: 1})
		tmp := f(min(T, 32)) * f(H) * vecWorkgroups * f(dv+2) * 4
		emit.mem("FLASH_ATTN_EXT", "flash_attn_ext_vec_reduce", tmp+4*f(T)*f(H)*f(dv))
		return
	}
	// the mask pre-pass classifies every 8 × 64 block (S is a multiple of 256: no pad pass)
	emit.mem("FLASH_ATTN_EXT", "flash_attn_ext_blk", 2*f(S)*f(T)+f((T+7)/8)*f(S/64))
	emit(Node{Op: "FLASH_ATTN_EXT", Kernel: "flash_attn_ext", Kind: KindAttn, Attn: a, Bytes: a.matBytes(), Dispatches: 1})
}

func f(n int) float64 { return float64(n) }

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
