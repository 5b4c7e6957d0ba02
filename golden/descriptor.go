package golden

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/metalsim/metalsim/fileio"
)

// Descriptor is a golden file descriptor: a file named relative to its
// manifest's directory, its size in bytes and the lower-case hex SHA-256 of its
// whole content.
type Descriptor struct {
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Read reads dir/d.File and checks its size and SHA-256 against d. Errors name
// the file and the field ("bytes" or "sha256") with the expected and actual
// values.
func (d Descriptor) Read(dir string) ([]byte, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, d.File)
	b, err := fileio.ReadFile(path, fileio.GoldenData)
	if err != nil {
		return nil, fmt.Errorf("file %q: %w", d.File, err)
	}
	if int64(len(b)) != d.Bytes {
		return nil, fmt.Errorf("file %q (%s): bytes: manifest says %d, file has %d", d.File, path, d.Bytes, len(b))
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != d.SHA256 {
		return nil, fmt.Errorf("file %q (%s): sha256: manifest says %s, file has %s", d.File, path, d.SHA256, got)
	}
	return b, nil
}

// checkSize stats dir/d.File and checks that it exists with d.Bytes bytes
// (cheap; the digest is checked by Read).
func (d Descriptor) checkSize(dir string) error {
	size, err := d.stat(dir)
	if err != nil {
		return err
	}
	if size != d.Bytes {
		return fmt.Errorf("file %q (%s): bytes: manifest says %d, file has %d", d.File, filepath.Join(dir, d.File), d.Bytes, size)
	}
	return nil
}

// checkExists checks that dir/d.File is a regular file.
func (d Descriptor) checkExists(dir string) error {
	_, err := d.stat(dir)
	return err
}

func (d Descriptor) stat(dir string) (int64, error) {
	path := filepath.Join(dir, d.File)
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("file %q: missing (%s)", d.File, path)
		}
		return 0, fmt.Errorf("file %q: %w", d.File, err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("file %q (%s): not a regular file", d.File, path)
	}
	return st.Size(), nil
}

// validate checks the descriptor's own fields.
func (d Descriptor) validate() error {
	if d.File == "" {
		return errors.New("file: missing or empty")
	}
	if !filepath.IsLocal(d.File) || strings.ContainsAny(d.File, `/\`) {
		return fmt.Errorf("file %q: must be a plain file name in the manifest's directory", d.File)
	}
	if d.Bytes < 0 {
		return fmt.Errorf("file %q: bytes: %d is negative", d.File, d.Bytes)
	}
	if len(d.SHA256) != 64 || strings.Trim(d.SHA256, "0123456789abcdef") != "" {
		return fmt.Errorf("file %q: sha256: %q is not 64 lower-case hex digits", d.File, d.SHA256)
	}
	return nil
}

// checkDesc validates an optional descriptor field: nil is an error only if
// required; want >= 0 is the size the rest of the manifest implies.
func checkDesc(field string, d *Descriptor, required bool, want int64) error {
	if d == nil {
		if required {
			return fmt.Errorf("%s: missing", field)
		}
		return nil
	}
	if err := d.validate(); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if want >= 0 && d.Bytes != want {
		return fmt.Errorf("%s: file %q: bytes: %d, but the manifest's sizes imply %d", field, d.File, d.Bytes, want)
	}
	return nil
}

// fileList checks a manifest's flat files[] array (valid descriptors, sorted by
// name, no duplicates) and indexes it by name.
func fileList(files []Descriptor) (map[string]Descriptor, error) {
	byName := make(map[string]Descriptor, len(files))
	for i, d := range files {
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("files[%d]: %w", i, err)
		}
		if i > 0 && files[i-1].File >= d.File {
			return nil, fmt.Errorf("files[%d]: file %q: not sorted by name after %q (or duplicate)", i, d.File, files[i-1].File)
		}
		byName[d.File] = d
	}
	return byName, nil
}

// listed checks that a descriptor used by an entry is in files[] with the same
// size and digest.
func listed(field string, d *Descriptor, files map[string]Descriptor) error {
	if d == nil {
		return nil
	}
	f, ok := files[d.File]
	if !ok {
		return fmt.Errorf("%s: file %q: not listed in files[]", field, d.File)
	}
	if f != *d {
		return fmt.Errorf("%s: file %q: descriptor {bytes %d, sha256 %s} differs from files[] {bytes %d, sha256 %s}",
			field, d.File, d.Bytes, d.SHA256, f.Bytes, f.SHA256)
	}
	return nil
}

// checkFiles stats every file of files[] in dir.
func checkFiles(dir string, files []Descriptor) error {
	for i, d := range files {
		if err := d.checkSize(dir); err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
	}
	return nil
}

// Producer is the provenance object every golden manifest carries.
type Producer struct {
	Library          string `json:"library"`
	Commit           string `json:"commit"`
	GGMLVersion      string `json:"ggml_version"`
	Backend          string `json:"backend"`
	Build            string `json:"build"`
	Compiler         string `json:"compiler"`
	Generator        string `json:"generator"`
	GeneratorVersion int    `json:"generator_version"`
	Set              string `json:"set"`
	SetSeed          string `json:"set_seed"`
}

// Header holds the fields every golden manifest and the table index start
// with: the format version, the provenance and the byte order.
type Header struct {
	FormatVersion int      `json:"format_version"`
	Producer      Producer `json:"producer"`
	ByteOrder     string   `json:"byte_order"`
}

// FormatVersion is the only golden format version this package reads.
const FormatVersion = 1

func (h Header) validate() error {
	if h.FormatVersion != FormatVersion {
		return fmt.Errorf("format_version: %d, this reader understands %d", h.FormatVersion, FormatVersion)
	}
	if h.ByteOrder != "little-endian" {
		return fmt.Errorf("byte_order: %q, want \"little-endian\"", h.ByteOrder)
	}
	if h.Producer.Commit == "" {
		return errors.New("producer.commit: missing")
	}
	return nil
}

// decodeJSON unmarshals one JSON value and rejects trailing data. Unknown keys
// are accepted (format_version is the compatibility gate).
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("bad JSON: trailing data after the top-level value")
	}
	return nil
}

// parseDoc decodes data into a new T (decodeJSON) and validates it: the one
// parser of the manifests and the table index.
func parseDoc[T any, P interface {
	*T
	validate() error
}](data []byte) (*T, error) {
	var doc T
	if err := decodeJSON(data, &doc); err != nil {
		return nil, err
	}
	if err := P(&doc).validate(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// readDoc reads dir/name, parses it with parse and completes it with check
// (its directory, its files' checks); errors start with the file's path.
func readDoc[T any](dir, name string, parse func([]byte) (*T, error), check func(*T) error) (*T, error) {
	data, path, err := readManifest(dir, name)
	if err != nil {
		return nil, err
	}
	doc, err := parse(data)
	if err == nil {
		err = check(doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// validateEach validates every element of the JSON array list and rejects
// one whose label repeats an earlier one's in seen (one map for the arrays
// whose keys must differ across them; keyField names the key). Errors name
// the element as list[i] and its label: a quoted name or type, or
// "(n_tokens N)".
func validateEach[T any](list, keyField string, xs []T, seen map[string]bool, label func(*T) string, validate func(*T) error) error {
	for i := range xs {
		x := &xs[i]
		l := label(x)
		if err := validate(x); err != nil {
			return fmt.Errorf("%s[%d] %s: %w", list, i, l, err)
		}
		if seen[l] {
			return fmt.Errorf("%s[%d] %s: %s: duplicate", list, i, l, keyField)
		}
		seen[l] = true
	}
	return nil
}

// named returns the first element of xs that match accepts, or nil.
func named[T any](xs []T, match func(*T) bool) *T {
	for i := range xs {
		if match(&xs[i]) {
			return &xs[i]
		}
	}
	return nil
}

// readManifest reads dir/name, returning its bytes and the path for errors.
func readManifest(dir, name string) ([]byte, string, error) {
	path := filepath.Join(dir, name)
	b, err := fileio.ReadFile(path, fileio.GoldenManifest)
	if err != nil {
		return nil, path, err
	}
	return b, path, nil
}
