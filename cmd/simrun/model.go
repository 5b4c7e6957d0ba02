package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/models"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

const modelSummary = `Predict every expert matmul of one MoE layer of a model — gate and up (m = expert FFN, k = hidden,
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

func runModel(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("model", modelSummary, stderr)
	var sf simFlags
	sf.register(fs)
	preset := fs.String("preset", "", "model preset, by name or alias (--list shows them)")
	ggufFile := fs.String("gguf", "", "read the model's expert shapes and tensor types from this GGUF file's header")
	list := fs.Bool("list", false, "list the presets with every number's config field and source, and exit")
	nFlag := fs.String("n", "512", "tokens: comma-separated list")
	chipFlag := fs.String("chip", "M1 Pro 16-core GPU", "chip name or alias (simrun chips), or a chip .json file")
	pathFlag := fs.String("path", "", "kernel path: simdgroup or tensor (default: a spec file's path, else the chip's)")
	variantFlag := fs.String("variant", "upstream", "kernel variant: a built-in name or a .toml spec file")
	routingFlag := fs.String("routing", "uniform", "routing: uniform, zipf:S, hot:H:F or file:PATH")
	typeA := fs.String("type", "q4_0", "weight type of every expert tensor ("+weightTypeNames()+"); with --gguf it overrides the file's types")
	typeB := fs.String("type-b", "f32", "activation type (f32, f16)")
	format := fs.String("format", "text", "output: text, csv or json")
	shape := shapeFlags{}
	shape.registerOp(fs, "each matmul as one expert's dense MUL_MAT over the n tokens")
	if code, ok := parseFlagsOnly(fs, args, "model", stderr); !ok {
		return code
	}
	set := flagsGiven(fs)
	if *list {
		var others []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "list" {
				others = append(others, "--"+f.Name)
			}
		})
		if len(others) > 0 {
			return fail(stderr, "model", fmt.Errorf("--list: give it alone, without %s (it lists the presets and runs nothing)", strings.Join(others, ", ")))
		}
		return okOr(stderr, trace.WritePresets(stdout))
	}
	if *format != "text" && *format != "csv" && *format != "json" {
		return fail(stderr, "model", fmt.Errorf("--format %q: allowed text, csv, json", *format))
	}
	m, err := loadModel(*preset, *ggufFile)
	if err != nil {
		return fail(stderr, "model", err)
	}
	ns, err := study.ParseNs("--n", *nFlag)
	if err != nil {
		return fail(stderr, "model", err)
	}
	chips, err := study.LoadChips("--chip", *chipFlag)
	if err != nil {
		return fail(stderr, "model", err)
	}
	if len(chips) != 1 {
		return fail(stderr, "model", fmt.Errorf("--chip %q: give one chip (simrun compare and sweep take lists)", *chipFlag))
	}
	chip := chips[0]
	path, err := parsePath(*pathFlag)
	if err != nil {
		return fail(stderr, "model", err)
	}
	vas, err := study.LoadVariants("--variant", []string{*variantFlag})
	if err != nil {
		return fail(stderr, "model", err)
	}
	k, err := vas[0].Kernel(chip, path)
	if err != nil {
		return fail(stderr, "model", fmt.Errorf("--variant: %w", err))
	}
	shape.typeA, shape.typeB = *typeA, *typeB
	sh, err := shape.shape()
	if err != nil {
		return fail(stderr, "model", err)
	}
	forced, err := shape.forced()
	if err != nil {
		return fail(stderr, "model", err)
	}
	opt, err := sf.options()
	if err != nil {
		return fail(stderr, "model", err)
	}
	r, err := parseOneRouting("model", *routingFlag, m.Used, m.Experts, ns)
	if err != nil {
		return fail(stderr, "model", err)
	}
	opt.Routing = r
	lo := models.LayerOptions{Type: sh.TypeA, ForceType: set["type"] || m.Tensors == nil, HalfB: sh.HalfB}
	pt := study.Point{Chip: chip, Variant: vas[0], Path: path, Kernel: forced, Options: opt, Labels: flagLabels}
	rows, err := study.ModelLayer(sim.NewSimulator(), m, lo, sh.Op, ns, pt)
	if err != nil {
		return fail(stderr, "model", modelTypeHint(err))
	}
	switch *format {
	case "json":
		err = study.WriteModelJSON(stdout, m, chip, k.String(), opt, rows)
	case "csv":
		warnUnverified(stderr, "model", m)
		err = study.WriteModelCSV(stdout, rows)
	default:
		trace.WriteModelHeader(stdout, m)
		if set["type"] && m.Tensors != nil {
			var decl []string
			for _, t := range m.Tensors {
				decl = append(decl, t.Role+" "+t.Type)
			}
			fmt.Fprintf(stdout, "  every expert tensor simulated as %s (--type); the file declares %s\n", sh.TypeA, strings.Join(decl, ", "))
		}
		fmt.Fprintf(stdout, "MoE layer on %s, %s path, variant %s, routing %s (%d draws, seed %d, %s engine)\n\n",
			chip.Name, k.Path, k.Name, r.Name(), opt.Draws, opt.Seed, opt.Engine)
		err = trace.WriteModelText(stdout, rows)
	}
	if err != nil {
		return okOr(stderr, err)
	}
	sf.writeRates(stderr)
	return exitOK
}

// loadModel reads a preset or a GGUF file.
func loadModel(preset, ggufFile string) (*models.Model, error) {
	return study.LoadModel("--preset", preset, "--gguf", ggufFile)
}

// modelTypeHint adds what to do about a GGUF type metalsim does not decode.
func modelTypeHint(err error) error {
	if errors.Is(err, models.ErrUnsupportedType) {
		return fmt.Errorf("--gguf: %w; pass --type to simulate every expert tensor as one supported type", err)
	}
	return err
}

// warnUnverified says on stderr which of a model's numbers are unverified,
// for the outputs (CSV, compare's JSON) that have no place to say it.
func warnUnverified(stderr io.Writer, cmd string, m *models.Model) {
	if m != nil && len(m.Unverified) > 0 {
		fmt.Fprintf(stderr, "simrun %s: %s: unverified: %s (not checked against the model's own config: verify before relying on them)\n",
			cmd, m.Name, strings.Join(m.Unverified, ", "))
	}
}
