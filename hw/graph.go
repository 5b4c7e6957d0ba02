package hw

import (
	"fmt"
	"strconv"
	"strings"
)

// The model-graph form of a case: what `test-backend-ops perf --test-file
// FILE` prints for the ops llama.cpp's test-export-graph-ops wrote from a real
// model's graph (docs/measuring.md §4; tests/test-backend-ops.cpp L7622-7687
// at ggml d99724f):
//
//	MUL_MAT(name=N,type=f32,ne=[m,n,b2,b3],op_params=[],sources=q4_K[k,m,a2,a3],f32[k,n,b2,b3])
//
// type and ne are the result's; sources the operands, each TYPE[ne0,ne1,ne2,
// ne3], followed directly by nb[nb0,nb1,nb2,nb3] (bytes) when its strides are
// not the contiguous ones; op_params the nonzero 32-bit op parameters as
// index:value. Such rows have no FLOP count and print the memory form
// (kB/run, GB/s).

// SourcesKey is the parameter of the model-graph form that holds the
// operands; its value runs to the end of the case.
const SourcesKey = "sources"

// Operand is one source of a model-graph case.
type Operand struct {
	Type string // ggml's type name (q4_K, f32, i32, ...)
	Ne   [4]int // the shape, ne0 innermost
	Nb   []int  // the strides in bytes when not contiguous (4 values), else nil
}

// IsGraph reports whether p is a case of the model-graph form.
func (p Params) IsGraph() bool { return p.Has(SourcesKey) }

// Sources returns the operands of a model-graph case, or an error naming the
// source and what is wrong with it.
func (p Params) Sources() ([]Operand, error) {
	v, err := p.String(SourcesKey)
	if err != nil {
		return nil, err
	}
	var out []Operand
	for i, item := range splitTop(v, "") {
		o, err := parseOperand(item)
		if err != nil {
			return nil, fmt.Errorf("param %s=%q: source %d %q: %w", SourcesKey, v, i, item, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// splitTop splits s at the commas outside brackets; an item that starts
// with tail (when not "") runs to the end of s, commas and all.
func splitTop(s, tail string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		if i == start && tail != "" && strings.HasPrefix(s[i:], tail) {
			break
		}
		switch s[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseOperand parses TYPE[a,b,c,d] with an optional nb[a,b,c,d] after it.
func parseOperand(s string) (Operand, error) {
	var o Operand
	open := strings.IndexByte(s, '[')
	if open <= 0 || !isWord(s[:open]) {
		return o, fmt.Errorf("want TYPE[ne0,ne1,ne2,ne3]")
	}
	o.Type = s[:open]
	ne, rest, err := fourInts(s[open:], "ne")
	if err != nil {
		return o, err
	}
	for i, n := range ne {
		if n < 1 {
			return o, fmt.Errorf("ne%d = %d: must be at least 1", i, n)
		}
	}
	copy(o.Ne[:], ne)
	if rest == "" {
		return o, nil
	}
	if !strings.HasPrefix(rest, "nb[") {
		return o, fmt.Errorf("unexpected %q after the shape; want nb[nb0,nb1,nb2,nb3] or nothing", rest)
	}
	nb, rest, err := fourInts(rest[len("nb"):], "nb")
	if err != nil {
		return o, err
	}
	if rest != "" {
		return o, fmt.Errorf("unexpected %q after the strides", rest)
	}
	o.Nb = nb
	return o, nil
}

// fourInts parses "[a,b,c,d]" at the start of s and returns the rest.
func fourInts(s, what string) ([]int, string, error) {
	end := strings.IndexByte(s, ']')
	if !strings.HasPrefix(s, "[") || end < 0 {
		return nil, "", fmt.Errorf("%s: want [a,b,c,d]", what)
	}
	parts := strings.Split(s[1:end], ",")
	if len(parts) != 4 {
		return nil, "", fmt.Errorf("%s: %d values, want 4", what, len(parts))
	}
	out := make([]int, 4)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("%s%d = %q: want a non-negative decimal integer", what, i, p)
		}
		out[i] = n
	}
	return out, s[end+1:], nil
}
