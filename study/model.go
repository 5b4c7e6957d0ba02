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

// ModelRow is one expert matmul of a model's MoE layer (or the layer total,
// Matmul "layer") at one n.
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
	flops      float64
}

// ModelLayer times every expert matmul of a model's MoE layer (built with the
// layer options lo, at each n) with kernel k on chip; each n's matmuls are
// followed by the layer total (their sums; TFLOPS of the whole). It fails
// before anything runs when the layer does not build or its map0 cannot
// launch on chip.
func ModelLayer(sm *sim.Simulator, m *models.Model, lo models.LayerOptions, ns []int, k tile.Kernel, chip *chips.Chip, opt sim.Options) ([]ModelRow, error) {
	lo.Tokens = ns[0]
	mms, err := m.Layer(lo)
	if err != nil {
		return nil, err
	}
	if err := sim.CheckMap0(mms[0].Problem, chip, "the model's experts (n_mats)", "its experts used per token (n_used)"); err != nil {
		return nil, err
	}
	var rows []ModelRow
	for _, n := range ns {
		lo.Tokens = n
		mms, err := m.Layer(lo)
		if err != nil {
			return nil, err
		}
		total := ModelRow{N: n, Matmul: "layer"}
		for _, mm := range mms {
			res, err := sm.Run(mm.Problem, k, chip, opt)
			if err != nil {
				return nil, fmt.Errorf("%s, n = %d: %w", mm.Name, n, err)
			}
			row := ModelRow{N: n, Matmul: mm.Name, Tensor: mm.Tensor, Type: mm.Problem.TypeA.String(), M: mm.Problem.M, K: mm.Problem.K,
				Us: res.TotalUs, KernelUs: res.KernelUs, Map0Us: res.Map0Us, DispatchUs: res.OverheadUs, TFLOPS: res.TFLOPS,
				TGsPerCore: res.Occupancy.TGsPerCore, OccLimiter: res.Occupancy.Limiter, Limiter: res.Limit.String(),
				Skipped: res.Counters.Skipped.HalfTiles, MMAs: res.Counters.Work.MMA8 + res.Counters.Work.MMA16, flops: mm.Problem.FLOPs()}
			if mm.Problem.Broadcast {
				row.B = 1
			}
			rows = append(rows, row)
			total.Us += row.Us
			total.KernelUs += row.KernelUs
			total.Map0Us += row.Map0Us
			total.DispatchUs += row.DispatchUs
			total.Skipped += row.Skipped
			total.MMAs += row.MMAs
			total.flops += row.flops
		}
		total.TFLOPS = total.flops / (total.Us * 1e-6) / 1e12
		rows = append(rows, total)
	}
	return rows, nil
}

// modelColumns are the CSV columns of a model layer's rows.
var modelColumns = []string{"n", "matmul", "tensor", "type", "m", "k", "b", "us", "kernel_us", "map0_us", "dispatch_us", "tflops",
	"tgs_per_core", "occupancy_limiter", "limiter", "half_tiles_skipped", "mmas"}

// WriteModelCSV writes a model layer's rows as CSV.
func WriteModelCSV(w io.Writer, rows []ModelRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(modelColumns); err != nil {
		return err
	}
	us := func(v float64) string { return csvFloat(v, usDecimals) }
	for _, r := range rows {
		if err := cw.Write([]string{strconv.Itoa(r.N), r.Matmul, r.Tensor, r.Type, strconv.Itoa(r.M), strconv.Itoa(r.K), strconv.Itoa(r.B),
			us(r.Us), us(r.KernelUs), us(r.Map0Us), us(r.DispatchUs), csvFloat(r.TFLOPS, tflopsDecimals), strconv.Itoa(r.TGsPerCore), r.OccLimiter, r.Limiter,
			strconv.FormatInt(r.Skipped, 10), strconv.FormatInt(r.MMAs, 10)}); err != nil {
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
