package accuracy

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
)

// FuzzParseFitParam: any --param value either fails, naming the flag and the
// value, or gives a parameter of a listed chip whose bounds hold its current
// value and are values the chip file allows.
func FuzzParseFitParam(f *testing.F) {
	for _, s := range []string{
		"sg_launch_clk@M1 Pro 16-core GPU", "sg_launch_clk@M1 Pro 16-core GPU=0:2000", "barrier_clk@M1 Pro=1:1e9",
		"classes.mma8.issue_clk@M5 10-core GPU=4:64", "dram_bandwidth_gbs@M5=1:nan", "cores@M5", "x@y", "@", "=1:2", "sg_launch_clk@M5=2:1",
	} {
		f.Add(s)
	}
	m1, err := chips.Lookup("M1 Pro 16-core GPU")
	if err != nil {
		f.Fatal(err)
	}
	m5, err := chips.Lookup("M5 10-core GPU")
	if err != nil {
		f.Fatal(err)
	}
	list := []*chips.Chip{m1, m5}
	f.Fuzz(func(t *testing.T, s string) {
		fp, err := ParseFitParam(s, list)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--param ") {
				t.Fatalf("%q: error %q does not name the flag", s, err)
			}
			return
		}
		var chip *chips.Chip
		for _, c := range list {
			if c.Name == fp.Chip {
				chip = c
			}
		}
		if chip == nil {
			t.Fatalf("%q: chip %q is not listed", s, fp.Chip)
		}
		cur, err := chip.Param(fp.Name)
		if err != nil || !(fp.Lo < fp.Hi) || cur.Value < fp.Lo || cur.Value > fp.Hi {
			t.Fatalf("%q: %+v around %v (%v)", s, fp, cur.Value, err)
		}
		for _, b := range []float64{fp.Lo, fp.Hi} {
			probe, p := chip.Clone(), cur
			p.Value = b
			if err := probe.SetParam(fp.Name, p); err != nil {
				t.Fatalf("%q: bound %g is not allowed: %v", s, b, err)
			}
		}
	})
}
