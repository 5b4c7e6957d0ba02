package main

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg

	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

const compareSummary = `Compare two kernel variants A and B (built-in names or .toml spec files) side by side over chips,
shapes (the problem flags, or --shapes) or a model's MoE layer (--preset, --gguf), and a list of n:
predicted µs of each, the delta B - A (µs and %; negative: B is faster), skipped half-tiles, MMAs
executed (8x8x8 on the simdgroup path, 16x16x16 on the tensor path), occupancy (threadgroups per
core and what limits it) and the limiter of each. Both variants see the same routing draws.
With --preset or --gguf the model sets --experts, --used, --m, --k and --b (giving them is an
error); --type then overrides the weight type (a GGUF's own expert types by default).
--plot draws time and delta against n (PNG or SVG, by the file's extension).

usage: simrun compare [flags] A B`

// compareSide is one variant's prediction at one point.
type compareSide struct {
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

// compareRow is one point (chip, shape, n) of a comparison.
type compareRow struct {
	Chip     string      `json:"chip"`
	Shape    string      `json:"shape"`
	N        int         `json:"n"`
	A        compareSide `json:"a"`
	B        compareSide `json:"b"`
	DeltaUs  float64     `json:"delta_us"`
	DeltaPct float64     `json:"delta_pct"`
	total    bool        // a layer total: occupancy and limiter do not apply
}

// compareShape is one matmul shape to compare at every n.
type compareShape struct {
	label string
	build func(n int) (tile.Problem, error)
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", compareSummary, stderr)
	var shape shapeFlags
	var sf simFlags
	shape.register(fs)
	sf.register(fs)
	chipFlag := fs.String("chip", "M1 Pro 16-core GPU", "chips: comma-separated names or aliases (simrun chips), or chip .json files")
	pathFlag := fs.String("path", "", "kernel path: simdgroup or tensor (default: a spec file's path, else each chip's)")
	nFlag := fs.String("n", "32,64,128,256,512", "tokens: comma-separated list")
	shapes := fs.String("shapes", "", "comma-separated MxK shapes (e.g. 768x2048,2048x768) instead of --m and --k")
	preset := fs.String("preset", "", "compare a model's MoE layer (gate, up, down, layer total): a preset (simrun model --list)")
	ggufFile := fs.String("gguf", "", "compare the MoE layer of the model in this GGUF file (header only)")
	routingFlag := fs.String("routing", "uniform", "routing: uniform, zipf:S, hot:H:F or file:PATH")
	format := fs.String("format", "text", "output: text, csv or json")
	plotFile := fs.String("plot", "", "also draw time and delta vs n to this .png or .svg file")
	pos, code, ok := parseWithArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return fail(stderr, "compare", fmt.Errorf("want two variants A B, got %d arguments (usage: simrun compare [flags] A B)", len(pos)))
	}
	set := flagsGiven(fs)
	var variants []variantArg
	for i, a := range pos {
		va, err := resolveVariants("variant "+string(rune('A'+i)), []string{a})
		if err != nil {
			return fail(stderr, "compare", err)
		}
		variants = append(variants, va...)
	}
	chips, err := resolveChips(*chipFlag)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	if err := checkGivenNotEmpty(fs, "empty; leave the flag out for its default", "path"); err != nil {
		return fail(stderr, "compare", err)
	}
	if err := checkPath(*pathFlag); err != nil {
		return fail(stderr, "compare", err)
	}
	ns, err := parseNList("n", *nFlag)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "compare", err)
	}
	if *format != "text" && *format != "csv" && *format != "json" {
		return fail(stderr, "compare", fmt.Errorf("--format %q: allowed text, csv, json", *format))
	}
	if *plotFile != "" {
		if ext := strings.ToLower(filepath.Ext(*plotFile)); ext != ".png" && ext != ".svg" {
			return fail(stderr, "compare", fmt.Errorf("--plot %q: the file must end in .png or .svg", *plotFile))
		}
		if err := checkOutFile("--plot", *plotFile, ""); err != nil {
			return fail(stderr, "compare", err)
		}
	}
	list, model, err := compareShapes(&shape, set, *shapes, *preset, *ggufFile)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	used, experts := shape.used, shape.experts
	if model != nil {
		used, experts = model.Used, model.Experts
	}
	r, err := parseOneRouting("compare", *routingFlag, used, experts, ns)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	opt.Routing = r
	rows, err := compareRun(chips, variants, *pathFlag, list, model != nil, ns, opt)
	if err != nil {
		return fail(stderr, "compare", err)
	}
	switch *format {
	case "json":
		warnUnverified(stderr, "compare", model)
		err = writeCompareJSON(stdout, rows)
	case "csv":
		warnUnverified(stderr, "compare", model)
		err = writeCompareCSV(stdout, rows)
	default:
		err = writeCompareText(stdout, rows, variants, model, opt)
	}
	if err == nil && *plotFile != "" {
		if err = plotCompare(*plotFile, rows, variants); err == nil && *format == "text" {
			fmt.Fprintf(stdout, "\nplot: %s\n", *plotFile)
		}
	}
	if err != nil {
		return fail(stderr, "compare", err)
	}
	sf.writeRates(stderr)
	return exitOK
}

// compareShapes returns the shapes to compare: a model's layer matmuls, the
// --shapes list, or the problem flags' one shape.
func compareShapes(shape *shapeFlags, set map[string]bool, shapes, preset, ggufFile string) ([]compareShape, *models.Model, error) {
	if preset != "" || ggufFile != "" {
		if preset != "" && ggufFile != "" {
			return nil, nil, errors.New("--preset and --gguf: give one model")
		}
		for _, f := range []string{"experts", "used", "m", "k", "b", "shapes"} {
			if set[f] {
				return nil, nil, fmt.Errorf("--%s: the model sets it; drop it or drop --preset/--gguf", f)
			}
		}
		m, err := loadModel(preset, ggufFile)
		if err != nil {
			return nil, nil, err
		}
		typ, halfB, err := shape.types()
		if err != nil {
			return nil, nil, err
		}
		lo := models.LayerOptions{Tokens: 1, Type: typ, ForceType: set["type"], HalfB: halfB}
		if _, err := m.Layer(lo); err != nil {
			return nil, nil, modelTypeHint(err)
		}
		var out []compareShape
		for i, name := range []string{"gate", "up", "down"} {
			out = append(out, compareShape{label: name, build: func(n int) (tile.Problem, error) {
				o := lo
				o.Tokens = n
				mm, err := m.Layer(o)
				if err != nil {
					return tile.Problem{}, err
				}
				return mm[i].Problem, nil
			}})
		}
		return out, m, nil
	}
	type mk struct{ m, k int }
	dims := []mk{{shape.m, shape.k}}
	if shapes != "" || set["shapes"] {
		if set["m"] || set["k"] {
			return nil, nil, errors.New("--shapes: give either --shapes or --m/--k")
		}
		items, err := splitList("shapes", shapes)
		if err != nil {
			return nil, nil, err
		}
		if len(items) == 0 {
			return nil, nil, fmt.Errorf("--shapes %q: want a comma-separated list of MxK, e.g. 768x2048,1792x2048", shapes)
		}
		dims = nil
		for _, it := range items {
			ms, ks, ok := strings.Cut(strings.ToLower(it), "x")
			m, err1 := strconv.Atoi(ms)
			k, err2 := strconv.Atoi(ks)
			if !ok || err1 != nil || err2 != nil {
				return nil, nil, fmt.Errorf("--shapes: %q: want MxK, e.g. 768x2048", it)
			}
			dims = append(dims, mk{m, k})
		}
		if len(dims) == 0 {
			return nil, nil, fmt.Errorf("--shapes %q: want one or more MxK shapes", shapes)
		}
	}
	var out []compareShape
	for _, d := range dims {
		if _, err := shape.problem(1, d.m, d.k); err != nil {
			if shapes != "" {
				return nil, nil, fmt.Errorf("--shapes %dx%d: %w", d.m, d.k, err)
			}
			return nil, nil, err
		}
		out = append(out, compareShape{label: fmt.Sprintf("m=%d,k=%d", d.m, d.k),
			build: func(n int) (tile.Problem, error) { return shape.problem(n, d.m, d.k) }})
	}
	return out, nil, nil
}

// compareRun predicts every point with both variants; with a model it adds
// a layer-total row per chip and n.
func compareRun(chips []*sim.Chip, variants []variantArg, path string, shapes []compareShape, layer bool, ns []int, opt sim.Options) ([]compareRow, error) {
	// shapes map0 cannot launch fail before anything runs
	for _, chip := range chips {
		for _, sh := range shapes {
			p, err := sh.build(ns[0])
			if err != nil {
				return nil, err
			}
			experts, used := "--experts", "--used"
			if layer {
				experts, used = "the model's experts (n_mats)", "its experts used per token (n_used)"
			}
			if err := sim.CheckMap0(p, chip, experts, used); err != nil {
				return nil, err
			}
		}
	}
	sm := sim.NewSimulator()
	var rows []compareRow
	for _, chip := range chips {
		var kernels [2]tile.Kernel
		for i, va := range variants {
			k, err := va.kernel(chip, path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", chip.Name, err)
			}
			kernels[i] = k
		}
		for _, n := range ns {
			total := compareRow{Chip: chip.Name, Shape: "layer", N: n, total: true}
			for _, sh := range shapes {
				p, err := sh.build(n)
				if err != nil {
					return nil, err
				}
				row := compareRow{Chip: chip.Name, Shape: sh.label, N: n}
				for i, k := range kernels {
					res, err := sm.Run(p, k, chip, opt)
					if err != nil {
						return nil, fmt.Errorf("%s, %s, n = %d, variant %s: %w", chip.Name, sh.label, n, variants[i].arg, err)
					}
					side := &row.A
					tside := &total.A
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
			if layer {
				total.delta()
				rows = append(rows, total)
			}
		}
	}
	return rows, nil
}

func sideOf(res *sim.Result) compareSide {
	s := compareSide{Variant: res.Kernel.Name, Path: res.Kernel.Path.String(), Us: res.TotalUs,
		Skipped: res.Counters.Skipped.HalfTiles, TGsPerCore: res.Occupancy.TGsPerCore,
		OccLimiter: res.Occupancy.Limiter, Limiter: res.Limit.Short(), MMAs: res.Counters.Work.MMA8, MMAShape: "8x8x8"}
	if res.Kernel.Path == tile.Tensor {
		s.MMAs, s.MMAShape = res.Counters.Work.MMA16, "16x16x16"
	}
	return s
}

func (r *compareRow) delta() {
	r.DeltaUs = r.B.Us - r.A.Us
	if r.A.Us > 0 {
		r.DeltaPct = 100 * r.DeltaUs / r.A.Us
	}
}

func writeCompareText(w io.Writer, rows []compareRow, variants []variantArg, model *models.Model, opt sim.Options) error {
	fmt.Fprintf(w, "A = %s, B = %s; routing %s, %d draws, seed %d, %s engine; Δ = B - A (negative: B faster)\n",
		variants[0].arg, variants[1].arg, opt.Routing.Name(), opt.Draws, opt.Seed, opt.Engine)
	if model != nil {
		writeModelHeader(w, model)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chip\tshape\tn\tA µs\tB µs\tΔ µs\tΔ %\thalf-tiles skipped A/B\tMMAs A/B\toccupancy A/B\tlimiter A/B\t")
	for _, r := range rows {
		occ, lim := "-", "-"
		if !r.total {
			occ = fmt.Sprintf("%d (%s) / %d (%s)", r.A.TGsPerCore, r.A.OccLimiter, r.B.TGsPerCore, r.B.OccLimiter)
			lim = r.A.Limiter + " / " + r.B.Limiter
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%+.1f\t%+.1f%%\t%d / %d\t%s / %s\t%s\t%s\t\n",
			r.Chip, r.Shape, r.N, r.A.Us, r.B.Us, r.DeltaUs, r.DeltaPct, r.A.Skipped, r.B.Skipped,
			mmaCount(r.A), mmaCount(r.B), occ, lim)
	}
	return tw.Flush()
}

// mmaCount renders an MMA count with its shape (8x8x8 or 16x16x16).
func mmaCount(s compareSide) string {
	return fmt.Sprintf("%d (%s)", s.MMAs, s.MMAShape)
}

var compareColumns = []string{"chip", "shape", "n", "a_variant", "a_path", "a_us", "b_variant", "b_path", "b_us", "delta_us", "delta_pct",
	"a_half_tiles_skipped", "b_half_tiles_skipped", "a_mmas", "b_mmas", "a_mma_shape", "b_mma_shape",
	"a_tgs_per_core", "b_tgs_per_core", "a_occupancy_limiter", "b_occupancy_limiter", "a_limiter", "b_limiter"}

func writeCompareCSV(w io.Writer, rows []compareRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(compareColumns); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	d := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range rows {
		rec := []string{r.Chip, r.Shape, strconv.Itoa(r.N), r.A.Variant, r.A.Path, f(r.A.Us), r.B.Variant, r.B.Path, f(r.B.Us),
			f(r.DeltaUs), f(r.DeltaPct), d(r.A.Skipped), d(r.B.Skipped), d(r.A.MMAs), d(r.B.MMAs), r.A.MMAShape, r.B.MMAShape,
			strconv.Itoa(r.A.TGsPerCore), strconv.Itoa(r.B.TGsPerCore), r.A.OccLimiter, r.B.OccLimiter, r.A.Limiter, r.B.Limiter}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeCompareJSON(w io.Writer, rows []compareRow) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rows == nil {
		rows = []compareRow{}
	}
	return enc.Encode(rows)
}

// plotCompare draws two panels against n: the time of A (solid) and B
// (dashed) per chip and shape, and the delta in percent.
func plotCompare(file string, rows []compareRow, variants []variantArg) error {
	type series struct {
		key         string
		a, b, delta plotter.XYs
	}
	// lines join the points in n order, whatever order --n gave them in (a
	// stable sort keeps the chips' and shapes' order within each n)
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b compareRow) int { return cmp.Compare(a.N, b.N) })
	var all []*series
	byKey := map[string]*series{}
	for _, r := range rows {
		key := r.Chip + " " + r.Shape
		s := byKey[key]
		if s == nil {
			s = &series{key: key}
			byKey[key] = s
			all = append(all, s)
		}
		x := float64(r.N)
		s.a = append(s.a, plotter.XY{X: x, Y: r.A.Us})
		s.b = append(s.b, plotter.XY{X: x, Y: r.B.Us})
		s.delta = append(s.delta, plotter.XY{X: x, Y: r.DeltaPct})
	}
	top, bottom := plot.New(), plot.New()
	top.Title.Text = fmt.Sprintf("%s (solid) vs %s (dashed)", variants[0].arg, variants[1].arg)
	top.Y.Label.Text = "µs per MUL_MAT_ID"
	bottom.Y.Label.Text = "Δ = (B - A) / A, %"
	bottom.Title.Text = "delta (colours as above; below 0: B faster)"
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Label.Text = "n (tokens)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = nTicks(rows)
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: float64(rows[0].N), Y: 0}, {X: float64(rows[len(rows)-1].N), Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = color.Gray{Y: 128}
	bottom.Add(zero)
	for i, s := range all {
		c := plotutil.Color(i)
		for j, xy := range []plotter.XYs{s.a, s.b} {
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			l.Color, pts.Color = c, c
			pts.Shape = plotutil.Shape(i)
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			} else {
				top.Legend.Add(s.key, l, pts)
			}
			top.Add(l, pts)
		}
		l, pts, err := plotter.NewLinePoints(s.delta)
		if err != nil {
			return err
		}
		l.Color, pts.Color, pts.Shape = c, c, plotutil.Shape(i)
		bottom.Add(l, pts)
	}
	top.Y.Min = 0 // times from zero: the gap between A and B at its true scale
	top.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ts := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
			}
		}
		return ts
	})
	w, h := 8*vg.Inch, 9*vg.Inch
	cv, err := draw.NewFormattedCanvas(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), "."))
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(cv))
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if _, err := cv.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("--plot %s: %w", file, err)
	}
	return f.Close()
}

// nTicks puts a tick at every n of the comparison.
func nTicks(rows []compareRow) plot.Ticker {
	var ticks []plot.Tick
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.N] {
			seen[r.N] = true
			ticks = append(ticks, plot.Tick{Value: float64(r.N), Label: strconv.Itoa(r.N)})
		}
	}
	return plot.ConstantTicks(ticks)
}
