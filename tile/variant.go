package tile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// Path is which kernel body runs: the simdgroup-matrix path (8x8 fragments; M1-M4,
// and M5 with the tensor API disabled) or the Metal 4 tensor path (matmul2d on
// cooperative tensors; M5-class chips).
type Path uint8

// The two kernel paths.
const (
	Simdgroup Path = iota
	Tensor
)

// pathNames are the paths' names, in value order: String and ParsePath read
// them, and so does a spec's path key.
var pathNames = []string{Simdgroup: "simdgroup", Tensor: "tensor"}

// String returns "simdgroup" or "tensor".
func (p Path) String() string { return enumName(pathNames, "Path", int(p)) }

// ParsePath maps "simdgroup" or "tensor" to a Path.
func ParsePath(s string) (Path, error) {
	i, err := parseEnum(pathNames, "gpu path", s)
	return Path(i), err
}

// enumName returns names[i], or Type(i) for a value without a name.
func enumName(names []string, typ string, i int) string {
	if i < 0 || i >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, i)
	}
	return names[i]
}

// parseEnum returns the index of s in names; the error names what s is and
// the allowed names.
func parseEnum(names []string, what, s string) (int, error) {
	if i := slices.Index(names, s); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("unknown %s %q (allowed: %s)", what, s, strings.Join(names, ", "))
}

// orList renders names as "a or b" ("a, b or c" for more), for the rules'
// messages.
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Geometry is the tile shape and the threadgroup's simdgroup layout.
type Geometry struct {
	NR0  int // weight rows per tile
	NR1  int // tokens per tile
	NR1H int // token part the half-skip works on (must divide NR1)
	NK   int // k per step
	NSG  int // simdgroups per threadgroup
	// SGRows x SGCols is the simdgroup grid over the output tile on the
	// simdgroup path: simdgroup s owns rows (s%SGRows)·NR0/SGRows and tokens
	// (s/SGRows)·NR1/SGCols.
	SGRows, SGCols int
}

// Padding is what the B tile holds in rows past the tile's tokens.
type Padding uint8

// The two B padding policies.
const (
	// PadRestage re-loads and re-stages the last valid token row into every
	// padding row on every k-step (the loads are clamped), as upstream does.
	PadRestage Padding = iota
	// PadZero writes zeros into the padding rows once, before the k-loop, and
	// skips their loads and stores afterwards.
	PadZero
)

// paddingNames are the policies' names (the b_padding key's values), in value
// order.
var paddingNames = []string{PadRestage: "restage", PadZero: "zero"}

// String returns "restage" or "zero".
func (p Padding) String() string { return enumName(paddingNames, "Padding", int(p)) }

// ParsePadding maps "restage" or "zero" to a Padding.
func ParsePadding(s string) (Padding, error) {
	i, err := parseEnum(paddingNames, "B padding", s)
	return Padding(i), err
}

// Extents is how the tensor path declares the B tile view.
type Extents uint8

// The two ways of declaring the B view.
const (
	// ExtentsUpstream declares dextents(tokens, NK), as ggml does: right only when
	// the token extent equals NK.
	ExtentsUpstream Extents = iota
	// ExtentsFixed declares dextents(NK, tokens), matching the row-major tile.
	ExtentsFixed
)

// extentsNames are the declarations' names (the b_extents key's values), in
// value order.
var extentsNames = []string{ExtentsUpstream: "upstream", ExtentsFixed: "fixed"}

// String returns "upstream" or "fixed".
func (e Extents) String() string { return enumName(extentsNames, "Extents", int(e)) }

// ParseExtents maps "upstream" or "fixed" to an Extents.
func ParseExtents(s string) (Extents, error) {
	i, err := parseEnum(extentsNames, "B extents", s)
	return Extents(i), err
}

// Variant is a kernel variant: the tile geometry and every knob kernel authors
// argue about. Variants are built from independent knobs, not forks. Every
// field but Name is a row of the knob table (knobs.go), which variant specs,
// Validate's range and enum rules, `simrun variants` and sweep ids read: a new
// knob is a field, its row and the builder code that reads it.
type Variant struct {
	Name string
	Geometry
	HalfSkip       bool             // skip token parts of NR1H that hold no routed token
	Padding        Padding          // B padding rows: re-staged or zeroed once
	Codebook       dequant.Strategy // iq codebook reads: bytes or uint32 words
	BExtents       Extents          // tensor path B view extents
	DualDescriptor bool             // tensor path: keep the full-tile and the half-tile descriptor live
}

// DefaultGeometry is the upstream tile: 64 rows x 32 tokens x NK 32, 4
// simdgroups in a 2x2 grid, halves of 16 tokens.
func DefaultGeometry() Geometry {
	return Geometry{NR0: 64, NR1: 32, NR1H: 16, NK: 32, NSG: 4, SGRows: 2, SGCols: 2}
}

// Upstream is kernel_mul_mm_id as in ggml today.
func Upstream() Variant {
	return Variant{Name: "upstream", Geometry: DefaultGeometry()}
}

// HalfTile is the whole change the calibration set measures (llama.cpp PR #28301
// and its codebook follow-up): half-tile skip, B padding zeroed once, uint32
// codebook reads, fixed tensor B extents.
func HalfTile() Variant {
	return Variant{Name: "halftile", Geometry: DefaultGeometry(), HalfSkip: true,
		Padding: PadZero, Codebook: dequant.WordReads, BExtents: ExtentsFixed}
}

// HalfTileDual is HalfTile with both descriptor shapes live on the tensor path
// (the rejected revision: 24 accumulator floats per thread instead of 16).
func HalfTileDual() Variant {
	v := HalfTile()
	v.Name, v.DualDescriptor = "halftile-dual", true
	return v
}

// Tile64x8 is the 64-row x 8-token small-batch tile (llama.cpp PR #25377): all
// four simdgroups along the rows, 16 rows each.
func Tile64x8() Variant {
	// its B view declares dextents(NK, tokens): the upstream declaration is
	// right only for 32-token tiles (ExtentsUpstream), and the PR that
	// proposes this tile is for the simdgroup path only (kernel-facts §6.3)
	return Variant{Name: "tile64x8", Geometry: Geometry{NR0: 64, NR1: 8, NR1H: 8, NK: 32, NSG: 4, SGRows: 4, SGCols: 1},
		BExtents: ExtentsFixed}
}

// Builtin returns the built-in variants in a fixed order.
func Builtin() []Variant { return []Variant{Upstream(), HalfTile(), HalfTileDual(), Tile64x8()} }

// LookupVariant returns the built-in variant of that name.
func LookupVariant(name string) (Variant, error) {
	var names []string
	for _, v := range Builtin() {
		if v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return Variant{}, fmt.Errorf("unknown variant %q (built-in: %s)", name, strings.Join(names, ", "))
}

// The largest threadgroup metalsim builds programs for. These are not a GPU's
// limits: those are chip data (max_threads_per_tg and tg_memory_per_tg_bytes
// of a chip file; Metal allows 1024 threads and 32 KiB on every Apple GPU,
// apple-gpu.md §2.1), checked where a chip is known (chips.OccupancyFor), so a
// what-if chip file may raise them, up to these bounds, which its parser
// shares.
const (
	MaxThreadsPerTG  = 4096
	MaxTGMemoryBytes = 1 << 22
	// MaxTileExtent bounds every geometry number before the rules multiply
	// them.
	MaxTileExtent = 1 << 16
	// maxFragments bounds a simdgroup's 8x8 accumulator and operand
	// fragments on the simdgroup path (8-bit indices in isa.Op).
	maxFragments = 256
)

// TGMemoryBytes returns the threadgroup memory the kernel declares: the A and B
// tiles in half, or the float output staging buffer that overlaps them, whichever
// is larger.
func (g Geometry) TGMemoryBytes() int {
	return max(2*(g.NR0*g.NK+g.NR1*g.NK), 4*g.NR0*g.NR1)
}

// Validate checks every rule of the variant on a path and returns all violations,
// each naming the field and the rule.
func (v Variant) Validate(path Path) error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("variant %q: "+format, append([]any{v.Name}, a...)...))
	}
	g := v.Geometry
	// every extent in range first: the rules below multiply them
	inRange := true
	for _, k := range knobTable {
		if !k.Geometry || k.Names != nil || k.isBool() {
			continue
		}
		if x := k.Value(v); x < 0 || x > MaxTileExtent {
			bad("%s = %d: must be in [0, %d] (and satisfy the rules below)", k.Key, x, MaxTileExtent)
			inRange = false
		}
	}
	if !inRange {
		return errors.Join(errs...)
	}
	if g.NSG < 1 || 32*g.NSG > MaxThreadsPerTG {
		bad("simdgroups = %d: threads 32*simdgroups must be in [32, %d] (metalsim's bound; a chip's own limit is checked where the chip is known)", g.NSG, MaxThreadsPerTG)
	}
	if g.NR0 < 8 || g.NR0%8 != 0 {
		bad("nr0 = %d: must be a positive multiple of 8 (8x8 fragments)", g.NR0)
	}
	if g.NR1 < 8 || g.NR1%8 != 0 {
		bad("nr1 = %d: must be a positive multiple of 8 (8x8 fragments)", g.NR1)
	}
	if g.NK < 16 || g.NK%16 != 0 {
		bad("nk = %d: must be a positive multiple of 16 (one dequant chunk)", g.NK)
	}
	if g.NR1H < 8 || g.NR1H%8 != 0 || g.NR1 > 0 && g.NR1%max(g.NR1H, 1) != 0 {
		bad("nr1h = %d: must be a multiple of 8 that divides nr1 = %d", g.NR1H, g.NR1)
	}
	if b := g.TGMemoryBytes(); b > MaxTGMemoryBytes {
		bad("threadgroup memory %d bytes (tiles or staging): must be at most %d (metalsim's bound; a chip's own limit is checked where the chip is known)", b, MaxTGMemoryBytes)
	}
	if path == Simdgroup {
		if g.SGRows < 1 || g.SGCols < 1 || g.SGRows*g.SGCols != g.NSG {
			bad("simdgroup grid %dx%d: must have sg_rows*sg_cols = simdgroups = %d", g.SGRows, g.SGCols, g.NSG)
		} else {
			if g.NR0%(8*g.SGRows) != 0 {
				bad("nr0 = %d: must be a multiple of 8*sg_rows = %d", g.NR0, 8*g.SGRows)
			}
			if g.NR1%(8*g.SGCols) != 0 {
				bad("nr1 = %d: must be a multiple of 8*sg_cols = %d", g.NR1, 8*g.SGCols)
			}
			// a simdgroup's fragments are numbered in 8 bits (isa.Op); a
			// thread holds at most 256 registers, 2 per accumulator fragment,
			// so no chip could launch more anyway
			nA, nB := g.NR0/g.SGRows/8, g.NR1/g.SGCols/8
			if nA*nB > maxFragments || nA+nB > maxFragments {
				bad("simdgroup grid %dx%d: each simdgroup holds %dx%d accumulator fragments (%d) and %d operand fragments: at most %d of each",
					g.SGRows, g.SGCols, nA, nB, nA*nB, nA+nB, maxFragments)
			}
		}
		if v.DualDescriptor {
			bad("dual_descriptor: applies to the tensor path only")
		}
	} else {
		check := func(name string, m, n int) {
			if m%8 != 0 || n%8 != 0 || (m%16 != 0 && n%16 != 0) {
				bad("%s matmul2d %dx%d: M and N must be multiples of 8 and one of them a multiple of 16", name, m, n)
			}
		}
		check("full-tile", g.NR1, g.NR0)
		if v.HalfSkip || v.DualDescriptor {
			check("half-tile", g.NR1H, g.NR0)
		}
	}
	for _, k := range knobTable {
		if x := k.Value(v); k.Names != nil && x >= len(k.Names) {
			bad("%s = %d: must be %s", k.Key, x, orList(k.Names))
		}
	}
	if v.DualDescriptor && !v.HalfSkip {
		bad("dual_descriptor: needs half_skip (the half-tile descriptor is what the skip runs)")
	}
	if v.HalfSkip && g.NR1H == g.NR1 {
		bad("half_skip with nr1h = nr1 = %d: the token tile is one part, so there is nothing to skip; make nr1h a smaller divisor of nr1, or drop half_skip", g.NR1)
	}
	return errors.Join(errs...)
}

// WrongB says why the variant's results are wrong on path, or "" when they
// are right: the upstream B view, dextents(tokens, nk), describes the
// row-major [tokens][nk] tile only when tokens = nk (kernel-facts §5.2), so
// any other view it declares reads B transposed. The combination stays valid
// (it is the bug llama.cpp PR #28301 fixed, and its timing is the kernel's);
// the commands say so next to its results.
func (v Variant) WrongB(path Path) string {
	if path != Tensor || v.BExtents != ExtentsUpstream {
		return ""
	}
	g := v.Geometry
	if g.NR1 != g.NK {
		return fmt.Sprintf("b_extents = upstream: the B view dextents(nr1 = %d, nk = %d) reads the tile transposed (right only when nr1 = nk): values are wrong, timing is the kernel's; b_extents = fixed is the fix", g.NR1, g.NK)
	}
	if (v.HalfSkip || v.DualDescriptor) && g.NR1H != g.NK {
		return fmt.Sprintf("b_extents = upstream: the half-tile B view dextents(nr1h = %d, nk = %d) reads the tile transposed (right only when nr1h = nk): values are wrong, timing is the kernel's; b_extents = fixed is the fix", g.NR1H, g.NK)
	}
	return ""
}

// Kernel is a variant on a path: everything the program builders need besides the
// problem.
type Kernel struct {
	Variant
	Path Path
}

// String renders "variant/path".
func (k Kernel) String() string { return k.Name + "/" + k.Path.String() }
