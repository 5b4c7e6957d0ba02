package chips

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinOfCalibratedChip: a bin of a chip fitted on its own measurements takes
// that fit through calibration_from (its sources name the chip) and keeps no
// calibration record, so it does not claim measurements of its own; without a
// DRAM bandwidth of its own it takes the chip's fitted one, sourced to it.
func TestBinOfCalibratedChip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("data", "m1-pro-16c.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := `"bins": [{"name": "M1 Pro 12-core GPU", "aliases": [], "cores": {"value": 12, "source": "what-if", "evidence": "E", "note": "a test bin"}}],
  "family":`
	edited := strings.Replace(string(data), `"family":`, bin, 1)
	c, err := Parse([]byte(edited), "bins.json")
	if err != nil {
		t.Fatal(err)
	}
	bins, err := c.binChips()
	if err != nil || len(bins) != 1 {
		t.Fatalf("binChips: %d bins, %v", len(bins), err)
	}
	b := bins[0]
	if err := b.inherit([]*Chip{c, b}); err != nil {
		t.Fatal(err)
	}
	if b.Calibration != nil || b.CalibrationFrom != c.Name || b.Cores.Value != 12 {
		t.Errorf("bin: calibration %v, calibration_from %q, cores %g", b.Calibration != nil, b.CalibrationFrom, b.Cores.Value)
	}
	for _, name := range []string{"barrier_clk", "sg_launch_clk", "dram_bandwidth_gbs"} {
		p, _ := b.Param(name)
		q, _ := c.Param(name)
		if p.Value != q.Value || p.Source != "calibrated:"+c.Name {
			t.Errorf("bin %s = %g from %q; want the chip's %g, sourced calibrated:%s", name, p.Value, p.Source, q.Value, c.Name)
		}
	}
}
