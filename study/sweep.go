package study

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Sweep is a cartesian design-space sweep: one timing prediction per point of
// chips x variants x routings x ns, point i at index
// ((chip·len(Variants) + variant)·len(Routes) + routing)·len(Ns) + n (chip
// slowest, n fastest).
type Sweep struct {
	Chips    []*chips.Chip
	Variants []Variant
	Routes   []routing.Point
	Ns       []int
	Shape    Shape
	Path     *tile.Path       // every point's path; nil: a spec file's, else each chip's
	Kernel   tile.MetalKernel // every point's kernel; tile.KernelAuto: llama.cpp's choice per point
	Options  sim.Options      // the engine, the draws and the base seed (a point's seed derives from it)
	Labels   Labels           // name the inputs in point errors

	id string // ID, once computed
}

// Points returns the sweep's number of points.
func (s *Sweep) Points() int { return len(s.Chips) * len(s.Variants) * len(s.Routes) * len(s.Ns) }

// idVersion starts every sweep id's input; bump it when the rows a
// definition gives change meaning (a column added, removed or redefined).
const idVersion = "simrun sweep 2"

// ID identifies the definition of a sweep: 16 hex digits of the FNV-1a 64
// hash, through splitmix64 (so that close definitions get unlike ids), of
// everything that sets its points and their rows — the chips as loaded
// (their full parameters, whether named or read from a file), the variants as
// given (a point's error names them) and as defined (tile.Variant.Definition,
// and a spec file's path), the routings with their skew and a file routing's
// ids, the n list, the shape (with its op), the path, the kernel, the engine,
// the draws and the base seed. How the points are run (shards, workers) and written (the format) is
// not part of it: every shard of one sweep carries the same id. Spellings of
// a chip that load the same parameters (an alias, a chip file) give the same
// id.
func (s *Sweep) ID() (string, error) {
	if s.id != "" {
		return s.id, nil
	}
	h := fnv.New64a()
	// every item is a label and a length-prefixed value, so that no two
	// definitions hash the same input
	put := func(label string, v []byte) {
		fmt.Fprintf(h, "%s %d:", label, len(v))
		h.Write(v)
	}
	puts := func(label, v string) { put(label, []byte(v)) }
	puts("version", idVersion)
	for _, c := range s.Chips {
		b, err := json.Marshal(c)
		if err != nil {
			return "", fmt.Errorf("chip %s: %w", c.Name, err)
		}
		put("chip", b)
	}
	for _, va := range s.Variants {
		puts("variant", va.Arg)
		put("variant definition", va.Variant.Definition())
		if va.Path != nil {
			puts("variant path", va.Path.String())
		}
	}
	for _, rp := range s.Routes {
		puts("routing", rp.Routing.Name())
		puts("skew", rp.Skew)
		if f, ok := rp.Routing.(routing.File); ok {
			fmt.Fprintf(h, "ids %d:", 4*len(f.IDs))
			var buf [4096]byte
			for ids := f.IDs; len(ids) > 0; {
				k := min(len(ids), len(buf)/4)
				for j, id := range ids[:k] {
					binary.LittleEndian.PutUint32(buf[4*j:], uint32(id))
				}
				h.Write(buf[:4*k])
				ids = ids[k:]
			}
		}
	}
	for _, n := range s.Ns {
		puts("n", strconv.Itoa(n))
	}
	sh := s.Shape
	puts("shape", fmt.Sprintf("op=%s experts=%d used=%d m=%d k=%d type=%s half_b=%t b=%t bs=%d nr=%d", sh.Op, sh.Experts, sh.Used, sh.M, sh.K, sh.TypeA, sh.HalfB, sh.Broadcast,
		sh.DenseBatch, sh.DenseBroadcast))
	puts("kernel", s.Kernel.String())
	path := ""
	if s.Path != nil {
		path = s.Path.String()
	}
	puts("path", path)
	puts("engine", s.Options.Engine.String())
	puts("draws", strconv.Itoa(s.Options.Draws))
	puts("seed", strconv.FormatUint(s.Options.Seed, 10))
	s.id = fmt.Sprintf("%016x", splitmix64(h.Sum64()))
	return s.id, nil
}

// CheckWork estimates every point's run before any runs (sim.CheckWork, with
// the sweep's options) and returns the first past the bound, naming the
// point; a point that cannot run at all is left to its row's error. The
// routing does not change a run's estimate, so each chip, variant and n is
// estimated once.
func (s *Sweep) CheckWork() error {
	sm := sim.NewSimulator()
	for ci, chip := range s.Chips {
		for vi, va := range s.Variants {
			for ni, n := range s.Ns {
				w, err := s.Shape.Workload(n, s.Shape.M, s.Shape.K)
				if err != nil {
					continue
				}
				pt := Point{Chip: chip, Variant: va, Path: s.Path, Workload: w, Kernel: s.Kernel, Options: s.Options, Labels: s.Labels}
				if err := pt.CheckWork(sm); err != nil {
					i := (ci*len(s.Variants)+vi)*len(s.Routes)*len(s.Ns) + ni
					return fmt.Errorf("point %d (%s, %s, n = %d) and its other routings: %w", i, chip.Name, va.Arg, n, err)
				}
			}
		}
	}
	return nil
}

// row runs point i; a point that cannot run is a row with its error.
func (s *Sweep) row(sm *sim.Simulator, i int) *Row {
	ni := i % len(s.Ns)
	ri := i / len(s.Ns) % len(s.Routes)
	vi := i / len(s.Ns) / len(s.Routes) % len(s.Variants)
	ci := i / len(s.Ns) / len(s.Routes) / len(s.Variants)
	rp, n := s.Routes[ri], s.Ns[ni]
	w, err := s.Shape.Workload(n, s.Shape.M, s.Shape.K)
	pt := Point{Chip: s.Chips[ci], Variant: s.Variants[vi], Path: s.Path, Workload: w, Kernel: s.Kernel, Options: s.Options, Labels: s.Labels}
	pt.Options.Seed, pt.Options.Routing = PointSeed(s.Options.Seed, rp.Routing.Name(), n), rp.Routing
	r := pt.Row(nil)
	r.Index, r.Points, r.SweepID = i, s.Points(), s.id
	if w.Op == tile.OpMulMatID {
		r.Skew = rp.Skew
	}
	if err != nil {
		r.Path, r.Kernel, r.Error = "", "", s.Labels.Name(err).Error()
		return r
	}
	if r.Error != "" {
		return r
	}
	o, err := pt.Run(sm)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.fill(o)
	return r
}

// Run runs the points idx (ascending) on workers goroutines (0: GOMAXPROCS)
// sharing one simulator, and hands their rows to emit in idx order as they complete; an
// error from emit stops the run and is returned. done, if not nil, is called
// with the number of points completed after each (in any order).
func (s *Sweep) Run(idx []int, workers int, emit func(*Row) error, done func(completed int)) error {
	if _, err := s.ID(); err != nil {
		return err
	}
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sm := sim.NewSimulator()
	jobs := make(chan int)
	type result struct {
		pos int
		row *Row
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, max(len(idx), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pos := range jobs {
				results <- result{pos, s.row(sm, idx[pos])}
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		defer close(jobs)
		for pos := range idx {
			select {
			case jobs <- pos:
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	pending := map[int]*Row{}
	next, completed := 0, 0
	var err error
	for d := range results {
		completed++
		if done != nil {
			done(completed)
		}
		if err != nil {
			continue // drain
		}
		pending[d.pos] = d.row
		for pending[next] != nil {
			r := pending[next]
			delete(pending, next)
			next++
			if err = emit(r); err != nil {
				close(stop)
				break
			}
		}
	}
	return err
}

// PointSeed derives a point's routing seed from the base seed and the point's
// workload (routing and n) only, never from scheduling, so every chip and
// variant at one workload sees the same routing draws and a point gives the
// same numbers in any sweep that holds it: FNV-1a of both, mixed by
// splitmix64; never zero.
func PointSeed(base uint64, routing string, n int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", routing, n)
	z := splitmix64(base ^ h.Sum64())
	if z == 0 {
		z = 1
	}
	return z
}

// splitmix64 is one step of the splitmix64 generator: every bit of z moves
// about half of the result's bits.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// ParseShard parses a shard "i/N": shard i (0-based) of N. label names the
// input in errors.
func ParseShard(label, s string) (i, n int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%s %q: want i/N (0-based shard i of N)", label, s)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("%s %q: N = %d: must be at least 1", label, s, n)
	}
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%s %q: i = %d: must be in [0, %d)", label, s, i, n)
	}
	return i, n, nil
}

// ShardPoints returns the points shard i of n runs of a sweep of points
// points: i, i+n, i+2n, ...
func ShardPoints(points, i, n int) []int {
	var idx []int
	for p := i; p < points; p += n {
		idx = append(idx, p)
	}
	return idx
}

// Check reports the first n whose workload does not build or that the forced
// kernel cannot run (its rules, naming Labels.Kernel): bad input for every
// point, unlike a variant invalid on one chip's path, which is a row's
// error.
func (s *Sweep) Check() error {
	for _, n := range s.Ns {
		w, err := s.Shape.Workload(n, s.Shape.M, s.Shape.K)
		if err != nil {
			return s.Labels.Name(err)
		}
		if _, err := w.Kernel(s.Kernel); err != nil {
			return s.Labels.kernel(err)
		}
	}
	return nil
}

// SweepAxes are a sweep's axes as simrun sweep's flags give them: lists
// (comma-separated) of n, variants, chips, routings and skews, and the path
// ("": a spec file's, else each chip's).
type SweepAxes struct {
	Ns, Variants, Chips, Path, Routings, Skews string
}

// ParseSweep reads a sweep of shape sh, run by kernel (tile.KernelAuto:
// llama.cpp's choice) with opt, from its axes; errors name the flags (--n,
// --variant, --chip, --path, --routing, --skew) and, through labels, the
// shape's.
func ParseSweep(ax SweepAxes, sh Shape, kernel tile.MetalKernel, opt sim.Options, labels Labels) (*Sweep, error) {
	ns, err := ParseNs("--n", ax.Ns)
	if err != nil {
		return nil, err
	}
	variantItems, err := SplitList("--variant", ax.Variants)
	if err != nil {
		return nil, err
	}
	variants, err := LoadVariants("--variant", variantItems)
	if err != nil {
		return nil, err
	}
	chipList, err := LoadChips("--chip", ax.Chips)
	if err != nil {
		return nil, err
	}
	var path *tile.Path
	if ax.Path != "" {
		p, err := tile.ParsePath(ax.Path)
		if err != nil {
			return nil, fmt.Errorf("--path: %w", err)
		}
		path = &p
	}
	skews, err := ParseFloats("--skew", ax.Skews)
	if err != nil {
		return nil, err
	}
	routingItems, err := SplitList("--routing", ax.Routings)
	if err != nil {
		return nil, err
	}
	rp := routing.Parser{Experts: sh.Experts, Used: sh.Used, Label: "--routing", SkewLabel: "--skew", NLabel: "--n"}
	routes, err := rp.Expand(routingItems, skews)
	if err != nil {
		return nil, err
	}
	if err := rp.CheckTokens(routes, ns); err != nil {
		return nil, err
	}
	sw := &Sweep{Chips: chipList, Variants: variants, Routes: routes, Ns: ns, Shape: sh, Path: path, Kernel: kernel, Options: opt, Labels: labels}
	return sw, sw.Check()
}
