package main

import (
	"fmt"
	"io"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
)

func runChips(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("chips", "List the embedded chips, or print one chip file (--show NAME, or --chip-file FILE to check a file).", stderr)
	show := fs.String("show", "", "print this chip's file (name, alias or a chip .json), with calibrated values resolved")
	file := fs.String("chip-file", "", "load and print a chip file (checks it)")
	if code, ok := parseFlagsOnly(fs, args, "chips", stderr); !ok {
		return code
	}
	if *show != "" || *file != "" {
		c, err := study.ShowChip(*show, *file)
		if err != nil {
			return fail(stderr, "chips", err)
		}
		b, err := c.MarshalIndent()
		if err != nil {
			return fail(stderr, "chips", err)
		}
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	chipList, err := chips.All()
	if err != nil {
		return fail(stderr, "chips", err)
	}
	if err := trace.WriteChips(stdout, chipList); err != nil {
		return fail(stderr, "chips", err)
	}
	return exitOK
}
