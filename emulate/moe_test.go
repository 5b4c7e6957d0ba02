package emulate_test

import (
	"math"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/golden"
	"github.com/metalsim/metalsim/tile"
)

func randomTensors(p tile.Problem, seed uint64) *emulate.Tensors {
	return emulate.RandomTensors(p, seed)
}

// maxRatio returns the largest |dst - ref_f16in| / tolerance.
func maxRatio(p tile.Problem, dst []float32, ref golden.References) float64 {
	worst := 0.0
	for i, v := range dst {
		tol := halfTol(p.K, ref.SumAbs[i]) // the staged kernels' float32 accumulation bound (emulate_dense_test.go)
		worst = math.Max(worst, math.Abs(float64(v)-float64(ref.Staged[i]))/tol)
	}
	return worst
}

// TestBExtentsBug reproduces the tensor path's B view bug: with a half-tile
// (16 tokens) view declared dextents(tokens, NK) as upstream ggml does, the
// values are wrong; declared dextents(NK, tokens) they are right.
func TestBExtentsBug(t *testing.T) {
	p := tile.Problem{Experts: 4, Used: 2, M: 64, K: 256, Tokens: 40, TypeA: dequant.Q8_0}
	ts := randomTensors(p, 3)
	ref := golden.Reference(p, ts)
	fixed := tile.HalfTile()
	buggy := tile.HalfTile()
	buggy.BExtents = tile.ExtentsUpstream
	good, err := emulate.MulMatID(p, tile.Kernel{Variant: fixed, Path: tile.Tensor}, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := emulate.MulMatID(p, tile.Kernel{Variant: buggy, Path: tile.Tensor}, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := maxRatio(p, good.Dst, ref); r > 1 {
		t.Errorf("fixed extents: error %.3g x tolerance, want <= 1", r)
	}
	if r := maxRatio(p, bad.Dst, ref); r < 1e3 {
		t.Errorf("upstream extents on a 16-token view: error only %.3g x tolerance, want the bug to show", r)
	}
	// with NR1 == NK (the upstream full tile) both declarations are right
	up := tile.Upstream()
	up.BExtents = tile.ExtentsFixed
	for _, v := range []tile.Variant{tile.Upstream(), up} {
		res, err := emulate.MulMatID(p, tile.Kernel{Variant: v, Path: tile.Tensor}, ts, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r := maxRatio(p, res.Dst, ref); r > 1 {
			t.Errorf("%s extents %d on the full tile: error %.3g x tolerance", v.Name, v.BExtents, r)
		}
	}
}

// TestEmulateAgainstReference covers every weight type on both paths and the
// built-in mm_id variants, with partial row tiles and tiles crossing 32 tokens.
func TestEmulateAgainstReference(t *testing.T) {
	for _, typ := range dequant.Types() {
		k := 256
		p := tile.Problem{Experts: 4, Used: 2, M: 96, K: k, Tokens: 37, TypeA: typ}
		ts := randomTensors(p, uint64(typ)+11)
		ref := golden.Reference(p, ts)
		var first []float32
		for _, path := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			for _, v := range []tile.Variant{tile.Upstream(), tile.HalfTile(), tile.HalfTileDual()} {
				if v.DualDescriptor && path == tile.Simdgroup {
					continue
				}
				res, err := emulate.MulMatID(p, tile.Kernel{Variant: v, Path: path}, ts, 0)
				if err != nil {
					t.Fatalf("%s %s/%s: %v", typ, v.Name, path, err)
				}
				if r := maxRatio(p, res.Dst, ref); r > 1 {
					t.Errorf("%s %s/%s: error %.3g x tolerance", typ, v.Name, path, r)
				}
				if path == tile.Simdgroup {
					if first == nil {
						first = res.Dst
					} else if !sameBits(first, res.Dst) {
						t.Errorf("%s %s/simdgroup: bits differ from upstream", typ, v.Name)
					}
				}
			}
		}
	}
}

func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestEmulateDeterministicAcrossWorkers: the same bits with 1 and 3 workers.
func TestEmulateDeterministicAcrossWorkers(t *testing.T) {
	p := tile.Problem{Experts: 8, Used: 2, M: 128, K: 256, Tokens: 64, TypeA: dequant.IQ3_XXS}
	ts := randomTensors(p, 5)
	k := tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}
	a, err := emulate.MulMatID(p, k, ts, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := emulate.MulMatID(p, k, ts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(a.Dst, b.Dst) {
		t.Fatal("emulation differs between 1 and 3 workers")
	}
}

// TestEmulateCounters checks the counters on a routing whose tiles are known.
func TestEmulateCounters(t *testing.T) {
	// 2 experts, 1 per token, 40 tokens: expert 0 gets tokens 0..9 (10), expert 1
	// the other 30. Tiles: e0 [10], e1 [30]; m = 128 gives 2 row tiles.
	p := tile.Problem{Experts: 2, Used: 1, M: 128, K: 256, Tokens: 40, TypeA: dequant.IQ2_XS}
	ts := randomTensors(p, 1)
	for i := range ts.IDs {
		ts.IDs[i] = 1
		if i < 10 {
			ts.IDs[i] = 0
		}
	}
	res, err := emulate.MulMatID(p, tile.Kernel{Variant: tile.HalfTile(), Path: tile.Simdgroup}, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counters
	// grid: x = ceil(40/32) = 2, y = 2, z = 2
	if c.Launched != 8 || c.Active != 4 || c.Exited != 4 {
		t.Errorf("launched/active/exited = %d/%d/%d, want 8/4/4", c.Launched, c.Active, c.Exited)
	}
	steps := int64(p.K / 32)
	// expert 0's two tiles (10 tokens) skip their upper half: simdgroups 2 and 3
	if c.Skipped.HalfTiles != 2 {
		t.Errorf("half-tiles skipped = %d, want 2", c.Skipped.HalfTiles)
	}
	// each active simdgroup: 32 MMAs per k-step
	if want := steps * 32 * (4*4 - 2*2); c.Work.MMA8 != want {
		t.Errorf("MMAs executed = %d, want %d", c.Work.MMA8, want)
	}
	if want := steps * 32 * 2 * 2; c.Skipped.MMA8 != want {
		t.Errorf("MMAs skipped = %d, want %d", c.Skipped.MMA8, want)
	}
	// word codebook reads: 4 uint32 per lane per chunk, 128 lanes x 1 chunk per k-step
	if got, want := c.Work.CodebookLoads[4], 4*steps*128*4; got != want {
		t.Errorf("4-byte codebook loads = %d, want %d", got, want)
	}
	if c.Work.CodebookLoads[1] != 0 {
		t.Errorf("byte codebook loads = %d with word reads", c.Work.CodebookLoads[1])
	}
}

// TestEmulateSeveralBPasses: tiles whose B tile has more 8-activation items
// than the threadgroup has threads, so each simdgroup stages B in several
// passes, all loaded before any is stored (tile.Builder.staging). Each pass
// keeps its own registers, in the emulator and in the register count.
func TestEmulateSeveralBPasses(t *testing.T) {
	p := tile.Problem{Experts: 4, Used: 2, M: 256, K: 256, Tokens: 128, TypeA: dequant.Q4_0}
	ts := randomTensors(p, 5)
	ref := golden.Reference(p, ts)
	wide := tile.Upstream() // 64 x 64: 512 B items, 128 threads: 4 passes
	wide.Name, wide.NR1, wide.NR1H, wide.BExtents = "64x64", 64, 32, tile.ExtentsFixed
	one := tile.Upstream() // one simdgroup: 128 B items, 32 threads: 4 passes (and 4 A passes)
	one.Name, one.NSG, one.SGRows, one.SGCols = "1sg", 1, 1, 1
	big, _, err := tile.LoadVariant("../docs/variants/tile128x128.toml") // 2048 items, 256 threads: 8 passes
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []tile.Variant{wide, one, big} {
		for _, path := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			if err := v.Validate(path); err != nil {
				t.Fatalf("%s/%s: %v", v.Name, path, err) // every case must run
			}
			k := tile.Kernel{Variant: v, Path: path}
			res, err := emulate.MulMatID(p, k, ts, 0)
			if err != nil {
				t.Fatalf("%s/%s: %v", v.Name, path, err)
			}
			if r := maxRatio(p, res.Dst, ref); r > 1 {
				t.Errorf("%s/%s: error %.3g x tolerance, want <= 1", v.Name, path, r)
			}
		}
	}
	// one simdgroup holds its 4 passes' 8 activations (8 registers each, f32)
	// next to the A decode's 16 outputs and temporaries
	bl, err := tile.NewBuilder(p, tile.Kernel{Variant: one, Path: tile.Simdgroup})
	if err != nil {
		t.Fatal(err)
	}
	r := bl.Program(tile.Context{Rows: 64, Tokens: 32, Steps: 8}).Registers()
	want := 16 + dequant.ChunkCost(dequant.Q4_0, dequant.ByteReads).Temps + 4*8
	if r.Transient < want {
		t.Errorf("one simdgroup, 4 B passes: %d transient registers, want at least %d", r.Transient, want)
	}
}
