package tile

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/metalsim/metalsim/isa"
)

// Context is the data-independent key of a threadgroup's program: the rows and
// tokens its tile holds (Tokens = 0 for a threadgroup that exits early) and the
// number of k-steps. Op streams are built and cached per Context.
type Context struct {
	Rows, Tokens int
	Steps        int
	// Repeat marks a token tile after the first of its expert and row tile: the
	// neighbouring threadgroup (one index earlier, running at the same time) has
	// just read the same weights, so they come from a cache. It does not change
	// the program, only where its weight loads are served.
	Repeat bool
}

// Exit reports whether the threadgroup returns right after reading its count.
func (c Context) Exit() bool { return c.Tokens == 0 }

// Plan is the grid of threadgroups of one mul_mm_id dispatch: x = token tiles
// (sized for the worst case, all tokens on one expert), y = row tiles, z =
// experts; threadgroups are numbered x fastest (the dispatch order).
type Plan struct {
	Problem Problem
	Kernel  Kernel
	Grid    [3]int  // x, y, z
	TPE     []int32 // tokens per expert (from the routing map)
}

// NewPlan validates the problem and the kernel and lays out the grid.
func NewPlan(p Problem, k Kernel, tpe []int32) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := k.Validate(k.Path); err != nil {
		return nil, err
	}
	if err := checkSteps(p, k); err != nil {
		return nil, err
	}
	if len(tpe) != p.Experts {
		return nil, fmt.Errorf("tokens per expert: %d values, want n_mats = %d", len(tpe), p.Experts)
	}
	for e, n := range tpe {
		if n < 0 || int(n) > p.Tokens {
			return nil, fmt.Errorf("tokens per expert[%d] = %d: must be in [0, %d]", e, n, p.Tokens)
		}
	}
	return &Plan{
		Problem: p, Kernel: k, TPE: tpe,
		Grid: [3]int{ceilDiv(p.Tokens, k.NR1), ceilDiv(p.M, k.NR0), p.Experts},
	}, nil
}

// checkSteps reports a k that is not a whole number of the tile's k-steps.
func checkSteps(p Problem, k Kernel) error {
	if p.K%k.NK != 0 {
		return fmt.Errorf("problem: k = %d: must be a multiple of the tile's nk = %d (the bounds-checked K tail is not modelled)", p.K, k.NK)
	}
	return nil
}

// Threadgroups returns threadgroup i's program (by dispatch order) and whether
// its weights were just read by the neighbouring threadgroup, for the timing
// engines. It keeps a memo of b's programs by the only things a dispatch's
// contexts differ in (tokens, 0 for an exit, and full or edge rows), so a
// threadgroup finds its program without the builder's lock; the returned
// function is for one goroutine at a time.
func (pl *Plan) Threadgroups(b *Builder) func(i int) (*isa.Program, bool) {
	k := pl.Kernel
	progs := make([]*isa.Program, 2*(k.NR1+1))
	return func(i int) (*isa.Program, bool) {
		ctx := pl.Context(pl.Coords(i))
		j := ctx.Tokens
		if ctx.Rows != k.NR0 && ctx.Tokens > 0 {
			j += k.NR1 + 1
		}
		prog := progs[j]
		if prog == nil {
			prog = b.Program(ctx)
			progs[j] = prog
		}
		return prog, ctx.Repeat
	}
}

// Tile is one threadgroup that does not exit early, with the data it works on.
type Tile struct {
	X, Y, Z int // grid coordinates: token tile, row tile, expert
	Row0    int // first weight row of the tile
	Token0  int // index of the tile's first routed (token, slot) in the expert's map0 list
	Context
}

// ActiveTiles returns the threadgroups that compute (do not exit early), in
// dispatch order (x fastest).
func (pl *Plan) ActiveTiles() []Tile {
	k := pl.Kernel
	var out []Tile
	for z := 0; z < pl.Grid[2]; z++ {
		for y := 0; y < pl.Grid[1]; y++ {
			for x := 0; x*k.NR1 < int(pl.TPE[z]); x++ {
				out = append(out, Tile{X: x, Y: y, Z: z, Row0: y * k.NR0, Token0: x * k.NR1, Context: pl.Context(x, y, z)})
			}
		}
	}
	return out
}

// Launched returns the number of threadgroups the dispatch launches.
func (pl *Plan) Launched() int { return pl.Grid[0] * pl.Grid[1] * pl.Grid[2] }

// Coords splits a linear threadgroup index into (x, y, z), x fastest.
func (pl *Plan) Coords(i int) (x, y, z int) {
	x = i % pl.Grid[0]
	i /= pl.Grid[0]
	return x, i % pl.Grid[1], i / pl.Grid[1]
}

// Context returns the tile context of threadgroup (x, y, z).
func (pl *Plan) Context(x, y, z int) Context {
	k := pl.Kernel
	steps := pl.Problem.K / k.NK
	r1 := x * k.NR1
	tpe := int(pl.TPE[z])
	if r1 >= tpe {
		return Context{Steps: steps}
	}
	r0 := y * k.NR0
	return Context{Rows: min(k.NR0, pl.Problem.M-r0), Tokens: min(k.NR1, tpe-r1), Steps: steps, Repeat: x > 0}
}

// Active returns the number of threadgroups that do not exit early.
func (pl *Plan) Active() int {
	n := 0
	for _, t := range pl.TPE {
		n += ceilDiv(int(t), pl.Kernel.NR1)
	}
	return n * pl.Grid[1]
}

// ContextCounts returns how many threadgroups run each context, in a
// deterministic order (exits first, then by rows and tokens).
func (pl *Plan) ContextCounts() []ContextCount {
	m := map[Context]int{}
	steps := pl.Problem.K / pl.Kernel.NK
	active := 0
	for y := 0; y < pl.Grid[1]; y++ {
		rows := min(pl.Kernel.NR0, pl.Problem.M-y*pl.Kernel.NR0)
		for _, t := range pl.TPE {
			for r1 := 0; r1 < int(t); r1 += pl.Kernel.NR1 {
				m[Context{Rows: rows, Tokens: min(pl.Kernel.NR1, int(t)-r1), Steps: steps, Repeat: r1 > 0}]++
				active++
			}
		}
	}
	if exits := pl.Launched() - active; exits > 0 {
		m[Context{Steps: steps}] = exits
	}
	out := make([]ContextCount, 0, len(m))
	for c, n := range m {
		out = append(out, ContextCount{c, n})
	}
	sortContextCounts(out)
	return out
}

// ContextCount is a context and how many threadgroups run it.
type ContextCount struct {
	Context
	N int
}

func sortContextCounts(cs []ContextCount) {
	slices.SortFunc(cs, func(a, b ContextCount) int {
		rep := func(c ContextCount) int {
			if c.Repeat {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(a.Tokens, b.Tokens), cmp.Compare(a.Rows, b.Rows), cmp.Compare(a.Steps, b.Steps), cmp.Compare(rep(a), rep(b)))
	})
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// WeightBytes returns the bytes of the problem's whole weight tensor: every
// expert's m rows of k weights.
func (p *Plan) WeightBytes() float64 {
	rb, err := p.Problem.TypeA.RowBytes(p.Problem.K)
	if err != nil {
		return 0 // NewPlan checked k; a plan built by hand may not have
	}
	return float64(p.Problem.Experts) * float64(p.Problem.M) * float64(rb)
}
