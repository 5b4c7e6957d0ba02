package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseInts parses a llama-bench list value ("512" or "128,256,512"), each
// number in [lo, hi]; the error names the flag, the item and the range.
func ParseInts(flag, s string, lo, hi int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s %q: want a number or a comma-separated list", flag, s)
	}
	var out []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		v, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("%s %q: item %q is not an integer", flag, s, item)
		}
		if v < lo || v > hi {
			return nil, fmt.Errorf("%s %q: %d: must be in [%d, %d]", flag, s, v, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParsePair parses -pg's "P,N": a prompt of P tokens, then N generated.
func ParsePair(flag, s string) (Test, error) {
	p, n, ok := strings.Cut(s, ",")
	if !ok || strings.Contains(n, ",") {
		return Test{}, fmt.Errorf("%s %q: want P,N (prompt and generated tokens)", flag, s)
	}
	v, err := ParseInts(flag, p+","+n, 0, MaxTokens)
	if err != nil {
		return Test{}, err
	}
	return Test{Prompt: v[0], Gen: v[1]}, nil
}

// Tests returns llama-bench's tests in its order: the -p prompts, the -n
// generations, then the -pg pairs; zero entries are skipped, as llama-bench
// does.
func Tests(prompts, gens []int, pairs []Test) []Test {
	var out []Test
	for _, p := range prompts {
		if p > 0 {
			out = append(out, Test{Prompt: p})
		}
	}
	for _, n := range gens {
		if n > 0 {
			out = append(out, Test{Gen: n})
		}
	}
	for _, pg := range pairs {
		if pg.Tokens() > 0 {
			out = append(out, pg)
		}
	}
	return out
}
