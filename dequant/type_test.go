package dequant

import (
	"fmt"
	"strings"
	"testing"
)

// TestTypeSets checks the two type lists: the kernel types are the first
// DecodedTypes, every name parses back with ParseDecodedType, and ParseType
// refuses a decoded type the kernel models do not take yet, naming it.
func TestTypeSets(t *testing.T) {
	kernel, all := Types(), DecodedTypes()
	if len(all) != int(numTypes) || len(kernel) != numKernelTypes || len(all)-len(kernel) != 17 {
		t.Fatalf("%d kernel types, %d decoded types", len(kernel), len(all))
	}
	names := map[string]bool{}
	for i, typ := range all {
		if i < len(kernel) && kernel[i] != typ {
			t.Errorf("Types()[%d] = %s, DecodedTypes()[%d] = %s", i, kernel[i], i, typ)
		}
		got, err := ParseDecodedType(typ.String())
		if err != nil || got != typ || names[typ.String()] {
			t.Errorf("ParseDecodedType(%q) = %v, %v (duplicate name: %v)", typ, got, err, names[typ.String()])
		}
		names[typ.String()] = true
		_, err = ParseType(typ.String())
		if kernelType := i < len(kernel); (err == nil) != kernelType {
			t.Errorf("ParseType(%q): error %v, want an error iff %s is not a kernel type", typ, err, typ)
		}
	}
	_, err := ParseType("q4_K")
	if err == nil || !strings.Contains(err.Error(), `unknown weight type "q4_K" (allowed: f32, f16, q4_0`) {
		t.Errorf("ParseType(q4_K): %v", err)
	}
	if _, err := ParseDecodedType("q4_k"); err == nil || !strings.Contains(err.Error(), "tq2_0") {
		t.Errorf("ParseDecodedType(q4_k): %v, want an error listing every decoded type", err)
	}
}

// TestRowBytes checks the bytes of a row and the error for a k that is not a
// multiple of the block size, for every decoded type.
func TestRowBytes(t *testing.T) {
	for _, typ := range DecodedTypes() {
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
	for _, typ := range DecodedTypes() {
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
