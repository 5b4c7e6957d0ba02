package sim

import (
	"fmt"
	"strconv"

	"github.com/metalsim/metalsim/tile"
)

// ZipfRouting draws n_used distinct experts per token without replacement,
// expert e weighing 1/(e+1)^S (expert 0 the most popular); S = 0 is uniform.
type ZipfRouting struct {
	S float64 // Zipf exponent, in [0, tile.MaxZipfS]
}

// Counts implements Routing.
func (r ZipfRouting) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return tile.ZipfCounts(p, r.S, seed)
}

// Route returns the routing itself (for emulation): the draw Counts counts.
func (r ZipfRouting) Route(p tile.Problem, seed uint64) ([]int32, error) {
	return tile.ZipfRouting(p, r.S, seed)
}

// Name implements Routing: "zipf:S".
func (r ZipfRouting) Name() string { return "zipf:" + strconv.FormatFloat(r.S, 'g', -1, 64) }

// HotRouting sends a Fraction of the picks to the first Experts experts (the
// hot ones), still n_used distinct experts per token.
type HotRouting struct {
	Experts  int     // hot experts H, in [1, n_mats-1]
	Fraction float64 // share of picks on hot experts F, in [0, 1]
}

// Counts implements Routing.
func (r HotRouting) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return tile.HotCounts(p, r.Experts, r.Fraction, seed)
}

// Route returns the routing itself (for emulation): the draw Counts counts.
func (r HotRouting) Route(p tile.Problem, seed uint64) ([]int32, error) {
	return tile.HotRouting(p, r.Experts, r.Fraction, seed)
}

// Name implements Routing: "hot:H:F".
func (r HotRouting) Name() string {
	return fmt.Sprintf("hot:%d:%s", r.Experts, strconv.FormatFloat(r.Fraction, 'g', -1, 64))
}

// FileRouting is a fixed routing, read from an ids file (tile.ReadIDsFile):
// every draw is the same, whatever the seed.
type FileRouting struct {
	File string  // where the ids came from (for names and messages)
	IDs  []int32 // ids[t*n_used+s]; must hold n × n_used ids of the problem
}

// Counts implements Routing: the file's tokens per expert, after checking
// that the file fits the problem.
func (r FileRouting) Counts(p tile.Problem, _ uint64) ([]int32, error) {
	tpe, err := tile.CountIDs(p, r.IDs)
	if err != nil {
		return nil, fmt.Errorf("ids file %s: %w", r.File, err)
	}
	return tpe, nil
}

// Route returns the file's ids (checked as Counts checks them).
func (r FileRouting) Route(p tile.Problem, seed uint64) ([]int32, error) {
	if _, err := r.Counts(p, seed); err != nil {
		return nil, err
	}
	return r.IDs, nil
}

// Name implements Routing: "file:PATH".
func (r FileRouting) Name() string { return "file:" + r.File }
