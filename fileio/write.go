package fileio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// newFileMode is the permission of an output file that did not exist.
const newFileMode fs.FileMode = 0o644

// CheckTarget reports why path cannot take an output file: its directory
// does not exist, or path is a directory, a device, a named pipe or another
// file that is not regular (renaming over it would replace it). A command
// calls it before a long run, so that a bad output name fails first.
func CheckTarget(path string) error {
	if path == "" {
		return errors.New("empty file name")
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: no such directory %q", path, dir)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	case st.IsDir():
		return fmt.Errorf("%s: is a directory, want a file name", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: is not a regular file (mode %v); write to - (standard output) to send the output to a device or a pipe", path, st.Mode())
	}
	return nil
}

// WriteFile writes data to path as Write does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes what write produces to path without ever leaving a partial
// file there: into a temporary file in path's directory (the directory of
// the file a symbolic link points to), synced and renamed over path once
// write and every step after it succeeded. On any failure the temporary file
// is removed and path keeps its previous content. A file that existed keeps
// its permission bits; a new one gets 0644.
func Write(path string, write func(io.Writer) error) (err error) {
	if err := CheckTarget(path); err != nil {
		return err
	}
	target := path
	mode := newFileMode
	left := "no file was written"
	if st, err := os.Stat(path); err == nil {
		mode, left = st.Mode().Perm(), "the previous file is unchanged"
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%s: %w (%s)", path, err, left)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return unwrapPath(err)
	}
	if err := tmp.Sync(); err != nil {
		return unwrapPath(err)
	}
	if err := tmp.Close(); err != nil {
		return unwrapPath(err)
	}
	return unwrapPath(os.Rename(tmp.Name(), target))
}

// Current keeps a file that code generates current: with regenerate it
// first writes want to path (WriteFile); it reports whether path holds
// exactly want, reading at most one byte more than want of it. A test
// compares a committed generated file with what its generator renders now.
func Current(path string, want []byte, regenerate bool) (bool, error) {
	if regenerate {
		if err := WriteFile(path, want); err != nil {
			return false, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return string(got) == string(want), nil
}
