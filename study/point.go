package study

import (
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Point is one timing prediction of a study: a workload on a chip, run as the
// kernel llama.cpp dispatches for it or as a forced one, with a variant where
// that kernel takes its knobs (tile.Knob.Applies).
type Point struct {
	Chip     *chips.Chip
	Variant  Variant
	Path     *tile.Path // nil: the variant's spec file's path, else the chip's
	Workload tile.Workload
	Kernel   tile.MetalKernel // forced; tile.KernelAuto: llama.cpp's choice
	Options  sim.Options      // with the point's routing and seed
	Labels   Labels
}

// Outcome is what a point ran and what it gave.
type Outcome struct {
	Kernel tile.MetalKernel // the Metal kernel that ran
	Run    tile.Kernel      // the variant on its path
	Result *sim.Result
	// Notes say what the run did not do as asked or as llama.cpp does: the
	// variant's knobs the kernel leaves out (tile.Variant.KnobNote), a wrong
	// B view, a missing map0 kernel, a forced kernel's difference from
	// llama.cpp's choice. The same wording in every command.
	Notes []string
}

// Kernels returns the kernel that runs the point and the variant on its path,
// or the first rule the point breaks: a variant invalid on its path, a forced
// kernel that cannot run the workload (its error names Labels.Kernel),
// map0's limits on the chip when mul_mm_id runs (none without a chip: the
// emulator's points).
func (pt *Point) Kernels() (tile.MetalKernel, tile.Kernel, error) {
	kern, kerr := pt.Workload.Kernel(pt.Kernel)
	k, err := pt.Variant.Kernel(pt.Chip, pt.Path)
	switch {
	case err != nil:
		return kern, k, err
	case kerr != nil:
		return kern, k, pt.Labels.kernel(kerr)
	case kern == tile.KernelMulMMID && pt.Chip != nil:
		return kern, k, pt.Labels.map0(pt.Workload.MoE, pt.Chip)
	}
	return kern, k, nil
}

// Work estimates the point's run on sm (sim.Simulator.Estimate; Run and
// Observe run what it estimates).
func (pt *Point) Work(sm *sim.Simulator) (sim.Work, error) {
	kern, k, err := pt.Kernels()
	if err != nil {
		return sim.Work{}, err
	}
	if kern == tile.KernelMulMMID {
		return sm.EstimateRun(pt.Workload.MoE, k, pt.Options) // at any n, as Run
	}
	return sm.Estimate(pt.Workload, k, kern, pt.Chip, pt.Options)
}

// CheckObserveWork returns the estimate's error, or a *sim.WorkError when a
// traced run of the point on the detailed engine (Observe) up to endUs µs
// of the dispatch, or the whole of it, is past its options' bound.
func (pt *Point) CheckObserveWork(sm *sim.Simulator, endUs float64, whole bool) error {
	w, err := pt.Work(sm)
	if err != nil {
		return err
	}
	if whole {
		endUs = 0 // Work.Observe's whole dispatch
	}
	return sim.CheckWork(w.Observe(pt.Chip, endUs), pt.Options)
}

// CheckWork returns a *sim.WorkError when the point's run is past its
// options' bound; a point that cannot run at all passes (its row says why).
func (pt *Point) CheckWork(sm *sim.Simulator) error {
	w, err := pt.Work(sm)
	if err != nil {
		return nil
	}
	return sim.CheckWork(w, pt.Options)
}

// Run times the point on sm.
func (pt *Point) Run(sm *sim.Simulator) (*Outcome, error) {
	kern, k, err := pt.Kernels()
	if err != nil {
		return nil, err
	}
	res, err := sm.RunWorkload(pt.Workload, k, pt.Kernel, pt.Chip, pt.Options)
	if err != nil {
		return nil, pt.Labels.Name(err) // the plan checks the workload against the tile
	}
	o := &Outcome{Kernel: kern, Run: k, Result: res, Notes: Notes(pt.Workload, kern, k)}
	return o, nil
}

// Row returns the point as a row of a sweep's columns (Index 0, Points 1, no
// sweep id): its definition, and with o its outcome (nil: the kernel that
// would run, or the error that keeps it from running).
func (pt *Point) Row(o *Outcome) *Row {
	opt := pt.Options
	w := pt.Workload
	r := &Row{Points: 1, Chip: pt.Chip.Name, Variant: pt.Variant.Variant.Name, Engine: opt.Engine.String(), Draws: opt.Draws,
		TypeA: w.TypeA().String(), Op: w.Op.String()}
	if w.Op == tile.OpMulMat {
		p := w.Dense
		r.N, r.M, r.K, r.TypeB, r.Draws, r.Bs, r.Nr = p.N, p.M, p.K, tile.ActivationName(p.HalfB), 1, p.Matrices(), p.PerMatrix()
	} else {
		p := w.MoE
		r.N, r.M, r.K, r.TypeB, r.Experts, r.Used, r.Seed = p.Tokens, p.M, p.K, tile.ActivationName(p.HalfB), p.Experts, p.Used, opt.Seed
		r.Routing = routing.Uniform{}.Name()
		if opt.Routing != nil {
			r.Routing = opt.Routing.Name()
		}
		if p.Broadcast {
			r.B = 1
		}
	}
	kern, k, err := pt.Kernels()
	r.Path, r.Kernel = PathName(kern, k.Path), kern.String()
	if err != nil {
		r.Error = err.Error()
	}
	if o != nil {
		r.fill(o)
	}
	return r
}

// Shape returns the shape (threads, registers per thread, threadgroup
// memory) of the kernel that runs the point, with its variant and path where
// it takes them; only the workload's types and k matter, the latter for the
// k-steps and the mat-vec geometry.
func (pt *Point) Shape() (tile.Shape, error) {
	kern, k, err := pt.Kernels()
	if err != nil {
		return tile.Shape{}, err
	}
	w := pt.Workload
	var v tile.VecKernel
	switch kern {
	case tile.KernelMulMMID:
		return tile.KernelShape(w.MoE, k)
	case tile.KernelMulMM:
		b, err := tile.NewMMVariantBuilder(w.Dense, k)
		if err != nil {
			return tile.Shape{}, pt.Labels.Name(err)
		}
		return tile.ShapeOf(b.ShapePrograms()), nil
	case tile.KernelMulMVID:
		v = tile.MulMV(w.MoE.TypeA, w.MoE.K, true)
	default:
		if v, err = tile.DenseVecKernel(w.Dense, kern); err != nil {
			return tile.Shape{}, err
		}
	}
	halfB, kk := w.MoE.HalfB, w.MoE.K
	if w.Op == tile.OpMulMat {
		halfB, kk = w.Dense.HalfB, w.Dense.K
	}
	b, err := tile.NewVecBuilder(v, w.TypeA(), halfB, kk)
	if err != nil {
		return tile.Shape{}, err
	}
	return tile.ShapeOf([]*isa.Program{b.Program(b.Context(v.RowsPerTG(), v.Tokens))}), nil
}

// Notes are the notes of a run of workload w as kernel kern with kernel k's
// variant on its path (Outcome.Notes).
func Notes(w tile.Workload, kern tile.MetalKernel, k tile.Kernel) []string {
	var notes []string
	add := func(s string) {
		if s != "" {
			notes = append(notes, s)
		}
	}
	add(k.KnobNote(kern))
	if kern == tile.KernelMulMMID {
		add(k.WrongB(k.Path))
		add(tile.Map0Missing(w.MoE.Used))
	}
	add(w.ForcedNote(kern))
	return notes
}

// PathName is a run's path as rows write it: the mat-mat kernels' body
// (simdgroup or tensor); empty for the mat-vec kernels, which have one.
func PathName(kern tile.MetalKernel, path tile.Path) string {
	if kern == tile.KernelMulMM || kern == tile.KernelMulMMID {
		return path.String()
	}
	return ""
}

// Detail is what rows of every study carry about a run besides its time: the
// kernel, where simdgroups waited, the device bytes per operand, the bytes
// each memory level served, the codebook loads by width, and the run's notes
// (Outcome.Notes) joined by " | ". Its CSV columns are detailColumns, in
// field order.
type Detail struct {
	Kernel            string  `json:"kernel"`
	IdleSGCycles      float64 `json:"idle_sg_cycles"`
	MetaBytes         int64   `json:"device_meta_bytes"`
	WeightBytes       int64   `json:"device_weights_bytes"`
	ActivationBytes   int64   `json:"device_activations_bytes"`
	OutputBytes       int64   `json:"device_output_bytes"`
	L1Bytes           float64 `json:"loads_l1_bytes"`
	L2Bytes           float64 `json:"loads_l2_bytes"`
	SLCBytes          float64 `json:"loads_slc_bytes"`
	DRAMLoadBytes     float64 `json:"loads_dram_bytes"`
	CodebookLoads1    int64   `json:"codebook_loads_1b"`
	CodebookLoads2    int64   `json:"codebook_loads_2b"`
	CodebookLoads4    int64   `json:"codebook_loads_4b"`
	CodebookLoads8    int64   `json:"codebook_loads_8b"`
	CodebookLoadsMore int64   `json:"codebook_loads_other"`
	Note              string  `json:"note"`
}

// detailColumns are Detail's CSV columns, in field order.
var detailColumns = []string{"kernel", "idle_sg_cycles", "device_meta_bytes", "device_weights_bytes", "device_activations_bytes",
	"device_output_bytes", "loads_l1_bytes", "loads_l2_bytes", "loads_slc_bytes", "loads_dram_bytes",
	"codebook_loads_1b", "codebook_loads_2b", "codebook_loads_4b", "codebook_loads_8b", "codebook_loads_other", "note"}

// DetailOf returns the detail of a run of kernel kern with its notes. Counts
// are of the first routing draw (as sim.Result.Counters), cycles and levels
// the mean over draws. Codebook loads of 1, 2, 4 and 8 bytes have a column
// each, any other width codebook_loads_other.
func DetailOf(kern tile.MetalKernel, res *sim.Result, notes []string) Detail {
	c := res.Counters.Work
	d := Detail{Kernel: kern.String(), IdleSGCycles: res.IdleSGCycles,
		MetaBytes: c.DeviceBytes[isa.StreamMeta], WeightBytes: c.DeviceBytes[isa.StreamWeights],
		ActivationBytes: c.DeviceBytes[isa.StreamActivations], OutputBytes: c.DeviceBytes[isa.StreamOutput],
		L1Bytes: res.LevelBytes[0], L2Bytes: res.LevelBytes[1], SLCBytes: res.LevelBytes[2], DRAMLoadBytes: res.LevelBytes[3]}
	for w, n := range c.CodebookLoads {
		switch w {
		case 1:
			d.CodebookLoads1 += n
		case 2:
			d.CodebookLoads2 += n
		case 4:
			d.CodebookLoads4 += n
		case 8:
			d.CodebookLoads8 += n
		default:
			d.CodebookLoadsMore += n
		}
	}
	d.Note = strings.Join(notes, noteSep)
	return d
}

// noteSep separates the notes of one run in a Detail's note cell.
const noteSep = " | "

// Notes returns the notes the detail's note cell holds.
func (d *Detail) Notes() []string {
	if d.Note == "" {
		return nil
	}
	return strings.Split(d.Note, noteSep)
}

// add sums another run's counts and bytes into a total's detail (a model
// layer's): the kernel and the notes stay the total's own.
func (d *Detail) add(o Detail) {
	d.IdleSGCycles += o.IdleSGCycles
	d.MetaBytes += o.MetaBytes
	d.WeightBytes += o.WeightBytes
	d.ActivationBytes += o.ActivationBytes
	d.OutputBytes += o.OutputBytes
	d.L1Bytes += o.L1Bytes
	d.L2Bytes += o.L2Bytes
	d.SLCBytes += o.SLCBytes
	d.DRAMLoadBytes += o.DRAMLoadBytes
	d.CodebookLoads1 += o.CodebookLoads1
	d.CodebookLoads2 += o.CodebookLoads2
	d.CodebookLoads4 += o.CodebookLoads4
	d.CodebookLoads8 += o.CodebookLoads8
	d.CodebookLoadsMore += o.CodebookLoadsMore
}

// record renders the detail as its CSV cells, the means over draws whole
// (csvFloat).
func (d *Detail) record() []string {
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	whole := func(v float64) string { return csvFloat(v, bytesDecimals) } // cycles and bytes, means over draws
	return []string{d.Kernel, whole(d.IdleSGCycles), i64(d.MetaBytes), i64(d.WeightBytes), i64(d.ActivationBytes), i64(d.OutputBytes),
		whole(d.L1Bytes), whole(d.L2Bytes), whole(d.SLCBytes), whole(d.DRAMLoadBytes),
		i64(d.CodebookLoads1), i64(d.CodebookLoads2), i64(d.CodebookLoads4), i64(d.CodebookLoads8), i64(d.CodebookLoadsMore), d.Note}
}
