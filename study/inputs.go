package study

import (
	"fmt"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Shape is the expert matmul of a study without its token count.
type Shape struct {
	Experts, Used, M, K int
	TypeA               dequant.Type
	HalfB               bool // f16 activations (else f32)
	Broadcast           bool // every slot of a token reads one activation row (b = 1)
}

// Problem returns the shape with n tokens and rows x k, validated.
func (s Shape) Problem(n, m, k int) (tile.Problem, error) {
	p := tile.Problem{Experts: s.Experts, Used: s.Used, M: m, K: k, Tokens: n, Broadcast: s.Broadcast, TypeA: s.TypeA, HalfB: s.HalfB}
	return p, p.Validate()
}

// TypeB names the activation type: f32 or f16.
func (s Shape) TypeB() string { return tile.ActivationName(s.HalfB) }

// Variant is a kernel variant as a study was given it: a built-in name or a
// spec file (Arg), which may fix the path.
type Variant struct {
	Arg     string
	Variant tile.Variant
	Path    *tile.Path // the spec file's path, or nil
}

// LoadVariants loads variants (built-in names or .toml spec files); label
// names the input in errors.
func LoadVariants(label string, args []string) ([]Variant, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want one or more variants (simrun variants lists them)", label)
	}
	var out []Variant
	for _, a := range args {
		v, path, err := tile.LoadVariant(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		out = append(out, Variant{Arg: a, Variant: v, Path: path})
	}
	return out, nil
}

// Kernel picks the variant's path on chip (path if set, else the spec file's,
// else the chip's default; simdgroup without a chip) and validates the
// variant on it.
func (va Variant) Kernel(chip *chips.Chip, path *tile.Path) (tile.Kernel, error) {
	p := tile.Simdgroup
	switch {
	case path != nil:
		p = *path
	case va.Path != nil:
		p = *va.Path
	case chip != nil:
		p = sim.DefaultPath(chip)
	}
	k := tile.Kernel{Variant: va.Variant, Path: p}
	if err := va.Variant.Validate(p); err != nil {
		return k, fmt.Errorf("variant %s on the %s path: %w", va.Arg, p, err)
	}
	return k, nil
}

// Labels name a study's inputs in the errors of its points, as the front end
// calls them (simrun: its flags), so that an error says what to change.
type Labels struct {
	Experts, Used string // the shape's n_mats and n_used in map0's limits (empty: "n_mats", "n_used")
	// Problem names the input a tile.Problem validation error is about (nil:
	// the error as it is).
	Problem func(error) error
}

func (l Labels) map0(p tile.Problem, chip *chips.Chip) error {
	return sim.CheckMap0(p, chip, labelOr(l.Experts, "n_mats"), labelOr(l.Used, "n_used"))
}

func (l Labels) problem(err error) error {
	if err == nil || l.Problem == nil {
		return err
	}
	return l.Problem(err)
}

func labelOr(label, def string) string {
	if label == "" {
		return def
	}
	return label
}
