package study

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/models"
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
	// Problem is the point's MUL_MAT_ID problem (zero for a layer's total),
	// for matching measurements to it.
	Problem tile.Problem `json:"-"`
	// Total marks a model layer's total: its times and counts are the sums
	// of the layer's matmuls; occupancy and limiter do not apply.
	Total bool `json:"-"`
}

// CompareShape is one matmul shape a comparison runs at every n.
type CompareShape struct {
	Label string
	Build func(n int) (tile.Problem, error)
}

// Comparison runs two variants side by side over chips, shapes and ns; both
// see the same routing draws (Options).
type Comparison struct {
	Chips    []*chips.Chip
	Variants [2]Variant // A and B
	Path     *tile.Path // nil: a spec file's path, else each chip's
	Shapes   []CompareShape
	// Layer says the shapes are a model's MoE layer: a layer-total row
	// follows each chip's and n's matmuls, and map0's limits are the model's.
	Layer   bool
	Ns      []int
	Options sim.Options
	Labels  Labels // name the shape's inputs in map0's limits (when not Layer)
}

// Run predicts every point with both variants, chip by chip, n by n, shape by
// shape. Shapes whose map0 cannot launch on a chip fail before anything runs.
func (c *Comparison) Run() ([]CompareRow, error) {
	labels := c.Labels
	if c.Layer {
		labels = Labels{Experts: "the model's experts (n_mats)", Used: "its experts used per token (n_used)"}
	}
	for _, chip := range c.Chips {
		for _, sh := range c.Shapes {
			p, err := sh.Build(c.Ns[0])
			if err != nil {
				return nil, err
			}
			if err := labels.map0(p, chip); err != nil {
				return nil, err
			}
		}
	}
	sm := sim.NewSimulator()
	var rows []CompareRow
	for _, chip := range c.Chips {
		var kernels [2]tile.Kernel
		for i, va := range c.Variants {
			k, err := va.Kernel(chip, c.Path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", chip.Name, err)
			}
			kernels[i] = k
		}
		for _, n := range c.Ns {
			total := CompareRow{Chip: chip.Name, Shape: "layer", N: n, Total: true}
			for _, sh := range c.Shapes {
				p, err := sh.Build(n)
				if err != nil {
					return nil, err
				}
				row := CompareRow{Chip: chip.Name, Shape: sh.Label, N: n, Problem: p}
				for i, k := range kernels {
					res, err := sm.Run(p, k, chip, c.Options)
					if err != nil {
						return nil, fmt.Errorf("%s, %s, n = %d, variant %s: %w", chip.Name, sh.Label, n, c.Variants[i].Arg, err)
					}
					side, tside := &row.A, &total.A
					if i == 1 {
						side, tside = &row.B, &total.B
					}
					*side = sideOf(res)
					tside.Variant, tside.Path, tside.MMAShape = side.Variant, side.Path, side.MMAShape
					tside.Us += side.Us
					tside.Skipped += side.Skipped
					tside.MMAs += side.MMAs
				}
				row.delta()
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
// simdgroup path and 16x16x16 on the tensor path.
func sideOf(res *sim.Result) CompareSide {
	s := CompareSide{Variant: res.Kernel.Name, Path: res.Kernel.Path.String(), Us: res.TotalUs,
		Skipped: res.Counters.Skipped.HalfTiles, TGsPerCore: res.Occupancy.TGsPerCore,
		OccLimiter: res.Occupancy.Limiter, Limiter: res.Limit.String(), MMAs: res.Counters.Work.MMA8, MMAShape: "8x8x8"}
	if res.Kernel.Path == tile.Tensor {
		s.MMAs, s.MMAShape = res.Counters.Work.MMA16, "16x16x16"
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
// replaced); it fails when lo does not build a layer.
func ModelShapes(m *models.Model, lo models.LayerOptions) ([]CompareShape, error) {
	if _, err := m.Layer(lo); err != nil {
		return nil, err
	}
	var out []CompareShape
	for i, name := range []string{"gate", "up", "down"} {
		out = append(out, CompareShape{Label: name, Build: func(n int) (tile.Problem, error) {
			o := lo
			o.Tokens = n
			mm, err := m.Layer(o)
			if err != nil {
				return tile.Problem{}, err
			}
			return mm[i].Problem, nil
		}})
	}
	return out, nil
}

// compareColumns are the CSV columns of a comparison.
var compareColumns = []string{"chip", "shape", "n", "a_variant", "a_path", "a_us", "b_variant", "b_path", "b_us", "delta_us", "delta_pct",
	"a_half_tiles_skipped", "b_half_tiles_skipped", "a_mmas", "b_mmas", "a_mma_shape", "b_mma_shape",
	"a_tgs_per_core", "b_tgs_per_core", "a_occupancy_limiter", "b_occupancy_limiter", "a_limiter", "b_limiter"}

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
			strconv.Itoa(r.A.TGsPerCore), strconv.Itoa(r.B.TGsPerCore), r.A.OccLimiter, r.B.OccLimiter, r.A.Limiter, r.B.Limiter}
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
