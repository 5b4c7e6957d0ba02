// Command simrun is metalsim's command line: it runs the headline experiment by
// default and has subcommands to verify golden data, emulate a problem for
// values, list chips, validate predictions against real Metal measurements,
// fit chip parameters, and more (simrun help).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/trace"
)

// Exit codes: the one rule every command follows (README, "Exit codes").
const (
	exitOK      = 0
	exitFailed  = 1 // the command ran and a check it makes failed (a golden case, emulate's error bound, occupancy's launch, sweep or merge points)
	exitBadUsed = 2 // bad input (a flag, an argument, a file) or an output that could not be written
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"headline", "the default experiment: 128-expert top-8 q4_0, every calibration row (n = 8..512), upstream vs halftile on M1 Pro and M5", runHeadline},
		{"golden", "verify dequantization and mul_mat_id emulation against a golden directory", runGolden},
		{"emulate", "run one matmul (the kernel llama.cpp dispatches, or --kernel) for values: counters and the error against a float64 reference", runEmulate},
		{"simulate", "predict the time of one MUL_MAT or MUL_MAT_ID on a chip (text, JSON or CSV)", runSimulate},
		{"chips", "list the chips metalsim knows, or print one chip file", runChips},
		{"validate", "predict measured rows (calibration TSVs, test-backend-ops logs) and report the error", runValidate},
		{"fit", "fit named chip parameters to measurement files and write a new chip file", runFit},
		{"compare", "two variants side by side over chips, shapes or a model layer and a list of n (µs, delta, counters, occupancy; --plot)", runCompare},
		{"sweep", "cartesian design-space sweep over n, variants, chips, routing and skew; CSV/JSON, parallel, --shard i/N", runSweep},
		{"merge", "join sharded sweep outputs into the bytes of one unsharded run", runMerge},
		{"bench", "llama-bench's tokens per second for a whole model on a chip (--preset or -m GGUF; pp, tg, pg tests)", runBench},
		{"model", "every expert matmul of one MoE layer of a model (--preset or --gguf) and the layer total", runModel},
		{"isa", "print the op table as Markdown (docs/isa.md)", runISA},
		{"variants", "list the kernel variants and their knobs, or print one as a TOML spec", runVariants},
		{"trace", "write a Perfetto / chrome://tracing timeline of one dispatch (detailed engine)", runTrace},
		{"occupancy", "resident threadgroups and simdgroups per core, the limiter, and a table over registers", runOccupancy},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// outWriter keeps the first error of writing standard output, so that no
// command exits 0 after output it could not write (a full disk, a closed
// pipe), whether or not it checks every print.
type outWriter struct {
	w   io.Writer
	err error
}

// Write writes p, or returns the first error a write met.
func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// run dispatches to a subcommand; no arguments runs the headline experiment. A
// command that ran but could not write its output exits 2.
func run(args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	code := dispatch(args, out, stderr)
	if code == exitOK && out.err != nil {
		fmt.Fprintf(stderr, "simrun: writing standard output: %v\n", out.err)
		return exitBadUsed
	}
	return code
}

// dispatch runs the command args name (the headline without one).
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runHeadline(nil, stdout, stderr)
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		switch {
		case name == "help" && len(args) == 2 && args[1] == "terms":
			trace.WriteTerms(stdout)
		case len(args) > 1:
			fmt.Fprintf(stderr, "simrun help: unknown topic %q (simrun help terms explains the tables' words)\n", strings.Join(args[1:], " "))
			return exitBadUsed
		default:
			usage(stdout)
		}
		return exitOK
	}
	if strings.HasPrefix(name, "-") {
		// flags without a subcommand belong to the headline experiment
		return runHeadline(args, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "simrun: unknown command %q\n\n", name)
	usage(stderr)
	return exitBadUsed
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: simrun [command] [flags]")
	fmt.Fprintln(w, "\nWithout a command simrun runs the headline experiment. Commands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'simrun COMMAND -h' for a command's flags, 'simrun help terms' for the words the tables use.")
}

// newFlags makes a flag set that reports errors to stderr without exiting.
func newFlags(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: simrun %s [flags]\n%s\n\nflags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; it returns the exit code to use when parsing stopped
// (help: 0, error: 2) and ok = false. A text flag given an empty (or blank)
// value is an error: it would otherwise silently mean the flag's default.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitBadUsed, false
	}
	var empty *flag.Flag
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && empty == nil {
			if s, ok := g.Get().(string); ok && strings.TrimSpace(s) == "" {
				empty = f
			}
		}
	})
	if empty != nil {
		return fail(fs.Output(), fs.Name(), fmt.Errorf("--%s %q: empty; give a value (%s) or leave the flag out for its default", empty.Name, empty.Value.String(), empty.Usage)), false
	}
	return 0, true
}

// checkChoice reports a flag's value that is none of allowed.
func checkChoice(flagName, v string, allowed ...string) error {
	if !slices.Contains(allowed, v) {
		return fmt.Errorf("%s %q: allowed %s", flagName, v, strings.Join(allowed, ", "))
	}
	return nil
}

// fail prints an error and returns the bad-input exit code. A run past the
// work bound says which --max-work accepts it.
func fail(stderr io.Writer, cmd string, err error) int {
	if we := (*sim.WorkError)(nil); errors.As(err, &we) {
		err = fmt.Errorf("%w; --max-work %.2g accepts it", err, we.Accepting())
	}
	fmt.Fprintf(stderr, "simrun %s: %v\n", cmd, err)
	return exitBadUsed
}

// parseFlagsOnly parses the flags of a command that takes no arguments: a
// stray argument is an error, not silently ignored.
func parseFlagsOnly(fs *flag.FlagSet, args []string, cmd string, stderr io.Writer) (int, bool) {
	if code, ok := parse(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return fail(stderr, cmd, fmt.Errorf("unexpected argument %q (%s takes flags only)", fs.Arg(0), cmd)), false
	}
	return 0, true
}
