package accuracy

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
)

func TestFitRefusesTooManyParams(t *testing.T) {
	cases := sampleCases(t)
	chipList := []*chips.Chip{cases[0].Chip}
	var ps []FitParam
	for _, name := range []string{"barrier_clk", "sg_launch_clk"} {
		p, err := ParseFitParam(name+"@M1 Pro 16-core GPU=0:1000", chipList)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := Fit(cases, ps, FitOptions{}); err == nil || !strings.Contains(err.Error(), "at most a third") {
		t.Errorf("Fit with 2 parameters on 2 rows: %v", err)
	}
}

// TestFitRefusalIsDeterministic: with several chips over the limit the error
// names the same one every time (chips in name order, not a map's order).
func TestFitRefusalIsDeterministic(t *testing.T) {
	cases := sampleCases(t)
	ps := []FitParam{ // chips without rows: both over the limit
		{Chip: "Zeta GPU", Name: "barrier_clk", Lo: 0, Hi: 1000},
		{Chip: "Alpha GPU", Name: "barrier_clk", Lo: 0, Hi: 1000},
		{Chip: "Mu GPU", Name: "barrier_clk", Lo: 0, Hi: 1000},
	}
	for range 30 {
		_, err := Fit(cases, ps, FitOptions{})
		if err == nil || !strings.Contains(err.Error(), "parameters for Alpha GPU") {
			t.Fatalf("Fit with three chips over the limit: %v, want the error of Alpha GPU (first by name)", err)
		}
	}
}

// TestParseFitParamExactNameFirst: a chip of the files whose name is an
// embedded chip's alias (a chip file named "M5") is found by that name; an
// alias finds the embedded chip otherwise.
func TestParseFitParamExactNameFirst(t *testing.T) {
	m5 := chips.MustLookup("M5 10-core GPU")
	custom := m5.Clone()
	custom.Name = "M5"
	if p, err := ParseFitParam("barrier_clk@M5", []*chips.Chip{custom}); err != nil || p.Chip != "M5" {
		t.Errorf("a file chip named M5: %+v, %v", p, err)
	}
	if p, err := ParseFitParam("barrier_clk@M5", []*chips.Chip{m5}); err != nil || p.Chip != m5.Name {
		t.Errorf("the alias M5 of the embedded chip: %+v, %v", p, err)
	}
}

func TestParseFitParamErrors(t *testing.T) {
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	chipList := []*chips.Chip{chip}
	for _, tc := range []struct{ spec, want string }{
		{"barrier_clk", "want NAME@CHIP"},
		{"barrier_clk@M7", "not among the chips"},
		{"cores@M1 Pro 16-core GPU", "structure"},
		{"warp_size@M1 Pro 16-core GPU", "no parameter"},
		{"barrier_clk@M1 Pro 16-core GPU=5:1", "LO < HI"},
		{"barrier_clk@M1 Pro 16-core GPU=1000:2000", "outside"},
		// bounds the chip file does not allow fail here, not at the first
		// evaluation outside them deep in the fit
		{"sg_launch_clk@M1 Pro 16-core GPU=-1:1000", `bounds "-1:1000": sg_launch_clk = -1: must be in [0, 1e+06]`},
		{"sg_launch_clk@M1 Pro 16-core GPU=0:1e300", "sg_launch_clk = 1e+300: must be in [0, 1e+06]"},
		{"classes.mma8.issue_clk@M1 Pro 16-core GPU=0:1e9", "classes.mma8.issue_clk = 1e+09: must be in [0, 4096]"},
	} {
		if _, err := ParseFitParam(tc.spec, chipList); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFitParam(%q) = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// TestParseFitParamDefaultBounds: the default bounds (a quarter to four times
// the current value) of every fittable parameter of every chip are values the
// chip file allows.
func TestParseFitParamDefaultBounds(t *testing.T) {
	chipList, err := chips.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chipList {
		for _, np := range c.ParamTable() {
			if fittable(c, np.Name) != nil {
				continue
			}
			if _, err := ParseFitParam(np.Name+"@"+c.Name, []*chips.Chip{c}); err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
	}
}

// TestSearchStaysWithinMaxEvals: the start, the grid and the simplex together
// call the loss at most maxEvals times, however many parameters (a grid of
// 3^10 points would take 59,049 calls alone).
func TestSearchStaysWithinMaxEvals(t *testing.T) {
	for _, d := range []int{1, 2, 5, 10} {
		params := make([]FitParam, d)
		start := make([]float64, d)
		for i := range params {
			params[i] = FitParam{Name: "p", Chip: "c", Lo: 0, Hi: 10}
			start[i] = 9
		}
		for _, maxEvals := range []int{1, 2, 7, 50, defaultEvals(d), MaxEvals} {
			calls := 0
			loss := func(v []float64) (float64, error) {
				calls++
				s := 0.0
				for _, x := range v {
					s += (x - 3) * (x - 3)
				}
				return s, nil
			}
			_, _, evals, err := search(loss, params, start, maxEvals)
			if err != nil {
				t.Fatal(err)
			}
			if calls > maxEvals || evals != calls {
				t.Errorf("%d parameters, max evals %d: %d calls of the loss (%d counted)", d, maxEvals, calls, evals)
			}
		}
	}
}

// TestDefaultEvalsKeepsTheFullGrid: the default budget holds the start, the
// full grid and 40 simplex evaluations per parameter while that fits in
// MaxEvals.
func TestDefaultEvalsKeepsTheFullGrid(t *testing.T) {
	for _, tc := range []struct{ d, evals, grid int }{
		{1, 50, 9}, {2, 117, 6}, {3, 185, 4}, {5, 444, 3}, {6, 970, 3}, {7, MaxEvals, 2}, {10, MaxEvals, 1},
	} {
		if e, g := defaultEvals(tc.d), gridSize(tc.d, defaultEvals(tc.d)); e != tc.evals || g != tc.grid {
			t.Errorf("%d parameters: default budget %d, grid %d per dimension; want %d and %d", tc.d, e, g, tc.evals, tc.grid)
		}
	}
}
