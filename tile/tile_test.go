package tile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

func TestMap0Order(t *testing.T) {
	p := Problem{Experts: 4, Used: 2, M: 64, K: 32, Tokens: 3, TypeA: dequant.Q4_0}
	ids := []int32{2, 0, 0, 3, 2, 1}
	rm, err := Map0(p, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{1, 2}, {5}, {0, 4}, {3}} // codes token*2+slot, increasing token
	for e := range want {
		if len(rm.Rows[e]) != len(want[e]) || int(rm.TPE[e]) != len(want[e]) {
			t.Fatalf("expert %d: rows %v tpe %d, want %v", e, rm.Rows[e], rm.TPE[e], want[e])
		}
		for i := range want[e] {
			if rm.Rows[e][i] != want[e][i] {
				t.Fatalf("expert %d: rows %v, want %v", e, rm.Rows[e], want[e])
			}
		}
	}
}

func TestMap0RejectsBadIDs(t *testing.T) {
	p := Problem{Experts: 4, Used: 2, M: 64, K: 32, Tokens: 2, TypeA: dequant.Q4_0}
	for _, tc := range []struct {
		ids  []int32
		want string
	}{
		{[]int32{0, 1, 2}, "ids: 3 values"},
		{[]int32{0, 4, 1, 2}, "ids[0][1] = 4"},
		{[]int32{0, 1, 3, 3}, "expert 3 used by slots 0 and 1"},
		{[]int32{-1, 1, 2, 3}, "ids[0][0] = -1"},
	} {
		if _, err := Map0(p, tc.ids); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Map0(%v) = %v, want an error containing %q", tc.ids, err, tc.want)
		}
	}
}

func TestPlanContexts(t *testing.T) {
	p := Problem{Experts: 2, Used: 1, M: 96, K: 64, Tokens: 70, TypeA: dequant.Q4_0}
	pl, err := NewPlan(p, Kernel{Variant: Upstream()}, []int32{33, 37})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Grid != [3]int{3, 2, 2} || pl.Launched() != 12 {
		t.Fatalf("grid %v launched %d, want [3 2 2], 12", pl.Grid, pl.Launched())
	}
	for _, tc := range []struct {
		x, y, z int
		want    Context
	}{
		{0, 0, 0, Context{Rows: 64, Tokens: 32, Steps: 2}},
		{1, 0, 0, Context{Rows: 64, Tokens: 1, Steps: 2, Repeat: true}},
		{2, 0, 0, Context{Steps: 2}},
		{1, 1, 1, Context{Rows: 32, Tokens: 5, Steps: 2, Repeat: true}},
	} {
		if got := pl.Context(tc.x, tc.y, tc.z); got != tc.want {
			t.Errorf("Context(%d,%d,%d) = %+v, want %+v", tc.x, tc.y, tc.z, got, tc.want)
		}
	}
	if pl.Active() != 8 {
		t.Errorf("active = %d, want 8", pl.Active())
	}
	n := 0
	for _, cc := range pl.ContextCounts() {
		n += cc.N
	}
	if n != pl.Launched() {
		t.Errorf("context counts sum to %d, want %d", n, pl.Launched())
	}
	if x, y, z := pl.Coords(7); x != 1 || y != 0 || z != 1 {
		t.Errorf("Coords(7) = %d,%d,%d, want 1,0,1 (x fastest)", x, y, z)
	}
}

func TestVariantValidate(t *testing.T) {
	for _, v := range Builtin() {
		for _, path := range []Path{Simdgroup, Tensor} {
			if v.DualDescriptor && path == Simdgroup {
				continue
			}
			if err := v.Validate(path); err != nil {
				t.Errorf("%s/%s: %v", v.Name, path, err)
			}
		}
	}
	bad := Upstream()
	bad.NR1H = 12
	bad.NR0 = 60
	bad.NSG = 40
	err := bad.Validate(Simdgroup)
	for _, want := range []string{"nr1h = 12", "nr0 = 60", "simdgroups = 40"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to name %q", err, want)
		}
	}
	odd := HalfTile()
	odd.NR1, odd.NR1H = 24, 8 // matmul2d 8x64 and 24x64: N=64 is a multiple of 16, fine
	if err := odd.Validate(Tensor); err != nil {
		t.Errorf("24-token tile on the tensor path: %v", err)
	}
	// a 128x128 tile stages 64 KiB, twice what Metal allows: a chip's limit
	// (chips.OccupancyFor), not a rule of the tile, so a what-if chip can run it
	big := Upstream()
	big.NR0, big.NR1 = 128, 128
	if err := big.Validate(Simdgroup); err != nil {
		t.Errorf("128x128 tile: %v, want it valid (the chip decides)", err)
	}
	// a half-skip over a single part skips nothing: an error, not a no-op
	noop := HalfTile()
	noop.NR1H = noop.NR1
	if err := noop.Validate(Simdgroup); err == nil || !strings.Contains(err.Error(), "nothing to skip") {
		t.Errorf("half_skip with nr1h = nr1: %v, want an error", err)
	}
	huge := Upstream()
	huge.NR0, huge.NR1 = 2048, 1024
	if err := huge.Validate(Simdgroup); err == nil || !strings.Contains(err.Error(), "threadgroup memory 8388608") {
		t.Errorf("2048x1024 tile: %v, want metalsim's threadgroup memory bound", err)
	}
}

// countOps counts ops of each code in one section of one simdgroup.
func countOps(ops []isa.Op) map[isa.Code]int {
	m := map[isa.Code]int{}
	for _, op := range ops {
		m[op.Code]++
	}
	return m
}

// mustBuilder is NewBuilder for a problem and kernel that must build.
func mustBuilder(t *testing.T, p Problem, k Kernel) *Builder {
	t.Helper()
	b, err := NewBuilder(p, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpstreamSimdgroupProgram(t *testing.T) {
	p := Problem{Experts: 8, Used: 2, M: 64, K: 2048, Tokens: 64, TypeA: dequant.Q4_0}
	b := mustBuilder(t, p, Kernel{Variant: Upstream(), Path: Simdgroup})
	prog := b.Program(Context{Rows: 64, Tokens: 5, Steps: 64})
	for sg := 0; sg < 4; sg++ {
		c := countOps(prog.Body[sg])
		// kernel-facts 3.4: 24 simdgroup_loads, 32 MMAs, 2 barriers per k-step
		if c[isa.OpLoadFrag] != 24 || c[isa.OpMMA] != 32 || c[isa.OpBarrier] != 2 {
			t.Errorf("simdgroup %d body: %d loads, %d MMAs, %d barriers; want 24, 32, 2", sg, c[isa.OpLoadFrag], c[isa.OpMMA], c[isa.OpBarrier])
		}
		// restaged padding: every simdgroup stages B
		if c[isa.OpLoadB] != 1 || c[isa.OpDequantA] != 1 {
			t.Errorf("simdgroup %d: %d B loads, %d dequants; want 1, 1", sg, c[isa.OpLoadB], c[isa.OpDequantA])
		}
	}
	r := prog.Registers()
	if r.Accumulators != 16 {
		t.Errorf("accumulator registers = %d, want 16 (8 float 8x8 fragments)", r.Accumulators)
	}
	if prog.TGMemBytes != 8192 {
		t.Errorf("threadgroup memory = %d, want 8192", prog.TGMemBytes)
	}
}

func TestHalfTileSkipsUpperSimdgroups(t *testing.T) {
	p := Problem{Experts: 8, Used: 2, M: 64, K: 2048, Tokens: 64, TypeA: dequant.Q4_0}
	b, _ := NewBuilder(p, Kernel{Variant: HalfTile(), Path: Simdgroup})
	for _, tc := range []struct {
		tokens   int
		idle     bool
		skipped  int64
		bLoaders int
	}{{5, true, 1, 1}, {16, true, 1, 2}, {17, false, 0, 3}, {32, false, 0, 4}} {
		prog := b.Program(Context{Rows: 64, Tokens: tc.tokens, Steps: 64})
		loaders := 0
		for sg := 0; sg < 4; sg++ {
			c := countOps(prog.Body[sg])
			if c[isa.OpLoadB] > 0 {
				loaders++
			}
			if idle := c[isa.OpMMA] == 0; idle != (tc.idle && sg >= 2) {
				t.Errorf("tokens %d: simdgroup %d has %d MMAs", tc.tokens, sg, c[isa.OpMMA])
			}
			if c[isa.OpBarrier] != 2 {
				t.Errorf("tokens %d: simdgroup %d has %d barriers, want 2 (idle simdgroups still synchronise)", tc.tokens, sg, c[isa.OpBarrier])
			}
		}
		if prog.Skipped.HalfTiles != tc.skipped {
			t.Errorf("tokens %d: %d half-tiles skipped, want %d", tc.tokens, prog.Skipped.HalfTiles, tc.skipped)
		}
		if loaders != tc.bLoaders {
			t.Errorf("tokens %d: %d simdgroups load B, want %d (padding rows zeroed once)", tc.tokens, loaders, tc.bLoaders)
		}
	}
}

// TestHalfTilesCountOnlySkippedWork checks that a token part counts as a
// skipped half-tile only when the path skips its work: on the simdgroup path
// the skip idles whole simdgroup columns, so with one column (every simdgroup
// spans both 8-token parts of a 16-token tile) nothing is skipped.
func TestHalfTilesCountOnlySkippedWork(t *testing.T) {
	p := Problem{Experts: 8, Used: 2, M: 64, K: 2048, Tokens: 64, TypeA: dequant.Q4_0}
	for _, tc := range []struct {
		spec    string
		path    Path
		skipped int64 // at 5 tokens of 16
	}{
		{"nr1 = 16\nnr1h = 8\nsg_rows = 4\nsg_cols = 1\n", Simdgroup, 0},
		{"nr1 = 16\nnr1h = 8\nsg_rows = 2\nsg_cols = 2\n", Simdgroup, 1},
		{"nr1 = 16\nnr1h = 8\nsg_rows = 4\nsg_cols = 1\n", Tensor, 1},
		// four columns of 8 tokens over parts of 16: part 1 is columns 2 and 3
		{"nr1 = 32\nnr1h = 16\nsg_rows = 1\nsg_cols = 4\n", Simdgroup, 1},
	} {
		v, _, err := ParseVariantSpec([]byte("name = \"x\"\nbase = \"halftile\"\n"+tc.spec), "spec")
		if err != nil {
			t.Fatal(err)
		}
		b := mustBuilder(t, p, Kernel{Variant: v, Path: tc.path})
		prog := b.Program(Context{Rows: 64, Tokens: 5, Steps: 64})
		skippedWork := prog.Skipped.MMA8 + prog.Skipped.MMA16
		if prog.Skipped.HalfTiles != tc.skipped || (tc.skipped == 0) != (skippedWork == 0) {
			t.Errorf("%q on the %v path: %d half-tiles skipped (want %d), %d MMAs skipped",
				tc.spec, tc.path, prog.Skipped.HalfTiles, tc.skipped, skippedWork)
		}
	}
}

func TestTensorRegisters(t *testing.T) {
	p := Problem{Experts: 8, Used: 2, M: 64, K: 2048, Tokens: 64, TypeA: dequant.Q4_0}
	for _, tc := range []struct {
		v    Variant
		want int
	}{{Upstream(), 16}, {HalfTile(), 16}, {HalfTileDual(), 24}} {
		b := mustBuilder(t, p, Kernel{Variant: tc.v, Path: Tensor})
		prog := b.Program(Context{Rows: 64, Tokens: 32, Steps: 64})
		if got := prog.Registers().AccumulatorFloats(); got != tc.want {
			t.Errorf("%s: %d accumulator floats per thread, want %d", tc.v.Name, got, tc.want)
		}
	}
}

func TestProblemValidate(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Experts: 0, Used: 1, M: 1, K: 32, Tokens: 1, TypeA: dequant.Q4_0}, "n_mats"},
		{Problem{Experts: 4, Used: 5, M: 1, K: 32, Tokens: 1, TypeA: dequant.Q4_0}, "n_used"},
		{Problem{Experts: 4, Used: 2, M: 1, K: 40, Tokens: 1, TypeA: dequant.Q4_0}, "k = 40"},
		{Problem{Experts: 4, Used: 2, M: 1, K: 32, Tokens: 0, TypeA: dequant.Q4_0}, "n (tokens)"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}

// TestTransientRegistersSplit: the transient peak's split by use adds up to
// it, for every built-in variant, path and weight type, and for the mat-vec
// kernel.
func TestTransientRegistersSplit(t *testing.T) {
	check := func(name string, r isa.Registers) {
		if r.Dequant+r.Activations+r.Fragments != r.Transient || r.Transient <= 0 || r.Dequant <= 0 {
			t.Errorf("%s: transient %d = dequant %d + activations %d + fragments %d?", name, r.Transient, r.Dequant, r.Activations, r.Fragments)
		}
	}
	for _, typ := range dequant.Types() {
		p := Problem{Experts: 8, Used: 2, M: 64, K: 2048, Tokens: 64, TypeA: typ}
		for _, v := range Builtin() {
			for _, path := range []Path{Simdgroup, Tensor} {
				b, err := NewBuilder(p, Kernel{Variant: v, Path: path})
				if err != nil {
					continue // a variant of the other path
				}
				check(fmt.Sprintf("%s %s/%s", typ, v.Name, path), b.Program(Context{Rows: 64, Tokens: 32, Steps: 64}).Registers())
			}
		}
		vb, err := NewVecBuilder(MulMV(typ, 2048, false), typ, false, 2048)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("%s mul_mv", typ), vb.Program(vb.Context(1, 1)).Registers())
	}
}

// TestIDLoadWords: each thread reads the id of its B row, lr1 = min(tiitg/4,
// nr1-1) (kernel-facts 4.2), so a simdgroup's 32 lanes read 8 distinct ids:
// 32 bytes per simdgroup on the upstream tile, where it counted 4.
func TestIDLoadWords(t *testing.T) {
	p := Problem{Experts: 8, Used: 2, M: 64, K: 256, Tokens: 64, TypeA: dequant.Q4_0}
	b := mustBuilder(t, p, Kernel{Variant: Upstream(), Path: Simdgroup})
	prog := b.Program(Context{Rows: 64, Tokens: 32, Steps: 8})
	for sg, insts := range prog.Timing().Insts[isa.SecPrologue] {
		var got []uint32
		for _, in := range insts {
			if in.Stream == isa.StreamMeta {
				got = append(got, in.Unique)
			}
		}
		// the tpe word (all lanes read one), then the lanes' own ids
		if len(got) != 2 || got[0] != 4 || got[1] != 32 {
			t.Errorf("simdgroup %d: routing loads of %v distinct bytes, want [4 32]", sg, got)
		}
	}
}

// TestExamplesCoverEveryOp: the example programs docs/isa.md renders hold
// every op of the op table, so every op's expansion is shown.
func TestExamplesCoverEveryOp(t *testing.T) {
	seen := map[isa.Code]bool{}
	for _, p := range ExamplePrograms() {
		for s := isa.SecPrologue; s < isa.NumSections; s++ {
			for sg := 0; sg < p.NSG; sg++ {
				for _, op := range p.Ops(s, sg) {
					seen[op.Code] = true
				}
			}
		}
	}
	for c := isa.Code(0); c < isa.NumCodes; c++ {
		if !seen[c] {
			t.Errorf("op %s occurs in no example program", c)
		}
	}
}
