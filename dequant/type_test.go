package dequant

import (
	"fmt"
	"strings"
	"testing"
)

// TestTypeSets checks the type list: the 26 types of ggml's Metal matmul
// kernels, every name parses back with ParseType in ggml's case, and a name
// that is not one is refused with the allowed names.
func TestTypeSets(t *testing.T) {
	all := Types()
	if len(all) != 26 {
		t.Fatalf("%d types", len(all))
	}
	names := map[string]bool{}
	for _, typ := range all {
		got, err := ParseType(typ.String())
		if err != nil || got != typ || names[typ.String()] {
			t.Errorf("ParseType(%q) = %v, %v (duplicate name: %v)", typ, got, err, names[typ.String()])
		}
		names[typ.String()] = true
	}
	if got, err := ParseType("q4_K"); err != nil || got != Q4_K {
		t.Errorf("ParseType(q4_K) = %v, %v", got, err)
	}
	for _, bad := range []string{"q4_k", "Q4_K", "tq1_0", "nvfp4"} {
		if _, err := ParseType(bad); err == nil || !strings.Contains(err.Error(), `unknown weight type "`+bad+`" (allowed: f32, f16, q4_0`) || !strings.Contains(err.Error(), "tq2_0") {
			t.Errorf("ParseType(%s): %v, want an error listing every type", bad, err)
		}
	}
}

// TestRowBytes checks the bytes of a row and the error for a k that is not a
// multiple of the block size, for every decoded type.
func TestRowBytes(t *testing.T) {
	for _, typ := range Types() {
		l := typ.Layout()
		if got, err := typ.RowBytes(3 * l.BlockWeights); err != nil || got != 3*l.BlockBytes {
			t.Errorf("%s: RowBytes(%d) = %d, %v; want %d", typ, 3*l.BlockWeights, got, err, 3*l.BlockBytes)
		}
		for _, k := range []int{0, -l.BlockWeights, l.BlockWeights + 8} {
			_, err := typ.RowBytes(k)
			want := fmt.Sprintf("k = %d: must be a positive multiple of the %s block size %d", k, typ, l.BlockWeights)
			if err == nil || err.Error() != want {
				t.Errorf("%s: RowBytes(%d) error %v, want %q", typ, k, err, want)
			}
		}
	}
}

// TestStaging checks the staging rounding of the mat-mat kernels: bfloat for
// bf16, half for every other type.
func TestStaging(t *testing.T) {
	const x = float32(1.0 / 3)
	for _, typ := range Types() {
		want, bf := RoundHalf(x), typ == BF16
		if bf {
			want = RoundBF16(x)
		}
		if typ.StagesBFloat() != bf || typ.RoundStaged(x) != want {
			t.Errorf("%s: StagesBFloat %v, RoundStaged(1/3) = %g, want %g", typ, typ.StagesBFloat(), typ.RoundStaged(x), want)
		}
	}
	if RoundBF16(x) == RoundHalf(x) {
		t.Fatal("1/3 rounds alike to half and bfloat: the test cannot tell them apart")
	}
}
