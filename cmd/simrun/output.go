package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/metalsim/metalsim/fileio"
)

// checkOutFile checks an output flag's file before a run (fileio.CheckTarget:
// its directory exists, it is no directory or device) and, for a picture,
// that it ends in ext. "-" is standard output.
func checkOutFile(flagName, file, ext string) error {
	if file == "-" {
		return nil
	}
	if ext != "" && !strings.EqualFold(filepath.Ext(file), ext) {
		return fmt.Errorf("%s %q: want a %s file", flagName, file, ext)
	}
	if err := fileio.CheckTarget(file); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return nil
}

// checkPlotFile checks a --plot file: "" (no picture), or a file ending in
// .png or .svg in a directory that exists.
func checkPlotFile(file string) error {
	if file == "" {
		return nil
	}
	if ext := strings.ToLower(filepath.Ext(file)); ext != ".png" && ext != ".svg" {
		return fmt.Errorf("--plot %q: the file must end in .png or .svg", file)
	}
	return checkOutFile("--plot", file, "")
}

// writeOut writes b to a file (fileio.WriteFile: whole or not at all) or,
// for "-", to stdout.
func writeOut(stdout io.Writer, file string, b []byte) error {
	if file == "-" {
		_, err := stdout.Write(b)
		return err
	}
	return fileio.WriteFile(file, b)
}

// writePlot draws a --plot picture into file, in the format its extension
// names (png or svg); a failed drawing or write leaves the file as it was.
func writePlot(file string, draw func(w io.Writer, format string) error) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	if err := fileio.Write(file, func(w io.Writer) error { return draw(w, format) }); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}
