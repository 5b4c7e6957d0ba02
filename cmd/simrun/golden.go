package main

import (
	"fmt"
	"io"
	"os"

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
	all, absent, err := golden.VerifyAll(dir)
	if err != nil {
		return fail(stderr, "golden", err)
	}
	for _, r := range all {
		fmt.Fprintln(stdout, r)
	}
	line, failed, err := golden.Summary(dir, all, absent)
	if err != nil {
		return fail(stderr, "golden", err)
	}
	fmt.Fprintln(stdout, line)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}
