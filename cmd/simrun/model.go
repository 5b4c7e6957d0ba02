package main

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

const modelUsage = `Predict every expert matmul of one MoE layer of a model — gate and up (m = expert FFN, k = hidden,
the token's activation row broadcast to its slots: b = 1) and down (m = hidden, k = expert FFN, one
activation row per slot: b = 0) — and the layer total, for each n, on a chip with a variant and a
routing. The model is a preset (--preset; --list prints them with the config field and source of
every number, and flags the numbers that could not be verified) or a GGUF file (--gguf; only the
header is read: expert count, experts used, embedding length, expert FFN length and the expert
tensors' types). The weight type is the GGUF's expert tensor types when known, else --type; --type
given with --gguf overrides the file's types. Shared experts and dense layers run as plain MUL_MAT
and are not part of the layer; --op mul_mat times each of the three matmuls as the MUL_MAT of one
expert's matrix over the n tokens instead (what a shared expert or a dense FFN of the expert's width
costs). Each matmul runs the kernel llama.cpp dispatches for it (mul_mv_id below 32 tokens), or --kernel.

usage: simrun model (--preset NAME | --gguf FILE | --list) [flags]`

func runModel(c *call) func() int {
	preset := c.fs.String("preset", "", "model preset, by name or alias (--list shows them)")
	ggufFile := c.fs.String("gguf", "", "read the model's expert shapes and tensor types from this GGUF file's header")
	list := c.fs.Bool("list", false, "list the presets with every number's config field and source, and exit")
	nFlag := c.fs.String("n", "512", "tokens: comma-separated list")
	chipFlag := c.fs.String("chip", "M1 Pro 16-core GPU", "chip name or alias (simrun chips), or a chip .json file")
	pathFlag := c.fs.String("path", "", "kernel path: simdgroup or tensor (default: a spec file's path, else the chip's)")
	variantFlag := c.fs.String("variant", "upstream", "kernel variant: a built-in name or a .toml spec file")
	routingFlag := c.fs.String("routing", "uniform", "routing: uniform, zipf:S, hot:H:F or file:PATH")
	format := c.fs.String("format", "text", "output: text, csv or json")
	shape := shapeFlags{bs: 1, nr: 1} // no --bs and --nr: one matmul per tensor
	shape.registerTypes(c.fs, "weight type of every expert tensor ("+dequant.TypeNames()+"); with --gguf it overrides the file's types", "activation type (f32, f16)")
	shape.registerOp(c.fs, "each matmul as one expert's dense MUL_MAT over the n tokens")
	return func() int {
		set := flagsGiven(c.fs)
		if *list {
			if err := alone(c.fs, "list", "the presets"); err != nil {
				return c.fail(err)
			}
			return okOr(c.stderr, trace.WritePresets(c.stdout))
		}
		if err := checkChoice("--format", *format, "text", "csv", "json"); err != nil {
			return c.fail(err)
		}
		m, err := study.LoadModel("--preset", *preset, "--gguf", *ggufFile)
		if err != nil {
			return c.fail(err)
		}
		sh, forced, err := shape.kernelShape()
		if err != nil {
			return c.fail(err)
		}
		opt, err := c.sim.options()
		if err != nil {
			return c.fail(err)
		}
		ns, pt, err := study.ParseModelPoint(study.ModelInputs{Ns: *nFlag, Chip: *chipFlag, Path: *pathFlag, Variant: *variantFlag, Routing: *routingFlag},
			m, forced, opt, flagLabels)
		if err != nil {
			return c.fail(err)
		}
		chip, opt := pt.Chip, pt.Options
		k, _ := pt.Variant.Kernel(chip, pt.Path) // checked
		lo := models.LayerOptions{Type: sh.TypeA, ForceType: set["type"] || m.Tensors == nil, HalfB: sh.HalfB}
		rows, err := study.ModelLayer(sim.NewSimulator(), m, lo, sh.Op, ns, *pt)
		if err != nil {
			return c.fail(study.TypeHint(err))
		}
		switch *format {
		case "json":
			err = study.WriteModelJSON(c.stdout, m, chip, k.String(), opt, rows)
		case "csv":
			warnUnverified(c, study.Unverified(m))
			err = study.WriteModelCSV(c.stdout, rows)
		default:
			forced := ""
			if set["type"] {
				forced = sh.TypeA.String()
			}
			trace.WriteModelHeader(c.stdout, m, forced)
			fmt.Fprintf(c.stdout, "MoE layer on %s, %s path, variant %s, routing %s (%d draws, seed %d, %s engine)\n\n",
				chip.Name, k.Path, k.Name, opt.Routing.Name(), opt.Draws, opt.Seed, opt.Engine)
			err = trace.WriteModelText(c.stdout, rows)
		}
		if err != nil {
			return okOr(c.stderr, err)
		}
		c.sim.writeRates(c.stderr)
		return exitOK
	}
}

// warnUnverified says on stderr which of a model's numbers are unverified
// (study.Unverified), for the outputs that have no place to say it.
func warnUnverified(c *call, note string) {
	if note != "" {
		fmt.Fprintf(c.stderr, "simrun %s: %s\n", c.name, note)
	}
}
