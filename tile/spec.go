package tile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/metalsim/metalsim/dequant"
)

// Variant specs: a kernel variant as a small TOML file, for what-if runs
// without code.
//
// Why TOML: spec files are written and edited by hand, and the point of a
// what-if file is to say why a knob is set; TOML has comments (JSON does not),
// is flat and unambiguous for a dozen scalar keys (YAML's implicit typing turns
// "no" into false), and BurntSushi/toml's MetaData.Undecoded lets us reject a
// misspelt key instead of silently running the base variant.
//
// Example (docs/variants/halftile-bytes.toml):
//
//	name = "halftile-bytes"
//	base = "halftile"    # start from a built-in; the keys below override it
//	codebook = "bytes"   # byte-wise iq codebook reads instead of uint32 words
//
// Keys: name, base, path, nr0, nr1, nr1h, nk, simdgroups, sg_rows, sg_cols,
// half_skip, b_padding (restage|zero), codebook (bytes|words), b_extents
// (upstream|fixed), dual_descriptor. Without base a spec starts from the
// upstream kernel. A spec's path (simdgroup|tensor) is optional; without it
// the variant must be valid on at least one path and runs on the chip's.

// variantSpec is the file form of a Variant; nil fields keep the base's value.
type variantSpec struct {
	Name           *string `toml:"name"`
	Base           *string `toml:"base"`
	Path           *string `toml:"path"`
	NR0            *int    `toml:"nr0"`
	NR1            *int    `toml:"nr1"`
	NR1H           *int    `toml:"nr1h"`
	NK             *int    `toml:"nk"`
	Simdgroups     *int    `toml:"simdgroups"`
	SGRows         *int    `toml:"sg_rows"`
	SGCols         *int    `toml:"sg_cols"`
	HalfSkip       *bool   `toml:"half_skip"`
	BPadding       *string `toml:"b_padding"`
	Codebook       *string `toml:"codebook"`
	BExtents       *string `toml:"b_extents"`
	DualDescriptor *bool   `toml:"dual_descriptor"`
}

// specKeys are the keys of a spec, in the order FormatVariantSpec writes them.
var specKeys = []string{"name", "base", "path", "nr0", "nr1", "nr1h", "nk", "simdgroups", "sg_rows", "sg_cols",
	"half_skip", "b_padding", "codebook", "b_extents", "dual_descriptor"}

// variantName is what a variant may be called: it appears in reports, file
// names and "variant/path" kernel names.
var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// ParseVariantSpec reads a TOML variant spec. name says where the data came
// from (a file path): it prefixes errors and, when the spec has no name key,
// names the variant (its base name without .toml). The returned path is nil
// when the spec leaves the path to the chip. Errors name the key and the rule;
// every rule of Variant.Validate applies, on the spec's path or, without one,
// on either path.
func ParseVariantSpec(data []byte, name string) (Variant, *Path, error) {
	fail := func(err error) (Variant, *Path, error) {
		return Variant{}, nil, fmt.Errorf("variant spec %s: %w", name, err)
	}
	var s variantSpec
	md, err := toml.Decode(string(data), &s)
	if err != nil {
		return fail(err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		keys := make([]string, len(un))
		for i, k := range un {
			keys[i] = fmt.Sprintf("%q", k.String())
		}
		what := "unknown key"
		if len(keys) > 1 {
			what += "s"
		}
		return fail(fmt.Errorf("%s %s (allowed: %s)", what, strings.Join(keys, ", "), strings.Join(specKeys, ", ")))
	}
	if len(md.Keys()) == 0 {
		// an empty or comment-only file would silently be upstream under
		// the file's name: more likely the wrong file than a wish
		return fail(fmt.Errorf("no keys: a spec sets at least name or base (allowed: %s; simrun variants --show upstream prints a full one)", strings.Join(specKeys, ", ")))
	}
	v := Upstream()
	if s.Base != nil {
		if v, err = LookupVariant(*s.Base); err != nil {
			return fail(fmt.Errorf("base = %q: %w", *s.Base, err))
		}
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case s.Name != nil:
		v.Name = *s.Name
	case name != "":
		v.Name = strings.TrimSuffix(filepath.Base(name), ".toml")
	default:
		v.Name = "custom"
	}
	if !variantName.MatchString(v.Name) {
		bad("name = %q: must be 1 to 64 letters, digits or ._+- starting with a letter or digit", v.Name)
	}
	var path *Path
	if s.Path != nil {
		p, err := ParsePath(*s.Path)
		if err != nil {
			bad("path = %q: must be simdgroup or tensor", *s.Path)
		} else {
			path = &p
		}
	}
	setInt := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setInt(&v.NR0, s.NR0)
	setInt(&v.NR1, s.NR1)
	setInt(&v.NR1H, s.NR1H)
	setInt(&v.NK, s.NK)
	setInt(&v.NSG, s.Simdgroups)
	setInt(&v.SGRows, s.SGRows)
	setInt(&v.SGCols, s.SGCols)
	if s.HalfSkip != nil {
		v.HalfSkip = *s.HalfSkip
	}
	if s.DualDescriptor != nil {
		v.DualDescriptor = *s.DualDescriptor
	}
	if s.BPadding != nil {
		switch *s.BPadding {
		case "restage":
			v.Padding = PadRestage
		case "zero":
			v.Padding = PadZero
		default:
			bad("b_padding = %q: must be restage or zero", *s.BPadding)
		}
	}
	if s.Codebook != nil {
		switch *s.Codebook {
		case "bytes":
			v.Codebook = dequant.ByteReads
		case "words":
			v.Codebook = dequant.WordReads
		default:
			bad("codebook = %q: must be bytes or words", *s.Codebook)
		}
	}
	if s.BExtents != nil {
		switch *s.BExtents {
		case "upstream":
			v.BExtents = ExtentsUpstream
		case "fixed":
			v.BExtents = ExtentsFixed
		default:
			bad("b_extents = %q: must be upstream or fixed", *s.BExtents)
		}
	}
	if b, err := LookupVariant(v.Name); err == nil && b != v {
		bad("name = %q: names a built-in variant; a spec that changes its knobs needs a name of its own", v.Name)
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	if err := validateAnyPath(v, path); err != nil {
		return fail(err)
	}
	return v, path, nil
}

// validateAnyPath applies Variant.Validate on path, or without a path on both
// paths: the variant must be valid on at least one. Rules broken on both paths
// are reported once; a rule of one path says which.
func validateAnyPath(v Variant, path *Path) error {
	if path != nil {
		return v.Validate(*path)
	}
	es, et := v.Validate(Simdgroup), v.Validate(Tensor)
	if es == nil || et == nil {
		return nil
	}
	list := func(err error) []string {
		var out []string
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				out = append(out, e.Error())
			}
			return out
		}
		return []string{err.Error()}
	}
	ls, lt := list(es), list(et)
	var errs []error
	for _, m := range ls {
		if slices.Contains(lt, m) {
			errs = append(errs, errors.New(m))
		} else {
			errs = append(errs, fmt.Errorf("on the simdgroup path: %s", m))
		}
	}
	for _, m := range lt {
		if !slices.Contains(ls, m) {
			errs = append(errs, fmt.Errorf("on the tensor path: %s", m))
		}
	}
	return fmt.Errorf("valid on neither path:\n%w", errors.Join(errs...))
}

// LoadVariant returns a built-in variant by name, or reads a spec file when arg
// ends in .toml or names a path (contains a path separator).
func LoadVariant(arg string) (Variant, *Path, error) {
	if !strings.HasSuffix(arg, ".toml") && !strings.ContainsRune(arg, '/') && !strings.ContainsRune(arg, filepath.Separator) {
		v, err := LookupVariant(arg)
		if err != nil {
			return Variant{}, nil, fmt.Errorf("%w, or a .toml spec file", err)
		}
		return v, nil, nil
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return Variant{}, nil, fmt.Errorf("variant spec: %w", err)
	}
	return ParseVariantSpec(data, arg)
}

// FormatVariantSpec renders a variant as a complete spec (every knob, no base)
// with comments; path may be nil. ParseVariantSpec reads it back to the same
// variant.
func FormatVariantSpec(v Variant, path *Path) []byte {
	var b bytes.Buffer
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	line := func(key, val, comment string) {
		kv := key + " = " + val
		fmt.Fprintf(&b, "%-24s # %s\n", kv, comment)
	}
	fmt.Fprintf(&b, "# metalsim kernel variant spec (simrun variants --show %s)\n", v.Name)
	line("name", q(v.Name), "shown in reports; letters, digits, ._+-")
	if path != nil {
		line("path", q(path.String()), "simdgroup (8x8 simdgroup MMA) | tensor (matmul2d); omit for the chip's default")
	} else {
		b.WriteString("# path = \"simdgroup\"       # simdgroup | tensor; omitted: the chip's default path\n")
	}
	b.WriteString("\n# tile geometry\n")
	g := v.Geometry
	line("nr0", fmt.Sprint(g.NR0), "weight rows per tile (multiple of 8)")
	line("nr1", fmt.Sprint(g.NR1), "tokens per tile (multiple of 8)")
	line("nr1h", fmt.Sprint(g.NR1H), "token part the half-skip works on (multiple of 8, divides nr1)")
	line("nk", fmt.Sprint(g.NK), "k per step (multiple of 16)")
	line("simdgroups", fmt.Sprint(g.NSG), "simdgroups per threadgroup (32 threads each; a chip's max_threads_per_tg caps the threads)")
	line("sg_rows", fmt.Sprint(g.SGRows), "simdgroup grid over the tile: rows x cols = simdgroups")
	line("sg_cols", fmt.Sprint(g.SGCols), "(simdgroup path; the tensor path splits matmul2d tiles instead)")
	b.WriteString("\n# knobs\n")
	line("half_skip", fmt.Sprint(v.HalfSkip), "skip nr1h token parts that hold no routed token")
	pad := "restage"
	if v.Padding == PadZero {
		pad = "zero"
	}
	line("b_padding", q(pad), "B rows past the tokens: restage (every k-step, upstream) | zero (once)")
	cb := "bytes"
	if v.Codebook == dequant.WordReads {
		cb = "words"
	}
	line("codebook", q(cb), "iq codebook reads: bytes | words (uint32)")
	ext := "upstream"
	if v.BExtents == ExtentsFixed {
		ext = "fixed"
	}
	line("b_extents", q(ext), "tensor path B view: upstream dextents(tokens, nk) | fixed dextents(nk, tokens)")
	line("dual_descriptor", fmt.Sprint(v.DualDescriptor), "tensor path: full- and half-tile matmul2d descriptors both live")
	fmt.Fprintf(&b, "\n# derived: %d threads, %d bytes of threadgroup memory\n", 32*g.NSG, g.TGMemoryBytes())
	fmt.Fprintf(&b, "# (a chip allows max_threads_per_tg threads and tg_memory_per_tg_bytes: simrun chips --show NAME)\n")
	return b.Bytes()
}
