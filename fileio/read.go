// Package fileio is how metalsim reads and writes files. Every input is read
// with [ReadFile]: a regular file (or "-", standard input) no larger than
// the cap of its [Kind], so a device, a named pipe or a huge file is an error
// naming the file, never a hang or a process that grows until it dies. Every
// output is written with [WriteFile]: to a temporary file beside the target,
// renamed over it once it is whole, so a failed write leaves the previous
// file as it was.
package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Kind is a kind of input file, with its size cap.
type Kind int

// The kinds of input file metalsim reads.
const (
	ChipFile       Kind = iota // --chip-file, --chip FILE.json
	VariantSpec                // --variant FILE.toml
	Measurements               // validate and fit inputs: calibration TSVs, test-backend-ops logs
	SweepOutput                // merge's shards
	RoutingIDs                 // --routing file:PATH
	GoldenManifest             // a golden set's manifest.json and index.json
	GoldenData                 // a golden set's data files and table texts
	GGUFMetadata               // a GGUF file's header (--gguf), read up to its tensor data
	numKinds
)

// kinds holds each kind's name and default cap. The caps are far above any
// real file of the kind and far below the memory of a laptop.
var kinds = [numKinds]struct {
	name string
	cap  int64
	why  string
}{
	ChipFile:       {"chip file", 1 << 20, "the embedded chips are about 10 KB"},
	VariantSpec:    {"variant spec", 1 << 20, "a spec is a few dozen lines"},
	Measurements:   {"measurement file", 256 << 20, "a full test-backend-ops perf log is a few MB"},
	SweepOutput:    {"sweep output", 1 << 30, "about 500 bytes a row: two million rows"},
	RoutingIDs:     {"ids file", 1 << 30, "raw int32: n x n_used x 4 bytes, 2^25 ids"},
	GoldenManifest: {"golden manifest", 64 << 20, "the shared sets' largest is 1.3 MB"},
	GoldenData:     {"golden data file", 256 << 20, "the shared sets' largest is 1.1 MB"},
	GGUFMetadata:   {"GGUF metadata", 256 << 20, "a model's metadata (its vocabulary) is a few MB"},
}

// CapVar is the environment variable that replaces every cap, a size in bytes
// or with a unit: METALSIM_MAX_READ=4GiB.
const CapVar = "METALSIM_MAX_READ"

// Kinds returns every kind, in declaration order.
func Kinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// String names the kind: "chip file".
func (k Kind) String() string { return kinds[k].name }

// DefaultCap returns the kind's cap in bytes when CapVar is not set.
func (k Kind) DefaultCap() int64 { return kinds[k].cap }

// Why says where the kind's default cap comes from.
func (k Kind) Why() string { return kinds[k].why }

// Cap returns the kind's cap in bytes: CapVar's value when it is set, else
// the default.
func (k Kind) Cap() (int64, error) {
	s, ok := os.LookupEnv(CapVar)
	if !ok || strings.TrimSpace(s) == "" {
		return k.DefaultCap(), nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: %w", CapVar, s, err)
	}
	return n, nil
}

// units are the size suffixes ParseSize reads, longest first.
var units = []struct {
	suffix string
	bytes  int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}

// ParseSize reads a size in bytes: an integer, optionally followed by a unit
// (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), at least 1 and at most 2^62.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a size in [1, 2^62] bytes: an integer with an optional unit, e.g. 512MiB or 4GiB")
	}
	return n * mult, nil
}

// FormatSize renders a byte count for a message: "1 MiB", "3.2 MB", "512 B".
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		bytes  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.bytes && n%u.bytes == 0 {
			return fmt.Sprintf("%d %s", n/u.bytes, u.suffix)
		}
	}
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3g GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g MB", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.3g kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// Stdin is the name that reads standard input.
const Stdin = "-"

// ReadFile reads an input file of kind k: path must be a regular file (a
// symbolic link to one is fine), or "-" for standard input, and hold at most
// k's cap. Errors start with the kind and the file ("chip file x.json: ...")
// and say what the file is instead (a directory, a device, a named pipe) or
// the cap and how to raise it.
func ReadFile(path string, k Kind) ([]byte, error) {
	limit, err := k.Cap()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, path, err)
	}
	if path == Stdin {
		return readStdin(k, limit)
	}
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, path, err)
	}
	if st.Size() > limit {
		return nil, tooLarge(k, path, st.Size(), limit)
	}
	return readCapped(f, k, path, limit)
}

// Open opens an input file of kind k for reading, refusing anything but a
// regular file before it is opened (opening a named pipe would wait for a
// writer), and checking again after (the path may have changed between).
func Open(path string, k Kind) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: empty file name", k)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, path, unwrapPath(err))
	}
	if err := regular(st); err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, path, unwrapPath(err))
	}
	st2, err := f.Stat()
	if err == nil && !os.SameFile(st, st2) {
		err = errors.New("changed while it was opened")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", k, path, err)
	}
	return f, nil
}

// regular reports why a file is not a regular file, or nil.
func regular(st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("is a directory, want a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("is a named pipe, not a regular file (pipe its content to - instead: standard input)")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a regular file")
	case m&fs.ModeDevice != 0:
		return errors.New("is a device, not a regular file")
	}
	return fmt.Errorf("is not a regular file (mode %v)", m)
}

// unwrapPath drops the operation and path an *fs.PathError repeats ("open
// x: no such file or directory"): the message names the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Load reads an input file of kind k with ReadFile and returns what parse
// makes of its bytes.
func Load[T any](path string, k Kind, parse func(data []byte) (T, error)) (T, error) {
	data, err := ReadFile(path, k)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(data)
}

// readStdin reads standard input, which must not be a terminal (a read would
// wait for typing).
func readStdin(k Kind, limit int64) ([]byte, error) {
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&fs.ModeCharDevice != 0 {
		return nil, fmt.Errorf("%s -: standard input is a terminal or a device; redirect a file into it, or give the file's name", k)
	}
	return readCapped(os.Stdin, k, "standard input", limit)
}

// readCapped reads r to its end, failing past limit bytes.
func readCapped(r io.Reader, k Kind, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k, name, unwrapPath(err))
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(k, name, -1, limit)
	}
	return data, nil
}

// tooLarge is the error of a file over its cap; size < 0 when only "more
// than the cap" is known (standard input).
func tooLarge(k Kind, name string, size, limit int64) error {
	have := ""
	if size >= 0 {
		have = FormatSize(size) + ": "
	}
	return fmt.Errorf("%s %s: %sover the %s cap of a %s (%s=SIZE raises every cap, e.g. %s=%s)",
		k, name, have, FormatSize(limit), k, CapVar, CapVar, suggest(max(size, 2*limit)))
}

// suggest rounds a size up to a whole number of GiB or MiB, for a message.
func suggest(n int64) string {
	if n > 1<<30 {
		return fmt.Sprintf("%dGiB", (n+1<<30-1)>>30)
	}
	return fmt.Sprintf("%dMiB", max(1, (n+1<<20-1)>>20))
}
