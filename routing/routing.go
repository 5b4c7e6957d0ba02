package routing

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/metalsim/metalsim/tile"
)

// Routing draws tokens-per-expert counts for timing (no ids needed).
type Routing interface {
	Counts(p tile.Problem, seed uint64) ([]int32, error)
	Name() string
}

// IDRoute is a Routing that can also draw the expert ids themselves (mul_mv_id's
// timing needs which expert each (token, slot) reads, not only the counts).
type IDRoute interface {
	Route(p tile.Problem, seed uint64) ([]int32, error)
}

// IDs draws the ids of one routing draw: ids[t*n_used+s], the expert of slot
// s of token t. A routing without a Route method is an error.
func IDs(r Routing, p tile.Problem, seed uint64) ([]int32, error) {
	if ir, ok := r.(IDRoute); ok {
		return ir.Route(p, seed)
	}
	return nil, fmt.Errorf("routing %s gives tokens per expert only; mul_mv_id needs the expert ids (a Route method)", r.Name())
}

// Uniform draws n_used distinct experts per token uniformly, as
// test-backend-ops does.
type Uniform struct{}

// Counts implements Routing.
func (Uniform) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return UniformCounts(p, seed), nil
}

// Route returns the routing itself (for emulation): the draw Counts counts.
func (Uniform) Route(p tile.Problem, seed uint64) ([]int32, error) {
	return UniformIDs(p, seed), nil
}

// Name implements Routing.
func (Uniform) Name() string { return "uniform" }

// Zipf draws n_used distinct experts per token without replacement, expert e
// weighing 1/(e+1)^S (expert 0 the most popular); S = 0 is uniform.
type Zipf struct {
	S float64 // Zipf exponent, in [0, MaxZipfS]
}

// Counts implements Routing.
func (r Zipf) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return ZipfCounts(p, r.S, seed)
}

// Route returns the routing itself (for emulation): the draw Counts counts.
func (r Zipf) Route(p tile.Problem, seed uint64) ([]int32, error) {
	return ZipfIDs(p, r.S, seed)
}

// Name implements Routing: "zipf:S".
func (r Zipf) Name() string { return "zipf:" + strconv.FormatFloat(r.S, 'g', -1, 64) }

// Hot sends a Fraction of the picks to the first Experts experts (the hot
// ones), still n_used distinct experts per token.
type Hot struct {
	Experts  int     // hot experts H, in [1, n_mats-1]
	Fraction float64 // share of picks on hot experts F, in [0, 1]
}

// Counts implements Routing.
func (r Hot) Counts(p tile.Problem, seed uint64) ([]int32, error) {
	return HotCounts(p, r.Experts, r.Fraction, seed)
}

// Route returns the routing itself (for emulation): the draw Counts counts.
func (r Hot) Route(p tile.Problem, seed uint64) ([]int32, error) {
	return HotIDs(p, r.Experts, r.Fraction, seed)
}

// Name implements Routing: "hot:H:F".
func (r Hot) Name() string {
	return fmt.Sprintf("hot:%d:%s", r.Experts, strconv.FormatFloat(r.Fraction, 'g', -1, 64))
}

// File is a fixed routing, read from an ids file (ReadIDsFile): every
// draw is the same, whatever the seed.
type File struct {
	Path string  // where the ids came from (for names and messages)
	IDs  []int32 // ids[t*n_used+s]; must hold n × n_used ids of the problem
}

// Counts implements Routing: the file's tokens per expert, after checking
// that the file fits the problem.
func (r File) Counts(p tile.Problem, _ uint64) ([]int32, error) {
	tpe, err := CountIDs(p, r.IDs)
	if err != nil {
		return nil, fmt.Errorf("ids file %s: %w", r.Path, err)
	}
	return tpe, nil
}

// Route returns the file's ids (checked as Counts checks them).
func (r File) Route(p tile.Problem, seed uint64) ([]int32, error) {
	if _, err := r.Counts(p, seed); err != nil {
		return nil, err
	}
	return r.IDs, nil
}

// Name implements Routing: "file:PATH".
func (r File) Name() string { return "file:" + r.Path }

// Shared routes every token to the same n_used experts, 0 .. n_used-1, each
// token's slots in its own shuffled order: the ids test-backend-ops fills a
// model-graph MUL_MAT_ID case with (a --test-file row; test_generic_op,
// tests/test-backend-ops.cpp L7822-7831 at ggml d99724f), unlike its built-in
// cases' n_used distinct random experts (Uniform).
type Shared struct{}

// Counts implements Routing: n tokens for each of the first n_used experts.
func (Shared) Counts(p tile.Problem, _ uint64) ([]int32, error) {
	tpe := make([]int32, p.Experts)
	for e := 0; e < p.Used; e++ {
		tpe[e] = int32(p.Tokens)
	}
	return tpe, nil
}

// Route returns the ids: per token a shuffle of 0 .. n_used-1.
func (Shared) Route(p tile.Problem, seed uint64) ([]int32, error) {
	rng := rand.New(rand.NewPCG(seed, 0x7368617265640a00))
	ids := make([]int32, p.Tokens*p.Used)
	for t := 0; t < p.Tokens; t++ {
		row := ids[t*p.Used : (t+1)*p.Used]
		for s := range row {
			row[s] = int32(s)
		}
		rng.Shuffle(len(row), func(i, j int) { row[i], row[j] = row[j], row[i] })
	}
	return ids, nil
}

// Name implements Routing.
func (Shared) Name() string { return "shared" }
