package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/tile"
)

func runVariants(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("variants", "List the built-in kernel variants with all their knobs, and any spec files given as\n"+
		"arguments (simrun variants docs/variants/*.toml); or print one as a TOML spec (--show), a starting point\n"+
		"for a what-if file: edit it and pass it to --variant of simulate, trace, occupancy, emulate.\n\n"+
		"usage: simrun variants [--show NAME|FILE] [FILE.toml ...]", stderr)
	show := fs.String("show", "", "print this built-in variant or spec file as a complete TOML spec")
	if code, ok := parse(fs, args); !ok {
		return code
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
	type row struct {
		v    tile.Variant
		path *tile.Path
		from string
	}
	var rows []row
	for _, v := range tile.Builtin() {
		rows = append(rows, row{v: v, from: "built-in"})
	}
	for _, f := range fs.Args() {
		if !strings.HasSuffix(f, ".toml") {
			return fail(stderr, "variants", fmt.Errorf("argument %q: want a .toml spec file", f))
		}
		v, path, err := tile.LoadVariant(f)
		if err != nil {
			return fail(stderr, "variants", err)
		}
		rows = append(rows, row{v, path, f})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	header := append(append(append([]string{"variant"}, tile.KnobColumns(true)...), "threads", "TG mem B"), tile.KnobColumns(false)...)
	fmt.Fprintln(tw, strings.Join(append(header, "paths", "from"), "\t"))
	for _, r := range rows {
		v := r.v
		var paths []string
		for _, p := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			if (r.path == nil || *r.path == p) && v.Validate(p) == nil {
				paths = append(paths, p.String())
			}
		}
		cells := append(append([]string{v.Name}, tile.KnobCells(v, true)...), strconv.Itoa(32*v.NSG), strconv.Itoa(v.TGMemoryBytes()))
		cells = append(append(cells, tile.KnobCells(v, false)...), strings.Join(paths, ","), r.from)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, "variants", err)
	}
	fmt.Fprintln(stdout, "\nSG grid: sg_rows x sg_cols on the simdgroup path. B extents and dual desc apply to the tensor path.")
	fmt.Fprintln(stdout, "simrun variants --show NAME prints a variant as a TOML spec to start a what-if file from.")
	return exitOK
}
