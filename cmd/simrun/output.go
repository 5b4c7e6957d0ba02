package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// checkOutFile checks an output flag's file: its directory exists and, for
// a picture, it ends in ext. "-" is standard output.
func checkOutFile(flagName, file, ext string) error {
	if file == "-" {
		return nil
	}
	if ext != "" && !strings.EqualFold(filepath.Ext(file), ext) {
		return fmt.Errorf("%s %q: want a %s file", flagName, file, ext)
	}
	if st, err := os.Stat(filepath.Dir(file)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %q: no such directory %q", flagName, file, filepath.Dir(file))
	}
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return fmt.Errorf("%s %q: is a directory, want a file name", flagName, file)
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

// writeOut writes b to a file or, for "-", to stdout.
func writeOut(stdout io.Writer, file string, b []byte) error {
	if file == "-" {
		_, err := stdout.Write(b)
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// writePlot draws a --plot picture into file, in the format its extension
// names (png or svg).
func writePlot(file string, draw func(w io.Writer, format string) error) error {
	var buf bytes.Buffer
	if err := draw(&buf, strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}
