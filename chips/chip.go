package chips

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// Param is one chip number with where it came from (SourceKeys): a source key
// of docs/sources.md (e.g. "PT-MB", with the evidence class M/D/C/E in
// Evidence), a section of the GPU facts for a figure they give without a key
// ("apple-gpu.md §1", docs/kernel-facts.md §G1), or "calibrated" with the
// measurement file and the command that fitted it in Note.
type Param struct {
	Value    float64 `json:"value"`
	Source   string  `json:"source"`
	Evidence string  `json:"evidence,omitempty"` // D documented, M measured, C code, E estimate, F fitted
	Note     string  `json:"note,omitempty"`
}

// SourceKeys are the source keys of docs/sources.md, which chip numbers
// cite. Besides them a number may cite "apple-gpu.md §N" (a figure the
// document gives without a tag, such as Apple's spec-sheet core counts in its
// per-chip table), "calibrated" (fitted on measurements: the note names the
// file and command), "calibrated:CHIP" (taken from a calibrated chip,
// calibration_from) or "what-if" (changed for an experiment: the note says what).
var SourceKeys = []string{"PT-MB", "PT-GI", "PT-MFA", "DJ", "MESA", "AGXF", "TZ", "GGML", "LCPP-PR", "MLX", "CNC",
	"RIGEL", "AAPL-FT", "AAPL-M3TT", "AAPL-M5TT", "AAPL-NEWS", "MPPH", "EL", "RDT", "HMC",
	"MSL-SPEC", "MESA-PRE", "LCPP-4773", "LCPP-5747", "LCPP-1775", "LCPP-23114", "PT-OMM", "PT-GI-4", "CSB", "TZ-FIG",
	"MLX-NAX", "TRAIN", "AAPL-UF", "ARS-M3U", "ARS-M4", "NBC-A18", "A19-LEAK", "ASAHI-CN"}

// evidenceClasses are the evidence classes of apple-gpu.md (and F, fitted).
var evidenceClasses = []string{"D", "M", "C", "E", "F"}

// checkSource reports what is wrong with a number's source and evidence, or "".
func checkSource(p *Param) string {
	s := p.Source
	switch {
	case slices.Contains(SourceKeys, s):
	case strings.HasPrefix(s, "apple-gpu.md §") && len(s) > len("apple-gpu.md §"):
	case s == "calibrated" || s == "what-if":
		if strings.TrimSpace(p.Note) == "" {
			return fmt.Sprintf("source %q needs a note (%s)", s, map[string]string{
				"calibrated": "the measurement file and the command that fitted it",
				"what-if":    "what was changed, from which chip"}[s])
		}
	case strings.HasPrefix(s, "calibrated:") && len(s) > len("calibrated:"):
	default:
		return fmt.Sprintf("source %q: must be a source key of docs/sources.md (%s), \"apple-gpu.md §N\", \"calibrated\", \"calibrated:CHIP\" or \"what-if\"",
			s, strings.Join(SourceKeys, ", "))
	}
	if p.Evidence != "" && !slices.Contains(evidenceClasses, p.Evidence) {
		return fmt.Sprintf("evidence %q: must be one of %s", p.Evidence, strings.Join(evidenceClasses, ", "))
	}
	return ""
}

// ClassCost is the timing of one instruction class on a chip: the pipe it
// occupies, for how many cycles (reciprocal throughput per SIMD partition), and
// the latency until its result can be used.
type ClassCost struct {
	Pipe    string `json:"pipe"` // "fma", "ic", "tensor", "mem" (dispatch only), "tgmem", "l1", "sync"
	Issue   Param  `json:"issue_clk"`
	Latency Param  `json:"latency_clk"`
}

// Chip is one GPU described as data (chips/data/*.json). Every number carries its
// source; unknown or missing fields are errors that name the field.
type Chip struct {
	Name       string   `json:"name"`        // e.g. "M1 Pro 16-core GPU"
	Aliases    []string `json:"aliases"`     // other names, e.g. "Apple M1 Pro" as in a device description
	Family     string   `json:"family"`      // MTLGPUFamily, e.g. "apple7"
	Arch       string   `json:"arch"`        // internal architecture name, e.g. "G13X"
	TensorPath bool     `json:"tensor_path"` // llama.cpp compiles the tensor (matmul2d) path on this chip by default
	Notes      string   `json:"notes,omitempty"`
	// CalibrationFrom names the chip whose calibrated parameters (source
	// "calibrated") this chip takes, for chips without measurements of their
	// own: the value is copied at load time and the source says where from.
	// Chip-wide memory-system rates (notInherited) stay this chip's own.
	CalibrationFrom string `json:"calibration_from,omitempty"`

	Cores      Param `json:"cores"`
	ClockMHz   Param `json:"clock_mhz"`
	Schedulers Param `json:"schedulers_per_core"` // SIMD partitions, each issuing one instruction per cycle
	SIMDWidth  Param `json:"simd_width"`
	// SGIssueInterval is the minimum number of cycles between two instructions of
	// one simdgroup, independent of dependences.
	SGIssueInterval Param `json:"sg_issue_interval_clk"`
	// DispatchInterval is the number of cycles a SIMD partition's dispatch port
	// needs per instruction (1: one instruction per cycle per partition).
	DispatchInterval Param `json:"dispatch_interval_clk"`

	MaxThreadsPerCore Param `json:"max_threads_per_core"`
	MaxThreadsPerTG   Param `json:"max_threads_per_tg"`
	MaxTGsPerCore     Param `json:"max_tgs_per_core"`
	TGMemoryPerCore   Param `json:"tg_memory_per_core_bytes"`
	TGMemoryPerTG     Param `json:"tg_memory_per_tg_bytes"`
	// RegisterFile is the per-core register capacity (bytes): resident threads
	// are at most RegisterFile / (4 * registers per thread), rounded down to a
	// multiple of ThreadGranule (Mesa's G13 occupancy table is this rule with
	// 208 KiB and 64 threads).
	RegisterFile  Param `json:"register_file_bytes"`
	ThreadGranule Param `json:"occupancy_thread_granule"`

	Classes map[string]ClassCost `json:"classes"` // one entry per isa.Class name

	TGMemBytesPerClk Param `json:"tg_memory_bytes_per_clk"`
	L1BytesPerClk    Param `json:"l1_bytes_per_clk"`
	L1Bytes          Param `json:"l1_bytes"`
	L1LatencyNs      Param `json:"l1_latency_ns"`
	L2Bytes          Param `json:"l2_bytes"`
	L2LatencyNs      Param `json:"l2_latency_ns"`
	SLCBytes         Param `json:"slc_bytes"`
	SLCLatencyNs     Param `json:"slc_latency_ns"`
	DRAMLatencyNs    Param `json:"dram_latency_ns"`
	DRAMBandwidthGBs Param `json:"dram_bandwidth_gbs"` // achievable, not the spec sheet figure
	// TiledDRAMEfficiency is the fraction of DRAMBandwidthGBs that tiled
	// weight reads achieve: the mm kernels read NK-weight pieces of 64 rows a
	// row apart per k-step, not a stream as the mat-vec kernels do.
	TiledDRAMEfficiency Param `json:"tiled_dram_efficiency"`

	// L1GatherSectorsPerClk is how many distinct 32-byte sectors the L1 port
	// serves per cycle for a per-lane gather (a load whose lanes read
	// addresses of their own: a codebook lookup, a tensor fragment): such a
	// load occupies the port max(bytes / l1_bytes_per_clk, sectors / this)
	// cycles (docs/model.md §2, "Gathers").
	L1GatherSectorsPerClk Param `json:"l1_gather_sectors_per_clk"`
	// Matmul2DCallClk is a matmul2d call's fixed cost, issue work that holds
	// the partition's dispatch port before the call's first MMA, paid by
	// calls whose simdgroup share has fewer MMAs than isa.Matmul2DHideMMAs
	// (docs/model.md §2, "The tensor unit's calls").
	Matmul2DCallClk Param `json:"matmul2d_call_clk"`
	// Matmul2DRegather is 1 if a second matmul2d call on an operand the
	// same k-step already gathered gathers it again from threadgroup memory
	// (the upper bound), 0 if it reuses the first call's fragments.
	Matmul2DRegather Param `json:"matmul2d_regather"`
	// Matmul2DAccumulateAdds is 1 if a multiply_accumulate matmul2d call
	// adds the old C after its MMAs with fp32 adds, 8 per lane per owned
	// 16x16 tile, on the simdgroup's critical path; 0 if they cost nothing.
	Matmul2DAccumulateAdds Param `json:"matmul2d_accumulate_adds"`
	// SLCResidentBytes is the largest weight set that stays in the SLC from
	// one run of a node to the next (test-backend-ops replays a node): a
	// dispatch whose whole weight tensor is at most this reads it from the
	// SLC, not DRAM.
	SLCResidentBytes Param `json:"slc_resident_bytes"`
	// DieLinkEfficiency is the fraction of DRAMBandwidthGBs left when half
	// of the traffic crosses the die-to-die link (two-die Ultras); 1 on a
	// one-die chip.
	DieLinkEfficiency Param `json:"die_link_efficiency"`

	// Calibration records how the chip's fitted parameters were obtained.
	Calibration *CalibrationRecord `json:"calibration,omitempty"`

	// Bins are the same chip sold with fewer GPU cores enabled (apple-gpu.md
	// §1 lists two core counts for most chips). Each embedded bin is a chip
	// of its own (Chips, Lookup) that differs from this one only in what
	// the bin gives; LoadFile returns the file's own chip.
	Bins []Bin `json:"bins,omitempty"`

	BarrierClk         Param `json:"barrier_clk"`          // threadgroup barrier: release after the last arrival
	SGLaunchClk        Param `json:"sg_launch_clk"`        // a core's front end spends this many cycles per simdgroup of a threadgroup it launches
	DispatchOverheadUs Param `json:"dispatch_overhead_us"` // per dependent compute dispatch (encoder barrier + launch)

	class [isa.NumClasses]classCost // resolved by Validate
}

// Bin is a core-count variant of a chip: its name and aliases, its cores and,
// where the bins' memory systems differ, its DRAM bandwidth.
type Bin struct {
	Name             string   `json:"name"`
	Aliases          []string `json:"aliases"`
	Cores            Param    `json:"cores"`
	DRAMBandwidthGBs *Param   `json:"dram_bandwidth_gbs,omitempty"`
}

// binChips returns the chips of c's bins: copies of c with each bin's fields.
func (c *Chip) binChips() ([]*Chip, error) {
	var out []*Chip
	for _, b := range c.Bins {
		d := c.Clone()
		d.Bins, d.Calibration = nil, nil // a bin has no measurements of its own
		d.Name, d.Aliases, d.Cores = b.Name, slices.Clone(b.Aliases), b.Cores
		if c.CalibrationFrom == "" && c.Calibration != nil {
			// the file's chip was fitted: the bin takes that fit the way a
			// chip without measurements does (calibration_from), so its
			// sources say where the values come from
			d.CalibrationFrom = c.Name
			if b.DRAMBandwidthGBs == nil && d.DRAMBandwidthGBs.Source == "calibrated" {
				d.DRAMBandwidthGBs.Source = "calibrated:" + c.Name
				d.DRAMBandwidthGBs.Note = "the fit of " + c.Name + ", whose memory system the bin shares: " + d.DRAMBandwidthGBs.Note
			}
		}
		if b.DRAMBandwidthGBs != nil {
			d.DRAMBandwidthGBs = *b.DRAMBandwidthGBs
		}
		d.Notes = strings.TrimSpace(fmt.Sprintf("A bin of the %s (its file's bins): every number not given by the bin is that chip's. %s", c.Name, c.Notes))
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("chip %s: bin %s: %w", c.Name, b.Name, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// CalibrationRecord is the provenance of a chip's fitted parameters: the
// command, the measurement files, the values and the residuals.
type CalibrationRecord struct {
	Command   string           `json:"command"`
	Files     []string         `json:"files"`
	Rows      int              `json:"rows"`
	Params    []FittedValue    `json:"params"`
	MAPE      float64          `json:"mape_pct"`
	MaxDelta  float64          `json:"max_delta_error_pp"`
	CVMAPE    float64          `json:"cv_mape_pct,omitempty"`
	Residuals []CalibrationRow `json:"residuals"`
}

// FittedValue is one fitted parameter.
type FittedValue struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	Value float64 `json:"value"`
}

// CalibrationRow is the residual of one measured row after the fit.
type CalibrationRow struct {
	Row        string  `json:"row"`
	MeasuredUs float64 `json:"measured_us"`
	ErrorPct   float64 `json:"error_pct"`
}

type classCost struct {
	pipe    Pipe
	issue   float64
	latency float64
}

// ClassTiming returns instruction class cl's pipe, its issue occupancy and its
// latency in cycles, as Validate resolved them.
func (c *Chip) ClassTiming(cl isa.Class) (pipe Pipe, issue, latency float64) {
	cc := c.class[cl]
	return cc.pipe, cc.issue, cc.latency
}

// paramRule bounds one numeric field.
type paramRule struct {
	field   string
	p       *Param
	lo, hi  float64
	integer bool
}

func (c *Chip) rules() []paramRule {
	return []paramRule{
		{"cores", &c.Cores, 1, 256, true},
		{"clock_mhz", &c.ClockMHz, 100, 5000, false},
		{"schedulers_per_core", &c.Schedulers, 1, 16, true},
		{"simd_width", &c.SIMDWidth, 32, 32, true},
		{"sg_issue_interval_clk", &c.SGIssueInterval, 1, 64, false},
		{"dispatch_interval_clk", &c.DispatchInterval, 1, 16, true},
		{"max_threads_per_core", &c.MaxThreadsPerCore, 32, 65536, true},
		{"max_threads_per_tg", &c.MaxThreadsPerTG, 32, tile.MaxThreadsPerTG, true},
		{"max_tgs_per_core", &c.MaxTGsPerCore, 1, 1024, true},
		{"tg_memory_per_core_bytes", &c.TGMemoryPerCore, 1024, 1 << 22, true},
		{"tg_memory_per_tg_bytes", &c.TGMemoryPerTG, 1024, tile.MaxTGMemoryBytes, true},
		{"register_file_bytes", &c.RegisterFile, 4096, 1 << 24, true},
		{"occupancy_thread_granule", &c.ThreadGranule, 1, 1024, true},
		{"tg_memory_bytes_per_clk", &c.TGMemBytesPerClk, 1, 4096, false},
		{"l1_bytes_per_clk", &c.L1BytesPerClk, 1, 4096, false},
		{"l1_bytes", &c.L1Bytes, 1024, 1 << 30, true},
		{"l1_latency_ns", &c.L1LatencyNs, 1, 10000, false},
		{"l2_bytes", &c.L2Bytes, 1024, 1 << 34, true},
		{"l2_latency_ns", &c.L2LatencyNs, 1, 10000, false},
		{"slc_bytes", &c.SLCBytes, 1024, 1 << 36, true},
		{"slc_latency_ns", &c.SLCLatencyNs, 1, 10000, false},
		{"dram_latency_ns", &c.DRAMLatencyNs, 1, 10000, false},
		{"dram_bandwidth_gbs", &c.DRAMBandwidthGBs, 1, 100000, false},
		{"tiled_dram_efficiency", &c.TiledDRAMEfficiency, 0.01, 1, false},
		{"l1_gather_sectors_per_clk", &c.L1GatherSectorsPerClk, 0.25, 128, false},
		{"matmul2d_call_clk", &c.Matmul2DCallClk, 0, 4096, false},
		{"matmul2d_regather", &c.Matmul2DRegather, 0, 1, true},
		{"matmul2d_accumulate_adds", &c.Matmul2DAccumulateAdds, 0, 1, true},
		{"slc_resident_bytes", &c.SLCResidentBytes, 0, 1 << 36, true},
		{"die_link_efficiency", &c.DieLinkEfficiency, 0.1, 1, false},
		{"barrier_clk", &c.BarrierClk, 0, 100000, false},
		{"sg_launch_clk", &c.SGLaunchClk, 0, 1e6, false},
		{"dispatch_overhead_us", &c.DispatchOverheadUs, 0, 1e4, false},
	}
}

// pipeNames are the pipes a class may occupy.
var pipeNames = []string{"fma", "ic", "tensor", "mem", "tgmem", "l1", "sync"}

// Pipe is what an instruction class occupies on a core: one of each
// partition's pipes or a core-shared port (the core model's resources).
type Pipe uint8

// The pipes, in pipeNames' order.
const (
	PipeFMA    Pipe = iota // fma: integer, float and legacy MMA
	PipeIC                 // ic: conversions
	PipeTensor             // tensor: the 16x16x16 unit
	PipeMem                // mem: device and constant accesses
	PipeTGMem              // tgmem: the threadgroup-memory port
	PipeL1                 // l1: the L1 port
	PipeSync               // sync: barriers
	NumPipes               // number of pipes (not a pipe)
)

// String returns the pipe's name in chip files.
func (p Pipe) String() string {
	if int(p) < len(pipeNames) {
		return pipeNames[p]
	}
	return fmt.Sprintf("Pipe(%d)", uint8(p))
}

// Validate checks every field and resolves the class table.
func (c *Chip) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Name) == "" {
		errs = append(errs, errors.New("name: missing"))
	}
	if c.Family == "" {
		errs = append(errs, errors.New("family: missing"))
	}
	checkParam := func(field string, p *Param, lo, hi float64, integer bool) {
		bad := ""
		if p.Source != "" {
			bad = checkSource(p)
		}
		switch {
		case p.Source == "":
			errs = append(errs, fmt.Errorf("%s: missing (every number needs a value and a source)", field))
		case bad != "":
			errs = append(errs, fmt.Errorf("%s: %s", field, bad))
		case math.IsNaN(p.Value) || p.Value < lo || p.Value > hi:
			errs = append(errs, fmt.Errorf("%s = %g: must be in [%g, %g]", field, p.Value, lo, hi))
		case integer && p.Value != math.Trunc(p.Value):
			errs = append(errs, fmt.Errorf("%s = %g: must be a whole number", field, p.Value))
		}
	}
	for _, r := range c.rules() {
		checkParam(r.field, r.p, r.lo, r.hi, r.integer)
	}
	// limits of a threadgroup cannot exceed those of the core that holds it
	for _, pair := range []struct {
		tg, core       string
		tgVal, coreVal float64
	}{
		{"tg_memory_per_tg_bytes", "tg_memory_per_core_bytes", c.TGMemoryPerTG.Value, c.TGMemoryPerCore.Value},
		{"max_threads_per_tg", "max_threads_per_core", c.MaxThreadsPerTG.Value, c.MaxThreadsPerCore.Value},
	} {
		if pair.tgVal > pair.coreVal {
			errs = append(errs, fmt.Errorf("%s = %g: must be at most %s = %g (a threadgroup lives on one core)", pair.tg, pair.tgVal, pair.core, pair.coreVal))
		}
	}
	for i, b := range c.Bins {
		field := fmt.Sprintf("bins[%d]", i)
		if strings.TrimSpace(b.Name) == "" || b.Name == c.Name {
			errs = append(errs, fmt.Errorf("%s.name = %q: must be a name of its own", field, b.Name))
		}
		checkParam(field+".cores", &b.Cores, 1, 256, true)
		if b.DRAMBandwidthGBs != nil {
			checkParam(field+".dram_bandwidth_gbs", b.DRAMBandwidthGBs, 1, 100000, false)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Classes)) { // errors in one order
		if _, err := isa.ParseClass(name); err != nil {
			errs = append(errs, fmt.Errorf("classes: %w", err))
		}
	}
	for cl := isa.Class(0); cl < isa.NumClasses; cl++ {
		cc, ok := c.Classes[cl.String()]
		field := "classes." + cl.String()
		if !ok {
			errs = append(errs, fmt.Errorf("%s: missing", field))
			continue
		}
		pi := slices.Index(pipeNames, cc.Pipe)
		if pi < 0 {
			errs = append(errs, fmt.Errorf("%s.pipe = %q: must be one of %v", field, cc.Pipe, pipeNames))
		}
		checkParam(field+".issue_clk", &cc.Issue, 0, 4096, false)
		checkParam(field+".latency_clk", &cc.Latency, 0, 1e5, false)
		c.class[cl] = classCost{pipe: Pipe(pi), issue: cc.Issue.Value, latency: cc.Latency.Value}
	}
	return errors.Join(errs...)
}

// Lanes returns the FP32 and FP16 FMA lanes per core: schedulers × SIMD width
// over the fp32 and fp16 classes' issue cycles (the M5 family issues two FP16
// instructions per clock). A class with no issue cost (0, a what-if) has no
// lane limit: +Inf.
func (c *Chip) Lanes() (fp32, fp16 float64) {
	w := c.Schedulers.Value * c.SIMDWidth.Value
	return w / c.class[isa.ClassFP32].issue, w / c.class[isa.ClassFP16].issue
}

// TensorFlopsPerClock returns a core's 16x16x16 MMA flops per cycle when the
// chip has a tensor unit (the mma16 class on the tensor pipe), else 0.
func (c *Chip) TensorFlopsPerClock() float64 {
	cc := c.class[isa.ClassMMA16]
	if cc.pipe != PipeTensor || cc.issue <= 0 {
		return 0
	}
	return c.Schedulers.Value * 2 * 16 * 16 * 16 / cc.issue
}

// Clock returns the core clock in Hz.
func (c *Chip) Clock() float64 { return c.ClockMHz.Value * 1e6 }

// Cycles converts nanoseconds to core cycles.
func (c *Chip) Cycles(ns float64) float64 { return ns * c.ClockMHz.Value / 1000 }

// ParamTable returns every numeric field as (json name, param) in file order,
// for reports and docs.
func (c *Chip) ParamTable() []NamedParam {
	var out []NamedParam
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type != reflect.TypeOf(Param{}) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, NamedParam{name, v.Field(i).Interface().(Param)})
	}
	for cl := isa.Class(0); cl < isa.NumClasses; cl++ {
		cc := c.Classes[cl.String()]
		out = append(out, NamedParam{"classes." + cl.String() + ".issue_clk", cc.Issue},
			NamedParam{"classes." + cl.String() + ".latency_clk", cc.Latency})
	}
	return out
}

// NamedParam is a chip parameter with its file name.
type NamedParam struct {
	Name string
	Param
}

// Clone returns a deep copy (for fitting, which changes parameters).
func (c *Chip) Clone() *Chip {
	d := *c
	d.Aliases = slices.Clone(c.Aliases)
	if c.Calibration != nil {
		r := *c.Calibration
		r.Files, r.Params, r.Residuals = slices.Clone(r.Files), slices.Clone(r.Params), slices.Clone(r.Residuals)
		d.Calibration = &r
	}
	d.Bins = slices.Clone(c.Bins)
	for i := range d.Bins {
		d.Bins[i].Aliases = slices.Clone(d.Bins[i].Aliases)
		if p := d.Bins[i].DRAMBandwidthGBs; p != nil {
			q := *p
			d.Bins[i].DRAMBandwidthGBs = &q
		}
	}
	d.Classes = make(map[string]ClassCost, len(c.Classes))
	for k, v := range c.Classes {
		d.Classes[k] = v
	}
	return &d
}

// Param returns the named numeric field ("sg_launch_clk",
// "classes.mma8.issue_clk", ...).
func (c *Chip) Param(name string) (Param, error) {
	for _, np := range c.ParamTable() {
		if np.Name == name {
			return np.Param, nil
		}
	}
	return Param{}, fmt.Errorf("chip %s: no parameter %q", c.Name, name)
}

// ParamRange returns the values a top-level parameter may take (ok is false
// for names without a fixed range, such as class costs).
func (c *Chip) ParamRange(name string) (lo, hi float64, ok bool) {
	for _, r := range c.rules() {
		if r.field == name {
			return r.lo, r.hi, true
		}
	}
	return 0, 0, false
}

// SetParam changes one parameter (and re-resolves the class table).
func (c *Chip) SetParam(name string, p Param) error {
	if rest, ok := strings.CutPrefix(name, "classes."); ok {
		cls, field, _ := strings.Cut(rest, ".")
		cc, ok := c.Classes[cls]
		if !ok {
			return fmt.Errorf("chip %s: no class %q", c.Name, cls)
		}
		switch field {
		case "issue_clk":
			cc.Issue = p
		case "latency_clk":
			cc.Latency = p
		default:
			return fmt.Errorf("chip %s: no parameter %q", c.Name, name)
		}
		c.Classes[cls] = cc
		return c.Validate()
	}
	for _, r := range c.rules() {
		if r.field == name {
			*r.p = p
			return c.Validate()
		}
	}
	return fmt.Errorf("chip %s: no parameter %q", c.Name, name)
}

// MarshalIndent renders the chip as a chip file.
func (c *Chip) MarshalIndent() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }
