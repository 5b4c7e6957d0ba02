package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/bench"
	"github.com/metalsim/metalsim/fileio"
	"github.com/metalsim/metalsim/sim"
)

const benchSummary = `Estimate llama-bench's tokens per second for a model on a chip you do not have: the graph
llama.cpp's Metal backend runs (docs/llama-graph.md), every matmul through the kernel models,
attention through a model of kernel_flash_attn_ext (or the mul_mat + soft_max path with -fa 0),
the memory-bound ops on a roofline, and the calibrated dispatch costs (docs/bench.md).

usage: simrun bench --chip CHIP (--preset NAME | -m FILE.gguf) [--type FTYPE]
                    [-p 512[,...]] [-n 128[,...]] [-pg P,N] [-b 2048] [-ub 512[,...]] [-fa 0|1]
                    [--variant V] [-o md|csv|json|jsonl]
       simrun bench --list                    the presets, every number with its source
       simrun bench --fit FILE                fit docs/bench.md's parameters; prints bench/params.json
       simrun bench --validate FILE [--doc]   measured vs predicted (--doc: docs/bench.md's table)`

// pairsFlag is -pg, which may be repeated (-pg 512,128 -pg 1024,256).
type pairsFlag []string

func (l *pairsFlag) String() string     { return strings.Join(*l, " ") }
func (l *pairsFlag) Set(s string) error { *l = append(*l, s); return nil }

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench", benchSummary, stderr)
	var cf chipFlags
	cf.register(fs, "")
	var kf kernelFlags
	kf.register(fs, "")
	preset := fs.String("preset", "", "model preset (simrun bench --list)")
	model := fs.String("m", "", "GGUF file: the model and its own tensor types, from the header")
	ftype := fs.String("type", "Q8_0", "llama-quantize file type for a preset (Q4_0, Q8_0, F16, Q4_K_M, MXFP4_MOE, ...; any case)")
	prompts := fs.String("p", "512", "prompt tokens: comma-separated list (0: none)")
	gens := fs.String("n", "128", "generated tokens: comma-separated list (0: none)")
	var pairs pairsFlag
	fs.Var(&pairs, "pg", "prompt then generation, P,N (repeatable)")
	batch := fs.String("b", "2048", "tokens per llama_decode call (n_batch)")
	ubatch := fs.String("ub", "512", "tokens per graph evaluation (n_ubatch): comma-separated list")
	fa := fs.String("fa", "1", "flash attention, 0 or 1 (llama-bench's default resolves to 1 on Metal): comma-separated list")
	out := fs.String("o", "md", "output: "+strings.Join(bench.Formats, ", "))
	list := fs.Bool("list", false, "list the presets with every number's source, and exit")
	fit := fs.String("fit", "", "fit the parameters on a llama-bench results file and print the parameter file")
	validate := fs.String("validate", "", "predict every row of a llama-bench results file")
	doc := fs.Bool("doc", false, "with --validate: print docs/bench.md's generated table")
	var maxWork maxWorkFlag
	maxWork.register(fs)
	if code, ok := parseFlagsOnly(fs, args, "bench", stderr); !ok {
		return code
	}
	given := flagsGiven(fs)
	switch {
	case *list:
		if len(given) > 1 {
			return fail(stderr, "bench", errors.New("--list: give it alone (it lists the presets and runs nothing)"))
		}
		return okOr(stderr, bench.WritePresets(stdout))
	case *fit != "" || *validate != "":
		return runBenchCalibration(*fit, *validate, *doc, given, stdout, stderr)
	case *doc:
		return fail(stderr, "bench", errors.New("--doc: only with --validate"))
	}

	// the model
	var m *bench.Model
	var err error
	switch {
	case *preset != "" && *model != "":
		return fail(stderr, "bench", errors.New("--preset and -m: give one model"))
	case *preset != "":
		m, err = bench.FromPreset(*preset, *ftype)
		if err != nil {
			return fail(stderr, "bench", fmt.Errorf("--preset %s --type %s: %w", *preset, *ftype, err))
		}
	case *model != "":
		if given["type"] {
			return fail(stderr, "bench", errors.New("--type: applies to --preset; -m times the file's own tensor types"))
		}
		if m, err = bench.FromGGUF(*model); err != nil {
			return fail(stderr, "bench", fmt.Errorf("-m: %w", err))
		}
	default:
		return fail(stderr, "bench", errors.New("--preset or -m: name the model (simrun bench --list shows the presets)"))
	}
	chip, err := cf.chip()
	if err != nil {
		return fail(stderr, "bench", err)
	}
	if chip == nil {
		return fail(stderr, "bench", errors.New("--chip: name the chip to estimate for (simrun chips lists them)"))
	}
	k, err := kf.kernel(chip)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	if !strings.Contains(" "+strings.Join(bench.Formats, " ")+" ", " "+*out+" ") {
		return fail(stderr, "bench", fmt.Errorf("-o %q: allowed %s", *out, strings.Join(bench.Formats, ", ")))
	}

	// the tests
	ps, err := bench.ParseInts("-p", *prompts, 0, bench.MaxTokens)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	ns, err := bench.ParseInts("-n", *gens, 0, bench.MaxTokens)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	var pgs []bench.Test
	for _, s := range pairs {
		t, err := bench.ParsePair("-pg", s)
		if err != nil {
			return fail(stderr, "bench", err)
		}
		pgs = append(pgs, t)
	}
	bs, err := bench.ParseInts("-b", *batch, 1, bench.MaxBatch)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	ubs, err := bench.ParseInts("-ub", *ubatch, 1, bench.MaxBatch)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	fas, err := bench.ParseInts("-fa", *fa, 0, 1)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	tests := bench.Tests(ps, ns, pgs)
	if len(tests) == 0 {
		return fail(stderr, "bench", errors.New("-p, -n, -pg: no test left (every value is 0)"))
	}

	par, err := bench.DefaultParams()
	if err != nil {
		return fail(stderr, "bench", err)
	}
	mw, err := maxWork.value()
	if err != nil {
		return fail(stderr, "bench", err)
	}
	b, err := bench.New(m, chip, k, par, nil, sim.Options{MaxWork: mw})
	if err != nil {
		return fail(stderr, "bench", err)
	}
	// every combination is checked before anything runs
	type run struct {
		t bench.Test
		s bench.Setup
	}
	var runs []run
	for _, nb := range bs {
		for _, ub := range ubs {
			for _, f := range fas {
				for _, t := range tests {
					s := bench.Setup{Batch: nb, Ubatch: ub, FlashAttn: f == 1}
					if err := b.Check(t, s); err != nil {
						return fail(stderr, "bench", err)
					}
					runs = append(runs, run{t, s})
				}
			}
		}
	}
	rep := &bench.Report{Model: m, Chip: chip.Name, Variant: k.Name}
	for _, r := range runs {
		res, err := b.Run(r.t, r.s)
		if err != nil {
			return fail(stderr, "bench", err)
		}
		rep.Results = append(rep.Results, res)
	}
	for _, n := range m.Notes {
		fmt.Fprintf(stderr, "simrun bench: %s: %s\n", m.Config.Name, n)
	}
	return okOr(stderr, rep.Write(stdout, *out))
}

// runBenchCalibration fits the parameters (--fit) or predicts every row of a
// results file (--validate).
func runBenchCalibration(fitFile, validateFile string, doc bool, given map[string]bool, stdout, stderr io.Writer) int {
	for name := range given {
		if name != "fit" && name != "validate" && name != "doc" {
			return fail(stderr, "bench", fmt.Errorf("--%s: not used by --fit or --validate", name))
		}
	}
	if fitFile != "" && validateFile != "" {
		return fail(stderr, "bench", errors.New("--fit and --validate: give one"))
	}
	file := fitFile + validateFile
	rows, err := readRows(file)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	cases, err := bench.Cases(rows, sim.Options{})
	if err != nil {
		return fail(stderr, "bench", err)
	}
	par, err := bench.DefaultParams()
	if err != nil {
		return fail(stderr, "bench", err)
	}
	if validateFile != "" {
		if doc {
			return okOr(stderr, bench.WriteDocTable(stdout, cases, par))
		}
		return okOr(stderr, bench.WriteTable(stdout, cases, par))
	}
	fitted, _, err := bench.Fit(cases, par, "go run ./cmd/simrun bench --fit "+fitFile, fitFile)
	if err != nil {
		return fail(stderr, "bench", err)
	}
	data, err := fitted.MarshalIndent()
	if err != nil {
		return fail(stderr, "bench", err)
	}
	_, err = stdout.Write(data)
	return okOr(stderr, err)
}

// readRows reads a llama-bench results file (fileio.ReadFile: a regular
// file or -, under the measurement-file cap).
func readRows(file string) ([]bench.Row, error) {
	data, err := fileio.ReadFile(file, fileio.Measurements)
	if err != nil {
		return nil, err
	}
	return bench.ParseRows(bytes.NewReader(data), file)
}
