package routing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/tile"
)

// Routing specs, as studies and the command line take them:
//
//	uniform      Uniform
//	zipf:S       Zipf{S}; zipf alone takes S from a skew value
//	hot:H:F      Hot{H, F}; hot:H takes F from a skew value
//	file:PATH    File: an ids file (ReadIDsFile), which fixes n
//
// A spec without its last parameter (zipf, hot:H) is partial: Expand
// completes it with every skew value in turn.

// Parser reads routing specs for one problem shape. Its labels name the inputs
// in errors, as the front end calls them (simrun: "--routing", "--skew",
// "--n"); empty labels say "routing", "skew" and "n".
type Parser struct {
	Experts, Used int // the problem's n_mats and n_used, which the parameters must fit

	Label, SkewLabel, NLabel string
}

// Spec is one parsed routing spec.
type Spec struct {
	// Routing is the routing; for a partial spec, what it has so far (nil for
	// zipf, Hot without its fraction for hot:H).
	Routing Routing
	Partial bool // the spec lacks its last parameter, which a skew value gives
	Tokens  int  // a file routing's tokens, which fix n (0 otherwise)
}

// Point is one routing of a study: a spec with all its parameters.
type Point struct {
	Routing Routing
	Skew    string // the parameter a skew value completed ("" if none)
	Tokens  int    // a file routing's tokens, which fix n (0 otherwise)
}

func (ps Parser) label() string { return labelOr(ps.Label, "routing") }

func labelOr(label, def string) string {
	if label == "" {
		return def
	}
	return label
}

// Parse parses one routing spec. A file routing reads its ids file.
func (ps Parser) Parse(spec string) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("%s %q: "+format, append([]any{ps.label(), spec}, a...)...)
	}
	probe := tile.Problem{Experts: ps.Experts, Used: ps.Used}
	kind, rest, _ := strings.Cut(spec, ":")
	switch kind {
	case "uniform":
		if rest != "" {
			return bad("uniform takes no parameter")
		}
		return Spec{Routing: Uniform{}}, nil
	case "zipf":
		if rest == "" {
			return Spec{Partial: true}, nil
		}
		s, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			return bad("S %q: not a number", rest)
		}
		if err := ValidateZipf(s); err != nil {
			return bad("%v", err)
		}
		return Spec{Routing: Zipf{S: s}}, nil
	case "hot":
		hs, fs, hasF := strings.Cut(rest, ":")
		h, err := strconv.Atoi(hs)
		if err != nil {
			return bad("H %q: want hot:H:F with H the number of hot experts", hs)
		}
		if !hasF {
			if err := ValidateHot(probe, h, 0); err != nil {
				return bad("%v", err)
			}
			return Spec{Routing: Hot{Experts: h}, Partial: true}, nil
		}
		f, err := strconv.ParseFloat(fs, 64)
		if err != nil {
			return bad("F %q: not a number (the fraction of picks on hot experts)", fs)
		}
		if err := ValidateHot(probe, h, f); err != nil {
			return bad("%v", err)
		}
		return Spec{Routing: Hot{Experts: h, Fraction: f}}, nil
	case "file":
		if rest == "" {
			return bad("want file:PATH")
		}
		ids, err := ReadIDsFile(rest, ps.Used, ps.Experts)
		if err != nil {
			return Spec{}, fmt.Errorf("%s: %w", ps.label(), err)
		}
		return Spec{Routing: File{Path: rest, IDs: ids.IDs}, Tokens: ids.Tokens}, nil
	}
	return bad("unknown routing (allowed: uniform, zipf:S, hot:H:F, file:PATH)")
}

// Expand parses specs and completes each partial one with every skew value
// in turn, in order. A partial spec without skews, or skews that no spec
// takes, are errors.
func (ps Parser) Expand(specs []string, skews []float64) ([]Point, error) {
	skewLabel := labelOr(ps.SkewLabel, "skew")
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s: want one or more routings (uniform, zipf:S, hot:H:F, file:PATH)", ps.label())
	}
	var out []Point
	usedSkew := false
	for _, spec := range specs {
		s, err := ps.Parse(spec)
		if err != nil {
			return nil, err
		}
		if !s.Partial {
			out = append(out, Point{Routing: s.Routing, Tokens: s.Tokens})
			continue
		}
		if len(skews) == 0 {
			return nil, fmt.Errorf("%s %q: needs its parameter (zipf:S, hot:H:F) or %s values", ps.label(), spec, skewLabel)
		}
		usedSkew = true
		for _, x := range skews {
			label := strconv.FormatFloat(x, 'g', -1, 64)
			switch h := s.Routing.(type) {
			case Hot:
				if err := ValidateHot(tile.Problem{Experts: ps.Experts, Used: ps.Used}, h.Experts, x); err != nil {
					return nil, fmt.Errorf("%s %s for %s %q: %v", skewLabel, label, ps.label(), spec, err)
				}
				out = append(out, Point{Routing: Hot{Experts: h.Experts, Fraction: x}, Skew: label})
			default:
				if err := ValidateZipf(x); err != nil {
					return nil, fmt.Errorf("%s %s for %s %q: %v", skewLabel, label, ps.label(), spec, err)
				}
				out = append(out, Point{Routing: Zipf{S: x}, Skew: label})
			}
		}
	}
	if len(skews) > 0 && !usedSkew {
		return nil, errors.New(skewLabel + ": no " + ps.label() + " takes it (give zipf or hot:H without their last parameter)")
	}
	return out, nil
}

// CheckTokens fails when a file routing meets an n it does not hold.
func (ps Parser) CheckTokens(points []Point, ns []int) error {
	nLabel := labelOr(ps.NLabel, "n")
	for _, p := range points {
		if p.Tokens == 0 {
			continue
		}
		for _, n := range ns {
			if n != p.Tokens {
				return fmt.Errorf("%s %d: %s %s holds %d tokens (a file routing fixes n; use %s %d)", nLabel, n, ps.label(), p.Routing.Name(), p.Tokens, nLabel, p.Tokens)
			}
		}
	}
	return nil
}
