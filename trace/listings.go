package trace

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// WriteChips lists chips: family, cores, clock, lanes and peak rates, DRAM
// bandwidth, the default kernel path and where the calibration comes from.
func WriteChips(w io.Writer, chipList []*chips.Chip) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "chip\tfamily\tcores\tclock MHz\tFP32 / FP16 lanes\tFP32 / FP16 TFLOPS\ttensor TFLOPS\tDRAM GB/s\tdefault path\tcalibration")
	for _, c := range chipList {
		cal := "own measurements"
		if c.CalibrationFrom != "" {
			cal = "from " + c.CalibrationFrom
		} else if p, _ := c.Param("sg_launch_clk"); p.Source != "calibrated" {
			cal = "none"
		}
		l32, l16 := c.Lanes()
		tflops := func(flopsPerClock float64) float64 { return c.Cores.Value * flopsPerClock * c.ClockMHz.Value / 1e6 }
		tensor := "–"
		if f := c.TensorFlopsPerClock(); f > 0 {
			tensor = fmt.Sprintf("%.1f", tflops(f))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.0f / %.0f\t%.2f / %.2f\t%s\t%.0f\t%s\t%s\n", c.Name, c.Family, c.Cores.Value, c.ClockMHz.Value,
			l32, l16, tflops(2*l32), tflops(2*l16), tensor, c.DRAMBandwidthGBs.Value, sim.DefaultPath(c), cal)
	}
	return tw.Flush()
}

// VariantListing is one variant of a listing: where it came from (built-in,
// or a spec file, which may fix the path).
type VariantListing struct {
	Variant tile.Variant
	Path    *tile.Path
	From    string
}

// WriteVariants lists variants with every knob (the knob table's columns),
// their threads and threadgroup memory, and the paths each is valid on.
func WriteVariants(w io.Writer, rows []VariantListing) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := append(append(append([]string{"variant"}, tile.KnobColumns(true)...), "threads", "TG mem B"), tile.KnobColumns(false)...)
	fmt.Fprintln(tw, strings.Join(append(header, "paths", "from"), "\t"))
	for _, r := range rows {
		v := r.Variant
		var paths []string
		for _, p := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			if (r.Path == nil || *r.Path == p) && v.Validate(p) == nil {
				paths = append(paths, p.String())
			}
		}
		cells := append(append([]string{v.Name}, tile.KnobCells(v, true)...), strconv.Itoa(32*v.NSG), strconv.Itoa(v.TGMemoryBytes()))
		cells = append(append(cells, tile.KnobCells(v, false)...), strings.Join(paths, ","), r.From)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nSG grid: sg_rows x sg_cols on the simdgroup path. B extents and dual desc apply to the tensor path.")
	_, err := fmt.Fprintln(w, "simrun variants --show NAME prints a variant as a TOML spec to start a what-if file from.")
	return err
}

// WriteKnobs lists the knob table: each knob's spec key, its section, the
// kernels and paths it applies to (tile.Knob.AppliesText) and its doc. The
// mat-vec kernels (mul_mv, mul_mv_ext, mul_mv_id) take none.
func WriteKnobs(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "knob\tsection\tapplies to\twhat it does")
	for _, k := range tile.Knobs() {
		section := "knobs"
		if k.Geometry {
			section = "tile geometry"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Key, section, k.AppliesText(), k.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nThe mat-vec kernels (mul_mv, mul_mv_ext, mul_mv_id) take no knob: a run of one names the variant's knobs it leaves out in a note.")
	return err
}

// VariantListings returns the built-in variants and the spec files given
// (each must end in .toml), as simrun variants lists them.
func VariantListings(files []string) ([]VariantListing, error) {
	var rows []VariantListing
	for _, v := range tile.Builtin() {
		rows = append(rows, VariantListing{Variant: v, From: "built-in"})
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".toml") {
			return nil, fmt.Errorf("argument %q: want a .toml spec file", f)
		}
		v, path, err := tile.LoadVariant(f)
		if err != nil {
			return nil, err
		}
		rows = append(rows, VariantListing{Variant: v, Path: path, From: f})
	}
	return rows, nil
}
