package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/metalsim/metalsim/fileio"
	"github.com/metalsim/metalsim/sim"
)

// LoadModel returns the model of a preset in a llama-quantize file type,
// or of a GGUF file (its own tensor types: typeGiven must be false); exactly
// one of preset and gguf is given. Errors name the flags that set them
// (--preset, --type, -m).
func LoadModel(preset, ftype, gguf string, typeGiven bool) (*Model, error) {
	switch {
	case preset != "" && gguf != "":
		return nil, errors.New("--preset and -m: give one model")
	case preset != "":
		m, err := FromPreset(preset, ftype)
		if err != nil {
			return nil, fmt.Errorf("--preset %s --type %s: %w", preset, ftype, err)
		}
		return m, nil
	case gguf != "":
		if typeGiven {
			return nil, errors.New("--type: applies to --preset; -m times the file's own tensor types")
		}
		m, err := FromGGUF(gguf)
		if err != nil {
			return nil, fmt.Errorf("-m: %w", err)
		}
		return m, nil
	}
	return nil, errors.New("--preset or -m: name the model (simrun bench --list shows the presets)")
}

// RunAll checks every combination of the setups (each batch, ubatch and
// flash-attention choice) with every test before any runs, then runs them
// in that order.
func (b *Bench) RunAll(batches, ubatches, flashAttn []int, tests []Test) (*Report, error) {
	type run struct {
		t Test
		s Setup
	}
	var runs []run
	for _, nb := range batches {
		for _, ub := range ubatches {
			for _, f := range flashAttn {
				for _, t := range tests {
					s := Setup{Batch: nb, Ubatch: ub, FlashAttn: f == 1}
					if err := b.Check(t, s); err != nil {
						return nil, err
					}
					runs = append(runs, run{t, s})
				}
			}
		}
	}
	rep := &Report{Model: b.Model, Chip: b.Chip.Name, Variant: b.Kernel.Name}
	for _, r := range runs {
		res, err := b.Run(r.t, r.s)
		if err != nil {
			return nil, err
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// ReadRows reads a llama-bench results file (fileio.ReadFile: a regular
// file or -, under the measurement-file cap).
func ReadRows(file string) ([]Row, error) {
	return fileio.Load(file, fileio.Measurements, func(data []byte) ([]Row, error) {
		return ParseRows(bytes.NewReader(data), file)
	})
}

// Calibrate reads a llama-bench results file and writes, with fit, the
// parameter file fitted to it (what bench/params.json holds), else every
// row measured against predicted with the default parameters (doc: as
// docs/bench.md's generated table).
func Calibrate(w io.Writer, file string, fit, doc bool) error {
	rows, err := ReadRows(file)
	if err != nil {
		return err
	}
	cases, err := Cases(rows, sim.Options{})
	if err != nil {
		return err
	}
	par, err := DefaultParams()
	if err != nil {
		return err
	}
	switch {
	case !fit && doc:
		return WriteDocTable(w, cases, par)
	case !fit:
		return WriteTable(w, cases, par)
	}
	fitted, _, err := Fit(cases, par, "go run ./cmd/simrun bench --fit "+file, file)
	if err != nil {
		return err
	}
	data, err := fitted.MarshalIndent()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// ParseTests reads -p, -n and -pg (each a flag's text; pairs one per -pg)
// into the tests llama-bench runs, failing when none is left.
func ParseTests(prompts, gens string, pairs []string) ([]Test, error) {
	ps, err := ParseInts("-p", prompts, 0, MaxTokens)
	if err != nil {
		return nil, err
	}
	ns, err := ParseInts("-n", gens, 0, MaxTokens)
	if err != nil {
		return nil, err
	}
	var pgs []Test
	for _, s := range pairs {
		t, err := ParsePair("-pg", s)
		if err != nil {
			return nil, err
		}
		pgs = append(pgs, t)
	}
	tests := Tests(ps, ns, pgs)
	if len(tests) == 0 {
		return nil, errors.New("-p, -n, -pg: no test left (every value is 0)")
	}
	return tests, nil
}

// ParseSetups reads -b, -ub and -fa (comma-separated lists).
func ParseSetups(batch, ubatch, flashAttn string) (batches, ubatches, fas []int, err error) {
	if batches, err = ParseInts("-b", batch, 1, MaxBatch); err != nil {
		return nil, nil, nil, err
	}
	if ubatches, err = ParseInts("-ub", ubatch, 1, MaxBatch); err != nil {
		return nil, nil, nil, err
	}
	fas, err = ParseInts("-fa", flashAttn, 0, 1)
	return batches, ubatches, fas, err
}
