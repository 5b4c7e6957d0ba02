package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/dequant"
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
	fmt.Fprintln(tw, "variant\tnr0\tnr1\tnr1h\tnk\tSGs\tSG grid\tthreads\tTG mem B\thalf-skip\tB padding\tcodebook\tB extents\tdual desc\tpaths\tfrom")
	for _, r := range rows {
		v, g := r.v, r.v.Geometry
		pad := "restage"
		if v.Padding == tile.PadZero {
			pad = "zero"
		}
		cb := "bytes"
		if v.Codebook == dequant.WordReads {
			cb = "words"
		}
		ext := "upstream"
		if v.BExtents == tile.ExtentsFixed {
			ext = "fixed"
		}
		var paths []string
		for _, p := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			if (r.path == nil || *r.path == p) && v.Validate(p) == nil {
				paths = append(paths, p.String())
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%dx%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			v.Name, g.NR0, g.NR1, g.NR1H, g.NK, g.NSG, g.SGRows, g.SGCols, 32*g.NSG, g.TGMemoryBytes(),
			yesNo(v.HalfSkip), pad, cb, ext, yesNo(v.DualDescriptor), strings.Join(paths, ","), r.from)
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, "variants", err)
	}
	fmt.Fprintln(stdout, "\nSG grid: sg_rows x sg_cols on the simdgroup path. B extents and dual desc apply to the tensor path.")
	fmt.Fprintln(stdout, "simrun variants --show NAME prints a variant as a TOML spec to start a what-if file from.")
	return exitOK
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
