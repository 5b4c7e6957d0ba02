package main

import (
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

const sweepSummary = `Run a cartesian design-space sweep: every chip x variant x routing (x skew) x n, one timing
prediction per point, in parallel over the cores (--workers). Output is one row per point, ordered
by the point's cartesian index (chip slowest, n fastest), as CSV or JSON on stdout; the bytes are
the same for any worker count. Each point's routing seed is derived from --seed, the point's routing
and its n only (never from scheduling), so every chip and variant at one workload sees the same
routing draws, and a point gives the same numbers in any sweep that contains it.

Routing specs (--routing, comma-separated): uniform; zipf:S (popularity ~ 1/rank^S, S in [0, 8]);
hot:H:F (a fraction F of the picks on the first H experts); file:PATH (an ids file: raw
little-endian int32 n x n_used, or CSV with one token of n_used ids per line; it fixes n). A spec
without its last parameter, zipf or hot:H, takes it from every --skew value in turn.

Sharding (--shard i/N) runs every N-th point starting at i, so a sweep spreads over a batch system;
every row carries the sweep's points count and sweep_id (a hash of every flag but --shard,
--workers and --format, and of the chips and variants they load), and simrun merge checks both as it joins the
shard outputs into exactly the bytes of the unsharded run:
  Slurm array:      #SBATCH --array=0-15
                    simrun sweep ... --shard $SLURM_ARRAY_TASK_ID/16 > shard-$SLURM_ARRAY_TASK_ID.csv
  Kubernetes:       an Indexed Job (completionMode: Indexed, completions: 16) running
                    simrun sweep ... --shard $JOB_COMPLETION_INDEX/16 > /out/shard-$JOB_COMPLETION_INDEX.csv
  GNU parallel:     parallel 'simrun sweep ... --shard {}/8 > shard-{}.csv' ::: $(seq 0 7)
  then:             simrun merge shard-*.csv > sweep.csv
A point that fails (e.g. a variant invalid on a chip's path) is a row with the error column set, and
the exit status is 1. A progress bar is drawn on stderr only when stderr is a terminal.
(docs/sweep.md has the details.)

usage: simrun sweep [flags]`

// ---------------------------------------------------------------------------
// Flag helpers shared by sweep, compare and model.

// splitList splits the comma-separated value of flag --flagName into trimmed
// items. An empty item ("32,,64", a trailing comma) or one given twice is an
// error: either is a typo more often than not, and dropping or repeating it
// would run something else than asked. An empty value gives no items (the
// caller decides whether that is allowed).
func splitList(flagName, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--%s %q: item %d is empty (a comma too many?)", flagName, s, i+1)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("--%s %q: %q is given twice", flagName, s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseNList parses a comma-separated list of token counts.
func parseNList(flagName, s string) ([]int, error) {
	items, err := splitList(flagName, s)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("--%s %q: want a comma-separated list of token counts", flagName, s)
	}
	out := make([]int, 0, len(items))
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > tile.MaxTokens {
			return nil, fmt.Errorf("--%s: %q: must be an integer in [1, %d]", flagName, it, tile.MaxTokens)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseFloatList parses a comma-separated list of numbers.
func parseFloatList(flagName, s string) ([]float64, error) {
	items, err := splitList(flagName, s)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, it := range items {
		v, err := strconv.ParseFloat(it, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--%s: %q: not a number", flagName, it)
		}
		out = append(out, v)
	}
	return out, nil
}

// resolveChips looks up a comma-separated list of chips: names or aliases
// (simrun chips), or chip files (*.json).
func resolveChips(s string) ([]*sim.Chip, error) {
	items, err := splitList("chip", s)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("--chip %q: want one or more chips (simrun chips lists them)", s)
	}
	var out []*sim.Chip
	for _, it := range items {
		c, err := chipByNameOrFile(it)
		if err != nil {
			// these commands take chip files in --chip itself
			return nil, fmt.Errorf("--chip: %s", strings.Replace(err.Error(), "; or load one with --chip-file", "; or give a chip .json file", 1))
		}
		out = append(out, c)
	}
	return out, nil
}

// chipByNameOrFile returns the chip a --chip value names: a chip .json file,
// or a chip name or alias.
func chipByNameOrFile(s string) (*sim.Chip, error) {
	if strings.HasSuffix(strings.ToLower(s), ".json") {
		return sim.LoadChipFile(s)
	}
	return sim.LookupChip(s)
}

// variantArg is a variant as given on the command line: a built-in name or a
// spec file, which may fix the path.
type variantArg struct {
	arg  string
	v    tile.Variant
	path *tile.Path
}

// resolveVariants loads variants (built-in names or .toml spec files); label
// names the flag or argument in errors.
func resolveVariants(label string, args []string) ([]variantArg, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want one or more variants (simrun variants lists them)", label)
	}
	var out []variantArg
	for _, a := range args {
		v, path, err := tile.LoadVariant(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		out = append(out, variantArg{arg: a, v: v, path: path})
	}
	return out, nil
}

// kernel picks the path (--path, else the spec file's, else the chip's
// default) and validates the variant on it.
func (va variantArg) kernel(chip *sim.Chip, pathFlag string) (tile.Kernel, error) {
	path := tile.Simdgroup
	switch {
	case pathFlag != "":
		p, err := tile.ParsePath(pathFlag)
		if err != nil {
			return tile.Kernel{}, fmt.Errorf("--path: %w", err)
		}
		path = p
	case va.path != nil:
		path = *va.path
	case chip.TensorPath:
		path = tile.Tensor
	}
	k := tile.Kernel{Variant: va.v, Path: path}
	if err := va.v.Validate(path); err != nil {
		return k, fmt.Errorf("variant %s on the %s path: %w", va.arg, path, err)
	}
	return k, nil
}

// checkPath validates --path early.
func checkPath(s string) error {
	if s == "" {
		return nil
	}
	_, err := tile.ParsePath(s)
	if err != nil {
		return fmt.Errorf("--path: %w", err)
	}
	return nil
}

// routingParser reads routing specs for a shape, its errors naming the
// flags.
func routingParser(used, experts int) routing.Parser {
	return routing.Parser{Experts: experts, Used: used, Label: "--routing", SkewLabel: "--skew", NLabel: "--n"}
}

// parseOneRouting parses the single --routing of compare and model, a spec
// with its parameters, and checks a file routing's tokens against ns.
func parseOneRouting(cmd, spec string, used, experts int, ns []int) (routing.Routing, error) {
	ps := routingParser(used, experts)
	s, err := ps.Parse(spec)
	switch {
	case err != nil && strings.Contains(spec, ","):
		return nil, fmt.Errorf("--routing %q: %s takes one routing (simrun sweep takes a list)", spec, cmd)
	case err == nil && s.Routing == nil:
		return nil, fmt.Errorf("--routing %q: give its parameter (zipf:S, hot:H:F)", spec)
	case err != nil:
		return nil, err
	}
	return s.Routing, ps.CheckTokens([]routing.Point{{Routing: s.Routing, Tokens: s.Tokens}}, ns)
}

// flagError names the flag of a tile.Problem validation error.
func flagError(err error) error {
	s := err.Error()
	if strings.HasPrefix(s, "--") {
		return err // already names its flag
	}
	for _, r := range []struct{ field, flag string }{
		{"n_mats (experts)", "--experts"}, {"n_used (experts per token)", "--used"},
		{"m (rows)", "--m"}, {"problem: k", "--k"}, {"n (tokens)", "--n"},
	} {
		if strings.Contains(s, r.field) {
			return fmt.Errorf("%s: %w", r.flag, err)
		}
	}
	return err
}

// parseWithArgs parses flags that may come before, between or after
// positional arguments, and returns the positional ones.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	for {
		if code, ok := parse(fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		if rest[0] == "--" || len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagsGiven returns the names of the flags given on the command line.
func flagsGiven(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// stderrTerminal returns w as a file when it is a terminal (for progress bars).
func stderrTerminal(w io.Writer) *os.File {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}

// sweepProgress draws a progress bar on a terminal; nil draws nothing.
type sweepProgress struct {
	w      *os.File
	total  int
	start  time.Time
	last   time.Time
	label  string
	closed bool
}

func newSweepProgress(stderr io.Writer, label string, total int) *sweepProgress {
	f := stderrTerminal(stderr)
	if f == nil {
		return nil
	}
	return &sweepProgress{w: f, total: total, start: time.Now(), label: label}
}

func (p *sweepProgress) update(done int) {
	if p == nil || p.closed {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	fill := width * done / max(p.total, 1)
	el := now.Sub(p.start).Seconds()
	eta := ""
	if done > 0 && done < p.total {
		eta = fmt.Sprintf(", ETA %.0f s", el/float64(done)*float64(p.total-done))
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d points, %.1f s%s\033[K", p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, p.total, el, eta)
	if done >= p.total {
		fmt.Fprintln(p.w)
		p.closed = true
	}
}

// ---------------------------------------------------------------------------
// The sweep.

// sweepRow is one point's result; the CSV columns and JSON fields follow
// sweepColumns.
type sweepRow struct {
	Index            int     `json:"index"`
	Points           int     `json:"points"`
	SweepID          string  `json:"sweep_id"`
	Chip             string  `json:"chip"`
	Variant          string  `json:"variant"`
	Path             string  `json:"path"`
	Routing          string  `json:"routing"`
	Skew             string  `json:"skew"`
	N                int     `json:"n"`
	Experts          int     `json:"experts"`
	Used             int     `json:"used"`
	M                int     `json:"m"`
	K                int     `json:"k"`
	TypeA            string  `json:"type_a"`
	TypeB            string  `json:"type_b"`
	B                int     `json:"b"`
	Engine           string  `json:"engine"`
	Draws            int     `json:"draws"`
	Seed             uint64  `json:"seed"`
	TotalUs          float64 `json:"total_us"`
	KernelUs         float64 `json:"kernel_us"`
	Map0Us           float64 `json:"map0_us"`
	DispatchUs       float64 `json:"dispatch_us"`
	TFLOPS           float64 `json:"tflops"`
	DRAMBytes        float64 `json:"dram_bytes"`
	TGsPerCore       int     `json:"tgs_per_core"`
	OccupancyLimiter string  `json:"occupancy_limiter"`
	Registers        int     `json:"registers_per_thread"`
	Limiter          string  `json:"limiter"`
	Threadgroups     int64   `json:"threadgroups"`
	Tiles            int64   `json:"tiles"`
	Exited           int64   `json:"exited"`
	HalfTilesSkipped int64   `json:"half_tiles_skipped"`
	MMA8             int64   `json:"mma8"`
	MMA8Skipped      int64   `json:"mma8_skipped"`
	MMA16            int64   `json:"mma16"`
	MMA16Skipped     int64   `json:"mma16_skipped"`
	Matmul2D         int64   `json:"matmul2d"`
	Matmul2DSkipped  int64   `json:"matmul2d_skipped"`
	Error            string  `json:"error"`
}

// sweepColumns is the CSV header, in sweepRow field order.
var sweepColumns = []string{"index", "points", "sweep_id", "chip", "variant", "path", "routing", "skew", "n", "experts", "used", "m", "k",
	"type_a", "type_b", "b", "engine", "draws", "seed", "total_us", "kernel_us", "map0_us", "dispatch_us", "tflops", "dram_bytes",
	"tgs_per_core", "occupancy_limiter", "registers_per_thread", "limiter", "threadgroups", "tiles", "exited", "half_tiles_skipped",
	"mma8", "mma8_skipped", "mma16", "mma16_skipped", "matmul2d", "matmul2d_skipped", "error"}

func (r *sweepRow) record() []string {
	i := func(v int) string { return strconv.Itoa(v) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{i(r.Index), i(r.Points), r.SweepID, r.Chip, r.Variant, r.Path, r.Routing, r.Skew, i(r.N), i(r.Experts), i(r.Used),
		i(r.M), i(r.K), r.TypeA, r.TypeB, i(r.B), r.Engine, i(r.Draws), strconv.FormatUint(r.Seed, 10),
		f(r.TotalUs), f(r.KernelUs), f(r.Map0Us), f(r.DispatchUs), f(r.TFLOPS), f(r.DRAMBytes), i(r.TGsPerCore), r.OccupancyLimiter, i(r.Registers), r.Limiter,
		i64(r.Threadgroups), i64(r.Tiles), i64(r.Exited), i64(r.HalfTilesSkipped), i64(r.MMA8), i64(r.MMA8Skipped),
		i64(r.MMA16), i64(r.MMA16Skipped), i64(r.Matmul2D), i64(r.Matmul2DSkipped), r.Error}
}

// fill copies a result into the row.
func (r *sweepRow) fill(res *sim.Result) {
	r.TotalUs, r.KernelUs, r.Map0Us, r.DispatchUs, r.TFLOPS = res.TotalUs, res.KernelUs, res.Map0Us, res.OverheadUs, res.TFLOPS
	r.TGsPerCore, r.OccupancyLimiter, r.Limiter = res.Occupancy.TGsPerCore, res.Occupancy.Limiter, res.Limit.Short()
	r.Registers, r.DRAMBytes = res.Registers.Total, res.DRAMBytes
	c := res.Counters
	r.Threadgroups, r.Tiles, r.Exited = c.Launched, c.Active, c.Exited
	r.HalfTilesSkipped = c.Skipped.HalfTiles
	r.MMA8, r.MMA8Skipped, r.MMA16, r.MMA16Skipped = c.Work.MMA8, c.Skipped.MMA8, c.Work.MMA16, c.Skipped.MMA16
	r.Matmul2D, r.Matmul2DSkipped = c.Work.Matmul2D, c.Skipped.Matmul2D
}

// sweepWriter writes rows as CSV or JSON; merge writes the rows it read back
// with it, so merged shards are byte-identical to an unsharded run.
type sweepWriter struct {
	w      io.Writer
	json   bool
	points int
	rows   int
	csv    *csv.Writer
}

// newSweepWriter starts an output of a sweep of points points whose
// definition has the given id (sweepID); JSON carries both in its header.
func newSweepWriter(w io.Writer, asJSON bool, points int, id string) (*sweepWriter, error) {
	sw := &sweepWriter{w: w, json: asJSON, points: points}
	if asJSON {
		_, err := fmt.Fprintf(w, `{"points":%d,"sweep_id":%q,"rows":[`, points, id)
		return sw, err
	}
	sw.csv = csv.NewWriter(w)
	return sw, sw.csv.Write(sweepColumns)
}

// writeJSONRow writes one row's encoded object.
func (sw *sweepWriter) writeJSONRow(raw []byte) error {
	sep := ",\n"
	if sw.rows == 0 {
		sep = "\n"
	}
	sw.rows++
	if _, err := io.WriteString(sw.w, sep); err != nil {
		return err
	}
	_, err := sw.w.Write(raw)
	return err
}

func (sw *sweepWriter) write(r *sweepRow) error {
	if !sw.json {
		return sw.csv.Write(r.record())
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return sw.writeJSONRow(raw)
}

func (sw *sweepWriter) close() error {
	if sw.json {
		_, err := io.WriteString(sw.w, "\n]}\n")
		return err
	}
	sw.csv.Flush()
	return sw.csv.Error()
}

// sweepSpec is a parsed sweep: the axes, slowest first.
type sweepSpec struct {
	chips    []*sim.Chip
	variants []variantArg
	routes   []routing.Point
	ns       []int
	shape    shapeFlags
	path     string
	opt      sim.Options
	id       string // sweepID of the above
}

func (s *sweepSpec) points() int { return len(s.chips) * len(s.variants) * len(s.routes) * len(s.ns) }

// row runs point i.
func (s *sweepSpec) row(sm *sim.Simulator, i int) *sweepRow {
	ni := i % len(s.ns)
	ri := i / len(s.ns) % len(s.routes)
	vi := i / len(s.ns) / len(s.routes) % len(s.variants)
	ci := i / len(s.ns) / len(s.routes) / len(s.variants)
	chip, va, rp, n := s.chips[ci], s.variants[vi], s.routes[ri], s.ns[ni]
	typeA, halfB, _ := s.shape.types()
	r := &sweepRow{Index: i, Points: s.points(), SweepID: s.id, Chip: chip.Name, Variant: va.v.Name, Routing: rp.Routing.Name(), Skew: rp.Skew,
		N: n, Experts: s.shape.experts, Used: s.shape.used, M: s.shape.m, K: s.shape.k, TypeA: typeA.String(), TypeB: "f32",
		Engine: s.opt.Engine.String(), Draws: s.opt.Draws, Seed: pointSeed(s.opt.Seed, rp.Routing.Name(), n)}
	if halfB {
		r.TypeB = "f16"
	}
	if s.shape.bcast {
		r.B = 1
	}
	k, err := va.kernel(chip, s.path)
	r.Path = k.Path.String()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	p, err := s.shape.problem(n, s.shape.m, s.shape.k)
	if err == nil {
		err = sim.CheckMap0(p, chip, "--experts", "--used")
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	opt := s.opt
	opt.Seed, opt.Routing = r.Seed, rp.Routing
	res, err := sm.Run(p, k, chip, opt)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.fill(res)
	return r
}

// pointSeed derives a point's routing seed from the base seed and the point's
// workload (routing and n): FNV-1a of both, mixed by splitmix64; never zero.
func pointSeed(base uint64, routing string, n int) uint64 {
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

// parseShard parses --shard i/N.
func parseShard(s string) (int, int, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--shard %q: want i/N (0-based shard i of N)", s)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("--shard %q: N = %d: must be at least 1", s, n)
	}
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: i = %d: must be in [0, %d)", s, i, n)
	}
	return i, n, nil
}

func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sweep", sweepSummary, stderr)
	var shape shapeFlags
	var sf simFlags
	shape.register(fs)
	sf.register(fs)
	nFlag := fs.String("n", "32,64,128,256,512", "tokens: comma-separated list")
	variantFlag := fs.String("variant", "upstream,halftile", "kernel variants: comma-separated built-in names or .toml spec files")
	chipFlag := fs.String("chip", "M1 Pro 16-core GPU", "chips: comma-separated names or aliases (simrun chips), or chip .json files")
	pathFlag := fs.String("path", "", "kernel path for every point: simdgroup or tensor (default: a spec file's path, else each chip's)")
	routingFlag := fs.String("routing", "uniform", "routings: comma-separated uniform, zipf:S, hot:H:F, file:PATH; zipf and hot:H take --skew")
	skewFlag := fs.String("skew", "", "values completing the routings given without their last parameter (zipf: S; hot:H: F)")
	format := fs.String("format", "csv", "output: csv or json")
	shard := fs.String("shard", "0/1", "run shard i of N (0-based): points i, i+N, i+2N, ...")
	workers := fs.Int("workers", 0, "parallel workers (0: GOMAXPROCS); the output is the same for any value")
	fs.Lookup("seed").Usage = "base seed: each point's routing seed derives from it, the point's routing and n (the seed column)"
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "sweep", fmt.Errorf("unexpected argument %q (sweep takes flags only)", fs.Arg(0)))
	}
	if err := checkGivenNotEmpty(fs, "empty; leave the flag out for its default", "path"); err != nil {
		return fail(stderr, "sweep", err)
	}
	spec, err := parseSweepFlags(&shape, &sf, *nFlag, *variantFlag, *chipFlag, *pathFlag, *routingFlag, *skewFlag)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	if *format != "csv" && *format != "json" {
		return fail(stderr, "sweep", fmt.Errorf("--format %q: allowed csv, json", *format))
	}
	si, sn, err := parseShard(*shard)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	if *workers < 0 {
		return fail(stderr, "sweep", fmt.Errorf("--workers = %d: must be >= 0", *workers))
	}
	nw := *workers
	if nw == 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	var idx []int
	for i := si; i < spec.points(); i += sn {
		idx = append(idx, i)
	}
	sw, err := newSweepWriter(stdout, *format == "json", spec.points(), spec.id)
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	failed, firstErr, err := runPoints(spec, idx, nw, sw, newSweepProgress(stderr, "sweep", len(idx)))
	if err == nil {
		err = sw.close()
	}
	if err != nil {
		return fail(stderr, "sweep", err)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "simrun sweep: %d of %d points failed (error column); first: %s\n", failed, len(idx), firstErr)
		return exitFailed
	}
	sf.writeRates(stderr)
	return exitOK
}

func parseSweepFlags(shape *shapeFlags, sf *simFlags, nFlag, variantFlag, chipFlag, pathFlag, routingFlag, skewFlag string) (*sweepSpec, error) {
	ns, err := parseNList("n", nFlag)
	if err != nil {
		return nil, err
	}
	if _, err := shape.problem(ns[0], shape.m, shape.k); err != nil {
		return nil, err
	}
	variantItems, err := splitList("variant", variantFlag)
	if err != nil {
		return nil, err
	}
	variants, err := resolveVariants("--variant", variantItems)
	if err != nil {
		return nil, err
	}
	chips, err := resolveChips(chipFlag)
	if err != nil {
		return nil, err
	}
	if err := checkPath(pathFlag); err != nil {
		return nil, err
	}
	skews, err := parseFloatList("skew", skewFlag)
	if err != nil {
		return nil, err
	}
	routingItems, err := splitList("routing", routingFlag)
	if err != nil {
		return nil, err
	}
	rp := routingParser(shape.used, shape.experts)
	routes, err := rp.Expand(routingItems, skews)
	if err != nil {
		return nil, err
	}
	if err := rp.CheckTokens(routes, ns); err != nil {
		return nil, err
	}
	opt, err := sf.options()
	if err != nil {
		return nil, err
	}
	spec := &sweepSpec{chips: chips, variants: variants, routes: routes, ns: ns, shape: *shape, path: pathFlag, opt: opt}
	if spec.id, err = sweepID(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// sweepIDVersion starts every sweep id's input; bump it when the rows a
// definition gives change meaning (a column added, removed or redefined).
const sweepIDVersion = "simrun sweep 1"

// sweepID identifies the definition of a sweep: 16 hex digits of the FNV-1a
// 64 hash, through splitmix64 (so that close definitions get unlike ids), of
// everything that sets its points and their rows — the chips as
// loaded (their full parameters, whether named or read from a file), the
// variants as given (a point's error names them) and as defined (and a spec
// file's path), the routings with their skew and a file routing's ids, the n
// list, the shape, --path, the engine, the draws and the base seed. It leaves
// out --shard, --workers and --format: every shard of one sweep carries the
// same id, the output is the same for any worker count, and merge checks the
// format itself. Spellings of a chip that load the same parameters (an alias,
// a chip file) give the same id.
func sweepID(s *sweepSpec) (string, error) {
	h := fnv.New64a()
	// every item is a label and a length-prefixed value, so that no two
	// definitions hash the same input
	put := func(label string, v []byte) {
		fmt.Fprintf(h, "%s %d:", label, len(v))
		h.Write(v)
	}
	puts := func(label, v string) { put(label, []byte(v)) }
	puts("version", sweepIDVersion)
	for _, c := range s.chips {
		b, err := json.Marshal(c)
		if err != nil {
			return "", fmt.Errorf("--chip %s: %w", c.Name, err)
		}
		put("chip", b)
	}
	for _, va := range s.variants {
		puts("variant", va.arg)
		put("variant definition", va.v.Definition())
		if va.path != nil {
			puts("variant path", va.path.String())
		}
	}
	for _, rp := range s.routes {
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
	for _, n := range s.ns {
		puts("n", strconv.Itoa(n))
	}
	typeA, halfB, err := s.shape.types()
	if err != nil {
		return "", err
	}
	sh := s.shape
	puts("shape", fmt.Sprintf("experts=%d used=%d m=%d k=%d type=%s half_b=%t b=%t", sh.experts, sh.used, sh.m, sh.k, typeA, halfB, sh.bcast))
	puts("path", s.path)
	puts("engine", s.opt.Engine.String())
	puts("draws", strconv.Itoa(s.opt.Draws))
	puts("seed", strconv.FormatUint(s.opt.Seed, 10))
	return fmt.Sprintf("%016x", splitmix64(h.Sum64())), nil
}

// runPoints runs the points idx (ascending) on nw workers sharing one
// simulator and writes the rows in idx order as they complete.
func runPoints(spec *sweepSpec, idx []int, nw int, sw *sweepWriter, pb *sweepProgress) (failed int, firstErr string, err error) {
	sm := sim.NewSimulator()
	jobs := make(chan int)
	type done struct {
		pos int
		row *sweepRow
	}
	results := make(chan done)
	var wg sync.WaitGroup
	for w := 0; w < min(nw, max(len(idx), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pos := range jobs {
				results <- done{pos, spec.row(sm, idx[pos])}
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
	pending := map[int]*sweepRow{}
	next, completed := 0, 0
	for d := range results {
		completed++
		pb.update(completed)
		if err != nil {
			continue // drain
		}
		pending[d.pos] = d.row
		for pending[next] != nil {
			r := pending[next]
			delete(pending, next)
			next++
			if r.Error != "" {
				if failed == 0 {
					firstErr = fmt.Sprintf("point %d (%s, %s, %s, n = %d): %s", r.Index, r.Chip, r.Variant, r.Routing, r.N, r.Error)
				}
				failed++
			}
			if err = sw.write(r); err != nil {
				close(stop)
				break
			}
		}
	}
	return failed, firstErr, err
}
