package tile

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/metalsim/metalsim/fileio"
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
// Keys: name, base, path, then one per knob of the knob table (knobs.go), an
// enum knob taking its value's name; `simrun variants --show upstream` prints
// every key. Without base a spec starts from the upstream kernel. A spec's path (simdgroup|tensor) is optional; without it
// the variant must be valid on at least one path and runs on the chip's.

// specKeys are the keys of a spec, in the order FormatVariantSpec writes them:
// name, base and path, then the knobs.
var specKeys = append(slices.Clone(specHeadKeys), knobKeys()...)

// specHeadKeys are the keys before the knobs': they name the variant, its
// base and its path.
var specHeadKeys = []string{"name", "base", "path"}

func knobKeys() []string {
	keys := make([]string, len(knobTable))
	for i, k := range knobTable {
		keys[i] = k.Key
	}
	return keys
}

// specType is the file form of a Variant: a struct of pointers (nil: keep the
// base's value) with a field per spec key, tagged with the key (name, base,
// path, then one per knob), built from the knob table so that the TOML decoder
// checks the value types and reports unknown keys as for any struct.
var specType = func() reflect.Type {
	fields := make([]reflect.StructField, 0, len(specKeys))
	for i, key := range specKeys {
		t := reflect.TypeFor[*string]()
		if i >= len(specHeadKeys) {
			t = knobTable[i-len(specHeadKeys)].specType()
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("Key%d", i), Type: t, Tag: reflect.StructTag(fmt.Sprintf("toml:%q", key))})
	}
	return reflect.StructOf(fields)
}()

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
	spec := reflect.New(specType)
	md, err := toml.Decode(string(data), spec.Interface())
	if err != nil {
		return fail(err)
	}
	str := func(i int) *string { return spec.Elem().Field(i).Interface().(*string) }
	sName, sBase, sPath := str(0), str(1), str(2)
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
	if sBase != nil {
		if v, err = LookupVariant(*sBase); err != nil {
			return fail(fmt.Errorf("base = %q: %w", *sBase, err))
		}
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case sName != nil:
		v.Name = *sName
	case name != "":
		v.Name = strings.TrimSuffix(filepath.Base(name), ".toml")
	default:
		v.Name = "custom"
	}
	if !variantName.MatchString(v.Name) {
		bad("name = %q: must be 1 to 64 letters, digits or ._+- starting with a letter or digit", v.Name)
	}
	var path *Path
	if sPath != nil {
		p, err := ParsePath(*sPath)
		if err != nil {
			bad("path = %q: must be %s", *sPath, orList(pathNames))
		} else {
			path = &p
		}
	}
	for i, k := range knobTable {
		if f := spec.Elem().Field(len(specHeadKeys) + i); !f.IsNil() {
			if err := k.apply(&v, f); err != nil {
				errs = append(errs, err)
			}
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
	data, err := fileio.ReadFile(arg, fileio.VariantSpec)
	if err != nil {
		return Variant{}, nil, err
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
	for _, sec := range []struct {
		title    string
		geometry bool
	}{{"tile geometry", true}, {"knobs", false}} {
		fmt.Fprintf(&b, "\n# %s\n", sec.title)
		for _, k := range knobTable {
			if k.Geometry == sec.geometry {
				line(k.Key, k.spec(v), k.Doc)
			}
		}
	}
	g := v.Geometry
	fmt.Fprintf(&b, "\n# derived: %d threads, %d bytes of threadgroup memory\n", 32*g.NSG, g.TGMemoryBytes())
	fmt.Fprintf(&b, "# (a chip allows max_threads_per_tg threads and tg_memory_per_tg_bytes: simrun chips --show NAME)\n")
	return b.Bytes()
}
