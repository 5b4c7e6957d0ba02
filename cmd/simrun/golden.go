package main

import (
	"fmt"
	"os"

	"github.com/metalsim/metalsim/golden"
)

const goldenUsage = `Verify every table, dequant and mulmatid case of a golden directory (the formats of
../shared/golden and ../shared/golden-types): ggml's CPU dequantization bit-exact, the Metal-form
decoders in both codebook strategies bit-exact or differing only as documented, and mul_mat_id
emulated on both paths and variants against the references. Exit 1 if a case fails, 2 if the
input cannot be read.

usage: simrun golden DIR`

func runGolden(c *call) func() int {
	return func() int {
		if len(c.args) != 1 {
			c.fs.Usage()
			return c.fail(fmt.Errorf("want one golden directory, got %d arguments (usage: simrun golden DIR)", len(c.args)))
		}
		dir := c.args[0]
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return c.fail(fmt.Errorf("%s: not a readable directory", dir))
		}
		all, absent, err := golden.VerifyAll(dir)
		if err != nil {
			return c.fail(err)
		}
		for _, r := range all {
			fmt.Fprintln(c.stdout, r)
		}
		line, failed, err := golden.Summary(dir, all, absent)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(c.stdout, line)
		if failed > 0 {
			return exitFailed
		}
		return exitOK
	}
}
