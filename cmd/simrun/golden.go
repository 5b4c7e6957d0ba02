package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/metalsim/metalsim/golden"
)

func runGolden(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("golden", "Verify every table, dequant and mulmatid case of a golden directory (the formats of\n"+
		"../shared/golden and ../shared/golden-types): ggml's CPU dequantization bit-exact, the Metal-form\n"+
		"decoders in both codebook strategies bit-exact or differing only as documented, and mul_mat_id\n"+
		"emulated on both paths and variants against the references. Exit 1 if a case fails, 2 if the\n"+
		"input cannot be read.\n\nusage: simrun golden DIR", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fail(stderr, "golden", fmt.Errorf("want one golden directory, got %d arguments (usage: simrun golden DIR)", fs.NArg()))
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fail(stderr, "golden", fmt.Errorf("%s: not a readable directory", dir))
	}
	var all []golden.Result
	var absent []string // sets the directory does not hold
	for _, step := range []struct {
		name string
		f    func(string) ([]golden.Result, error)
	}{
		{"tables", golden.VerifyTables},
		{"dequant", golden.VerifyDequant},
		{"mulmatid", func(d string) ([]golden.Result, error) { r, _, err := golden.VerifyMulMatID(d); return r, err }},
	} {
		res, err := step.f(dir)
		if err != nil {
			return fail(stderr, "golden", fmt.Errorf("%s: %w", step.name, err))
		}
		for _, r := range res {
			fmt.Fprintln(stdout, r)
		}
		if len(res) == 0 {
			absent = append(absent, step.name+"/")
		}
		all = append(all, res...)
	}
	passed, failed := 0, 0
	for _, r := range all {
		if r.Pass {
			passed++
		} else {
			failed++
		}
	}
	if len(all) == 0 { // nothing was checked: no summary that reads like a result
		fmt.Fprintf(stderr, "simrun golden: %s holds no tables/, dequant/ or mulmatid/ folder\n", dir)
		return exitBadUsed
	}
	fmt.Fprintf(stdout, "golden: %d passed, %d failed", passed, failed)
	if len(absent) > 0 {
		fmt.Fprintf(stdout, " (not in %s, so not checked: %s)", dir, strings.Join(absent, ", "))
	}
	fmt.Fprintln(stdout)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}
