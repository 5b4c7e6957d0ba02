package fileio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadFileRegular: a regular file and a symbolic link to one read whole.
func TestReadFileRegular(t *testing.T) {
	p := writeTemp(t, "chip.json", "{}")
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(p, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	for _, f := range []string{p, link} {
		b, err := ReadFile(f, ChipFile)
		if err != nil || string(b) != "{}" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
}

// TestReadFileRefusesNonRegular: a directory, a device and a named pipe are
// errors naming the kind, the file and what it is; none is read, and the pipe
// (which has no writer) does not hang the reader.
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ path, want string }{
		{dir, "chip file " + dir + ": is a directory, want a file"},
		{filepath.Join(dir, "missing.json"), "chip file " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases, struct{ path, want string }{"/dev/zero", "chip file /dev/zero: is a device, not a regular file"})
		fifo := filepath.Join(dir, "fifo")
		if err := mkfifo(fifo); err == nil {
			cases = append(cases, struct{ path, want string }{fifo, "chip file " + fifo + ": is a named pipe, not a regular file"})
		}
	}
	for _, tc := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(tc.path, ChipFile)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile hangs", tc.path)
		}
	}
}

// TestReadFileCap: a file over its kind's cap is an error naming the file,
// its size, the cap and the variable that raises it; the variable raises
// (or lowers) every cap, and a bad value is an error naming it.
func TestReadFileCap(t *testing.T) {
	p := writeTemp(t, "big.toml", strings.Repeat("x", 2<<20))
	_, err := ReadFile(p, VariantSpec)
	want := "variant spec " + p + ": 2 MiB: over the 1 MiB cap of a variant spec (METALSIM_MAX_READ=SIZE raises every cap, e.g. METALSIM_MAX_READ=2MiB)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	t.Setenv(CapVar, "4MiB")
	if b, err := ReadFile(p, VariantSpec); err != nil || len(b) != 2<<20 {
		t.Errorf("%s=4MiB: %d bytes, %v", CapVar, len(b), err)
	}
	t.Setenv(CapVar, "10")
	if _, err := ReadFile(p, VariantSpec); err == nil || !strings.Contains(err.Error(), "over the 10 B cap") {
		t.Errorf("%s=10: %v", CapVar, err)
	}
	t.Setenv(CapVar, "lots")
	if _, err := ReadFile(p, VariantSpec); err == nil || !strings.Contains(err.Error(), "METALSIM_MAX_READ=lots: want a size") {
		t.Errorf("%s=lots: %v", CapVar, err)
	}
}

// TestReadFileStdin: "-" reads standard input, under the same cap.
func TestReadFileStdin(t *testing.T) {
	in := writeTemp(t, "in.tsv", "# chip\n")
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	t.Setenv(CapVar, "3")
	if _, err := ReadFile("-", Measurements); err == nil || !strings.HasPrefix(err.Error(), "measurement file standard input: over the 3 B cap") {
		t.Errorf("capped: %v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	t.Setenv(CapVar, "")
	if b, err := ReadFile("-", Measurements); err != nil || string(b) != "# chip\n" {
		t.Errorf("%q, %v", b, err)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"1": 1, "512MiB": 512 << 20, "4 GiB": 4 << 30, "3MB": 3e6, "7B": 7} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "1.5GiB", "MiB", "9999999TiB", "1 PB"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// TestWriteFailureKeepsOldFile: a write that fails half-way leaves the
// previous file whole and no temporary file behind; one that succeeds
// replaces the content and keeps the file's permission bits.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	p := writeTemp(t, "trace.json", "old content")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := Write(p, func(w io.Writer) error {
		if _, err := io.WriteString(w, "half of the new"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "the previous file is unchanged") {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old content" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("after a write: %q, mode %v", b, st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the file alone", len(entries))
	}
}

// TestWriteThroughLink: writing to a symbolic link replaces the file it
// points to and keeps the link.
func TestWriteThroughLink(t *testing.T) {
	p := writeTemp(t, "real.svg", "old")
	link := filepath.Join(filepath.Dir(p), "link.svg")
	if err := os.Symlink(p, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("the target holds %q", b)
	}
}

// TestCheckTarget: a missing directory, a directory and a device are refused
// before anything is written; a new name in an existing directory passes.
func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "no", "x.png"): "no such directory",
		dir:                               "is a directory",
		filepath.Join(dir, "new.png"):     "",
	} {
		err := CheckTarget(path)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if runtime.GOOS != "windows" {
		if err := WriteFile("/dev/null", []byte("x")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("/dev/null: %v", err)
		}
	}
}

// TestREADMEListsTheCaps: README.md's table of input caps has a row for
// every kind with its default cap.
func TestREADMEListsTheCaps(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		row := "| " + k.String() + " | " + FormatSize(k.DefaultCap()) + " |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no row %q", row)
		}
	}
	if !strings.Contains(string(readme), CapVar+"=SIZE") {
		t.Errorf("README.md does not say that %s raises the caps", CapVar)
	}
}

// FuzzParseSize: any METALSIM_MAX_READ value is refused, or a size in
// [1, 2^62] that FormatSize renders.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1", "512MiB", "4 GiB", "3MB", "0", "-1", "1.5GiB", "9999999TiB", "KiB", " 7B "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 1 || n > 1<<62 || FormatSize(n) == "" {
			t.Fatalf("%q: %d", s, n)
		}
	})
}

// TestCurrent: a file is current only when it holds exactly the bytes (a
// prefix, a longer file or another byte is not); regenerating makes it so;
// a missing file is an error.
func TestCurrent(t *testing.T) {
	p := writeTemp(t, "gen.txt", "abc")
	for _, tc := range []struct {
		want string
		ok   bool
	}{{"abc", true}, {"ab", false}, {"abcd", false}, {"abd", false}, {"", false}} {
		if ok, err := Current(p, []byte(tc.want), false); err != nil || ok != tc.ok {
			t.Errorf("Current(%q) on %q = %v, %v; want %v", tc.want, "abc", ok, err, tc.ok)
		}
	}
	if ok, err := Current(p, []byte("xyz"), true); err != nil || !ok {
		t.Fatalf("regenerated: %v, %v", ok, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "xyz" {
		t.Errorf("after regenerating the file holds %q", b)
	}
	if _, err := Current(filepath.Join(t.TempDir(), "none"), nil, false); err == nil {
		t.Error("a missing file is current")
	}
}

// TestLoad: Load hands parse the file's bytes, and returns ReadFile's error
// without calling parse.
func TestLoad(t *testing.T) {
	p := writeTemp(t, "in.txt", "abc")
	got, err := Load(p, Measurements, func(b []byte) (string, error) { return string(b) + "!", nil })
	if err != nil || got != "abc!" {
		t.Errorf("Load = %q, %v", got, err)
	}
	called := false
	if _, err := Load(filepath.Join(t.TempDir(), "none"), Measurements, func([]byte) (int, error) { called = true; return 0, nil }); err == nil || called {
		t.Errorf("a missing file: %v, parse called %v", err, called)
	}
}
