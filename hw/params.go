package hw

import (
	"fmt"
	"strconv"
	"strings"
)

// MissingParamError is returned by the accessors of [Params] when the key is
// absent.
type MissingParamError struct {
	Key  string
	Have []string // the keys present, in order
}

// Error returns "param KEY: missing parameter (have k1,k2,...)".
func (e *MissingParamError) Error() string {
	have := "no parameters"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ",")
	}
	return fmt.Sprintf("param %s: missing parameter (have %s)", e.Key, have)
}

// Param is one key=value pair of a test-backend-ops case string.
type Param struct {
	Key, Value string
}

// Params are the key=value pairs of a test-backend-ops case string, in the
// order they were printed. The zero value holds no pairs. Params are
// immutable: no method changes the receiver.
type Params struct {
	pairs []Param
}

// NewParams builds Params from pairs, checked with the rules of [ParseCase]:
// keys are non-empty words ([A-Za-z0-9_]), unique; values are non-empty,
// with balanced () and [] and no comma outside brackets.
func NewParams(pairs ...Param) (Params, error) {
	p := Params{pairs: make([]Param, 0, len(pairs))}
	for _, kv := range pairs {
		if err := checkPair(kv.Key, kv.Value); err != nil {
			return Params{}, err
		}
		if p.Has(kv.Key) {
			return Params{}, fmt.Errorf("duplicate key %q", kv.Key)
		}
		p.pairs = append(p.pairs, kv)
	}
	return p, nil
}

// Len returns the number of pairs.
func (p Params) Len() int { return len(p.pairs) }

// Pairs returns a copy of the pairs, in order.
func (p Params) Pairs() []Param { return append([]Param(nil), p.pairs...) }

// Keys returns the keys, in order.
func (p Params) Keys() []string {
	keys := make([]string, len(p.pairs))
	for i, kv := range p.pairs {
		keys[i] = kv.Key
	}
	return keys
}

// Get returns the raw value of key and whether it is present.
func (p Params) Get(key string) (string, bool) {
	for _, kv := range p.pairs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Has reports whether key is present.
func (p Params) Has(key string) bool {
	_, ok := p.Get(key)
	return ok
}

// Equal reports whether p and q hold the same pairs in the same order.
func (p Params) Equal(q Params) bool {
	if len(p.pairs) != len(q.pairs) {
		return false
	}
	for i := range p.pairs {
		if p.pairs[i] != q.pairs[i] {
			return false
		}
	}
	return true
}

// Vars returns the pairs printed as test-backend-ops does: "k=v,k=v".
func (p Params) Vars() string {
	var b strings.Builder
	for i, kv := range p.pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv.Key)
		b.WriteByte('=')
		b.WriteString(kv.Value)
	}
	return b.String()
}

// String returns the value of key, or a [*MissingParamError].
func (p Params) String(key string) (string, error) {
	v, ok := p.Get(key)
	if !ok {
		return "", &MissingParamError{Key: key, Have: p.Keys()}
	}
	return v, nil
}

// Int returns the value of key as a decimal integer.
func (p Params) Int(key string) (int, error) {
	v, err := p.String(key)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("param %s=%q: want a decimal integer", key, v)
	}
	return n, nil
}

// Bool returns the value of key, which must be 0 or 1 (test-backend-ops
// prints booleans as numbers).
func (p Params) Bool(key string) (bool, error) {
	v, err := p.String(key)
	if err != nil {
		return false, err
	}
	switch v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("param %s=%q: want 0 or 1", key, v)
}

// Ints returns the value of key as a list of integers; the value must be
// written "[a,b,...]" ("[]" is an empty list).
func (p Params) Ints(key string) ([]int, error) {
	v, err := p.String(key)
	if err != nil {
		return nil, err
	}
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, fmt.Errorf("param %s=%q: want a list like [1,2]", key, v)
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	if inner == "" {
		return []int{}, nil
	}
	parts := strings.Split(inner, ",")
	out := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("param %s=%q: element %d %q: want a decimal integer", key, v, i, s)
		}
		out[i] = n
	}
	return out, nil
}

// ParseCase parses a test-backend-ops case string "OP(k=v,...)", such as
// "MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048)".
// Surrounding white space is ignored. It is strict: the op is a word, parens
// and brackets balance, nothing follows the closing paren, keys are non-empty
// words and unique, values are non-empty. Values may be bracketed lists with
// commas ("bs=[1,1]"); the value of "sources" (the model-graph form, graph.go)
// runs to the end of the case, its commas included. "OP()" has no parameters.
func ParseCase(s string) (op string, p Params, err error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return "", Params{}, fmt.Errorf("case %q: want OP(k=v,...), no '(' found", s)
	}
	op = s[:open]
	if !isWord(op) {
		return "", Params{}, fmt.Errorf("case %q: op name %q: want letters, digits and '_'", s, op)
	}
	end, err := matchClose(s, open)
	if err != nil {
		return "", Params{}, fmt.Errorf("case %q: %w", s, err)
	}
	if end != len(s)-1 {
		return "", Params{}, fmt.Errorf("case %q: unexpected text %q after ')'", s, s[end+1:])
	}
	p, err = parseVars(s[open+1 : end])
	if err != nil {
		return "", Params{}, fmt.Errorf("case %q: %w", s, err)
	}
	return op, p, nil
}

// parseVars parses the inside of a case string; it must be balanced.
func parseVars(v string) (Params, error) {
	if v == "" {
		return Params{}, nil
	}
	items := splitTop(v, SourcesKey+"=") // the model-graph form's sources run to the end (graph.go)
	p := Params{pairs: make([]Param, 0, len(items))}
	for i, item := range items {
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			if item == "" {
				return Params{}, fmt.Errorf("pair %d is empty", i+1)
			}
			return Params{}, fmt.Errorf("pair %d %q: want key=value", i+1, item)
		}
		if err := checkPair(key, val); err != nil {
			return Params{}, err
		}
		if p.Has(key) {
			return Params{}, fmt.Errorf("duplicate key %q", key)
		}
		p.pairs = append(p.pairs, Param{Key: key, Value: val})
	}
	return p, nil
}

func checkPair(key, val string) error {
	if key == "" {
		return fmt.Errorf("empty key in %q", key+"="+val)
	}
	if !isWord(key) {
		return fmt.Errorf("key %q: want letters, digits and '_'", key)
	}
	if val == "" {
		return fmt.Errorf("key %q: empty value", key)
	}
	var stack []byte
	for i := 0; i < len(val); i++ {
		switch c := val[i]; c {
		case '(', '[':
			stack = append(stack, closerOf(c))
		case ')', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return fmt.Errorf("key %q: value %q: unbalanced %q", key, val, c)
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 && key != SourcesKey {
				return fmt.Errorf("key %q: value %q: comma outside brackets", key, val)
			}
		}
	}
	if len(stack) != 0 {
		return fmt.Errorf("key %q: value %q: missing %q", key, val, stack[len(stack)-1])
	}
	return nil
}

func closerOf(c byte) byte {
	if c == '(' {
		return ')'
	}
	return ']'
}

// matchClose returns the index of the ')' matching the '(' at s[open],
// checking that () and [] nest properly in between.
func matchClose(s string, open int) (int, error) {
	stack := []byte{')'}
	for i := open + 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[':
			stack = append(stack, closerOf(c))
		case ')', ']':
			want := stack[len(stack)-1]
			if c != want {
				return 0, fmt.Errorf("unbalanced: %q at offset %d where %q was expected", c, i, want)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced: missing %q at end", stack[len(stack)-1])
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
