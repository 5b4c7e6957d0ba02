package study

import (
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Shape is the matmul of a study without its token count: a MUL_MAT_ID (the
// expert matmul; the zero Op) or a MUL_MAT of one m x k weight matrix, which
// has no experts, routing or broadcast.
type Shape struct {
	Op                  tile.Op
	Experts, Used, M, K int // Experts and Used: MUL_MAT_ID only
	TypeA               dequant.Type
	HalfB               bool // f16 activations (else f32)
	Broadcast           bool // MUL_MAT_ID: every slot of a token reads one activation row (b = 1)
	// DenseBatch and DenseBroadcast are a MUL_MAT's batch dims, its
	// DenseProblem's Batch and Broadcast (test-backend-ops bs and nr; 1: one
	// matmul). Unlike a DenseProblem's, 0 is refused: a shape is what a user
	// gave, and a count of 0 is a mistake there, not a default.
	DenseBatch, DenseBroadcast int
}

// Problem returns the MUL_MAT_ID of the shape with n tokens and rows x k,
// validated.
func (s Shape) Problem(n, m, k int) (tile.Problem, error) {
	p := tile.Problem{Experts: s.Experts, Used: s.Used, M: m, K: k, Tokens: n, Broadcast: s.Broadcast, TypeA: s.TypeA, HalfB: s.HalfB}
	return p, p.Validate()
}

// Workload returns the shape's op with n tokens and rows x k, validated.
func (s Shape) Workload(n, m, k int) (tile.Workload, error) {
	if s.Op == tile.OpMulMat {
		for _, d := range []struct {
			name string
			v    int
		}{{"bs (batch)", s.DenseBatch}, {"nr (broadcast)", s.DenseBroadcast}} {
			if d.v < 1 || d.v > tile.MaxBatch {
				return tile.Workload{}, fmt.Errorf("problem: %s = %d: must be in [1, %d]", d.name, d.v, tile.MaxBatch)
			}
		}
		p := tile.DenseProblem{M: m, N: n, K: k, TypeA: s.TypeA, HalfB: s.HalfB, Batch: s.DenseBatch, Broadcast: s.DenseBroadcast}
		return tile.DenseWorkload(p), p.Validate()
	}
	p, err := s.Problem(n, m, k)
	return tile.MoEWorkload(p), err
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
	Experts, Used string // the shape's n_mats and n_used (empty: "n_mats", "n_used" in map0's limits)
	M, K, N       string // its m, k and n (empty: a problem's error as it is)
	Bs, Nr        string // a MUL_MAT's batch dims (test-backend-ops bs and nr)
	Kernel        string // the forced kernel (empty: "kernel")
}

func (l Labels) map0(p tile.Problem, chip *chips.Chip) error {
	return sim.CheckMap0(p, chip, labelOr(l.Experts, "n_mats"), labelOr(l.Used, "n_used"))
}

// kernel names the forced kernel in the error of a kernel that cannot run a
// workload.
func (l Labels) kernel(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", labelOr(l.Kernel, "kernel"), err)
}

// problemFields are the words of tile's problem errors (Problem.Validate,
// DenseProblem.Validate, the mat-mat kernels' k rules) that say which field
// an error is about.
var problemFields = []struct {
	words string
	label func(Labels) string
}{
	{"n_mats (experts)", func(l Labels) string { return l.Experts }},
	{"n_used (experts per token)", func(l Labels) string { return l.Used }},
	{"m (rows)", func(l Labels) string { return l.M }}, {"problem: m =", func(l Labels) string { return l.M }},
	{"problem: k", func(l Labels) string { return l.K }}, {"mul_mm: k =", func(l Labels) string { return l.K }},
	{"mul_mm_id: k =", func(l Labels) string { return l.K }},
	{"n (tokens)", func(l Labels) string { return l.N }}, {"problem: n =", func(l Labels) string { return l.N }},
	{"bs (batch)", func(l Labels) string { return l.Bs }}, {"nr (broadcast)", func(l Labels) string { return l.Nr }},
}

// Name prefixes a problem's error with the label of the field it is about,
// unless it already starts with a label.
func (l Labels) Name(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	for _, label := range []string{l.Experts, l.Used, l.M, l.K, l.N, l.Bs, l.Nr, l.Kernel} {
		if label != "" && strings.HasPrefix(s, label) {
			return err
		}
	}
	for _, f := range problemFields {
		if label := f.label(l); label != "" && strings.Contains(s, f.words) {
			return fmt.Errorf("%s: %w", label, err)
		}
	}
	return err
}

func labelOr(label, def string) string {
	if label == "" {
		return def
	}
	return label
}

// CheckOpFlags reports a flag of one op given with the other (given: the
// flags given, by name): a mul_mat has no experts, routing or b, a
// mul_mat_id no bs or nr.
func CheckOpFlags(op tile.Op, given map[string]bool) error {
	for _, name := range []string{"experts", "used", "b", "routing", "skew", "bs", "nr"} {
		only := tile.OpMulMatID
		if name == "bs" || name == "nr" {
			only = tile.OpMulMat
		}
		if given[name] && op != only {
			return fmt.Errorf("--%s: applies to --op %s only", name, only)
		}
	}
	return nil
}
