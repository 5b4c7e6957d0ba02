package study

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

// TestVariantKernel: the path is the one given, else the spec file's, else
// the chip's default (simdgroup without a chip), and the variant is checked on
// it.
func TestVariantKernel(t *testing.T) {
	m5 := chips.MustLookup("M5")
	m1 := chips.MustLookup("M1 Pro")
	vas, err := LoadVariants("--variant", []string{"halftile", "halftile-dual"})
	if err != nil {
		t.Fatal(err)
	}
	simdgroup, tensor := tile.Simdgroup, tile.Tensor
	spec := Variant{Arg: "x.toml", Variant: tile.HalfTile(), Path: &simdgroup}
	for _, tc := range []struct {
		va   Variant
		chip *chips.Chip
		path *tile.Path
		want tile.Path
	}{
		{vas[0], m5, nil, tile.Tensor},
		{vas[0], m1, nil, tile.Simdgroup},
		{vas[0], nil, nil, tile.Simdgroup},
		{vas[0], m1, &tensor, tile.Tensor},
		{spec, m5, nil, tile.Simdgroup},
		{spec, m1, &tensor, tile.Tensor},
	} {
		k, err := tc.va.Kernel(tc.chip, tc.path)
		if err != nil || k.Path != tc.want || k.Variant != tc.va.Variant {
			t.Errorf("%s: %v %v, want the %s path", tc.va.Arg, k, err, tc.want)
		}
	}
	if _, err := vas[1].Kernel(m1, nil); err == nil || !strings.Contains(err.Error(), "variant halftile-dual on the simdgroup path: ") {
		t.Errorf("halftile-dual on the simdgroup path: %v", err)
	}
	if _, err := LoadVariants("--variant", nil); err == nil || !strings.Contains(err.Error(), "--variant: want one or more variants") {
		t.Errorf("no variants: %v", err)
	}
}

// TestShapeAndLabels: a shape's problems are validated, and labels name the
// inputs in point errors.
func TestShapeAndLabels(t *testing.T) {
	sh := Shape{Experts: 16, Used: 4, M: 64, K: 256, TypeA: dequant.Q4_0, HalfB: true}
	if p, err := sh.Problem(32, 64, 256); err != nil || p.Tokens != 32 || !p.HalfB || sh.TypeB() != "f16" {
		t.Fatalf("%v %v %s", p, err, sh.TypeB())
	}
	_, err := sh.Problem(0, 64, 256)
	if err == nil {
		t.Fatal("n = 0 accepted")
	}
	named := Labels{Experts: "--experts", Used: "--used", M: "--m", K: "--k", N: "--n", Kernel: "--kernel"}
	if got := named.Name(err); !errors.Is(got, err) || !strings.HasPrefix(got.Error(), "--n: problem: n (tokens) = 0") {
		t.Fatalf("n = 0 named %v", got)
	}
	if (Labels{}).Name(err) != err || named.Name(nil) != nil || named.Name(named.Name(err)).Error() != named.Name(err).Error() {
		t.Fatal("no labels, no error or already named: not as it is")
	}
	for _, tc := range []struct {
		w    tile.Workload
		want string
	}{
		{tile.DenseWorkload(tile.DenseProblem{M: 0, N: 1, K: 256, TypeA: dequant.Q4_0}), "--m: problem: m = 0"},
		{tile.DenseWorkload(tile.DenseProblem{M: 8, N: 0, K: 256, TypeA: dequant.Q4_0}), "--n: problem: n = 0"},
		{tile.MoEWorkload(tile.Problem{Experts: 8, Used: 9, M: 8, K: 256, Tokens: 1, TypeA: dequant.Q4_0}), "--used: problem: n_used"},
	} {
		if got := named.Name(tc.w.Validate()); got == nil || !strings.HasPrefix(got.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.w, got, tc.want)
		}
	}
	chip := chips.MustLookup("M1 Pro")
	big := tile.Problem{Experts: 4096, Used: 8, M: 64, K: 256, Tokens: 32, TypeA: dequant.Q4_0}
	for _, tc := range []struct {
		l    Labels
		want string
	}{{Labels{}, "n_mats = 4096"}, {Labels{Experts: "--experts", Used: "--used"}, "--experts = 4096"}} {
		if err := tc.l.map0(big, chip); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("map0 of 4096 experts: %v, want %q", err, tc.want)
		}
	}
}
