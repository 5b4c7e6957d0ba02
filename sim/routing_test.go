package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

func TestRoutingAdapters(t *testing.T) {
	p := tile.Problem{Experts: 32, Used: 4, M: 64, K: 64, Tokens: 64, TypeA: dequant.F16}
	ids, err := tile.ZipfRouting(p, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r interface {
			Routing
			Route(tile.Problem, uint64) ([]int32, error)
		}
		name string
	}{
		{ZipfRouting{S: 1.25}, "zipf:1.25"},
		{HotRouting{Experts: 4, Fraction: 0.5}, "hot:4:0.5"},
		{FileRouting{File: "ids.csv", IDs: ids}, "file:ids.csv"},
	} {
		if got := tc.r.Name(); got != tc.name {
			t.Errorf("name %q, want %q", got, tc.name)
		}
		c, err := tc.r.Counts(p, 5)
		if err != nil {
			t.Fatal(err)
		}
		route, err := tc.r.Route(p, 5)
		if err != nil {
			t.Fatal(err)
		}
		want, err := tile.CountIDs(p, route)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, want) {
			t.Errorf("%s: Counts and Route disagree", tc.name)
		}
	}
	_, err = FileRouting{File: "ids.csv", IDs: ids}.Counts(tile.Problem{Experts: 32, Used: 4, M: 64, K: 64, Tokens: 63, TypeA: dequant.F16}, 1)
	if err == nil || !strings.Contains(err.Error(), "ids file ids.csv: ids: 256 values, want n × n_used = 63 × 4 = 252") {
		t.Fatalf("size mismatch: %v", err)
	}
	if _, err := (HotRouting{Experts: 32, Fraction: 0.5}).Counts(p, 1); err == nil || !strings.Contains(err.Error(), "hot experts H = 32") {
		t.Fatalf("bad hot: %v", err)
	}
}

// Skewed routing concentrates tokens on few experts: more token tiles, so a
// Zipf run is slower than a uniform one on the same problem.
func TestRunWithZipfRouting(t *testing.T) {
	chip, err := LookupChip("M1 Pro 16-core GPU")
	if err != nil {
		t.Fatal(err)
	}
	p := tile.Problem{Experts: 32, Used: 4, M: 256, K: 256, Tokens: 256, TypeA: dequant.Q4_0}
	k := tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}
	s := NewSimulator()
	u, err := s.Run(p, k, chip, Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Run(p, k, chip, Options{Draws: 1, Routing: ZipfRouting{S: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if z.Counters.Active == u.Counters.Active {
		t.Fatalf("zipf:2 and uniform computed the same number of tiles (%d)", z.Counters.Active)
	}
}
