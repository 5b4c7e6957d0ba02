package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/tile"
)

// The lists a study is given (token counts, skews, variants, chips) are
// comma-separated; each parser's label names the input in its errors, as the
// front end calls it (simrun: "--n").

// SplitList splits a comma-separated list into trimmed items. An empty item
// ("32,,64", a trailing comma) or one given twice is an error: either is a typo
// more often than not, and dropping or repeating it would run something else
// than asked. An empty list gives no items (the caller decides whether that
// is allowed).
func SplitList(label, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("%s %q: item %d is empty (a comma too many?)", label, s, i+1)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("%s %q: %q is given twice", label, s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseNs parses a list of token counts, each in [1, tile.MaxTokens]; it wants
// at least one.
func ParseNs(label, s string) ([]int, error) {
	return parseItems(label, s, "a comma-separated list of token counts", fmt.Sprintf("must be an integer in [1, %d]", tile.MaxTokens),
		func(it string) (int, bool) {
			n, err := strconv.Atoi(it)
			return n, err == nil && n >= 1 && n <= tile.MaxTokens
		})
}

// ParseFloats parses a list of finite numbers (none: an empty list).
func ParseFloats(label, s string) ([]float64, error) {
	return parseItems(label, s, "", "not a number", func(it string) (float64, bool) {
		v, err := strconv.ParseFloat(it, 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	})
}

// parseItems parses every item of a list (SplitList) with parse. none is
// what a list must hold when it may not be empty ("": it may); bad says what
// an item that parse rejects should have been. Errors name the label, and
// the item.
func parseItems[T any](label, s, none, bad string, parse func(string) (T, bool)) ([]T, error) {
	items, err := SplitList(label, s)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 && none != "" {
		return nil, fmt.Errorf("%s %q: want %s", label, s, none)
	}
	var out []T
	for _, it := range items {
		v, ok := parse(it)
		if !ok {
			return nil, fmt.Errorf("%s: %q: %s", label, it, bad)
		}
		out = append(out, v)
	}
	return out, nil
}

// MK is a matmul shape without its tokens: m rows, reduction length k.
type MK struct{ M, K int }

// ParseShapes parses a list of MxK shapes (e.g. 768x2048,2048x768); it wants
// at least one. The shapes are not validated: a problem built from them is.
func ParseShapes(label, s string) ([]MK, error) {
	return parseItems(label, s, "a comma-separated list of MxK, e.g. 768x2048,1792x2048", "want MxK, e.g. 768x2048", func(it string) (MK, bool) {
		ms, ks, ok := strings.Cut(strings.ToLower(it), "x")
		m, err1 := strconv.Atoi(ms)
		k, err2 := strconv.Atoi(ks)
		return MK{m, k}, ok && err1 == nil && err2 == nil
	})
}

// ParseKernelChoice parses an op (mul_mat_id, mul_mat) and a kernel (auto,
// or one that computes that op: tile.MetalKernel's names); the labels name
// both inputs in errors.
func ParseKernelChoice(opLabel, op, kernelLabel, kernel string) (tile.Op, tile.MetalKernel, error) {
	o, err := tile.ParseOp(op)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", opLabel, err)
	}
	k, err := tile.ParseMetalKernel(kernel)
	if err != nil {
		return o, 0, fmt.Errorf("%s: %w", kernelLabel, err)
	}
	if kop, ok := k.Op(); ok && kop != o {
		return o, k, fmt.Errorf("%s %s: computes %s, not %s %s (give %s %s, or a kernel of %s)", kernelLabel, k, kop, opLabel, o, opLabel, kop, o)
	}
	return o, k, nil
}

// ParseKernelPair parses the kernels of a comparison's two sides: one kernel
// for both, or "A,B" (ParseKernelChoice's rules for each).
func ParseKernelPair(opLabel, op, kernelLabel, kernels string) ([2]tile.MetalKernel, error) {
	var out [2]tile.MetalKernel
	items, err := SplitList(kernelLabel, kernels)
	if err == nil && (len(items) < 1 || len(items) > 2) {
		err = fmt.Errorf("%s %q: want one kernel for both sides or A,B", kernelLabel, kernels)
	}
	if err != nil {
		return out, err
	}
	for i := range out {
		if _, out[i], err = ParseKernelChoice(opLabel, op, kernelLabel, items[min(i, len(items)-1)]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ParseOneRouting parses the one routing a study takes (a comparison's, a
// model layer's: who), a spec with its parameters, and checks a file
// routing's tokens against ns; ps's labels name the inputs in errors.
func ParseOneRouting(ps routing.Parser, spec, who string, ns []int) (routing.Routing, error) {
	s, err := ps.Parse(spec)
	switch {
	case err != nil && strings.Contains(spec, ","):
		return nil, fmt.Errorf("%s %q: %s takes one routing (simrun sweep takes a list)", ps.Label, spec, who)
	case err == nil && s.Routing == nil:
		return nil, fmt.Errorf("%s %q: give its parameter (zipf:S, hot:H:F)", ps.Label, spec)
	case err != nil:
		return nil, err
	}
	return s.Routing, ps.CheckTokens([]routing.Point{{Routing: s.Routing, Tokens: s.Tokens}}, ns)
}
