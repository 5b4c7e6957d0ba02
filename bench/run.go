package bench

import (
	"fmt"
	"github.com/metalsim/metalsim/chips"
	"slices"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Test is one llama-bench test: a prompt of Prompt tokens, then Gen
// generated tokens, timed together (docs/llama-graph.md §1.3).
type Test struct {
	Prompt, Gen int
}

// Name returns llama-bench's test name: pp512, tg128 or pp512+tg128.
func (t Test) Name() string {
	switch {
	case t.Gen == 0:
		return fmt.Sprintf("pp%d", t.Prompt)
	case t.Prompt == 0:
		return fmt.Sprintf("tg%d", t.Gen)
	}
	return fmt.Sprintf("pp%d+tg%d", t.Prompt, t.Gen)
}

// Tokens returns the tokens the test's rate counts.
func (t Test) Tokens() int { return t.Prompt + t.Gen }

// Setup is a test's context parameters: llama-bench's -b, -ub and -fa.
type Setup struct {
	Batch, Ubatch int
	FlashAttn     bool
}

// Limits on what a test may ask for.
const (
	MaxTokens = 1 << 20 // prompt + generated tokens of one test
	MaxBatch  = 1 << 16 // -b and -ub
)

// Bench estimates llama-bench tests of one model on one chip with one kernel
// variant. Matmuls that repeat (every layer's, every token's) are simulated
// once; a Bench is not safe for concurrent use.
type Bench struct {
	Model   *Model
	Chip    *chips.Chip
	Kernel  tile.Kernel
	Variant string // the variant's name
	Params  Params
	graph   *graph
	pricer  *pricer
}

// New prepares a model for estimates: every weight the graph reads must exist
// with the expected shape and a type metalsim can time.
func New(m *Model, chip *chips.Chip, k tile.Kernel, par Params, s *sim.Simulator, opt sim.Options) (*Bench, error) {
	if err := par.Validate(); err != nil {
		return nil, err
	}
	g, err := newGraph(m)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = sim.NewSimulator()
	}
	return &Bench{Model: m, Chip: chip, Kernel: k, Variant: k.Name, Params: par, graph: g, pricer: newPricer(s, chip, k, opt)}, nil
}

// Check reports why a test cannot run with a setup, naming the field: the
// batch sizes' ranges, -ub above -b, an empty test, or one longer than the
// model's context.
func (b *Bench) Check(t Test, s Setup) error {
	switch {
	case s.Batch < 1 || s.Batch > MaxBatch:
		return fmt.Errorf("-b = %d: must be in [1, %d]", s.Batch, MaxBatch)
	case s.Ubatch < 1 || s.Ubatch > MaxBatch:
		return fmt.Errorf("-ub = %d: must be in [1, %d]", s.Ubatch, MaxBatch)
	case s.Ubatch > s.Batch:
		return fmt.Errorf("-ub = %d: must be at most -b (%d): a ubatch is part of one batch", s.Ubatch, s.Batch)
	case t.Prompt < 0 || t.Gen < 0 || t.Tokens() == 0:
		return fmt.Errorf("test %s: needs prompt or generated tokens", t.Name())
	case t.Tokens() > MaxTokens:
		return fmt.Errorf("test %s: %d tokens: must be at most %d", t.Name(), t.Tokens(), MaxTokens)
	}
	if dk := b.Model.Config.KeyDim(); s.FlashAttn && !slices.Contains(faHeadSizes, dk) {
		return fmt.Errorf("-fa 1: head size %d: kernel_flash_attn_ext has no form for it (%v); use -fa 0", dk, faHeadSizes)
	}
	if ctx := b.Model.Config.Context.Value; ctx > 0 && t.Tokens() > ctx {
		return fmt.Errorf("test %s: %d tokens: longer than %s's context of %d (%s)", t.Name(), t.Tokens(), b.Model.Config.Name, ctx, b.Model.Config.Context.Key)
	}
	return nil
}

// faHeadSizes are the head sizes kernel_flash_attn_ext supports
// (docs/llama-graph.md §3.1).
var faHeadSizes = []int{32, 40, 48, 64, 72, 80, 96, 112, 128, 192, 256, 320, 512, 576}

// pad256 rounds up to a multiple of 256 (llama.cpp pads n_ctx and n_kv so).
func pad256(n int) int { return (n + 255) / 256 * 256 }

// kvLength is the KV length the graph sees after used cells are filled: the
// used cells padded to 256, at least 256, at most the cache (§3.4).
func kvLength(cells, used int) int { return min(cells, max(256, pad256(used))) }

// evals returns the graph evaluations of a test in order: the prompt in
// llama_decode calls of -b tokens, each split into ubatches of -ub with only
// the call's last token requesting output, then one evaluation per generated
// token (docs/llama-graph.md §1).
func (b *Bench) evals(t Test, s Setup) []eval {
	c := b.Model.Config
	cells := pad256(t.Tokens())
	cellsSWA := cells
	if w := c.SlidingWindow.Value; w > 0 {
		cellsSWA = min(cells, pad256(w+s.Ubatch))
	}
	var out []eval
	used := 0
	next := func(T, O int) {
		out = append(out, eval{T: T, Pos: used, S: kvLength(cells, used+T), SSWA: kvLength(cellsSWA, used+T), O: O, FA: s.FlashAttn})
		used += T
	}
	for done := 0; done < t.Prompt; {
		nb := min(t.Prompt-done, s.Batch)
		for u := 0; u < nb; u += s.Ubatch {
			T := min(s.Ubatch, nb-u)
			O := 0
			if u+T == nb {
				O = 1
			}
			next(T, O)
		}
		done += nb
	}
	for i := 0; i < t.Gen; i++ {
		next(1, 1)
	}
	return out
}

// Profile prices every node of every evaluation of a test.
func (b *Bench) Profile(t Test, s Setup) (*Profile, error) {
	if err := b.Check(t, s); err != nil {
		return nil, err
	}
	p := newProfile()
	var err error
	for _, e := range b.evals(t, s) {
		p.Evals++
		b.graph.build(e, func(n Node) {
			if err != nil {
				return
			}
			var it item
			if it, err = b.pricer.price(n); err == nil {
				p.add(it)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	p.done()
	return p, nil
}

// Result is one test's estimate.
type Result struct {
	Test  Test
	Setup Setup
	Us    float64 // the timed region
	// TS is llama-bench's avg_ts: tokens per second. The estimate is
	// deterministic, so its stddev_ts is 0.
	TS        float64
	Breakdown []Line
}

// Run estimates one test.
func (b *Bench) Run(t Test, s Setup) (*Result, error) {
	p, err := b.Profile(t, s)
	if err != nil {
		return nil, err
	}
	us, lines := p.Time(b.Params, b.pricer.rates.dramGBs)
	return &Result{Test: t, Setup: s, Us: us, TS: f(t.Tokens()) / (us * 1e-6), Breakdown: lines}, nil
}
