package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

func runVariants(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("variants", "List the built-in kernel variants with all their knobs, and any spec files given as\n"+
		"arguments (simrun variants docs/variants/*.toml); or print one as a TOML spec (--show), a starting point\n"+
		"for a what-if file: edit it and pass it to --variant of simulate, trace, occupancy, emulate.\n\n"+
		"usage: simrun variants [--show NAME|FILE | --knobs] [FILE.toml ...]", stderr)
	show := fs.String("show", "", "print this built-in variant or spec file as a complete TOML spec")
	knobs := fs.Bool("knobs", false, "list the knobs with the kernels and paths each applies to")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *knobs {
		if *show != "" || fs.NArg() > 0 {
			return fail(stderr, "variants", fmt.Errorf("--knobs: give it alone (it lists the knob table)"))
		}
		return okOr(stderr, trace.WriteKnobs(stdout))
	}
	if *show != "" {
		if fs.NArg() > 0 {
			return fail(stderr, "variants", fmt.Errorf("--show takes one variant; also got %s", strings.Join(fs.Args(), " ")))
		}
		v, path, err := tile.LoadVariant(*show)
		if err != nil {
			return fail(stderr, "variants", fmt.Errorf("--show: %w", err))
		}
		if _, err := stdout.Write(tile.FormatVariantSpec(v, path)); err != nil {
			return fail(stderr, "variants", err)
		}
		return exitOK
	}
	rows, err := trace.VariantListings(fs.Args())
	if err != nil {
		return fail(stderr, "variants", err)
	}
	if err := trace.WriteVariants(stdout, rows); err != nil {
		return fail(stderr, "variants", err)
	}
	return exitOK
}
