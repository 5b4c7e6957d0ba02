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
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

// Exit codes: the one rule every command follows (README, "Exit codes").
const (
	exitOK      = 0
	exitFailed  = 1 // the command ran and a check it makes failed (a golden case, emulate's error bound, occupancy's launch, sweep or merge points)
	exitBadUsed = 2 // bad input (a flag, an argument, a file) or an output that could not be written
)

// command is one subcommand: its name, its line in simrun help (summary), the
// text of its -h above the flags (usage), how it takes arguments, the flag
// groups it shares with other commands, and its own part: run registers the
// command's own flags on c.fs and returns what runs once they are parsed
// (exec).
type command struct {
	name    string
	summary string
	usage   string
	args    argMode
	groups  []flagGroup
	run     func(c *call) func() int
}

// argMode is how a command takes arguments besides its flags.
type argMode int

const (
	flagsOnly   argMode = iota // none: a stray argument is an error
	argsAfter                  // after the flags: the first argument ends them (parse)
	argsBetween                // before, between or after the flags (parseWithArgs)
)

func commands() []command {
	m1Pro := "M1 Pro 16-core GPU"
	return []command{
		{"headline", "the default experiment: 128-expert top-8 q4_0, every calibration row (n = 8..512), upstream vs halftile on M1 Pro and M5",
			headlineUsage, flagsOnly, []flagGroup{withSim, withTable}, runHeadline},
		{"golden", "verify dequantization and mul_mat_id emulation against a golden directory",
			goldenUsage, argsAfter, nil, runGolden},
		{"emulate", "run one matmul (the kernel llama.cpp dispatches, or --kernel) for values: counters and the error against a float64 reference",
			emulateUsage, flagsOnly, []flagGroup{withProblem, withKernel("simdgroup")}, runEmulate},
		{"simulate", "predict the time of one MUL_MAT or MUL_MAT_ID on a chip (text, JSON or CSV)",
			simulateUsage, flagsOnly, []flagGroup{withProblem, withKernel(""), withChip(m1Pro), withSim}, runSimulate},
		{"chips", "list the chips metalsim knows, or print one chip file",
			chipsUsage, flagsOnly, nil, runChips},
		{"validate", "predict measured rows (calibration TSVs, test-backend-ops logs) and report the error",
			validateUsage, argsAfter, []flagGroup{withMeasure}, runValidate},
		{"fit", "fit named chip parameters to measurement files and write a new chip file",
			fitUsage, argsAfter, []flagGroup{withMeasure}, runFit},
		{"compare", "two variants side by side over chips, shapes or a model layer and a list of n (µs, delta, counters, occupancy; --plot)",
			compareUsage, argsBetween, []flagGroup{withShape, withSim}, runCompare},
		{"sweep", "cartesian design-space sweep over n, variants, chips, routing and skew; CSV/JSON, parallel, --shard i/N",
			sweepUsage, flagsOnly, []flagGroup{withShape, withSim}, runSweep},
		{"merge", "join sharded sweep outputs into the bytes of one unsharded run",
			mergeUsage, argsAfter, nil, runMerge},
		{"bench", "llama-bench's tokens per second for a whole model on a chip (--preset or -m GGUF; pp, tg, pg tests)",
			benchUsage, flagsOnly, []flagGroup{withChip(""), withKernel(""), withMaxWork}, runBench},
		{"model", "every expert matmul of one MoE layer of a model (--preset or --gguf) and the layer total",
			modelUsage, flagsOnly, []flagGroup{withSim}, runModel},
		{"isa", "print the op table as Markdown (docs/isa.md)",
			isaUsage, flagsOnly, nil, runISA},
		{"variants", "list the kernel variants and their knobs, or print one as a TOML spec",
			variantsUsage, argsAfter, nil, runVariants},
		{"trace", "write a Perfetto / chrome://tracing timeline of one dispatch (detailed engine)",
			traceUsage, flagsOnly, []flagGroup{withProblem, withKernel(""), withChip(m1Pro), withMaxWork}, runTrace},
		{"occupancy", "resident threadgroups and simdgroups per core, the limiter, and a table over registers",
			occupancyUsage, flagsOnly, []flagGroup{withKernel(""), withChip(m1Pro)}, runOccupancy},
	}
}

// call is one run of a command: its flag set, the flag groups it shares with
// other commands (those its table row names are registered), its arguments
// besides flags and where it writes.
type call struct {
	name           string
	fs             *flag.FlagSet
	given          []string // the arguments after the command's name, flags and all
	args           []string // the arguments besides flags
	stdout, stderr io.Writer

	sim     simFlags
	table   tableFlags
	shape   shapeFlags
	problem problemFlags
	kernel  kernelFlags
	chip    chipFlags
	measure measureFlags
	maxWork maxWorkFlag
}

// flagGroup registers one of a call's flag groups on its flag set.
type flagGroup func(c *call)

func withSim(c *call)     { c.sim.register(c.fs) }
func withTable(c *call)   { c.table.register(c.fs) }
func withShape(c *call)   { c.shape.register(c.fs) }
func withProblem(c *call) { c.problem.register(c.fs) }
func withMeasure(c *call) { c.measure.register(c.fs) }
func withMaxWork(c *call) { c.maxWork.register(c.fs) }

// withKernel registers --variant and --path, the path defaulting to defPath.
func withKernel(defPath string) flagGroup { return func(c *call) { c.kernel.register(c.fs, defPath) } }

// withChip registers --chip and --chip-file, the chip defaulting to def.
func withChip(def string) flagGroup { return func(c *call) { c.chip.register(c.fs, def) } }

// exec runs the command on args, the one opening every command shares: it
// makes the flag set, registers the command's groups and own flags, parses
// args (as cmd.args says; help exits 0, a bad flag 2) and runs the command.
func (cmd command) exec(args []string, stdout, stderr io.Writer) int {
	c := &call{name: cmd.name, fs: newFlags(cmd.name, cmd.usage, stderr), given: args, stdout: stdout, stderr: stderr}
	for _, register := range cmd.groups {
		register(c)
	}
	run := cmd.run(c)
	var code int
	var ok bool
	if cmd.args == argsBetween {
		c.args, code, ok = parseWithArgs(c.fs, args)
	} else {
		code, ok = parse(c.fs, args)
		c.args = c.fs.Args()
	}
	switch {
	case !ok:
		return code
	case cmd.args == flagsOnly && len(c.args) > 0:
		return c.fail(fmt.Errorf("unexpected argument %q (%s takes flags only)", c.args[0], c.name))
	}
	return run()
}

// fail reports err as the command's (fail) and returns the bad-input exit code.
func (c *call) fail(err error) int { return fail(c.stderr, c.name, err) }

// point returns the matmul of the problem flags on the chip flags' chip, run
// by the --kernel given with the kernel flags' variant and path, with the
// timing options opt (simulate, trace).
func (c *call) point(opt sim.Options) (*study.Point, error) {
	chip, err := c.chip.chip()
	if err != nil {
		return nil, err
	}
	return c.problem.point(&c.kernel, chip, opt)
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
		args = []string{"headline"}
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
		name, args = "headline", append([]string{"headline"}, args...)
	}
	for _, c := range commands() {
		if c.name == name {
			return c.exec(args[1:], stdout, stderr)
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

func okOr(stderr io.Writer, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return exitBadUsed
	}
	return exitOK
}
