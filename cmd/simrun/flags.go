package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/termtable"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

// shapeFlags describe the matmul (without n) for sweep and compare: the op,
// its sizes and types, and the kernel that runs it.
type shapeFlags struct {
	experts, used, m, k      int
	bs, nr                   int
	typeA, typeB, op, kernel string
	bcast                    bool
	fs                       *flag.FlagSet
}

func (f *shapeFlags) register(fs *flag.FlagSet) {
	f.registerOp(fs, "a dense matmul of one m x k weight matrix")
	h := tile.HeadlineProblem(0)
	fs.IntVar(&f.experts, "experts", h.Experts, "experts holding weights (test-backend-ops n_mats; mul_mat_id)")
	fs.IntVar(&f.used, "used", h.Used, "experts used per token (n_used; mul_mat_id)")
	fs.IntVar(&f.m, "m", h.M, "weight rows (per expert)")
	fs.IntVar(&f.k, "k", h.K, "reduction length")
	f.registerTypes(fs, "weight type ("+dequant.TypeNames()+")", "activation type (f32, f16)")
	fs.BoolVar(&f.bcast, "b", false, "broadcast: all slots of a token read one activation row (b=1; mul_mat_id)")
	fs.IntVar(&f.bs, "bs", 1, "weight matrices, one matmul each (test-backend-ops bs; mul_mat)")
	fs.IntVar(&f.nr, "nr", 1, "activation batches per weight matrix, its matrix broadcast to them (test-backend-ops nr; mul_mat)")
}

// registerTypes registers --type and --type-b with their usage texts.
func (f *shapeFlags) registerTypes(fs *flag.FlagSet, typeUsage, typeBUsage string) {
	fs.StringVar(&f.typeA, "type", tile.HeadlineProblem(0).TypeA.String(), typeUsage)
	fs.StringVar(&f.typeB, "type-b", "f32", typeBUsage)
}

// registerOp registers --op and --kernel; dense says what --op mul_mat runs.
func (f *shapeFlags) registerOp(fs *flag.FlagSet, dense string) {
	f.fs = fs
	fs.StringVar(&f.op, "op", "mul_mat_id", "op: mul_mat_id (the MoE expert matmul) or mul_mat ("+dense+")")
	fs.StringVar(&f.kernel, "kernel", "auto", "Metal kernel: auto (llama.cpp's choice: kernel-facts §2), or force one of mul_mm_id, mul_mv_id (mul_mat_id); mul_mm, mul_mv, mul_mv_ext (mul_mat)")
}

// types parses --type and --type-b.
func (f *shapeFlags) types() (dequant.Type, bool, error) {
	t, err := dequant.ParseType(f.typeA)
	if err != nil {
		return 0, false, fmt.Errorf("--type: %w", err)
	}
	halfB, err := tile.ParseActivation(f.typeB)
	if err != nil {
		return 0, false, fmt.Errorf("--type-b %q: allowed f32, f16", f.typeB)
	}
	return t, halfB, nil
}

// shape returns the study shape the flags give. A mul_mat has no experts,
// routing or b, a mul_mat_id no bs or nr: giving their flags with the other
// op is an error.
func (f *shapeFlags) shape() (study.Shape, error) {
	op, err := tile.ParseOp(f.op)
	if err != nil {
		return study.Shape{}, fmt.Errorf("--op: %w", err)
	}
	if f.fs != nil {
		if err := study.CheckOpFlags(op, flagsGiven(f.fs)); err != nil {
			return study.Shape{}, err
		}
	}
	t, halfB, err := f.types()
	if err != nil {
		return study.Shape{}, err
	}
	return study.Shape{Op: op, Experts: f.experts, Used: f.used, M: f.m, K: f.k, TypeA: t, HalfB: halfB, Broadcast: f.bcast,
		DenseBatch: f.bs, DenseBroadcast: f.nr}, nil
}

// kernelShape returns the shape and the --kernel given (shape, forced).
func (f *shapeFlags) kernelShape() (study.Shape, tile.MetalKernel, error) {
	sh, err := f.shape()
	if err != nil {
		return study.Shape{}, tile.KernelAuto, err
	}
	forced, err := f.forced()
	return sh, forced, err
}

// forced returns the --kernel given (tile.KernelAuto: llama.cpp's choice).
func (f *shapeFlags) forced() (tile.MetalKernel, error) {
	_, kern, err := study.ParseKernelChoice("--op", f.op, "--kernel", f.kernel)
	return kern, err
}

// workload returns the shape's op with n tokens and rows x k, validated.
func (f *shapeFlags) workload(n, m, k int) (tile.Workload, error) {
	sh, err := f.shape()
	if err != nil {
		return tile.Workload{}, err
	}
	w, err := sh.Workload(n, m, k)
	return w, flagLabels.Name(err)
}

// flagLabels name a study's inputs by the flags that set them.
var flagLabels = study.Labels{Experts: "--experts", Used: "--used", M: "--m", K: "--k", N: "--n", Bs: "--bs", Nr: "--nr", Kernel: "--kernel"}

// problemFlags are the flags that describe one matmul: the shape and --n.
type problemFlags struct {
	shapeFlags
	n int
}

func (f *problemFlags) register(fs *flag.FlagSet) {
	f.shapeFlags.register(fs)
	fs.IntVar(&f.n, "n", 512, "tokens")
}

func (f *problemFlags) workload() (tile.Workload, error) { return f.shapeFlags.workload(f.n, f.m, f.k) }

// point returns the flags' matmul on chip, run by the --kernel given with
// kf's variant and path (kernelFlags.point).
func (f *problemFlags) point(kf *kernelFlags, chip *chips.Chip, opt sim.Options) (*study.Point, error) {
	w, err := f.workload()
	if err != nil {
		return nil, err
	}
	forced, err := f.forced()
	if err != nil {
		return nil, err
	}
	return kf.point(chip, w, forced, opt)
}

// kernelFlags choose the kernel variant and path.
type kernelFlags struct {
	variant, path string
	fs            *flag.FlagSet
}

func (f *kernelFlags) register(fs *flag.FlagSet, defPath string) {
	var names []string
	for _, v := range tile.Builtin() {
		names = append(names, v.Name)
	}
	f.fs = fs
	fs.StringVar(&f.variant, "variant", "upstream", "kernel variant: a built-in ("+strings.Join(names, ", ")+
		"; simrun variants) or a .toml spec file (docs/variants/); its knobs apply to the mat-mat kernels")
	fs.StringVar(&f.path, "path", defPath, "kernel path: simdgroup or tensor (default: the spec file's path, else the chip's llama.cpp default; simdgroup without a chip)")
}

// point returns the point of workload w on chip with the flags' variant and
// path: --path when given (or defaulted by the command), else the spec
// file's, else the chip's (simdgroup without a chip).
func (f *kernelFlags) point(chip *chips.Chip, w tile.Workload, forced tile.MetalKernel, opt sim.Options) (*study.Point, error) {
	vas, err := study.LoadVariants("--variant", []string{f.variant})
	if err != nil {
		return nil, err
	}
	var path *tile.Path
	if flagsGiven(f.fs)["path"] || vas[0].Path == nil && f.path != "" {
		if path, err = parsePath(f.path); err != nil {
			return nil, err
		}
	}
	if k, err := vas[0].Kernel(chip, path); err != nil {
		return nil, fmt.Errorf("--variant %s on the %s path: %w", f.variant, k.Path, k.Validate(k.Path))
	}
	return &study.Point{Chip: chip, Variant: vas[0], Path: path, Workload: w, Kernel: forced, Options: opt, Labels: flagLabels}, nil
}

// kernel returns the flags' variant on its path on chip.
func (f *kernelFlags) kernel(chip *chips.Chip) (tile.Kernel, error) {
	pt, err := f.point(chip, tile.Workload{}, tile.KernelAuto, sim.Options{})
	if err != nil {
		return tile.Kernel{}, err
	}
	return pt.Variant.Kernel(chip, pt.Path)
}

// chipFlags pick a chip by name or from a file.
type chipFlags struct {
	name, file string
	fs         *flag.FlagSet
}

func (f *chipFlags) register(fs *flag.FlagSet, def string) {
	f.registerUsage(fs, def, "chip name or alias (simrun chips lists them), or a chip .json file", "load the chip from this chip file instead of --chip")
}

// registerUsage registers --chip and --chip-file with the given help texts.
func (f *chipFlags) registerUsage(fs *flag.FlagSet, def, chipUsage, fileUsage string) {
	f.fs = fs
	fs.StringVar(&f.name, "chip", def, chipUsage)
	fs.StringVar(&f.file, "chip-file", "", fileUsage)
}

// chip returns the selected chip, or nil when neither flag is set (and the
// command has no default chip).
func (f *chipFlags) chip() (*chips.Chip, error) {
	if f.file != "" {
		if f.fs != nil && flagsGiven(f.fs)["chip"] {
			return nil, fmt.Errorf("--chip %q and --chip-file %s: give one", f.name, f.file)
		}
		c, err := chips.LoadFile(f.file)
		if err != nil {
			return nil, fmt.Errorf("--chip-file: %w", err)
		}
		return c, nil
	}
	if f.name == "" {
		return nil, nil
	}
	c, err := study.LoadChip(f.name) // a chip file too, as the commands taking a list of chips accept
	if err != nil {
		return nil, fmt.Errorf("--chip: %w", err)
	}
	return c, nil
}

// simFlags are the timing options.
type simFlags struct {
	engine  string
	draws   int
	seed    uint64
	maxWork maxWorkFlag
	// what the command's runs simulated since options() was called, for
	// its closing rate line (writeRates)
	totals sim.Totals
	start  time.Time
}

func (f *simFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.engine, "engine", "fast", "timing engine: fast (threadgroup events over cached core mixes) or detailed (every instruction)")
	fs.IntVar(&f.draws, "draws", 4, "routing draws averaged (the calibration harness redraws ids every run)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the first routing draw")
	f.maxWork.register(fs)
}

// maxWorkFlag is --max-work, the bound on a run's estimated work.
type maxWorkFlag float64

func (f *maxWorkFlag) register(fs *flag.FlagSet) {
	fs.Float64Var((*float64)(f), "max-work", sim.DefaultMaxWork, "bound on each run's estimated work, in units of about 15 ns of one core (README, \"Bounded work\"); a run past it exits 2 with its estimate")
}

// value returns the bound, checked.
func (f maxWorkFlag) value() (float64, error) {
	if v := float64(f); !(v >= 1 && v <= 1e18) {
		return 0, fmt.Errorf("--max-work = %g: must be in [1, 1e18]", v)
	}
	return float64(f), nil
}

func (f *simFlags) options() (sim.Options, error) {
	e, err := sim.ParseEngine(f.engine)
	if err != nil {
		return sim.Options{}, fmt.Errorf("--engine: %w", err)
	}
	if f.draws < 1 || f.draws > 1000 {
		return sim.Options{}, fmt.Errorf("--draws = %d: must be in [1, 1000]", f.draws)
	}
	if f.seed == 0 {
		return sim.Options{}, fmt.Errorf("--seed = 0: must be positive")
	}
	mw, err := f.maxWork.value()
	if err != nil {
		return sim.Options{}, err
	}
	f.start = time.Now()
	return sim.Options{Engine: e, Draws: f.draws, Seed: f.seed, Totals: &f.totals, MaxWork: mw}, nil
}

// writeRates prints the closing rate line of the command's runs (GPGPU-Sim's
// simulation rates: trace.WriteRates) on stderr: it holds wall-clock figures,
// and stdout, the results, is byte-identical from run to run.
func (f *simFlags) writeRates(stderr io.Writer) {
	st, us, cycles := f.totals.Read()
	st.Wall = time.Since(f.start)
	_ = trace.WriteRates(stderr, st, us, cycles) // a failed write to stderr has nowhere to be reported
}

// parsePath reads the --path of the commands that take variant lists: nil
// when not given (a spec file's path, else each chip's).
func parsePath(s string) (*tile.Path, error) {
	if s == "" {
		return nil, nil
	}
	p, err := tile.ParsePath(s)
	if err != nil {
		return nil, fmt.Errorf("--path: %w", err)
	}
	return &p, nil
}

// flagError names the flag of a tile problem's validation error.
func flagError(err error) error { return flagLabels.Name(err) }

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

// alone reports a flag that lists something and runs nothing, given with
// others.
func alone(fs *flag.FlagSet, name, what string) error {
	var others []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != name {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		return fmt.Errorf("--%s: give it alone, without %s (it lists %s and runs nothing)", name, strings.Join(others, ", "), what)
	}
	return nil
}

// flagsGiven returns the names of the flags given on the command line.
func flagsGiven(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// tableFlags pick how wide a command's text tables are.
type tableFlags struct{ wide bool }

func (f *tableFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.wide, "wide", false, fmt.Sprintf("print every column of the tables (default: the columns that fit %d characters)", termtable.DefaultWidth))
}

// width is the tables' width limit: none with --wide.
func (f *tableFlags) width() int {
	if f.wide {
		return 0
	}
	return termtable.DefaultWidth
}
