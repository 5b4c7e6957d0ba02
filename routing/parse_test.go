package routing

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

func TestParse(t *testing.T) {
	ps := Parser{Experts: 16, Used: 4}
	for _, tc := range []struct {
		spec    string
		name    string // "" for a partial zipf
		partial bool
	}{
		{"uniform", "uniform", false},
		{"zipf:1.25", "zipf:1.25", false},
		{"zipf", "", true},
		{"hot:4:0.5", "hot:4:0.5", false},
		{"hot:4", "hot:4:0", true},
	} {
		s, err := ps.Parse(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		name := ""
		if s.Routing != nil {
			name = s.Routing.Name()
		}
		if name != tc.name || s.Partial != tc.partial || s.Tokens != 0 {
			t.Errorf("%s: %+v (name %q), want name %q, partial %v", tc.spec, s, name, tc.name, tc.partial)
		}
	}
	ids := filepath.Join(t.TempDir(), "ids.csv")
	if err := os.WriteFile(ids, []byte("0,1,2,3\n4,5,6,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ps.Parse("file:" + ids)
	if err != nil || s.Tokens != 2 || s.Routing.Name() != "file:"+ids || len(s.Routing.(File).IDs) != 8 {
		t.Fatalf("file: %+v %v", s, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		ps   Parser
		spec string
		want string
	}{
		{Parser{Experts: 16, Used: 4}, "bogus", `routing "bogus": unknown routing (allowed: uniform, zipf:S, hot:H:F, file:PATH)`},
		{Parser{Experts: 16, Used: 4, Label: "--routing"}, "uniform:3", `--routing "uniform:3": uniform takes no parameter`},
		{Parser{Experts: 16, Used: 4}, "zipf:x", `routing "zipf:x": S "x": not a number`},
		{Parser{Experts: 16, Used: 4}, "zipf:9", "zipf s = 9: must be in [0, 8]"},
		{Parser{Experts: 16, Used: 4}, "hot:x:1", `H "x": want hot:H:F`},
		{Parser{Experts: 16, Used: 4}, "hot:16:0.5", "hot experts H = 16: must be in [1, n_mats-1 = 15]"},
		{Parser{Experts: 16, Used: 4}, "hot:4:y", `F "y": not a number`},
		{Parser{Experts: 16, Used: 4}, "hot:4:2", "hot fraction F = 2: must be in [0, 1]"},
		{Parser{Experts: 16, Used: 4}, "file:", "want file:PATH"},
		{Parser{Experts: 16, Used: 4, Label: "--routing"}, "file:" + filepath.Join(t.TempDir(), "none.csv"), "none.csv: no such file or directory"},
	} {
		if _, err := tc.ps.Parse(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	ps := Parser{Experts: 16, Used: 4, Label: "--routing", SkewLabel: "--skew", NLabel: "--n"}
	pts, err := ps.Expand([]string{"uniform", "zipf", "hot:4"}, []float64{0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{{Routing: Uniform{}}, {Routing: Zipf{S: 0.5}, Skew: "0.5"}, {Routing: Zipf{S: 1}, Skew: "1"},
		{Routing: Hot{Experts: 4, Fraction: 0.5}, Skew: "0.5"}, {Routing: Hot{Experts: 4, Fraction: 1}, Skew: "1"}}
	if !reflect.DeepEqual(pts, want) {
		t.Fatalf("got %+v\nwant %+v", pts, want)
	}
	for _, tc := range []struct {
		specs []string
		skews []float64
		want  string
	}{
		{nil, nil, "--routing: want one or more routings"},
		{[]string{"zipf"}, nil, `--routing "zipf": needs its parameter (zipf:S, hot:H:F) or --skew values`},
		{[]string{"hot:4"}, []float64{1.5}, `--skew 1.5 for --routing "hot:4": hot fraction F = 1.5`},
		{[]string{"zipf"}, []float64{9}, `--skew 9 for --routing "zipf": zipf s = 9`},
		{[]string{"uniform"}, []float64{1}, "--skew: no --routing takes it"},
	} {
		if _, err := ps.Expand(tc.specs, tc.skews); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.specs, tc.skews, err, tc.want)
		}
	}
	file := []Point{{Routing: File{Path: "ids.csv"}, Tokens: 2}}
	if err := ps.CheckTokens(file, []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := ps.CheckTokens(file, []int{2, 32}); err == nil || err.Error() != "--n 32: --routing file:ids.csv holds 2 tokens (a file routing fixes n; use --n 2)" {
		t.Fatalf("n a file does not hold: %v", err)
	}
}

// FuzzParse: any spec but a file routing (whose ids files FuzzParseIDs in
// tile covers) either fails with an error naming the spec, or gives a
// routing whose name parses back to the same routing and that draws counts
// for the problem; a partial spec completes with a skew value.
func FuzzParse(f *testing.F) {
	ps := Parser{Experts: 16, Used: 4}
	p := tile.Problem{Experts: 16, Used: 4, M: 64, K: 64, Tokens: 8, TypeA: dequant.F16}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.HasPrefix(spec, "file") {
			return
		}
		s, err := ps.Parse(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "routing") {
				t.Fatalf("%q: error %q does not say it is a routing", spec, err)
			}
			return
		}
		if s.Partial {
			pts, err := ps.Expand([]string{spec}, []float64{0.5})
			if err != nil || len(pts) != 1 || pts[0].Skew != "0.5" {
				t.Fatalf("%q with skew 0.5: %+v %v", spec, pts, err)
			}
			s.Routing = pts[0].Routing
		}
		again, err := ps.Parse(s.Routing.Name())
		if err != nil || again.Partial || again.Routing != s.Routing {
			t.Fatalf("%q: name %q parses to %+v, %v", spec, s.Routing.Name(), again, err)
		}
		if _, err := s.Routing.Counts(p, 1); err != nil {
			t.Fatalf("%q: accepted but draws no counts: %v", spec, err)
		}
	})
}
