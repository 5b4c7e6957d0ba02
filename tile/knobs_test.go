package tile

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
)

// TestKnobTableCoversVariant: every field of Variant but its name is one knob
// row, in field order, so a knob added to Variant without a row fails here
// (and its specs, `simrun variants` and sweep ids would leave it out).
func TestKnobTableCoversVariant(t *testing.T) {
	var fields []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Variant]()) {
		if !f.Anonymous && f.Name != "Name" {
			fields = append(fields, f.Name)
		}
	}
	var rows []string
	for _, k := range Knobs() {
		if k.goField == "" {
			t.Errorf("knob %s: its accessor points at no field of Variant", k.Key)
		}
		rows = append(rows, k.goField)
	}
	if strings.Join(rows, ",") != strings.Join(fields, ",") {
		t.Fatalf("knob rows %v, Variant fields %v: one row per field, in field order", rows, fields)
	}
	keys := map[string]bool{}
	for _, k := range Knobs() {
		if keys[k.Key] {
			t.Errorf("key %s: two rows", k.Key)
		}
		keys[k.Key] = true
		if k.Doc == "" {
			t.Errorf("knob %s: no doc", k.Key)
		}
	}
}

// randomVariant sets every knob of a variant to a random value, enums past
// their names included.
func randomVariant(rng *rand.Rand) Variant {
	v := Variant{Name: "r" + string(rune('a'+rng.IntN(26)))}
	for _, k := range Knobs() {
		switch {
		case k.Names != nil:
			k.Set(&v, rng.IntN(len(k.Names)+2))
		case k.isBool():
			k.Set(&v, rng.IntN(2))
		default:
			k.Set(&v, rng.IntN(1<<17)-1000)
		}
	}
	return v
}

// TestDefinitionIsTheJSON: a variant's definition in sweep ids is the bytes
// encoding/json writes for it, as sweep ids have always hashed.
func TestDefinitionIsTheJSON(t *testing.T) {
	vs := Builtin()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		vs = append(vs, randomVariant(rng))
	}
	for _, v := range vs {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Definition(); !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n definition %s\n json       %s", v, got, want)
		}
	}
}

// TestKnobValueRoundTrip: set then Value gives the value back for every knob.
func TestKnobValueRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		v := randomVariant(rng)
		for _, k := range Knobs() {
			w := v
			x := k.Value(v)
			k.Set(&w, x)
			if w != v {
				t.Fatalf("%s: Set(Value) changed %+v to %+v", k.Key, v, w)
			}
		}
	}
}

// TestEnumNames: every enum's String and Parse read one name table, round
// trip, and reject other names with the allowed ones.
func TestEnumNames(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		str     func(int) string
		parse   func(string) (int, error)
		allowed string
	}{
		{pathNames, func(i int) string { return Path(i).String() },
			func(s string) (int, error) { p, err := ParsePath(s); return int(p), err }, "(allowed: simdgroup, tensor)"},
		{paddingNames, func(i int) string { return Padding(i).String() },
			func(s string) (int, error) { p, err := ParsePadding(s); return int(p), err }, "(allowed: restage, zero)"},
		{extentsNames, func(i int) string { return Extents(i).String() },
			func(s string) (int, error) { e, err := ParseExtents(s); return int(e), err }, "(allowed: upstream, fixed)"},
		{knobTable[slices.IndexFunc(knobTable, func(k Knob) bool { return k.Key == "codebook" })].Names, func(i int) string { return dequant.Strategy(i).String() },
			func(s string) (int, error) { c, err := dequant.ParseStrategy(s); return int(c), err }, "(allowed: bytes, words)"},
	} {
		for i, n := range tc.names {
			if got := tc.str(i); got != n {
				t.Errorf("value %d: String %q, name %q", i, got, n)
			}
			if got, err := tc.parse(n); err != nil || got != i {
				t.Errorf("Parse(%q) = %d, %v; want %d", n, got, err, i)
			}
		}
		if _, err := tc.parse("nope"); err == nil || !strings.Contains(err.Error(), tc.allowed) {
			t.Errorf("Parse(nope): %v; want %s", err, tc.allowed)
		}
		if got := tc.str(len(tc.names)); !strings.HasSuffix(got, "("+strconv.Itoa(len(tc.names))+")") {
			t.Errorf("String of an unnamed value: %q", got)
		}
	}
}

// TestKnobColumns: the variants table's cells line up with its columns, and
// the simdgroup grid is one AxB cell.
func TestKnobColumns(t *testing.T) {
	for _, geometry := range []bool{true, false} {
		if c, v := len(KnobColumns(geometry)), len(KnobCells(Upstream(), geometry)); c != v {
			t.Fatalf("geometry %v: %d columns, %d cells", geometry, c, v)
		}
	}
	if got := strings.Join(KnobCells(Tile64x8(), true), " "); got != "64 8 8 32 4 4x1" {
		t.Fatalf("tile64x8 geometry cells %q", got)
	}
	if got := strings.Join(KnobCells(HalfTileDual(), false), " "); got != "yes zero words fixed yes" {
		t.Fatalf("halftile-dual knob cells %q", got)
	}
}

// TestKnobApplies: only the mat-mat kernels take knobs; the table's kernels
// render as `simrun variants --knobs` prints them; the note names exactly the
// knobs a kernel leaves out.
func TestKnobApplies(t *testing.T) {
	want := map[string]string{
		"nr0": "mul_mm_id, mul_mm", "sg_rows": "mul_mm_id, mul_mm (simdgroup path)",
		"b_padding": "mul_mm_id; mul_mm (simdgroup path)", "b_extents": "mul_mm_id (tensor path)",
	}
	for _, k := range Knobs() {
		if len(k.Applies) == 0 {
			t.Errorf("knob %s: applies to no kernel", k.Key)
		}
		for _, kp := range k.Applies {
			if kp.Kernel != KernelMulMM && kp.Kernel != KernelMulMMID {
				t.Errorf("knob %s: applies to %s, a kernel without a tile", k.Key, kp.Kernel)
			}
		}
		if w, ok := want[k.Key]; ok && k.AppliesText() != w {
			t.Errorf("knob %s: applies to %q, want %q", k.Key, k.AppliesText(), w)
		}
	}
	for _, tc := range []struct {
		v    Variant
		kern MetalKernel
		want string
	}{
		{Upstream(), KernelMulMVID, ""},
		{HalfTile(), KernelMulMMID, ""},
		{HalfTile(), KernelMulMVID, "variant halftile: half_skip, b_padding, codebook, b_extents do not apply to mul_mv_id; the run leaves them out"},
		{HalfTile(), KernelMulMM, "variant halftile: b_extents does not apply to mul_mm; the run leaves it out"},
		{Tile64x8(), KernelMulMVExt, "variant tile64x8: nr1, nr1h, sg_rows, sg_cols, b_extents do not apply to mul_mv_ext"},
	} {
		if got := tc.v.KnobNote(tc.kern); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s on %s: note %q, want %q", tc.v.Name, tc.kern, got, tc.want)
		}
	}
}
