package study

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// TestPointSeed: a point's seed depends on the base seed, the routing and n
// only, and keeps its value (sweep outputs pin it: the seed column).
func TestPointSeed(t *testing.T) {
	if got := PointSeed(1, "uniform", 32); got != PointSeed(1, "uniform", 32) {
		t.Fatal("not a function of its inputs")
	}
	seen := map[uint64]string{}
	for _, base := range []uint64{1, 2} {
		for _, r := range []string{"uniform", "zipf:1"} {
			for _, n := range []int{32, 64} {
				s := PointSeed(base, r, n)
				key := fmt.Sprint(base, r, n)
				if s == 0 {
					t.Errorf("%s: seed 0", key)
				}
				if prev, ok := seen[s]; ok {
					t.Errorf("%s and %s: the same seed %d", key, prev, s)
				}
				seen[s] = key
			}
		}
	}
	// the values the pinned sweep outputs hold (cmd/simrun/testdata/pinned,
	// base seed 1)
	for _, tc := range []struct {
		routing string
		n       int
		want    uint64
	}{{"uniform", 32, 11478100257023166698}, {"uniform", 256, 5522050582431182167}} {
		if got := PointSeed(1, tc.routing, tc.n); got != tc.want {
			t.Errorf("%s, n = %d: seed %d, want %d", tc.routing, tc.n, got, tc.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		s    string
		i, n int
	}{{"0/1", 0, 1}, {"3/4", 3, 4}, {"0/16", 0, 16}} {
		i, n, err := ParseShard("--shard", tc.s)
		if err != nil || i != tc.i || n != tc.n {
			t.Errorf("%s: %d/%d %v", tc.s, i, n, err)
		}
	}
	for _, tc := range []struct{ s, want string }{
		{"3/3", `--shard "3/3": i = 3: must be in [0, 3)`},
		{"-1/3", "i = -1: must be in [0, 3)"},
		{"0/0", `--shard "0/0": N = 0: must be at least 1`},
		{"x", `--shard "x": want i/N (0-based shard i of N)`},
		{"1/2/3", "want i/N"},
	} {
		if _, _, err := ParseShard("--shard", tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.s, err, tc.want)
		}
	}
	if got := ShardPoints(10, 1, 4); !slices.Equal(got, []int{1, 5, 9}) {
		t.Errorf("shard 1/4 of 10: %v", got)
	}
	if got := ShardPoints(2, 3, 4); got != nil {
		t.Errorf("shard 3/4 of 2: %v, want none", got)
	}
}

// FuzzParseShard: any input either fails, naming the flag, or is a shard i
// of N with 0 <= i < N, and the shards of one N cover every point once.
func FuzzParseShard(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := ParseShard("--shard", s)
		if failed(t, s, err, "--shard") {
			return
		}
		if n < 1 || i < 0 || i >= n {
			t.Fatalf("%q: shard %d/%d", s, i, n)
		}
		points := 3*min(n, 50) + 1
		cover := 0
		for j := range min(n, 50) {
			cover += len(ShardPoints(points, j, min(n, 50)))
		}
		if cover != points {
			t.Fatalf("%q: the shards of N = %d cover %d of %d points", s, min(n, 50), cover, points)
		}
	})
}

// smallSweep is a sweep of 2 variants x 2 token counts on one chip.
func smallSweep(t *testing.T) *Sweep {
	t.Helper()
	chips, err := LoadChips("--chip", "M1 Pro")
	if err != nil {
		t.Fatal(err)
	}
	vas, err := LoadVariants("--variant", []string{"upstream", "halftile"})
	if err != nil {
		t.Fatal(err)
	}
	return &Sweep{Chips: chips, Variants: vas, Routes: []routing.Point{{Routing: routing.Uniform{}}}, Ns: []int{32, 64},
		Shape:   Shape{Experts: 16, Used: 4, M: 64, K: 256, TypeA: dequant.Q4_0},
		Options: sim.Options{Draws: 1, Seed: 1}}
}

// TestSweepRun: rows come in index order whatever the workers, each with the
// sweep's id and points and its point's seed; an error from emit stops the
// run.
func TestSweepRun(t *testing.T) {
	s := smallSweep(t)
	id, err := s.ID()
	if err != nil || len(id) != 16 {
		t.Fatalf("id %q %v", id, err)
	}
	var rows []*Row
	done := 0
	if err := s.Run([]int{0, 1, 2, 3}, 3, func(r *Row) error { rows = append(rows, r); return nil }, func(n int) { done = n }); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || done != 4 {
		t.Fatalf("%d rows, %d done", len(rows), done)
	}
	for i, r := range rows {
		n := s.Ns[i%2]
		if r.Index != i || r.Points != 4 || r.SweepID != id || r.N != n || r.Seed != PointSeed(1, "uniform", n) || r.Error != "" || r.TotalUs <= 0 {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if rows[0].Variant != "upstream" || rows[2].Variant != "halftile" {
		t.Errorf("variants %s, %s: want upstream then halftile", rows[0].Variant, rows[2].Variant)
	}
	stop := errors.New("stop")
	emitted := 0
	err = smallSweep(t).Run([]int{0, 1, 2, 3}, 2, func(*Row) error { emitted++; return stop }, nil)
	if err != stop || emitted != 1 {
		t.Fatalf("emit error: %v after %d rows", err, emitted)
	}
}

// TestSweepIDCoversTheKnobs: every knob of a variant is part of the id.
func TestSweepIDCoversTheKnobs(t *testing.T) {
	base, _ := smallSweep(t).ID()
	for _, k := range tile.Knobs() {
		s := smallSweep(t)
		v := s.Variants[0].Variant
		k.Set(&v, k.Value(v)+1)
		s.Variants[0].Variant = v
		if id, _ := s.ID(); id == base {
			t.Errorf("knob %s: the sweep id does not change", k.Key)
		}
	}
}
