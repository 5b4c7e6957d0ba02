package models

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/metalsim/metalsim/fileio"
)

// GGUF limits from the format's specification (ggml docs/gguf.md, lines
// 264-266 at d99724f): a metadata key is an ASCII string of at most 65535
// bytes.
const ggufMaxKeyBytes = 1<<16 - 1

// ggufMaxNesting bounds how deep arrays of arrays are walked.
const ggufMaxNesting = 8

// ggufFixedSize is the byte size of each fixed-size GGUF metadata value type
// (0 uint8, 1 int8, 2 uint16, 3 int16, 4 uint32, 5 int32, 6 float32, 7 bool,
// 10 uint64, 11 int64, 12 float64); 8 (string) and 9 (array) have none.
var ggufFixedSize = map[uint32]int64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// ggufWalker reads a GGUF header's metadata section, counting the bytes it
// has passed against the file's size and the metadata cap.
type ggufWalker struct {
	r         *bufio.Reader
	off, size int64
	limit     int64
}

// errGGUFEnd marks a read past the end of the file.
var errGGUFEnd = errors.New("past the end of the file")

func (w *ggufWalker) skip(n int64) error {
	if n > w.size-w.off {
		return errGGUFEnd
	}
	if w.off+n > w.limit {
		return fmt.Errorf("the metadata runs past the %s cap of %s (%s=SIZE raises it)", fileio.FormatSize(w.limit), fileio.GGUFMetadata, fileio.CapVar)
	}
	if _, err := w.r.Discard(int(n)); err != nil {
		return err
	}
	w.off += n
	return nil
}

func (w *ggufWalker) u32() (uint32, error) {
	var b [4]byte
	if 4 > w.size-w.off {
		return 0, errGGUFEnd
	}
	if _, err := io.ReadFull(w.r, b[:]); err != nil {
		return 0, err
	}
	w.off += 4
	return binary.LittleEndian.Uint32(b[:]), nil
}

func (w *ggufWalker) u64() (uint64, error) {
	lo, err := w.u32()
	if err != nil {
		return 0, err
	}
	hi, err := w.u32()
	return uint64(hi)<<32 | uint64(lo), err
}

// value skips one metadata value of type typ.
func (w *ggufWalker) value(typ uint32, depth int) error {
	if n, ok := ggufFixedSize[typ]; ok {
		return w.skip(n)
	}
	switch typ {
	case 8: // string: uint64 length, bytes
		n, err := w.u64()
		if err != nil {
			return err
		}
		if n > uint64(w.size-w.off) {
			return fmt.Errorf("a string of %d bytes, but the file has %d bytes left", n, w.size-w.off)
		}
		return w.skip(int64(n))
	case 9: // array: element type, uint64 count, elements
		if depth >= ggufMaxNesting {
			return fmt.Errorf("arrays nested deeper than %d", ggufMaxNesting)
		}
		et, err := w.u32()
		if err != nil {
			return err
		}
		n, err := w.u64()
		if err != nil {
			return err
		}
		min := ggufFixedSize[et]
		if min == 0 {
			min = 8 // a string's or an array's length field
		}
		if n > uint64(w.size-w.off)/uint64(min) {
			return fmt.Errorf("an array of %d elements of type %d, but the file has %d bytes left", n, et, w.size-w.off)
		}
		if _, ok := ggufFixedSize[et]; ok {
			return w.skip(int64(n) * min)
		}
		for range n {
			if err := w.value(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("value type %d: unknown (GGUF has types 0 to 12)", typ)
}

// checkGGUFMetadata walks the metadata keys of a GGUF v2+ file (r just past
// the magic and version; size the file's size) and reports the first that
// cannot be, by what is wrong with it: a key longer than the format allows
// or than the file holds, a value that runs past the end of the file, an
// unknown value type, or fewer keys than the header counts.
func checkGGUFMetadata(r io.Reader, size int64) error {
	limit, err := fileio.GGUFMetadata.Cap()
	if err != nil {
		return err
	}
	w := &ggufWalker{r: bufio.NewReaderSize(r, 1<<16), off: 8, size: size, limit: limit}
	if _, err := w.u64(); err != nil { // tensor count: checked by the parser
		return fmt.Errorf("tensor count: %w", err)
	}
	count, err := w.u64()
	if err != nil {
		return fmt.Errorf("metadata key count: %w", err)
	}
	for i := uint64(0); i < count; i++ {
		at := w.off
		n, err := w.u64()
		if errors.Is(err, errGGUFEnd) {
			return fmt.Errorf("metadata key count %d: the file ends after %d keys (a truncated file?)", count, i)
		}
		if err != nil {
			return fmt.Errorf("metadata key %d (byte %d): %w", i, at, err)
		}
		switch {
		case n > ggufMaxKeyBytes:
			return fmt.Errorf("metadata key %d (byte %d): length %d: impossible, a GGUF key is at most %d bytes (a corrupt file?)", i, at, n, ggufMaxKeyBytes)
		case n > uint64(w.size-w.off):
			return fmt.Errorf("metadata key %d (byte %d): length %d, but the file has %d bytes left (a truncated file?)", i, at, n, w.size-w.off)
		}
		if err := w.skip(int64(n)); err != nil {
			return fmt.Errorf("metadata key %d (byte %d): %w", i, at, err)
		}
		typ, err := w.u32()
		if err == nil {
			err = w.value(typ, 0)
		}
		if err != nil {
			return fmt.Errorf("metadata key %d (byte %d): value: %w", i, at, err)
		}
	}
	return nil
}
