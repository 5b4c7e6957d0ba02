package chips_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestOccupancyMesaTable: the register rule reproduces Mesa's G13 table
// (apple-gpu.md 2.2) with the M1 Pro's 208 KiB and 64-thread granule.
func TestOccupancyMesaTable(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	for _, tc := range []struct{ regs, threads int }{
		{52, 1024}, {56, 896}, {64, 832}, {68, 768}, {72, 704}, {80, 640}, {92, 576}, {104, 512}, {116, 448}, {128, 384},
	} {
		o, err := chips.OccupancyFor(chip, 32, tc.regs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if o.MaxThreadsByTG != tc.threads {
			t.Errorf("%d registers: %d threads, Mesa's table says %d", tc.regs, o.MaxThreadsByTG, tc.threads)
		}
	}
	o, err := chips.OccupancyFor(chip, 128, 40, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if o.TGsPerCore != 7 || o.Limiter != "threadgroup memory" {
		t.Errorf("128 threads, 40 registers, 8 KiB: %d per core limited by %s, want 7 by threadgroup memory", o.TGsPerCore, o.Limiter)
	}
	if _, err := chips.OccupancyFor(chip, 1024, 128, 0); err == nil || !strings.Contains(err.Error(), "cannot launch") {
		t.Errorf("1024 threads at 128 registers: %v, want a launch error", err)
	}
	// the message shows the rule and the fields behind the limit
	g := chip.Clone()
	g.ThreadGranule.Value = 1024
	_, err = chips.OccupancyFor(g, 128, 128, 0)
	if err == nil || !strings.Contains(err.Error(), "register_file_bytes 212992 / (4 bytes x 128 registers), rounded down to a multiple of occupancy_thread_granule 1024, is 0") {
		t.Errorf("granule 1024: %v", err)
	}
}

func TestChipsLoadAndResolve(t *testing.T) {
	chipList, err := chips.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(chipList) < 2 {
		t.Fatalf("%d chips", len(chipList))
	}
	names := map[string]bool{}
	for _, c := range chipList {
		if names[c.Name] {
			t.Errorf("duplicate chip name %q", c.Name)
		}
		names[c.Name] = true
		for _, a := range append([]string{c.Name}, c.Aliases...) {
			got, err := chips.Lookup(a)
			if err != nil || got.Name != c.Name {
				t.Errorf("LookupChip(%q) = %v, %v; want %s", a, got, err, c.Name)
			}
		}
		if c.CalibrationFrom != "" {
			from := chips.MustLookup(c.CalibrationFrom)
			for _, name := range []string{"barrier_clk", "sg_launch_clk"} {
				a, errA := c.Param(name)
				b, errB := from.Param(name)
				if errA != nil || errB != nil || a.Value != b.Value || a.Source != "calibrated:"+from.Name {
					t.Errorf("%s %s = %v (%s, %v), want %v from %s (%v)", c.Name, name, a.Value, a.Source, errA, b.Value, from.Name, errB)
				}
			}
			// the tiled-read efficiency is copied when the source fitted it
			if fe, _ := from.Param("tiled_dram_efficiency"); fe.Source == "calibrated" {
				if ce, _ := c.Param("tiled_dram_efficiency"); ce.Value != fe.Value {
					t.Errorf("%s tiled_dram_efficiency = %v, want %v from %s", c.Name, ce.Value, fe.Value, from.Name)
				}
			}
			// DRAM bandwidth is the chip's memory system: never copied.
			if a, _ := c.Param("dram_bandwidth_gbs"); strings.HasPrefix(a.Source, "calibrated") {
				t.Errorf("%s dram_bandwidth_gbs taken from %s (source %s); it must stay the chip's own", c.Name, from.Name, a.Source)
			}
		}
	}
	if c := chips.MustLookup("Apple M1 Pro"); c.Name != "M1 Pro 16-core GPU" {
		t.Errorf("Apple M1 Pro -> %s", c.Name)
	}
	if _, err := chips.Lookup("Apple M9"); err == nil || !strings.Contains(err.Error(), "unknown chip") {
		t.Errorf("unknown chip: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "unknown chip") {
			t.Errorf("MustLookup of an unknown chip: recovered %v, want its Lookup error", r)
		}
	}()
	chips.MustLookup("Apple M9")
}

// TestChipsAreCopies checks that the embedded chips, parsed once, reach
// callers as copies: a caller that changes one (fit, a what-if sweep) changes
// nothing another lookup sees.
func TestChipsAreCopies(t *testing.T) {
	a := chips.MustLookup("M1 Pro 16-core GPU")
	want := a.BarrierClk.Value
	a.BarrierClk.Value++
	a.Aliases[0] = "changed"
	a.Classes["mma8"] = chips.ClassCost{}
	if a.Calibration != nil && len(a.Calibration.Params) > 0 {
		a.Calibration.Params[0].Value++
	}
	for _, get := range []func() *chips.Chip{
		func() *chips.Chip { return chips.MustLookup("M1 Pro 16-core GPU") },
		func() *chips.Chip {
			chipList, err := chips.All()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chipList {
				if c.Name == a.Name {
					return c
				}
			}
			t.Fatalf("Chips() lacks %s", a.Name)
			return nil
		},
	} {
		b := get()
		if b == a || b.BarrierClk.Value != want || b.Aliases[0] == "changed" || b.Classes["mma8"].Pipe == "" {
			t.Errorf("a changed copy of %s shows through a later lookup: barrier %v (want %v), aliases %v, mma8 %+v",
				a.Name, b.BarrierClk.Value, want, b.Aliases, b.Classes["mma8"])
		}
		if b.Calibration != nil && a.Calibration != nil && len(b.Calibration.Params) > 0 &&
			b.Calibration.Params[0].Value == a.Calibration.Params[0].Value {
			t.Errorf("the calibration record of %s is shared between copies", a.Name)
		}
	}
}

// TestChipFileErrorsInOneOrder: several unknown classes are reported in
// name order, the same text every time (not a map's order).
func TestChipFileErrorsInOneOrder(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("data", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `"classes": {`, `"classes": {"zz": {}, "aa": {}, "mm": {},`, 1)
	var first string
	for i := range 30 {
		_, err := chips.Parse([]byte(bad), "bad.json")
		if err == nil {
			t.Fatal("three unknown classes accepted")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("the error changed between parses:\n%s\n%s", first, err)
		}
	}
	if a, m, z := strings.Index(first, `"aa"`), strings.Index(first, `"mm"`), strings.Index(first, `"zz"`); a < 0 || !(a < m && m < z) {
		t.Errorf("unknown classes not in name order: %s", first)
	}
}

func TestChipFileErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("data", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(string) string
		want string
	}{
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"},`, "", 1)
		}, "cores: missing"},
		// a source is a key of apple-gpu.md (or one of the forms SourceKeys names)
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1"`, `"cores": {"value": 16, "source": "NOSUCH"`, 1)
		}, `cores: source "NOSUCH": must be a source key of docs/sources.md`},
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"`, `"cores": {"value": 16, "source": "PT-MB", "evidence": "X"`, 1)
		}, `cores: evidence "X": must be one of D, M, C, E, F`},
		{func(s string) string {
			return strings.Replace(s, `"cores": {"value": 16, "source": "apple-gpu.md §1", "evidence": "D"`, `"cores": {"value": 16, "source": "calibrated", "evidence": "F"`, 1)
		}, `cores: source "calibrated" needs a note`},
		{func(s string) string { return strings.Replace(s, `"cores": {"value": 16,`, `"cores": {"value": 0,`, 1) }, "cores = 0: must be in [1, 256]"},
		{func(s string) string {
			return strings.Replace(s, `"family": "apple7",`, `"family": "apple7", "warp": 3,`, 1)
		}, `unknown field "warp"`},
		{func(s string) string {
			return strings.Replace(s, `"mma8":       {"pipe": "fma"`, `"mma8":       {"pipe": "matrix"`, 1)
		}, "classes.mma8.pipe"},
		{func(s string) string {
			return strings.Replace(s, `"source": "CNC", "evidence": "M", "note": "M1"}`, `"source": ""}`, 1)
		}, "missing (every number needs a value and a source)"},
		// a field decoding cannot tell from its zero value must be present
		{func(s string) string { return strings.Replace(s, `"tensor_path": false,`, "", 1) }, "tensor_path: missing"},
		{func(s string) string {
			return strings.Replace(s, `"barrier_clk": {"value": 108, `, `"barrier_clk": {`, 1)
		}, "barrier_clk.value: missing"},
		// keys match fields whatever their case, as encoding/json decodes them
		{func(s string) string {
			return strings.Replace(s, `"barrier_clk": {"value": 108, `, `"Barrier_Clk": {`, 1)
		}, "barrier_clk.value: missing"},
		{func(s string) string {
			return strings.Replace(s, `"mma8":       {"pipe": "fma",    "issue_clk": {"value": 17, `, `"mma8":       {"pipe": "fma",    "issue_clk": {`, 1)
		}, "classes.mma8.issue_clk.value: missing"},
		// one object per file: what follows it is an error, not ignored
		{func(s string) string { return s + `{"garbage": true}` }, "content after the chip object"},
		{func(s string) string { return s + " xyz" }, "content after the chip object"},
		// an empty or cut file says so (not the decoder's bare EOF)
		{func(string) string { return "" }, "edited.json: empty: a chip file holds one JSON object"},
		{func(string) string { return " \n\t\n" }, "edited.json: empty: a chip file holds one JSON object"},
		{func(s string) string { return s[:len(s)/2] }, "edited.json: the file ends inside the chip object (a truncated file?)"},
		// a threadgroup's limits cannot exceed its core's
		{func(s string) string {
			return strings.Replace(s, `"tg_memory_per_tg_bytes": {"value": 32768,`, `"tg_memory_per_tg_bytes": {"value": 4194304,`, 1)
		}, "tg_memory_per_tg_bytes = 4.194304e+06: must be at most tg_memory_per_core_bytes = 57344"},
		{func(s string) string {
			return strings.Replace(s, `"max_threads_per_tg": {"value": 1024,`, `"max_threads_per_tg": {"value": 4096,`, 1)
		}, "max_threads_per_tg = 4096: must be at most max_threads_per_core = 3072"},
	} {
		_, err := chips.Parse([]byte(tc.edit(string(good))), "edited.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "edited.json") {
			t.Errorf("chips.Parse: %v, want an error with %q naming the file", err, tc.want)
		}
	}
}

// fuzzProblem is a shape small enough to time once per fuzz input (8 k-steps,
// a few dozen threadgroups) that still has full tiles, edge tiles and an
// empty half-tile.
var fuzzProblem = tile.Problem{Experts: 4, Used: 2, M: 96, K: 256, Tokens: 40, TypeA: dequant.Q4_0}

// FuzzParseChip: a chip file (--chip-file, read by LoadFile, which may take
// calibrated values from an embedded chip) is either rejected with an error
// that names the file, or accepted, and then the timing model runs on it: a
// small problem on both paths and both engines gives finite, positive times
// or a clear error (a kernel that does not fit the chip), never a panic, a
// NaN or an endless loop. The seeds are every embedded chip (chips/data) and
// the broken files of testdata/fuzz/FuzzParseChip.
func FuzzParseChip(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("data", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("embedded chips: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "fuzz.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := chips.LoadFile(file)
		if err != nil {
			if c != nil {
				t.Fatalf("LoadFile returned a chip with the error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "chip file "+file+": ") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		s := sim.NewSimulator()
		for _, path := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			for _, engine := range []sim.Engine{sim.Fast, sim.Detailed} {
				k := tile.Kernel{Variant: tile.HalfTile(), Path: path}
				r, err := s.Run(fuzzProblem, k, c, sim.Options{Engine: engine, Draws: 1})
				if err != nil {
					if strings.TrimSpace(err.Error()) == "" {
						t.Fatalf("%v/%v: empty error", path, engine)
					}
					continue
				}
				for name, v := range map[string]float64{"KernelUs": r.KernelUs, "TotalUs": r.TotalUs, "KernelCycles": r.KernelCycles} {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Fatalf("%v/%v: %s = %g, want finite and positive", path, engine, name, v)
					}
				}
			}
		}
	})
}

// TestDocChipFilesLoad: the what-if chip files the docs run (docs/chips) load
// and validate, as a user's --chip FILE.json would.
func TestDocChipFilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "chips", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/chips: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		if _, err := chips.LoadFile(f); err != nil {
			t.Error(err)
		}
	}
}

// TestChipBins: a chip file's bins are chips of their own, differing only in
// what the bin gives (cores, DRAM bandwidth where it differs), with the
// calibration the file's chip takes; a bad bin is an error naming it.
func TestChipBins(t *testing.T) {
	for _, tc := range []struct {
		bin, of    string
		cores      float64
		ownDRAMGBs float64 // 0: the file's chip's
	}{
		{"M3 Max 30-core GPU", "M3 Max 40-core GPU", 30, 279.9},
		{"M2 Pro 16-core GPU", "M2 Pro 19-core GPU", 16, 0},
		{"M1 7-core GPU", "M1 8-core GPU", 7, 0},
	} {
		b, of := chips.MustLookup(tc.bin), chips.MustLookup(tc.of)
		if b.Cores.Value != tc.cores || len(b.Bins) != 0 {
			t.Errorf("%s: %g cores, %d bins", tc.bin, b.Cores.Value, len(b.Bins))
		}
		want := of.DRAMBandwidthGBs.Value
		if tc.ownDRAMGBs > 0 {
			want = tc.ownDRAMGBs
		}
		if b.DRAMBandwidthGBs.Value != want || b.ClockMHz != of.ClockMHz || b.BarrierClk != of.BarrierClk || b.SGLaunchClk != of.SGLaunchClk {
			t.Errorf("%s: DRAM %g GB/s (want %g), clock %v, barrier %v, launch %v; the file's chip: clock %v, barrier %v, launch %v",
				tc.bin, b.DRAMBandwidthGBs.Value, want, b.ClockMHz, b.BarrierClk, b.SGLaunchClk, of.ClockMHz, of.BarrierClk, of.SGLaunchClk)
		}
	}
	good, err := os.ReadFile(filepath.Join("data", "m3-max-40c.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"cores": {"value": 30, "source": "apple-gpu.md §1", "evidence": "D"}`, `"cores": {"value": 0, "source": "apple-gpu.md §1", "evidence": "D"}`, "bins[0].cores = 0: must be in [1, 256]"},
		{`"name": "M3 Max 30-core GPU", `, ``, "bins[0].name: missing"},
		{`"name": "M3 Max 30-core GPU", `, `"name": "M3 Max 40-core GPU", `, `bins[0].name = "M3 Max 40-core GPU": must be a name of its own`},
	} {
		edited := strings.Replace(string(good), tc.old, tc.new, 1)
		if edited == string(good) {
			t.Fatalf("m3-max-40c.json changed: no %q", tc.old)
		}
		if _, err := chips.Parse([]byte(edited), "bins.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("chips.Parse: %v, want %q", err, tc.want)
		}
	}
}

// TestChipRates: lanes and the tensor unit's rate come from the chip's data
// (apple-gpu.md §1, §6.1: 128 FP32 lanes per core everywhere, two FP16 issues
// per clock and 1024 tensor flops per clock per core on the M5 family).
func TestChipRates(t *testing.T) {
	for _, tc := range []struct {
		chip             string
		fp32, fp16, tens float64
	}{{"M1 Pro 16-core GPU", 128, 128, 0}, {"M5 10-core GPU", 128, 256, 1024}, {"M4 Max 40-core GPU", 128, 128, 0}} {
		c := chips.MustLookup(tc.chip)
		l32, l16 := c.Lanes()
		if l32 != tc.fp32 || l16 != tc.fp16 || c.TensorFlopsPerClock() != tc.tens {
			t.Errorf("%s: lanes %g/%g, tensor %g flop/clk; want %g/%g, %g", tc.chip, l32, l16, c.TensorFlopsPerClock(), tc.fp32, tc.fp16, tc.tens)
		}
	}
}

// TestOccupancyWholeSimdgroups: a threadgroup takes registers and thread
// slots in whole simdgroups, so one of 33 threads takes 64 and residency
// never passes the core's simdgroups.
func TestOccupancyWholeSimdgroups(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	o, err := chips.OccupancyFor(chip, 33, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if max := int(chip.MaxThreadsPerCore.Value) / 32; o.SGsPerCore > max || o.TGsPerCore != 48 {
		t.Errorf("33 threads at 8 registers: %d threadgroups, %d simdgroups; want 48 and at most %d", o.TGsPerCore, o.SGsPerCore, max)
	}
}

// TestStreamingRuleT: every M1-M4 Pro, Max and Ultra chip without a
// calibration of its own streams at 0.933 of its spec sheet's bandwidth, and
// an Ultra is two such dies with die_link_efficiency 0.873 (docs/model.md
// §4.1, rule T, fitted on the training rows' generation tests), to the 0.1
// GB/s the files round to; none above its spec.
func TestStreamingRuleT(t *testing.T) {
	const fraction, ultraLink = 0.933, 0.873
	for _, tc := range []struct {
		chip    string
		specGBs float64 // apple-gpu.md §1, ARS-M4 (M3 Pro), ARS-M3U (M3 Ultra)
	}{
		{"M1 Pro 14-core GPU", 204.8}, {"M1 Max 32-core GPU", 409.6}, {"M1 Max 24-core GPU", 409.6},
		{"M1 Ultra 64-core GPU", 819.2}, {"M1 Ultra 48-core GPU", 819.2},
		{"M2 Pro 19-core GPU", 200}, {"M2 Pro 16-core GPU", 200}, {"M2 Max 38-core GPU", 409.6},
		{"M2 Max 30-core GPU", 409.6}, {"M2 Ultra 76-core GPU", 819.2}, {"M2 Ultra 60-core GPU", 819.2},
		{"M3 Pro 18-core GPU", 153.6}, {"M3 Pro 14-core GPU", 153.6}, {"M3 Max 40-core GPU", 409.6},
		{"M3 Max 30-core GPU", 300}, {"M3 Ultra 80-core GPU", 819.2}, {"M3 Ultra 60-core GPU", 819.2},
		{"M4 Pro 20-core GPU", 273}, {"M4 Pro 16-core GPU", 273}, {"M4 Max 40-core GPU", 546},
		{"M4 Max 32-core GPU", 410},
	} {
		c := chips.MustLookup(tc.chip)
		link := 1.0
		if strings.Contains(tc.chip, "Ultra") {
			link = ultraLink
		}
		bw := c.DRAMBandwidthGBs.Value
		if math.Abs(bw-tc.specGBs*fraction) > 0.05 || c.DieLinkEfficiency.Value != link {
			t.Errorf("%s: %g GB/s, die link %g; rule T gives %.1f (%g x %g), die link %g", tc.chip, bw, c.DieLinkEfficiency.Value, tc.specGBs*fraction, tc.specGBs, fraction, link)
		}
		if bw*c.DieLinkEfficiency.Value > tc.specGBs {
			t.Errorf("%s: streams %g GB/s, above its %g GB/s spec", tc.chip, bw*c.DieLinkEfficiency.Value, tc.specGBs)
		}
	}
}
