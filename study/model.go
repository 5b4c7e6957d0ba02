package study

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// ModelRow is one expert matmul of a model's MoE layer (or the layer total,
// Matmul "layer") at one n. Its CSV columns are modelColumns, then Detail's.
type ModelRow struct {
	N          int     `json:"n"`
	Matmul     string  `json:"matmul"`
	Tensor     string  `json:"tensor"`
	Type       string  `json:"type"`
	M          int     `json:"m"`
	K          int     `json:"k"`
	B          int     `json:"b"`
	Us         float64 `json:"us"`
	KernelUs   float64 `json:"kernel_us"`
	Map0Us     float64 `json:"map0_us"`
	DispatchUs float64 `json:"dispatch_us"`
	TFLOPS     float64 `json:"tflops"`
	TGsPerCore int     `json:"tgs_per_core,omitempty"`
	OccLimiter string  `json:"occupancy_limiter,omitempty"`
	Limiter    string  `json:"limiter,omitempty"`
	Skipped    int64   `json:"half_tiles_skipped"`
	MMAs       int64   `json:"mmas"`
	Detail
	flops float64
}

// ModelLayer times every expert matmul of a model's MoE layer (built with the
// layer options lo, at each n) as op (ModelShapes: the MUL_MAT_IDs, or each as
// the MUL_MAT of one expert's matrix) with point's chip, variant, path, kernel
// and options (its workload and labels are the layer's); each n's matmuls are
// followed by the layer total (their sums; TFLOPS of the whole). It fails
// before anything runs when the layer does not build or a matmul's kernel
// cannot run (map0's limits where mul_mm_id runs, a forced kernel's rules).
func ModelLayer(sm *sim.Simulator, m *models.Model, lo models.LayerOptions, op tile.Op, ns []int, point Point) ([]ModelRow, error) {
	point.Labels = Labels{Experts: "the model's experts (n_mats)", Used: "its experts used per token (n_used)", Kernel: point.Labels.Kernel}
	layer := func(n int) ([]models.Matmul, []Point, error) {
		lo.Tokens = n
		mms, err := m.Layer(lo)
		if err != nil {
			return nil, nil, err
		}
		pts := make([]Point, len(mms))
		for i, mm := range mms {
			pts[i] = point
			pts[i].Workload = layerWorkload(mm.Problem, op)
			if _, _, err := pts[i].Kernels(); err != nil {
				return nil, nil, fmt.Errorf("%s, n = %d: %w", mm.Name, n, err)
			}
		}
		return mms, pts, nil
	}
	for _, n := range ns {
		if _, _, err := layer(n); err != nil {
			return nil, err
		}
	}
	var rows []ModelRow
	for _, n := range ns {
		mms, pts, err := layer(n)
		if err != nil {
			return nil, err
		}
		total := ModelRow{N: n, Matmul: "layer"}
		for i, mm := range mms {
			o, err := pts[i].Run(sm)
			if err != nil {
				return nil, fmt.Errorf("%s, n = %d: %w", mm.Name, n, err)
			}
			res, w := o.Result, pts[i].Workload
			row := ModelRow{N: n, Matmul: mm.Name, Tensor: mm.Tensor, Type: mm.Problem.TypeA.String(), M: mm.Problem.M, K: mm.Problem.K,
				Us: res.TotalUs, KernelUs: res.KernelUs, Map0Us: res.Map0Us, DispatchUs: res.OverheadUs, TFLOPS: res.TFLOPS,
				TGsPerCore: res.Occupancy.TGsPerCore, OccLimiter: res.Occupancy.Limiter, Limiter: res.Limit.String(),
				Skipped: res.Counters.Skipped.HalfTiles, MMAs: res.Counters.Work.MMA8 + res.Counters.Work.MMA16,
				Detail: DetailOf(o.Kernel, res, o.Notes), flops: w.FLOPs()}
			if mm.Problem.Broadcast && op == tile.OpMulMatID {
				row.B = 1
			}
			rows = append(rows, row)
			total.Us += row.Us
			total.KernelUs += row.KernelUs
			total.Map0Us += row.Map0Us
			total.DispatchUs += row.DispatchUs
			total.Skipped += row.Skipped
			total.MMAs += row.MMAs
			total.Detail.add(row.Detail)
			total.flops += row.flops
		}
		total.TFLOPS = total.flops / (total.Us * 1e-6) / 1e12
		rows = append(rows, total)
	}
	return rows, nil
}

// modelColumns are the CSV columns of a model layer's rows.
var modelColumns = slices.Concat([]string{"n", "matmul", "tensor", "type", "m", "k", "b", "us", "kernel_us", "map0_us", "dispatch_us", "tflops",
	"tgs_per_core", "occupancy_limiter", "limiter", "half_tiles_skipped", "mmas"}, detailColumns)

// WriteModelCSV writes a model layer's rows as CSV.
func WriteModelCSV(w io.Writer, rows []ModelRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(modelColumns); err != nil {
		return err
	}
	us := func(v float64) string { return csvFloat(v, usDecimals) }
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.N), r.Matmul, r.Tensor, r.Type, strconv.Itoa(r.M), strconv.Itoa(r.K), strconv.Itoa(r.B),
			us(r.Us), us(r.KernelUs), us(r.Map0Us), us(r.DispatchUs), csvFloat(r.TFLOPS, tflopsDecimals), strconv.Itoa(r.TGsPerCore), r.OccLimiter, r.Limiter,
			strconv.FormatInt(r.Skipped, 10), strconv.FormatInt(r.MMAs, 10)}
		if err := cw.Write(append(rec, r.Detail.record()...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteModelJSON writes a model layer's rows as one JSON document with the
// model (its unverified numbers named), the chip, the kernel and the routing.
func WriteModelJSON(w io.Writer, m *models.Model, chip *chips.Chip, kernel string, opt sim.Options, rows []ModelRow) error {
	doc := struct {
		Model      string                `json:"model"`
		Source     string                `json:"source"`
		Experts    int                   `json:"experts"`
		Used       int                   `json:"used"`
		Hidden     int                   `json:"hidden"`
		FFN        int                   `json:"expert_ffn"`
		Unverified []string              `json:"unverified"`
		Tensors    []models.ExpertTensor `json:"tensors,omitempty"`
		Notes      []string              `json:"notes"`
		Chip       string                `json:"chip"`
		Kernel     string                `json:"kernel"`
		Routing    string                `json:"routing"`
		Draws      int                   `json:"draws"`
		Seed       uint64                `json:"seed"`
		Rows       []ModelRow            `json:"rows"`
	}{m.Name, m.Source, m.Experts, m.Used, m.Hidden, m.FFN, nonNil(m.Unverified), m.Tensors, nonNil(m.Notes),
		chip.Name, kernel, opt.Routing.Name(), opt.Draws, opt.Seed, rows}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// LoadModel reads a model: a preset by name or alias, or a GGUF file's header;
// the labels name the two inputs in errors (give exactly one).
func LoadModel(presetLabel, preset, ggufLabel, ggufFile string) (*models.Model, error) {
	switch {
	case preset != "" && ggufFile != "":
		return nil, fmt.Errorf("%s and %s: give one model", presetLabel, ggufLabel)
	case preset != "":
		p, err := models.LookupPreset(preset)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", presetLabel, err)
		}
		return p.Model(), nil
	case ggufFile != "":
		m, err := models.ReadGGUF(ggufFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ggufLabel, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s or %s: name the model (simrun model --list shows the presets)", presetLabel, ggufLabel)
}

// ModelInputs are a model-layer study as simrun model's command line gives
// it: the lists of n, one chip, the path, one variant and one routing.
type ModelInputs struct {
	Ns, Chip, Path, Variant, Routing string
}

// ParseModelPoint reads the n list and the point (chip, variant, path, the
// routing in opt) a model layer is timed at; errors name the flags.
func ParseModelPoint(in ModelInputs, m *models.Model, kernel tile.MetalKernel, opt sim.Options, labels Labels) ([]int, *Point, error) {
	ns, err := ParseNs("--n", in.Ns)
	if err != nil {
		return nil, nil, err
	}
	chipList, err := LoadChips("--chip", in.Chip)
	if err != nil {
		return nil, nil, err
	}
	if len(chipList) != 1 {
		return nil, nil, fmt.Errorf("--chip %q: give one chip (simrun compare and sweep take lists)", in.Chip)
	}
	pt := &Point{Chip: chipList[0], Kernel: kernel, Options: opt, Labels: labels}
	if in.Path != "" {
		p, err := tile.ParsePath(in.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("--path: %w", err)
		}
		pt.Path = &p
	}
	vas, err := LoadVariants("--variant", []string{in.Variant})
	if err != nil {
		return nil, nil, err
	}
	pt.Variant = vas[0]
	if _, err := pt.Variant.Kernel(pt.Chip, pt.Path); err != nil {
		return nil, nil, fmt.Errorf("--variant: %w", err)
	}
	ps := routing.Parser{Experts: m.Experts, Used: m.Used, Label: "--routing", SkewLabel: "--skew", NLabel: "--n"}
	if pt.Options.Routing, err = ParseOneRouting(ps, in.Routing, "model", ns); err != nil {
		return nil, nil, err
	}
	return ns, pt, nil
}
