package hw

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCase(t *testing.T) {
	tests := []struct {
		in   string
		op   string
		vars string // Vars() of the result
		err  string // non-empty: error containing this
	}{
		{"MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048)", "MUL_MAT_ID",
			"type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=32,k=2048", ""},
		{"MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=8,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1)", "MUL_MAT",
			"type_a=q4_0,type_b=f32,m=4096,n=8,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1", ""},
		{"  ADD(ne=[[1,2],(3,4)])  ", "ADD", "ne=[[1,2],(3,4)]", ""},
		{"NOP()", "NOP", "", ""},
		{"X(a=b=c)", "X", "a=b=c", ""},
		{"no parens", "", "", "no '(' found"},
		{"(a=1)", "", "", "op name \"\""},
		{"BAD OP(a=1)", "", "", "op name \"BAD OP\""},
		{"X(a=1", "", "", "missing ')'"},
		{"X(a=[1,2)", "", "", "unbalanced"},
		{"X(a=1))", "", "", "unexpected text \")\""},
		{"X(a=1)tail", "", "", "unexpected text \"tail\""},
		{"X(a=1,a=2)", "", "", "duplicate key \"a\""},
		{"X(=1)", "", "", "empty key"},
		{"X(a=)", "", "", "empty value"},
		{"X(a=1,)", "", "", "pair 2 is empty"},
		{"X(a)", "", "", "want key=value"},
		{"X(a b=1)", "", "", "key \"a b\""},
	}
	for _, tc := range tests {
		op, p, err := ParseCase(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCase(%q) error = %v, want it to contain %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || op != tc.op || p.Vars() != tc.vars {
			t.Errorf("ParseCase(%q) = %q, %q, %v; want %q, %q", tc.in, op, p.Vars(), err, tc.op, tc.vars)
		}
	}
}

// checkAccessor checks one call of a Params accessor (name, get) on key: an
// error containing wantErr if it is not "", else a value ok accepts (want).
func checkAccessor[T any](t *testing.T, name string, get func(string) (T, error), key string, want T, wantErr string, ok func(T) bool) {
	t.Helper()
	got, err := get(key)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s(%s) error %v, want %q", name, key, err, wantErr)
		}
		return
	}
	if err != nil || !ok(got) {
		t.Errorf("%s(%s) = %v, %v; want %v", name, key, got, err, want)
	}
}

func TestParamsAccessors(t *testing.T) {
	_, p, err := ParseCase("MUL_MAT(type_a=q4_0,m=4096,b=1,neg=-3,bs=[1,1],e=[],sp=[ 1, 2 ],bad=[1,x],notlist=7,f=0.5)")
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		key  string
		want int
		err  string
	}{
		{"m", 4096, ""},
		{"neg", -3, ""},
		{"type_a", 0, `param type_a="q4_0": want a decimal integer`},
		{"f", 0, `param f="0.5"`},
		{"zz", 0, "param zz: missing parameter (have type_a,m,b,neg,bs,e,sp,bad,notlist,f)"},
	}
	for _, tc := range ints {
		checkAccessor(t, "Int", p.Int, tc.key, tc.want, tc.err, func(got int) bool { return got == tc.want })
	}
	lists := []struct {
		key  string
		want []int
		err  string
	}{
		{"bs", []int{1, 1}, ""},
		{"e", []int{}, ""},
		{"sp", []int{1, 2}, ""},
		{"bad", nil, `element 1 "x"`},
		{"notlist", nil, "want a list like [1,2]"},
		{"zz", nil, "missing parameter"},
	}
	for _, tc := range lists {
		checkAccessor(t, "Ints", p.Ints, tc.key, tc.want, tc.err, func(got []int) bool { return got != nil && equalInts(got, tc.want) })
	}
	if b, err := p.Bool("b"); err != nil || !b {
		t.Errorf("Bool(b) = %v, %v", b, err)
	}
	if _, err := p.Bool("m"); err == nil || !strings.Contains(err.Error(), `param m="4096": want 0 or 1`) {
		t.Errorf("Bool(m) error %v", err)
	}
	var missing *MissingParamError
	if _, err := p.Ints("nope"); !errors.As(err, &missing) || missing.Key != "nope" || len(missing.Have) != 10 {
		t.Errorf("Ints(nope) error %v, want a *MissingParamError", err)
	}
	if s, err := p.String("type_a"); err != nil || s != "q4_0" {
		t.Errorf("String(type_a) = %q, %v", s, err)
	}
	if p.Len() != 10 || !p.Has("e") || p.Has("E") || p.Keys()[1] != "m" || p.Pairs()[0] != (Param{"type_a", "q4_0"}) {
		t.Errorf("Len/Has/Keys/Pairs wrong: %v", p.Pairs())
	}
	pairs := p.Pairs()
	pairs[0].Value = "changed"
	if v, _ := p.Get("type_a"); v != "q4_0" {
		t.Error("Pairs returned the internal slice")
	}
	var zero Params
	if zero.Len() != 0 || zero.Vars() != "" || !zero.Equal(Params{}) || zero.Equal(p) {
		t.Error("zero Params")
	}
	if _, err := zero.Int("m"); err == nil || !strings.Contains(err.Error(), "have no parameters") {
		t.Errorf("zero Int error %v", err)
	}
}

func TestNewParams(t *testing.T) {
	p, err := NewParams(Param{"type_a", "q4_0"}, Param{"bs", "[1,1]"})
	if err != nil || p.Vars() != "type_a=q4_0,bs=[1,1]" {
		t.Errorf("NewParams = %q, %v", p.Vars(), err)
	}
	bad := []struct {
		pairs []Param
		err   string
	}{
		{[]Param{{"a", "1"}, {"a", "2"}}, "duplicate key"},
		{[]Param{{"", "1"}}, "empty key"},
		{[]Param{{"a-b", "1"}}, "want letters"},
		{[]Param{{"a", ""}}, "empty value"},
		{[]Param{{"a", "1,2"}}, "comma outside brackets"},
		{[]Param{{"a", "[1,2"}}, "missing ']'"},
		{[]Param{{"a", "(1]"}}, "unbalanced"},
		{[]Param{{"a", "1)"}}, "unbalanced"},
	}
	for _, tc := range bad {
		if _, err := NewParams(tc.pairs...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NewParams(%v) error %v, want %q", tc.pairs, err, tc.err)
		}
	}
}
