package tile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
)

func TestParseVariantSpec(t *testing.T) {
	spec := `
# the half-tile without the word codebook reads
name = "halftile-bytes"
base = "halftile"
codebook = "bytes"
`
	v, path, err := ParseVariantSpec([]byte(spec), "x.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := HalfTile()
	want.Name, want.Codebook = "halftile-bytes", dequant.ByteReads
	if v != want || path != nil {
		t.Fatalf("got %+v path %v, want %+v", v, path, want)
	}

	// no base: upstream; the file name names it; a path
	v, path, err = ParseVariantSpec([]byte("path = \"tensor\"\nnr1 = 16\nnr1h = 16\n"), "dir/small-n.toml")
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "small-n" || v.NR1 != 16 || v.NR0 != 64 || path == nil || *path != Tensor {
		t.Fatalf("got %+v path %v", v, path)
	}
}

// TestFormatVariantSpecRoundTrip: --show output reads back to the variant.
func TestFormatVariantSpecRoundTrip(t *testing.T) {
	tensor := Tensor
	for _, v := range Builtin() {
		for _, p := range []*Path{nil, &tensor} {
			if v.DualDescriptor && p == nil {
				continue // valid on the tensor path only: fine without a path too
			}
			data := FormatVariantSpec(v, p)
			got, gp, err := ParseVariantSpec(data, "show")
			if err != nil {
				t.Fatalf("%s: %v\n%s", v.Name, err, data)
			}
			if got != v || (gp == nil) != (p == nil) || p != nil && *gp != *p {
				t.Fatalf("%s: round trip gave %+v path %v\n%s", v.Name, got, gp, data)
			}
		}
	}
}

func TestParseVariantSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{`nr2 = 3`, []string{`unknown key "nr2"`, "allowed: name, base"}},
		{"", []string{"no keys: a spec sets at least name or base"}},
		{"# only a comment\n", []string{"no keys"}},
		{"[tile]\nnr0 = 64", []string{`unknown keys "tile", "tile.nr0"`}},
		{`base = "fast"`, []string{`base = "fast"`, "built-in: upstream, halftile"}},
		{`nr0 = "64"`, []string{"nr0", "incompatible types"}},
		{`nr1h = 12`, []string{"nr1h = 12", "multiple of 8 that divides nr1 = 32"}},
		{`nr1h = 24`, []string{"nr1h = 24", "divides nr1 = 32"}},
		// metalsim's own bounds (a chip's limits are checked with the chip)
		{"nr0 = 2048\nnr1 = 1024\nnk = 32", []string{"threadgroup memory 8388608 bytes", "at most 4194304"}},
		{"simdgroups = 256\nsg_rows = 16\nsg_cols = 16", []string{"simdgroups = 256", "[32, 4096]"}},
		{"path = \"simdgroup\"\nnr0 = 2048\nnr1 = 8\nnr1h = 8\nsimdgroups = 1\nsg_rows = 1\nsg_cols = 1", []string{"each simdgroup holds 256x1 accumulator fragments (256) and 257 operand fragments: at most 256"}},
		{"simdgroups = 3\npath = \"simdgroup\"", []string{"simdgroup grid 2x2", "sg_rows*sg_cols = simdgroups = 3"}},
		{"path = \"tensor\"\nnr1 = 24\nnr1h = 8\nnr0 = 8", []string{"full-tile matmul2d 24x8", "multiples of 8 and one of them a multiple of 16"}},
		{`path = "gpu"`, []string{`path = "gpu"`, "simdgroup or tensor"}},
		{`b_padding = "none"`, []string{`b_padding = "none"`, "restage or zero"}},
		{`codebook = "halves"`, []string{`codebook = "halves"`, "bytes or words"}},
		{`b_extents = "x"`, []string{`b_extents = "x"`, "upstream or fixed"}},
		{`dual_descriptor = true`, []string{"dual_descriptor", "needs half_skip"}},
		{"dual_descriptor = true\nhalf_skip = true\npath = \"simdgroup\"", []string{"dual_descriptor: applies to the tensor path only"}},
		{`name = "a/b"`, []string{`name = "a/b"`}},
		{`name = "upstream"` + "\nnr1 = 16\nnr1h = 16", []string{`name = "upstream"`, "names a built-in"}},
		{`nr0 = 99999999999`, []string{"nr0 = 99999999999", "must be in [0, 65536]"}},
		{`simdgroups = -1`, []string{"simdgroups = -1"}},
		// rules broken on one path only say which
		{"nr1 = 24\nnr1h = 8\nnr0 = 8\nsg_rows = 4\nsg_cols = 1", []string{"valid on neither path", "on the simdgroup path", "on the tensor path"}},
		{"this is not toml", []string{"variant spec bad.toml"}},
	} {
		_, _, err := ParseVariantSpec([]byte(tc.spec), "bad.toml")
		if err == nil {
			t.Errorf("%q: no error", tc.spec)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.spec, err, w)
			}
		}
	}
}

func TestLoadVariant(t *testing.T) {
	v, p, err := LoadVariant("tile64x8")
	if err != nil || v != Tile64x8() || p != nil {
		t.Fatalf("built-in: %+v %v %v", v, p, err)
	}
	if _, _, err := LoadVariant("nope"); err == nil || !strings.Contains(err.Error(), ".toml spec file") {
		t.Fatalf("unknown name: %v", err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "dual-fixed.toml")
	if err := os.WriteFile(f, []byte("base = \"halftile-dual\"\npath = \"tensor\"\nb_extents = \"upstream\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, p, err = LoadVariant(f)
	if err != nil || v.Name != "dual-fixed" || !v.DualDescriptor || v.BExtents != ExtentsUpstream || p == nil || *p != Tensor {
		t.Fatalf("file: %+v %v %v", v, p, err)
	}
	if _, _, err := LoadVariant(filepath.Join(dir, "missing.toml")); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestExampleSpecs: the files under docs/variants parse and build programs.
func TestExampleSpecs(t *testing.T) {
	files, err := filepath.Glob("../docs/variants/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example specs in docs/variants")
	}
	for _, f := range files {
		v, p, err := LoadVariant(f)
		if err != nil {
			t.Fatal(err)
		}
		buildSpec(t, v, p)
	}
}

// buildSpec builds a spec file's variant (buildBoth) on the spec's path, or
// without one on the simdgroup path if the variant is valid there, else on
// the tensor path.
func buildSpec(t testing.TB, v Variant, path *Path) {
	t.Helper()
	p := Simdgroup
	if path != nil {
		p = *path
	} else if v.Validate(Simdgroup) != nil {
		p = Tensor
	}
	buildBoth(t, v, p)
}

// buildBoth builds the full-tile and half-tile programs of a variant for a
// small problem (the builder panics on a program it should not have made).
func buildBoth(t testing.TB, v Variant, path Path) {
	t.Helper()
	p := Problem{Experts: 4, Used: 2, M: 2 * v.NR0, K: 4 * v.NK, Tokens: 8, TypeA: dequant.IQ2_XXS}
	if p.K%256 != 0 {
		p.K = 256 * v.NK // iq2_xxs rows are whole 256-weight blocks
	}
	b, err := NewBuilder(p, Kernel{Variant: v, Path: path})
	if err != nil {
		t.Fatalf("%s/%s: %v", v.Name, path, err)
	}
	steps := p.K / v.NK
	for _, c := range []Context{{Rows: v.NR0, Tokens: v.NR1, Steps: steps}, {Rows: v.NR0 - 1, Tokens: 1, Steps: steps}, {Steps: steps}} {
		prog := b.Program(c)
		if r := prog.Registers(); r.Total <= 0 {
			t.Fatalf("%s: %d registers", v.Name, r.Total)
		}
	}
}
