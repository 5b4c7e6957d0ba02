package tile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// Knob is one variant knob: a field of Variant with its spec key, its doc, its
// enum names, how it reads and prints, its rules and the kernels that take it.
// The knob table (Knobs) drives the TOML spec's parser and printer
// (ParseVariantSpec, FormatVariantSpec), Validate's range and enum rules,
// `simrun variants`, the variant's part of a sweep id (Definition) and the note
// a run gives when a variant's knobs do not apply to the kernel that runs
// (Variant.KnobNote). A new knob is one row here plus the builder code that
// reads its field.
type Knob struct {
	Key string // spec key, also the name Validate's messages give the field
	// Geometry puts the knob in the spec's "tile geometry" section (else in
	// "knobs"); an integer geometry knob must be in [0, MaxTileExtent] before
	// Validate's rules multiply it.
	Geometry bool
	Doc      string   // the comment FormatVariantSpec writes after the key
	Column   string   // `simrun variants` column; "" joins the value to the previous column's, as AxB
	Names    []string // an enum's value names in value order (nil: an integer or a bool knob)
	// Applies lists the kernels and paths whose builders read the knob; the
	// mat-vec kernels (mul_mv, mul_mv_ext, mul_mv_id) take none.
	Applies []KernelPath
	// field points at the knob's field of v: an int, a bool, or an enum (an
	// unsigned integer type whose values index Names).
	field func(v *Variant) any
	// goField is the field's Go name (the key of the field in Definition),
	// found from field when the table is built.
	goField string
}

// knobTable is every knob, in the order of Variant's fields (Definition follows
// it) and of the spec (FormatVariantSpec writes it).
var knobTable = withFieldNames([]Knob{
	{Key: "nr0", Applies: mmAll, Geometry: true, Column: "nr0", Doc: "weight rows per tile (multiple of 8)",
		field: func(v *Variant) any { return &v.NR0 }},
	{Key: "nr1", Applies: mmAll, Geometry: true, Column: "nr1", Doc: "tokens per tile (multiple of 8)",
		field: func(v *Variant) any { return &v.NR1 }},
	{Key: "nr1h", Applies: mmAll, Geometry: true, Column: "nr1h", Doc: "token part the half-skip works on (multiple of 8, divides nr1)",
		field: func(v *Variant) any { return &v.NR1H }},
	{Key: "nk", Applies: mmAll, Geometry: true, Column: "nk", Doc: "k per step (multiple of 16)",
		field: func(v *Variant) any { return &v.NK }},
	{Key: "simdgroups", Applies: mmAll, Geometry: true, Column: "SGs", Doc: "simdgroups per threadgroup (32 threads each; a chip's max_threads_per_tg caps the threads)",
		field: func(v *Variant) any { return &v.NSG }},
	{Key: "sg_rows", Applies: mmSimdgroup, Geometry: true, Column: "SG grid", Doc: "simdgroup grid over the tile: rows x cols = simdgroups",
		field: func(v *Variant) any { return &v.SGRows }},
	{Key: "sg_cols", Applies: mmSimdgroup, Geometry: true, Column: "", Doc: "(simdgroup path; the tensor path splits matmul2d tiles instead)",
		field: func(v *Variant) any { return &v.SGCols }},
	{Key: "half_skip", Applies: mmAll, Column: "half-skip", Doc: "skip nr1h token parts that hold no routed token",
		field: func(v *Variant) any { return &v.HalfSkip }},
	{Key: "b_padding", Applies: stagedB, Column: "B padding", Names: paddingNames, Doc: "B rows past the tokens: restage (every k-step, upstream) | zero (once)",
		field: func(v *Variant) any { return &v.Padding }},
	{Key: "codebook", Applies: mmAll, Column: "codebook", Names: []string{dequant.ByteReads.String(), dequant.WordReads.String()}, Doc: "iq codebook reads: bytes | words (uint32)",
		field: func(v *Variant) any { return &v.Codebook }},
	{Key: "b_extents", Applies: mmIDTensor, Column: "B extents", Names: extentsNames, Doc: "tensor path B view: upstream dextents(tokens, nk) | fixed dextents(nk, tokens)",
		field: func(v *Variant) any { return &v.BExtents }},
	{Key: "dual_descriptor", Applies: mmIDTensor, Column: "dual desc", Doc: "tensor path: full- and half-tile matmul2d descriptors both live",
		field: func(v *Variant) any { return &v.DualDescriptor }},
})

// The kernels and paths knobs apply to: the mat-mat kernels share the tile
// and its staging (tile/dense.go); the simdgroup grid is the simdgroup path's;
// dense kernel_mul_mm on the tensor path stages no B tile (its left operand is
// a view on src1 in device memory), so B padding is not its knob; the B view's
// extents and the dual descriptor are mul_mm_id's tensor body's.
var (
	mmAll       = []KernelPath{{KernelMulMMID, Simdgroup}, {KernelMulMMID, Tensor}, {KernelMulMM, Simdgroup}, {KernelMulMM, Tensor}}
	mmSimdgroup = []KernelPath{{KernelMulMMID, Simdgroup}, {KernelMulMM, Simdgroup}}
	stagedB     = []KernelPath{{KernelMulMMID, Simdgroup}, {KernelMulMMID, Tensor}, {KernelMulMM, Simdgroup}}
	mmIDTensor  = []KernelPath{{KernelMulMMID, Tensor}}
)

// Knobs returns the knob table, in spec order.
func Knobs() []Knob { return slices.Clone(knobTable) }

// withFieldNames fills each knob's goField with the name of the Variant field
// its accessor points at ("" if it points at none: TestKnobTableCoversVariant
// fails then).
func withFieldNames(knobs []Knob) []Knob {
	var v Variant
	base := reflect.ValueOf(&v).Elem()
	for i := range knobs {
		ptr := reflect.ValueOf(knobs[i].field(&v)).Pointer()
		for _, f := range reflect.VisibleFields(base.Type()) {
			if !f.Anonymous && base.FieldByIndex(f.Index).Addr().Pointer() == ptr {
				knobs[i].goField = f.Name
			}
		}
	}
	return knobs
}

// ref returns the knob's field of v.
func (k Knob) ref(v *Variant) reflect.Value { return reflect.ValueOf(k.field(v)).Elem() }

// isBool reports a true/false knob.
func (k Knob) isBool() bool { return reflect.TypeOf(k.field(&Variant{})).Elem().Kind() == reflect.Bool }

// Value returns the knob's value in v: the integer, 0 or 1 for a bool, an
// enum's index into Names.
func (k Knob) Value(v Variant) int {
	f := k.ref(&v)
	switch f.Kind() {
	case reflect.Bool:
		if f.Bool() {
			return 1
		}
		return 0
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint, reflect.Uint64:
		return int(f.Uint())
	}
	return int(f.Int())
}

// Set stores x (as Value returns it) into the knob's field of v. x is not
// checked: Validate checks the variant.
func (k Knob) Set(v *Variant, x int) {
	f := k.ref(v)
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(x != 0)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint, reflect.Uint64:
		f.SetUint(uint64(x))
	default:
		f.SetInt(int64(x))
	}
}

// Text renders the knob's value in v for a table: the number, yes or no, or
// the enum's name.
func (k Knob) Text(v Variant) string {
	x := k.Value(v)
	switch {
	case k.Names != nil:
		return enumName(k.Names, k.Key, x)
	case k.isBool():
		if x != 0 {
			return "yes"
		}
		return "no"
	}
	return strconv.Itoa(x)
}

// spec renders the knob's value in v as a TOML value.
func (k Knob) spec(v Variant) string {
	x := k.Value(v)
	switch {
	case k.Names != nil:
		return strconv.Quote(enumName(k.Names, k.Key, x))
	case k.isBool():
		return strconv.FormatBool(x != 0)
	}
	return strconv.Itoa(x)
}

// specType is the Go type a TOML decoder fills for the knob: *int, *bool, or
// *string for an enum's name.
func (k Knob) specType() reflect.Type {
	switch {
	case k.Names != nil:
		return reflect.TypeFor[*string]()
	case k.isBool():
		return reflect.TypeFor[*bool]()
	}
	return reflect.TypeFor[*int]()
}

// apply sets the knob in v from a decoded spec value (of specType, non-nil); an
// enum name not in Names is an error naming the key and the allowed names.
func (k Knob) apply(v *Variant, val reflect.Value) error {
	switch x := val.Elem().Interface().(type) {
	case string:
		i, err := parseEnum(k.Names, k.Key, x)
		if err != nil {
			return fmt.Errorf("%s = %q: must be %s", k.Key, x, orList(k.Names))
		}
		k.Set(v, i)
	case bool:
		b := 0
		if x {
			b = 1
		}
		k.Set(v, b)
	case int:
		k.Set(v, x)
	}
	return nil
}

// KnobColumns returns the `simrun variants` columns of the geometry knobs or
// of the others, in table order.
func KnobColumns(geometry bool) []string {
	var out []string
	for _, k := range knobTable {
		if k.Geometry == geometry && k.Column != "" {
			out = append(out, k.Column)
		}
	}
	return out
}

// KnobCells returns v's cells under KnobColumns(geometry): a knob without a
// column of its own joins the previous cell as AxB.
func KnobCells(v Variant, geometry bool) []string {
	var out []string
	for _, k := range knobTable {
		switch {
		case k.Geometry != geometry:
		case k.Column == "" && len(out) > 0:
			out[len(out)-1] += "x" + k.Text(v)
		default:
			out = append(out, k.Text(v))
		}
	}
	return out
}

// Definition renders the variant as its definition in a sweep id: the name and
// every knob by its Go field name, with enums as numbers: the bytes
// encoding/json writes for a Variant, so that sweep ids keep their bytes as
// the knob table grows in rows (TestDefinitionIsTheJSON).
func (v Variant) Definition() []byte {
	name, _ := json.Marshal(v.Name) // a string always encodes
	b := append([]byte(`{"Name":`), name...)
	for _, k := range knobTable {
		b = fmt.Appendf(b, ",%q:", k.goField)
		if k.isBool() {
			b = strconv.AppendBool(b, k.Value(v) != 0)
		} else {
			b = strconv.AppendInt(b, int64(k.Value(v)), 10)
		}
	}
	return append(b, '}')
}

// Takes reports whether the knob applies to kernel kern on path.
func (k Knob) Takes(kern MetalKernel, path Path) bool {
	return slices.Contains(k.Applies, KernelPath{kern, path})
}

// AppliesText renders the kernels and paths the knob applies to, kernel by
// kernel, a path named where the kernel takes it on one only:
// "mul_mm_id, mul_mm", "mul_mm_id; mul_mm (simdgroup path)", ...
func (k Knob) AppliesText() string {
	var parts, quals []string
	for _, kp := range k.Applies {
		if n := len(parts); n > 0 && parts[n-1] == kp.Kernel.String() {
			quals[n-1] = "" // the kernel on both paths
			continue
		}
		parts, quals = append(parts, kp.Kernel.String()), append(quals, " ("+kp.Path.String()+" path)")
	}
	out := ""
	for i, p := range parts {
		if i+1 < len(parts) && quals[i+1] == quals[i] {
			out += p + ", " // shares the next kernel's path
			continue
		}
		out += p + quals[i] + "; "
	}
	return strings.TrimSuffix(out, "; ")
}

// TakenBy reports whether kernel kern takes the knob on any of its paths.
func (k Knob) TakenBy(kern MetalKernel) bool {
	return slices.ContainsFunc(k.Applies, func(kp KernelPath) bool { return kp.Kernel == kern })
}

// IgnoredKnobs returns the spec keys of v's knobs that differ from the
// upstream variant's and that kernel kern takes on none of its paths: what the
// variant asks for that a run of kern leaves out. The mat-vec kernels take no
// knob, so they ignore every knob v sets differently. A knob kern takes on
// another path only (B padding on dense mul_mm's tensor path, which stages no
// B tile) is the variant's path's matter: Knob.AppliesText says which.
func (v Variant) IgnoredKnobs(kern MetalKernel) []string {
	up := Upstream()
	var keys []string
	for _, k := range knobTable {
		if k.Value(v) != k.Value(up) && !k.TakenBy(kern) {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

// KnobNote is the one note every command gives when some of v's knobs do not
// apply to the kernel that runs (IgnoredKnobs), or "" when all of them do.
func (v Variant) KnobNote(kern MetalKernel) string {
	keys := v.IgnoredKnobs(kern)
	if len(keys) == 0 {
		return ""
	}
	verb, them := "do not apply", "them"
	if len(keys) == 1 {
		verb, them = "does not apply", "it"
	}
	return fmt.Sprintf("variant %s: %s %s to %s; the run leaves %s out (simrun variants --knobs lists the kernels each knob applies to)",
		v.Name, strings.Join(keys, ", "), verb, kern, them)
}
