package routing

import (
	"strings"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

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
