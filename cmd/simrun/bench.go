package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/bench"
	"github.com/metalsim/metalsim/sim"
)

const benchUsage = `Estimate llama-bench's tokens per second for a model on a chip you do not have: the graph
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

func runBench(c *call) func() int {
	preset := c.fs.String("preset", "", "model preset (simrun bench --list)")
	model := c.fs.String("m", "", "GGUF file: the model and its own tensor types, from the header")
	ftype := c.fs.String("type", "Q8_0", "llama-quantize file type for a preset (Q4_0, Q8_0, F16, Q4_K_M, MXFP4_MOE, ...; any case)")
	prompts := c.fs.String("p", "512", "prompt tokens: comma-separated list (0: none)")
	gens := c.fs.String("n", "128", "generated tokens: comma-separated list (0: none)")
	var pairs pairsFlag
	c.fs.Var(&pairs, "pg", "prompt then generation, P,N (repeatable)")
	batch := c.fs.String("b", "2048", "tokens per llama_decode call (n_batch)")
	ubatch := c.fs.String("ub", "512", "tokens per graph evaluation (n_ubatch): comma-separated list")
	fa := c.fs.String("fa", "1", "flash attention, 0 or 1 (llama-bench's default resolves to 1 on Metal): comma-separated list")
	out := c.fs.String("o", "md", "output: "+strings.Join(bench.Formats, ", "))
	list := c.fs.Bool("list", false, "list the presets with every number's source, and exit")
	fit := c.fs.String("fit", "", "fit the parameters on a llama-bench results file and print the parameter file")
	validate := c.fs.String("validate", "", "predict every row of a llama-bench results file")
	doc := c.fs.Bool("doc", false, "with --validate: print docs/bench.md's generated table")
	return func() int {
		given := flagsGiven(c.fs)
		switch {
		case *list:
			if err := alone(c.fs, "list", "the presets"); err != nil {
				return c.fail(err)
			}
			return okOr(c.stderr, bench.WritePresets(c.stdout))
		case *fit != "" || *validate != "":
			return runBenchCalibration(c, *fit, *validate, *doc, given)
		case *doc:
			return c.fail(errors.New("--doc: only with --validate"))
		}

		m, err := bench.LoadModel(*preset, *ftype, *model, given["type"])
		if err != nil {
			return c.fail(err)
		}
		chip, err := c.chip.chip()
		if err != nil {
			return c.fail(err)
		}
		if chip == nil {
			return c.fail(errors.New("--chip: name the chip to estimate for (simrun chips lists them)"))
		}
		k, err := c.kernel.kernel(chip)
		if err != nil {
			return c.fail(err)
		}
		if !strings.Contains(" "+strings.Join(bench.Formats, " ")+" ", " "+*out+" ") {
			return c.fail(fmt.Errorf("-o %q: allowed %s", *out, strings.Join(bench.Formats, ", ")))
		}

		tests, err := bench.ParseTests(*prompts, *gens, pairs)
		if err != nil {
			return c.fail(err)
		}
		bs, ubs, fas, err := bench.ParseSetups(*batch, *ubatch, *fa)
		if err != nil {
			return c.fail(err)
		}
		par, err := bench.DefaultParams()
		if err != nil {
			return c.fail(err)
		}
		mw, err := c.maxWork.value()
		if err != nil {
			return c.fail(err)
		}
		b, err := bench.New(m, chip, k, par, nil, sim.Options{MaxWork: mw})
		if err != nil {
			return c.fail(err)
		}
		rep, err := b.RunAll(bs, ubs, fas, tests) // every combination is checked before anything runs
		if err != nil {
			return c.fail(err)
		}
		for _, n := range m.Notes {
			fmt.Fprintf(c.stderr, "simrun bench: %s: %s\n", m.Config.Name, n)
		}
		return okOr(c.stderr, rep.Write(c.stdout, *out))
	}
}

// runBenchCalibration fits the parameters (--fit) or predicts every row of a
// results file (--validate).
func runBenchCalibration(c *call, fitFile, validateFile string, doc bool, given map[string]bool) int {
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if name != "fit" && name != "validate" && name != "doc" {
			return c.fail(fmt.Errorf("--%s: not used by --fit or --validate", name))
		}
	}
	if fitFile != "" && validateFile != "" {
		return c.fail(errors.New("--fit and --validate: give one"))
	}
	if err := bench.Calibrate(c.stdout, fitFile+validateFile, fitFile != "", doc); err != nil {
		return c.fail(err)
	}
	return exitOK
}
