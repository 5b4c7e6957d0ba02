package golden

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// TableIndex is tables/index.json: the lookup-table files and ggml's block
// layouts.
type TableIndex struct {
	Header
	TableFileFormat string      `json:"table_file_format"`
	Tables          []TableInfo `json:"tables"`
	// ExternalTables are tables of another golden set that apply to this one
	// (golden-types: the first set's fp16_to_fp32), named by a path relative to
	// the tables/ folder.
	ExternalTables []ExternalTable `json:"external_tables"`
	BlockLayouts   []BlockLayout   `json:"block_layouts"`
	Notes          string          `json:"notes"`

	// Dir is the directory the index was read from ("" after ParseTableIndex).
	Dir string `json:"-"`
}

// TableInfo describes one table file (`<name>.txt`, one `0x...` element a line).
type TableInfo struct {
	Name         string   `json:"name"`
	File         string   `json:"file"`
	ElementType  string   `json:"element_type"`
	ElementBytes int      `json:"element_bytes"`
	Count        int      `json:"count"`
	FileSHA256   string   `json:"file_sha256"`   // digest of the text file
	RawLESHA256  string   `json:"raw_le_sha256"` // digest of the values packed little-endian
	UsedBy       []string `json:"used_by"`
	Description  string   `json:"description"`
}

// ExternalTable is an entry of external_tables[]: a table file of another golden
// set, by a relative path, with the digests of TableInfo.
type ExternalTable struct {
	Name        string   `json:"name"`
	File        string   `json:"file"` // relative to the tables/ folder, e.g. "../../golden/tables/fp16_to_fp32.txt"
	FileSHA256  string   `json:"file_sha256"`
	RawLESHA256 string   `json:"raw_le_sha256"`
	UsedBy      []string `json:"used_by"`
	Description string   `json:"description"`
}

// External returns the external_tables entry named name, or nil.
func (x *TableIndex) External(name string) *ExternalTable {
	for i := range x.ExternalTables {
		if x.ExternalTables[i].Name == name {
			return &x.ExternalTables[i]
		}
	}
	return nil
}

func (e ExternalTable) validate() error {
	switch {
	case e.Name == "":
		return fmt.Errorf("name: missing")
	case e.File == "" || filepath.IsAbs(e.File) || strings.Contains(e.File, `\`):
		return fmt.Errorf("file: %q: want a relative path with / separators", e.File)
	}
	for _, d := range []struct{ field, v string }{{"file_sha256", e.FileSHA256}, {"raw_le_sha256", e.RawLESHA256}} {
		if len(d.v) != 64 || strings.Trim(d.v, "0123456789abcdef") != "" {
			return fmt.Errorf("%s: %q is not 64 lower-case hex digits", d.field, d.v)
		}
	}
	return nil
}

// BlockLayout is ggml's memory layout of one type, as measured with offsetof.
type BlockLayout struct {
	Type             string       `json:"type"`
	GGMLTypeID       int          `json:"ggml_type_id"`
	CStruct          string       `json:"c_struct"`
	BlockBytes       int          `json:"block_bytes"`
	ElementsPerBlock int          `json:"elements_per_block"`
	BitsPerWeight    float64      `json:"bits_per_weight"`
	IsQuantized      bool         `json:"is_quantized"`
	Fields           []BlockField `json:"fields"`
	Decoding         string       `json:"decoding"`
}

// BlockField is one field of a block struct.
type BlockField struct {
	Name        string `json:"name"`
	Offset      int    `json:"offset"`
	Size        int    `json:"size"`
	ElementType string `json:"element_type"`
	Count       int    `json:"count"`
	Meaning     string `json:"meaning"`
}

// elementBytes gives the size of an element type golden files use (ok = false
// for an unknown name).
func elementBytes(typ string) (n int, ok bool) {
	switch typ {
	case "uint8", "int8":
		return 1, true
	case "uint16", "int16", "fp16", "bf16":
		return 2, true
	case "uint32", "int32", "fp32":
		return 4, true
	case "uint64", "int64":
		return 8, true
	}
	return 0, false
}

// Table returns the entry named name, or nil.
func (x *TableIndex) Table(name string) *TableInfo {
	return named(x.Tables, func(t *TableInfo) bool { return t.Name == name })
}

// ParseTableIndex parses and validates the bytes of a tables/index.json.
func ParseTableIndex(data []byte) (*TableIndex, error) { return parseDoc[TableIndex](data) }

// ReadTableIndex reads and validates dir/index.json (dir is the tables/
// folder). It checks that every listed table file exists; their digests and
// contents are checked by VerifyTables.
func ReadTableIndex(dir string) (*TableIndex, error) {
	return readDoc(dir, "index.json", ParseTableIndex, func(x *TableIndex) error {
		x.Dir = dir
		for i, t := range x.Tables {
			if err := (Descriptor{File: t.File, Bytes: -1}).checkExists(dir); err != nil {
				return fmt.Errorf("tables[%d] %q: %w", i, t.Name, err)
			}
		}
		return nil
	})
}

func (x *TableIndex) validate() error {
	if err := x.Header.validate(); err != nil {
		return err
	}
	if len(x.Tables) == 0 {
		return fmt.Errorf("tables: empty")
	}
	names := map[string]bool{} // a table's name is listed once, here or as external
	if err := validateEach("tables", "name", x.Tables, names, func(t *TableInfo) string { return strconv.Quote(t.Name) },
		(*TableInfo).validate); err != nil {
		return err
	}
	if err := validateEach("external_tables", "name", x.ExternalTables, names, func(e *ExternalTable) string { return strconv.Quote(e.Name) },
		(*ExternalTable).validate); err != nil {
		return err
	}
	return validateEach("block_layouts", "type", x.BlockLayouts, map[string]bool{}, func(b *BlockLayout) string { return strconv.Quote(b.Type) },
		(*BlockLayout).validate)
}

func (t TableInfo) validate() error {
	if t.Name == "" {
		return fmt.Errorf("name: missing")
	}
	if err := (Descriptor{File: t.File, SHA256: t.FileSHA256}).validate(); err != nil {
		return fmt.Errorf("file/file_sha256: %w", err)
	}
	if err := (Descriptor{File: t.File, SHA256: t.RawLESHA256}).validate(); err != nil {
		return fmt.Errorf("raw_le_sha256: %w", err)
	}
	n, ok := elementBytes(t.ElementType)
	if !ok {
		return fmt.Errorf("element_type: unknown %q", t.ElementType)
	}
	if t.ElementBytes != n {
		return fmt.Errorf("element_bytes: %d, but %s has %d", t.ElementBytes, t.ElementType, n)
	}
	if t.Count <= 0 || t.Count > 1<<24 {
		return fmt.Errorf("count: %d, want 1..%d", t.Count, 1<<24)
	}
	return nil
}

// validate checks a layout against package dequant's Layout of the same type.
// f16/bf16/f32 are elements in ggml (block_bytes 2 or 4, 1 element) but
// 16-element matrices in dequant, so for them only the bytes per weight must agree.
func (b BlockLayout) validate() error {
	t, err := dequant.ParseType(b.Type)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	l := t.Layout()
	if b.GGMLTypeID != l.GGMLTypeID {
		return fmt.Errorf("ggml_type_id: %d, but %s is %d", b.GGMLTypeID, t, l.GGMLTypeID)
	}
	if b.IsQuantized != t.Quantized() {
		return fmt.Errorf("is_quantized: %v, but dequant says %v for %s", b.IsQuantized, t.Quantized(), t)
	}
	if t.Quantized() {
		if b.BlockBytes != l.BlockBytes {
			return fmt.Errorf("block_bytes: %d, but %s blocks have %d bytes", b.BlockBytes, t, l.BlockBytes)
		}
		if b.ElementsPerBlock != l.BlockWeights {
			return fmt.Errorf("elements_per_block: %d, but %s blocks have %d weights", b.ElementsPerBlock, t, l.BlockWeights)
		}
	} else if b.ElementsPerBlock <= 0 || b.BlockBytes*l.BlockWeights != l.BlockBytes*b.ElementsPerBlock {
		return fmt.Errorf("block_bytes/elements_per_block: %d/%d, but %s has %d bytes per %d weights",
			b.BlockBytes, b.ElementsPerBlock, t, l.BlockBytes, l.BlockWeights)
	}
	next := 0
	for i, f := range b.Fields {
		n, ok := elementBytes(f.ElementType)
		switch {
		case !ok:
			return fmt.Errorf("fields[%d] %q: element_type: unknown %q", i, f.Name, f.ElementType)
		case f.Offset != next:
			return fmt.Errorf("fields[%d] %q: offset: %d, want %d (fields are packed without padding)", i, f.Name, f.Offset, next)
		case f.Size != n*f.Count || f.Count <= 0:
			return fmt.Errorf("fields[%d] %q: size: %d, want count*sizeof(%s) = %d*%d", i, f.Name, f.Size, f.ElementType, f.Count, n)
		}
		next += f.Size
	}
	if len(b.Fields) > 0 && next != b.BlockBytes {
		return fmt.Errorf("fields: cover %d bytes, block_bytes is %d", next, b.BlockBytes)
	}
	return nil
}
