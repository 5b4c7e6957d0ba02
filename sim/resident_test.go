package sim_test

import (
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestSLCResidentWeights: a MUL_MAT_ID whose whole weight tensor is within
// the chip's slc_resident_bytes reads no weight bytes from DRAM (they stay in
// the SLC between runs), and the same dispatch on a chip without residency
// reads them all: at least the tensor once.
func TestSLCResidentWeights(t *testing.T) {
	p := tile.Problem{Experts: 8, Used: 2, M: 128, K: 256, Tokens: 64, TypeA: dequant.Q4_0}
	weights := float64(p.Experts*p.M) * 144 // q4_0: 18 bytes per 32 weights, 8 blocks per row
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	if chip.SLCResidentBytes.Value < weights {
		t.Fatalf("the test needs %v bytes of residency, the chip has %v", weights, chip.SLCResidentBytes.Value)
	}
	none := chip.Clone()
	none.SLCResidentBytes.Value = 0
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	run := func(c *chips.Chip) float64 {
		r, err := sim.Simulate(p, k, c, sim.Options{Draws: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.DRAMBytes
	}
	resident, streamed := run(chip), run(none)
	// resident: only activations, routing and stores reach DRAM; the
	// activations are 64 tokens x 256 floats at most, the stores 64 x 2 x 128
	// floats, far below the weights
	if streamed < weights || resident > streamed-0.9*weights {
		t.Errorf("DRAM bytes: %v with the weights resident, %v without (weights %v)", resident, streamed, weights)
	}
}
