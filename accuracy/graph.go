package accuracy

import (
	"fmt"
	"strconv"

	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/routing"
)

// matchGraph maps a row of the model-graph form (hw.Params.Sources; what
// `test-backend-ops perf --test-file FILE` prints, docs/measuring.md §4) to
// the problem of the built-in form with the same operands, and matches that:
//
//	MUL_MAT     sources A[k,m,a2,a3], B[k,n,b2,b3], ne [m,n,b2,b3]
//	MUL_MAT_ID  sources A[k,m,n_mats,1], B[k,n_b,n_tok,1], ids[n_used,n_tok,1,1], ne [m,n_used,n_tok,1]
//
// with b = 1 when n_b = 1 < n_used (one activation row per token), and the
// ids of a generic case: every token on the same n_used experts
// (routing.Shared). What the plain case does not cover (batches, strided
// operands, op parameters other than the ignored precision request) is
// listed as not modelled with the reason.
func matchGraph(c Case) (Case, error) {
	p := c.Row.Params
	src, err := p.Sources()
	if err != nil {
		return c, err
	}
	ne, err := p.Ints("ne")
	if err != nil {
		return c, err
	}
	if len(ne) != 4 {
		return c, fmt.Errorf("param ne=%v: %d values, want 4", ne, len(ne))
	}
	if t, _ := p.String("type"); t != "f32" {
		c.Reason = fmt.Sprintf("result type %s is not modelled (f32)", t)
		return c, nil
	}
	if reason := graphOpParams(p); reason != "" {
		c.Reason = reason
		return c, nil
	}
	for i, s := range src {
		if s.Nb != nil {
			c.Reason = fmt.Sprintf("source %d %s has strides nb%v: only contiguous operands are modelled", i, s.Type, s.Nb)
			return c, nil
		}
	}
	switch c.Row.Op {
	case hw.OpMulMat:
		if len(src) != 2 {
			return c, fmt.Errorf("MUL_MAT: %d sources, want 2 (weights, activations)", len(src))
		}
		a, b := src[0], src[1]
		if a.Ne[0] != b.Ne[0] || ne[0] != a.Ne[1] || ne[1] != b.Ne[1] {
			return c, fmt.Errorf("MUL_MAT: shapes %v x %v -> %v do not multiply", a.Ne, b.Ne, ne)
		}
		if a.Ne[2]*a.Ne[3] != 1 || b.Ne[2]*b.Ne[3] != 1 {
			c.Reason = fmt.Sprintf("batched MUL_MAT (weights %v, activations %v) is not modelled (only one matrix by one batch of rows)", a.Ne, b.Ne)
			return c, nil
		}
		plain, err := hw.NewParams(strParam("type_a", a.Type), strParam("type_b", b.Type),
			intParam("m", a.Ne[1]), intParam("n", b.Ne[1]), intParam("k", a.Ne[0]))
		if err != nil {
			return c, err
		}
		return matchMulMat(c, plain)
	case hw.OpMulMatID:
		if len(src) != 3 {
			return c, fmt.Errorf("MUL_MAT_ID: %d sources, want 3 (weights, activations, ids)", len(src))
		}
		a, b, ids := src[0], src[1], src[2]
		nUsed, nTok := ids.Ne[0], ids.Ne[1]
		if ids.Type != "i32" || a.Ne[0] != b.Ne[0] || b.Ne[2] != nTok || ne[0] != a.Ne[1] || ne[1] != nUsed || ne[2] != nTok {
			return c, fmt.Errorf("MUL_MAT_ID: sources %v, %v, %s%v -> %v do not form a MUL_MAT_ID", a.Ne, b.Ne, ids.Type, ids.Ne, ne)
		}
		bcast := 0
		switch b.Ne[1] {
		case nUsed:
		case 1:
			bcast = 1
		default:
			c.Reason = fmt.Sprintf("activation rows per token %d: modelled are n_used (%d) or 1 (shared by the slots)", b.Ne[1], nUsed)
			return c, nil
		}
		plain, err := hw.NewParams(strParam("type_a", a.Type), strParam("type_b", b.Type), intParam("n_mats", a.Ne[2]),
			intParam("n_used", nUsed), intParam("b", bcast), intParam("m", a.Ne[1]), intParam("n", nTok), intParam("k", a.Ne[0]))
		if err != nil {
			return c, err
		}
		c.Routing = routing.Shared{}
		return matchMulMatID(c, plain)
	}
	return c, fmt.Errorf("op %q: not a matmul op", c.Row.Op)
}

// graphOpParams is why a model-graph row's op parameters put it outside the
// model, or "": only 0:10 (F32 precision requested, which Metal ignores) is
// modelled; 1:1 is the Hadamard hint (a Walsh-Hadamard kernel runs,
// kernel-geometry.md §2.1 step 1).
func graphOpParams(p hw.Params) string {
	v, _ := p.String("op_params")
	switch v {
	case "", "[]", "[0:10]":
		return ""
	}
	return fmt.Sprintf("op_params=%s is not modelled (only none or 0:10, the precision request Metal ignores; 1:1, the Hadamard hint, runs a Walsh-Hadamard kernel)", v)
}

func strParam(k, v string) hw.Param     { return hw.Param{Key: k, Value: v} }
func intParam(k string, v int) hw.Param { return hw.Param{Key: k, Value: strconv.Itoa(v)} }
