package routing

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

func TestRoutingAdapters(t *testing.T) {
	p := tile.Problem{Experts: 32, Used: 4, M: 64, K: 64, Tokens: 64, TypeA: dequant.F16}
	ids, err := ZipfIDs(p, 1, 5)
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
		{Zipf{S: 1.25}, "zipf:1.25"},
		{Hot{Experts: 4, Fraction: 0.5}, "hot:4:0.5"},
		{File{Path: "ids.csv", IDs: ids}, "file:ids.csv"},
		{Shared{}, "shared"},
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
		want, err := CountIDs(p, route)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, want) {
			t.Errorf("%s: Counts and Route disagree", tc.name)
		}
	}
	_, err = File{Path: "ids.csv", IDs: ids}.Counts(tile.Problem{Experts: 32, Used: 4, M: 64, K: 64, Tokens: 63, TypeA: dequant.F16}, 1)
	if err == nil || !strings.Contains(err.Error(), "ids file ids.csv: ids: 256 values, want n × n_used = 63 × 4 = 252") {
		t.Fatalf("size mismatch: %v", err)
	}
	if _, err := (Hot{Experts: 32, Fraction: 0.5}).Counts(p, 1); err == nil || !strings.Contains(err.Error(), "hot experts H = 32") {
		t.Fatalf("bad hot: %v", err)
	}
}
