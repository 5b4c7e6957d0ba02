package sim

import (
	"reflect"
	"testing"

	"github.com/metalsim/metalsim/tile"
)

// TestFineGoesOnFromCoarse checks that a fine measurement that goes on from
// a coarse measurement's core model gives what a fresh one gives, for a mix
// of two classes on each path, and that it simulates fewer instructions.
func TestFineGoesOnFromCoarse(t *testing.T) {
	for _, tc := range []struct {
		chip string
		path tile.Path
	}{
		{"M1 Pro 16-core GPU", tile.Simdgroup},
		{"M5 10-core GPU", tile.Tensor},
	} {
		chip, b, steps := headlineBuilder(t, tc.chip, tile.HalfTile(), tc.path)
		k := b.Kernel
		full := b.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1, Steps: steps})
		half := b.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1H, Steps: steps})
		m := newModel(chip, true)
		measured := func(continued bool) (*mixResult, *mixResult) {
			cc := newCoreCache(m, 6)
			a, _ := cc.class(full, false, newProgMem(full, 4), full, newProgMem(full, 4))
			h, _ := cc.class(half, true, newProgMem(half, 4), half, newProgMem(half, 4))
			ids := []int{a, a, a, h, h}
			key := appendMixKey(nil, ids)
			var c *mixResult
			if continued {
				c, _ = cc.mix(key, ids, coarse)
			}
			f, _ := cc.mix(key, ids, fine)
			return c, f
		}
		_, fresh := measured(false)
		coarseRes, cont := measured(true)
		if cont.instr >= fresh.instr {
			t.Errorf("%s: the fine measurement after the coarse one simulated %d instructions, a fresh one %d: it did not go on", tc.chip, cont.instr, fresh.instr)
		}
		if cont.instr+coarseRes.instr != fresh.instr {
			t.Errorf("%s: coarse %d + continued fine %d instructions, want the fresh fine's %d", tc.chip, coarseRes.instr, cont.instr, fresh.instr)
		}
		fresh.instr, cont.instr = 0, 0
		if !reflect.DeepEqual(fresh, cont) {
			t.Errorf("%s: continued fine measurement differs from a fresh one:\nfresh     %+v\ncontinued %+v", tc.chip, *fresh, *cont)
		}
	}
}
