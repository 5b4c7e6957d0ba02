package study

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// CompareSide is one variant's prediction at one point of a comparison.
type CompareSide struct {
	Variant    string  `json:"variant"`
	Path       string  `json:"path"`
	Us         float64 `json:"us"`
	Skipped    int64   `json:"half_tiles_skipped"`
	MMAs       int64   `json:"mmas"`
	MMAShape   string  `json:"mma_shape"`
	TGsPerCore int     `json:"tgs_per_core"`
	OccLimiter string  `json:"occupancy_limiter"`
	Limiter    string  `json:"limiter"`
	Registers  int     `json:"registers_per_thread"`
	Detail
}

// CompareRow is one point (chip, shape, n) of a comparison: A, B and the
// delta B - A.
type CompareRow struct {
	Chip     string      `json:"chip"`
	Shape    string      `json:"shape"`
	N        int         `json:"n"`
	A        CompareSide `json:"a"`
	B        CompareSide `json:"b"`
	DeltaUs  float64     `json:"delta_us"`
	DeltaPct float64     `json:"delta_pct"`
	Op       string      `json:"op"`
	// Problem is the point's MUL_MAT_ID problem (zero for a layer's total
	// and for a MUL_MAT), for matching measurements to it.
	Problem tile.Problem `json:"-"`
	// Total marks a model layer's total: its times and counts are the sums
	// of the layer's matmuls; occupancy and limiter do not apply.
	Total bool `json:"-"`
}

// CompareShape is one matmul shape a comparison runs at every n.
type CompareShape struct {
	Label string
	Build func(n int) (tile.Workload, error)
}

// Comparison runs two variants side by side over chips, shapes and ns; both
// see the same routing draws (Options). Each side of a point runs the kernel
// llama.cpp dispatches for it, or its forced kernel (Kernels): where the
// kernel takes no knob of the variant, the side's note says so, and two such
// sides time the same.
type Comparison struct {
	Chips    []*chips.Chip
	Variants [2]Variant          // A and B
	Path     *tile.Path          // nil: a spec file's path, else each chip's
	Kernels  [2]tile.MetalKernel // A's and B's kernel at every point; tile.KernelAuto: llama.cpp's choice
	Shapes   []CompareShape
	// Layer says the shapes are a model's MoE layer: a layer-total row
	// follows each chip's and n's matmuls, and map0's limits are the model's.
	Layer   bool
	Ns      []int
	Options sim.Options
	Labels  Labels // name the shape's inputs in map0's limits (when not Layer)
}

// Run predicts every point with both variants, chip by chip, n by n, shape by
// shape. A point whose kernel cannot run (a variant invalid on a chip's path,
// a forced kernel outside its limits, map0's limits where mul_mm_id runs)
// fails before anything runs.
func (c *Comparison) Run() ([]CompareRow, error) {
	labels := c.Labels
	if c.Layer {
		// the model sets the shape: no front-end input to name
		labels = Labels{Experts: "the model's experts (n_mats)", Used: "its experts used per token (n_used)", Kernel: labels.Kernel}
	}
	point := func(chip *chips.Chip, side int, sh CompareShape, n int) (*Point, error) {
		w, err := sh.Build(n)
		if err != nil {
			return nil, err
		}
		return &Point{Chip: chip, Variant: c.Variants[side], Path: c.Path, Workload: w, Kernel: c.Kernels[side], Options: c.Options, Labels: labels}, nil
	}
	for _, chip := range c.Chips {
		for side, va := range c.Variants {
			if _, err := va.Kernel(chip, c.Path); err != nil {
				return nil, fmt.Errorf("%s: %w", chip.Name, err)
			}
			for _, sh := range c.Shapes {
				for _, n := range c.Ns {
					pt, err := point(chip, side, sh, n)
					if err != nil {
						return nil, err
					}
					if _, _, err := pt.Kernels(); err != nil {
						return nil, fmt.Errorf("%s, %s, n = %d: %w", chip.Name, sh.Label, n, err)
					}
				}
			}
		}
	}
	sm := sim.NewSimulator()
	var rows []CompareRow
	for _, chip := range c.Chips {
		for _, n := range c.Ns {
			total := CompareRow{Chip: chip.Name, Shape: "layer", N: n, Total: true}
			for _, sh := range c.Shapes {
				row := CompareRow{Chip: chip.Name, Shape: sh.Label, N: n}
				for i, va := range c.Variants {
					pt, err := point(chip, i, sh, n)
					if err != nil {
						return nil, err
					}
					o, err := pt.Run(sm)
					if err != nil {
						return nil, fmt.Errorf("%s, %s, n = %d, variant %s: %w", chip.Name, sh.Label, n, va.Arg, err)
					}
					row.Op, row.Problem = pt.Workload.Op.String(), pt.Workload.MoE
					side, tside := &row.A, &total.A
					if i == 1 {
						side, tside = &row.B, &total.B
					}
					*side = sideOf(o, va)
					tside.Variant, tside.Path, tside.MMAShape = side.Variant, side.Path, side.MMAShape
					tside.Us += side.Us
					tside.Skipped += side.Skipped
					tside.MMAs += side.MMAs
					tside.Detail.add(side.Detail)
				}
				row.delta()
				total.Op = row.Op
				rows = append(rows, row)
			}
			if c.Layer {
				total.delta()
				rows = append(rows, total)
			}
		}
	}
	return rows, nil
}

// sideOf is one variant's side of a point: the MMAs are 8x8x8 on the
// simdgroup path and 16x16x16 on the tensor path; the mat-vec kernels have
// none (and no path).
func sideOf(o *Outcome, va Variant) CompareSide {
	res := o.Result
	s := CompareSide{Variant: va.Variant.Name, Path: PathName(o.Kernel, o.Run.Path), Us: res.TotalUs,
		Skipped: res.Counters.Skipped.HalfTiles, TGsPerCore: res.Occupancy.TGsPerCore,
		OccLimiter: res.Occupancy.Limiter, Limiter: res.Limit.String(), Registers: res.Registers.Total,
		Detail: DetailOf(o.Kernel, res, o.Notes)}
	switch {
	case s.Path == "":
	case o.Run.Path == tile.Tensor:
		s.MMAs, s.MMAShape = res.Counters.Work.MMA16, "16x16x16"
	default:
		s.MMAs, s.MMAShape = res.Counters.Work.MMA8, "8x8x8"
	}
	return s
}

func (r *CompareRow) delta() {
	r.DeltaUs = r.B.Us - r.A.Us
	if r.A.Us > 0 {
		r.DeltaPct = 100 * r.DeltaUs / r.A.Us
	}
}

// ModelShapes returns a model's MoE layer as comparison shapes, gate, up and
// down, each built at n tokens with the layer options lo (its Tokens is
// replaced) as op: the layer's MUL_MAT_IDs, or for tile.OpMulMat each as a
// MUL_MAT of one expert's matrix over the n tokens (what a shared expert or a
// dense FFN of the expert's width runs). It fails when lo does not build a
// layer.
func ModelShapes(m *models.Model, lo models.LayerOptions, op tile.Op) ([]CompareShape, error) {
	if _, err := m.Layer(lo); err != nil {
		return nil, err
	}
	var out []CompareShape
	for i, name := range []string{"gate", "up", "down"} {
		out = append(out, CompareShape{Label: name, Build: func(n int) (tile.Workload, error) {
			o := lo
			o.Tokens = n
			mm, err := m.Layer(o)
			if err != nil {
				return tile.Workload{}, err
			}
			return layerWorkload(mm[i].Problem, op), nil
		}})
	}
	return out, nil
}

// layerWorkload is a layer matmul as op: the MUL_MAT_ID itself, or the
// MUL_MAT of one expert's matrix over the problem's tokens.
func layerWorkload(p tile.Problem, op tile.Op) tile.Workload {
	if op == tile.OpMulMat {
		return tile.DenseWorkload(tile.DenseProblem{M: p.M, N: p.Tokens, K: p.K, TypeA: p.TypeA, HalfB: p.HalfB})
	}
	return tile.MoEWorkload(p)
}

// compareColumns are the CSV columns of a comparison: the point, both sides'
// times and counters, then the op and each Detail column and the registers
// per thread for side a and b in turn.
var compareColumns = slices.Concat([]string{"chip", "shape", "n", "a_variant", "a_path", "a_us", "b_variant", "b_path", "b_us", "delta_us", "delta_pct",
	"a_half_tiles_skipped", "b_half_tiles_skipped", "a_mmas", "b_mmas", "a_mma_shape", "b_mma_shape",
	"a_tgs_per_core", "b_tgs_per_core", "a_occupancy_limiter", "b_occupancy_limiter", "a_limiter", "b_limiter", "op"},
	sidePairs(append([]string{"registers_per_thread"}, detailColumns...)))

// sidePairs returns a_c, b_c for each column c.
func sidePairs(cols []string) []string {
	var out []string
	for _, c := range cols {
		out = append(out, "a_"+c, "b_"+c)
	}
	return out
}

// WriteCompareCSV writes a comparison's rows as CSV.
func WriteCompareCSV(w io.Writer, rows []CompareRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(compareColumns); err != nil {
		return err
	}
	us := func(v float64) string { return csvFloat(v, usDecimals) }
	d := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range rows {
		rec := []string{r.Chip, r.Shape, strconv.Itoa(r.N), r.A.Variant, r.A.Path, us(r.A.Us), r.B.Variant, r.B.Path, us(r.B.Us),
			us(r.DeltaUs), csvFloat(r.DeltaPct, pctDecimals), d(r.A.Skipped), d(r.B.Skipped), d(r.A.MMAs), d(r.B.MMAs), r.A.MMAShape, r.B.MMAShape,
			strconv.Itoa(r.A.TGsPerCore), strconv.Itoa(r.B.TGsPerCore), r.A.OccLimiter, r.B.OccLimiter, r.A.Limiter, r.B.Limiter, r.Op,
			strconv.Itoa(r.A.Registers), strconv.Itoa(r.B.Registers)}
		a, b := r.A.Detail.record(), r.B.Detail.record()
		for i := range a {
			rec = append(rec, a[i], b[i])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCompareJSON writes a comparison's rows as an indented JSON array.
func WriteCompareJSON(w io.Writer, rows []CompareRow) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rows == nil {
		rows = []CompareRow{}
	}
	return enc.Encode(rows)
}

// DimShapes returns a comparison shape per m x k of dims, each the shape sh
// at n tokens (labels name a problem's inputs in errors). A shape that does
// not build fails before anything runs, its error naming the list (label,
// when given) and the shape.
func DimShapes(sh Shape, dims []MK, labels Labels, label string) ([]CompareShape, error) {
	var out []CompareShape
	for _, d := range dims {
		if _, err := sh.Workload(1, d.M, d.K); err != nil {
			if label != "" {
				return nil, fmt.Errorf("%s %dx%d: %w", label, d.M, d.K, labels.Name(err))
			}
			return nil, labels.Name(err)
		}
		label := fmt.Sprintf("m=%d,k=%d", d.M, d.K)
		if w, _ := sh.Workload(1, d.M, d.K); w.Op == tile.OpMulMat && w.Dense.Batches() > 1 {
			label += fmt.Sprintf(",bs=%d,nr=%d", w.Dense.Matrices(), w.Dense.PerMatrix())
		}
		out = append(out, CompareShape{Label: label,
			Build: func(n int) (tile.Workload, error) {
				w, err := sh.Workload(n, d.M, d.K)
				return w, labels.Name(err)
			}})
	}
	return out, nil
}

// SideNames names the two sides as headings and plots show them: the
// variant as given, and a forced kernel ("upstream as mul_mm").
func (c *Comparison) SideNames() [2]string {
	var out [2]string
	for i, va := range c.Variants {
		out[i] = va.Arg
		if k := c.Kernels[i]; k != tile.KernelAuto {
			out[i] += " as " + k.String()
		}
	}
	return out
}

// CompareInputs are a comparison as simrun compare's command line gives it:
// the two variants (arguments A and B), the lists of chips and n, the path,
// the single routing, the op and its kernels (--op, --kernel A[,B]), the
// shape flags (M, K their --m and --k), --shapes, and a model (--preset or
// --gguf); Given reports whether a flag was given.
type CompareInputs struct {
	Variants                 [2]string
	Chips, Ns, Path, Routing string
	Op, Kernels              string
	Shape                    Shape
	Shapes                   string
	Preset, GGUF             string
	Given                    func(flag string) bool
	Labels                   Labels
}

// ParseComparison reads a comparison run with opt from its inputs, and the
// model it compares a layer of (nil for shapes); errors name the flags.
func ParseComparison(in CompareInputs, opt sim.Options) (*Comparison, *models.Model, error) {
	c := &Comparison{Options: opt, Labels: in.Labels}
	for i, a := range in.Variants {
		va, err := LoadVariants("variant "+string(rune('A'+i)), []string{a})
		if err != nil {
			return nil, nil, err
		}
		c.Variants[i] = va[0]
	}
	var err error
	if c.Chips, err = LoadChips("--chip", in.Chips); err != nil {
		return nil, nil, err
	}
	if in.Path != "" {
		p, err := tile.ParsePath(in.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("--path: %w", err)
		}
		c.Path = &p
	}
	if c.Ns, err = ParseNs("--n", in.Ns); err != nil {
		return nil, nil, err
	}
	var m *models.Model
	if c.Shapes, m, err = CompareShapes(in); err != nil {
		return nil, nil, err
	}
	c.Layer = m != nil
	used, experts := in.Shape.Used, in.Shape.Experts
	if m != nil {
		used, experts = m.Used, m.Experts
	}
	ps := routing.Parser{Experts: experts, Used: used, Label: "--routing", SkewLabel: "--skew", NLabel: "--n"}
	if c.Options.Routing, err = ParseOneRouting(ps, in.Routing, "compare", c.Ns); err != nil {
		return nil, nil, err
	}
	if c.Kernels, err = ParseKernelPair("--op", in.Op, "--kernel", in.Kernels); err != nil {
		return nil, nil, err
	}
	return c, m, nil
}

// CompareShapes returns the shapes to compare: a model's layer matmuls (the
// model too), the --shapes list, or the shape flags' one shape. Errors name
// the flags.
func CompareShapes(in CompareInputs) ([]CompareShape, *models.Model, error) {
	sh := in.Shape
	if in.Preset != "" || in.GGUF != "" {
		for _, f := range []string{"experts", "used", "m", "k", "b", "shapes"} {
			if in.Given(f) {
				return nil, nil, fmt.Errorf("--%s: the model sets it; drop it or drop --preset/--gguf", f)
			}
		}
		m, err := LoadModel("--preset", in.Preset, "--gguf", in.GGUF)
		if err != nil {
			return nil, nil, err
		}
		out, err := ModelShapes(m, models.LayerOptions{Tokens: 1, Type: sh.TypeA, ForceType: in.Given("type"), HalfB: sh.HalfB}, sh.Op)
		if err != nil {
			return nil, nil, TypeHint(err)
		}
		return out, m, nil
	}
	dims := []MK{{M: sh.M, K: sh.K}}
	if in.Shapes != "" || in.Given("shapes") {
		if in.Given("m") || in.Given("k") {
			return nil, nil, errors.New("--shapes: give either --shapes or --m/--k")
		}
		var err error
		if dims, err = ParseShapes("--shapes", in.Shapes); err != nil {
			return nil, nil, err
		}
	}
	label := ""
	if in.Shapes != "" {
		label = "--shapes"
	}
	out, err := DimShapes(sh, dims, in.Labels, label)
	return out, nil, err
}

// TypeHint adds what to do about a GGUF weight type metalsim does not
// decode (--type).
func TypeHint(err error) error {
	if errors.Is(err, models.ErrUnsupportedType) {
		return fmt.Errorf("--gguf: %w; pass --type to simulate every expert tensor as one supported type", err)
	}
	return err
}

// Unverified says which of a model's numbers are unverified ("" when none),
// for the outputs (CSV, compare's JSON) that have no place to say it.
func Unverified(m *models.Model) string {
	if m == nil || len(m.Unverified) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: unverified: %s (not checked against the model's own config: verify before relying on them)", m.Name, strings.Join(m.Unverified, ", "))
}
