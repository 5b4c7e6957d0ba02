package golden

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// Variants of dequant manifest entries (golden README §3).
const (
	VariantQuantizer   = "quantizer"    // blocks made by ggml_quantize_chunk
	VariantRandomBytes = "random_bytes" // uniformly random blocks with a random normal d
	VariantEdgeScales  = "edge_scales"  // d from a fixed list of edge values
	VariantConversion  = "conversion"   // the fp32 -> fp16 (or bf16) rounding set (no blocks)
)

// DequantManifest is dequant/manifest.json: block sets with ggml's float32
// decoding of them, plus the fp32 -> fp16 (golden-types: fp32 -> bf16)
// conversion set.
type DequantManifest struct {
	Header
	FileFormats string         `json:"file_formats"`
	ToFloat     string         `json:"to_float"`
	Entries     []DequantEntry `json:"entries"`
	Files       []Descriptor   `json:"files"`

	// Dir is the directory the manifest was read from ("" after
	// ParseDequantManifest); descriptors are relative to it.
	Dir string `json:"-"`
}

// DequantEntry is one entry of DequantManifest.Entries: either a block set
// (Variant quantizer, random_bytes or edge_scales: Type, the block counts,
// Blocks and F32 are set) or the conversion set (Count, InputF32, OutputF16).
type DequantEntry struct {
	Name             string `json:"name"`
	Type             string `json:"type"`
	GGMLTypeID       int    `json:"ggml_type_id"`
	Variant          string `json:"variant"`
	Seed             string `json:"seed"`
	NBlocks          int    `json:"n_blocks"`
	BlockBytes       int    `json:"block_bytes"`
	ElementsPerBlock int    `json:"elements_per_block"`
	NElements        int    `json:"n_elements"`

	Blocks          *Descriptor `json:"blocks"`     // n_blocks raw ggml blocks
	F32             *Descriptor `json:"f32"`        // n_elements float32: ggml's to_float of Blocks
	SourceF32       *Descriptor `json:"source_f32"` // quantizer only: the quantizer's input (optional)
	Quantizer       *Quantizer  `json:"quantizer"`  // quantizer only (optional)
	RowsDescription string      `json:"rows_description"`
	DBitsPerBlock   []string    `json:"d_bits_per_block"`  // edge_scales: fp16 d "0x...." per block
	PayloadPerBlock []string    `json:"payload_per_block"` // edge_scales: "zeros", "ones", "random"
	SourceBlocks    []int       `json:"source_blocks"`     // trimmed copies only: indices into the original set

	// golden-types additions (edge_scales): the second fp16 scale of q4_1/q5_1
	// (m) and q2_K/q4_K/q5_K (dmin), mxfp4's E8M0 byte e ("0x.."), and for bf16
	// the whole 16-bit value of each element with where it came from ("fixed",
	// "random"); random_bytes: the scale fields that were replaced.
	MBitsPerBlock       []string `json:"m_bits_per_block"`
	DminBitsPerBlock    []string `json:"dmin_bits_per_block"`
	EBitsPerBlock       []string `json:"e_bits_per_block"`
	BitsPerBlock        []string `json:"bits_per_block"`
	SourcePerBlock      []string `json:"source_per_block"`
	ReplacedScaleFields []string `json:"replaced_scale_fields"`

	Count      int         `json:"count"`       // conversion: number of values
	InputF32   *Descriptor `json:"input_f32"`   // conversion: Count float32 inputs
	OutputF16  *Descriptor `json:"output_f16"`  // conversion fp32_to_fp16: Count binary16 results
	OutputBF16 *Descriptor `json:"output_bf16"` // conversion fp32_to_bf16 (golden-types): Count bfloat16 results

	// DType is Type parsed by dequant.ParseType (block sets only).
	DType dequant.Type `json:"-"`
}

// Quantizer describes how a quantizer block set was made.
type Quantizer struct {
	Function    string      `json:"function"`
	NRows       int         `json:"nrows"`
	NPerRow     int         `json:"n_per_row"`
	Imatrix     *Descriptor `json:"imatrix"` // null for q4_0/q8_0
	ImatrixRule string      `json:"imatrix_rule"`
}

// IsConversion reports whether e is the fp32 -> fp16 conversion entry.
func (e *DequantEntry) IsConversion() bool { return e.Variant == VariantConversion }

// ParseDequantManifest parses and validates the bytes of a dequant/manifest.json.
// It does not look at the files; ReadDequantManifest does.
func ParseDequantManifest(data []byte) (*DequantManifest, error) {
	return parseDoc[DequantManifest](data)
}

// ReadDequantManifest reads dir/manifest.json (dir is the dequant/ folder),
// validates it and checks that every file of its files[] list exists in dir with
// the stated size. Errors start with the manifest's path.
func ReadDequantManifest(dir string) (*DequantManifest, error) {
	return readDoc(dir, "manifest.json", ParseDequantManifest, func(m *DequantManifest) error {
		m.Dir = dir
		return checkFiles(dir, m.Files)
	})
}

func (m *DequantManifest) validate() error {
	if err := m.Header.validate(); err != nil {
		return err
	}
	if len(m.Entries) == 0 {
		return fmt.Errorf("entries: empty")
	}
	files, err := fileList(m.Files)
	if err != nil {
		return err
	}
	return validateEach("entries", "name", m.Entries, map[string]bool{}, func(e *DequantEntry) string { return strconv.Quote(e.Name) },
		func(e *DequantEntry) error { return e.validate(files) })
}

func (e *DequantEntry) validate(files map[string]Descriptor) error {
	if e.Name == "" {
		return fmt.Errorf("name: missing")
	}
	switch e.Variant {
	case VariantConversion:
		return e.validateConversion(files)
	case VariantQuantizer, VariantRandomBytes, VariantEdgeScales:
	default:
		return fmt.Errorf("variant: %q is not one of %s, %s, %s, %s", e.Variant,
			VariantQuantizer, VariantRandomBytes, VariantEdgeScales, VariantConversion)
	}
	t, err := dequant.ParseType(e.Type)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	e.DType = t
	l := t.Layout()
	if e.GGMLTypeID != l.GGMLTypeID {
		return fmt.Errorf("ggml_type_id: %d, but %s is %d", e.GGMLTypeID, t, l.GGMLTypeID)
	}
	switch {
	case t == dequant.F32 || t == dequant.F16:
		return fmt.Errorf("type: %q is not a block-quantized type", e.Type)
	case !t.Quantized(): // bf16: a ggml block is one element
		if e.BlockBytes != int(ggmlBlock(t)) || e.ElementsPerBlock != 1 {
			return fmt.Errorf("block_bytes/elements_per_block: %d/%d, but a %s block is one %d-byte element", e.BlockBytes, e.ElementsPerBlock, t, ggmlBlock(t))
		}
	case e.BlockBytes != l.BlockBytes:
		return fmt.Errorf("block_bytes: %d, but %s blocks have %d bytes", e.BlockBytes, t, l.BlockBytes)
	case e.ElementsPerBlock != l.BlockWeights:
		return fmt.Errorf("elements_per_block: %d, but %s blocks have %d weights", e.ElementsPerBlock, t, l.BlockWeights)
	}
	const maxBlocks = 1 << 24 // keeps every size below well inside int64
	if e.NBlocks <= 0 || e.NBlocks > maxBlocks {
		return fmt.Errorf("n_blocks: %d, want 1..%d", e.NBlocks, maxBlocks)
	}
	if e.NElements != e.NBlocks*e.ElementsPerBlock {
		return fmt.Errorf("n_elements: %d != n_blocks*elements_per_block = %d*%d = %d",
			e.NElements, e.NBlocks, e.ElementsPerBlock, e.NBlocks*e.ElementsPerBlock)
	}
	if e.NElements%l.BlockWeights != 0 {
		return fmt.Errorf("n_elements: %d, but %s decodes in groups of %d elements", e.NElements, t, l.BlockWeights)
	}
	for _, c := range []struct {
		field    string
		d        *Descriptor
		required bool
		bytes    int64
	}{
		{"blocks", e.Blocks, true, int64(e.NBlocks) * int64(e.BlockBytes)},
		{"f32", e.F32, true, 4 * int64(e.NElements)},
		{"source_f32", e.SourceF32, false, 4 * int64(e.NElements)},
	} {
		if err := checkDesc(c.field, c.d, c.required, c.bytes); err != nil {
			return err
		}
		if err := listed(c.field, c.d, files); err != nil {
			return err
		}
	}
	if q := e.Quantizer; q != nil {
		if q.NRows < 0 || q.NPerRow < 0 || q.NRows*q.NPerRow != e.NElements && e.SourceBlocks == nil {
			return fmt.Errorf("quantizer: nrows*n_per_row = %d*%d, want n_elements = %d", q.NRows, q.NPerRow, e.NElements)
		}
		if err := checkDesc("quantizer.imatrix", q.Imatrix, false, -1); err != nil {
			return err
		}
		if err := listed("quantizer.imatrix", q.Imatrix, files); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		field string
		vals  []string
		parse func(string) (uint16, error)
	}{
		{"d_bits_per_block", e.DBitsPerBlock, parseHalfBits},
		{"m_bits_per_block", e.MBitsPerBlock, parseHalfBits},
		{"dmin_bits_per_block", e.DminBitsPerBlock, parseHalfBits},
		{"bits_per_block", e.BitsPerBlock, parseHalfBits},
		{"e_bits_per_block", e.EBitsPerBlock, parseByteBits},
		{"payload_per_block", e.PayloadPerBlock, oneOf("zeros", "ones", "random")},
		{"source_per_block", e.SourcePerBlock, oneOf("fixed", "random")},
	} {
		if l.vals == nil {
			continue
		}
		if len(l.vals) != e.NBlocks {
			return fmt.Errorf("%s: %d values for n_blocks = %d", l.field, len(l.vals), e.NBlocks)
		}
		for i, s := range l.vals {
			if _, err := l.parse(s); err != nil {
				return fmt.Errorf("%s[%d]: %w", l.field, i, err)
			}
		}
	}
	if e.BitsPerBlock != nil && t != dequant.BF16 {
		return fmt.Errorf("bits_per_block: only bf16 entries list whole values, this is %s", t)
	}
	if e.SourceBlocks != nil && len(e.SourceBlocks) != e.NBlocks {
		return fmt.Errorf("source_blocks: %d values for n_blocks = %d", len(e.SourceBlocks), e.NBlocks)
	}
	return nil
}

func (e *DequantEntry) validateConversion(files map[string]Descriptor) error {
	if e.Type != "" || e.Blocks != nil || e.F32 != nil {
		return fmt.Errorf("variant: conversion entry must not have type, blocks or f32")
	}
	const maxCount = 1 << 28
	if e.Count <= 0 || e.Count > maxCount {
		return fmt.Errorf("count: %d, want 1..%d", e.Count, maxCount)
	}
	out, field := e.OutputF16, "output_f16"
	switch {
	case e.OutputF16 != nil && e.OutputBF16 != nil:
		return fmt.Errorf("output_f16, output_bf16: a conversion entry has one of them, not both")
	case e.OutputBF16 != nil:
		out, field = e.OutputBF16, "output_bf16"
	}
	if err := checkDesc("input_f32", e.InputF32, true, 4*int64(e.Count)); err != nil {
		return err
	}
	if err := checkDesc(field, out, true, 2*int64(e.Count)); err != nil {
		return err
	}
	if err := listed("input_f32", e.InputF32, files); err != nil {
		return err
	}
	return listed(field, out, files)
}

// Output returns the conversion's result file and whether it holds bfloat16
// (output_bf16) rather than binary16 (output_f16) patterns.
func (e *DequantEntry) Output() (d *Descriptor, bf16 bool) {
	if e.OutputBF16 != nil {
		return e.OutputBF16, true
	}
	return e.OutputF16, false
}

// parseHalfBits parses a 16-bit pattern (binary16 or bfloat16) written "0x" +
// 4 hex digits.
func parseHalfBits(s string) (uint16, error) { return parseHexBits(s, 4) }

// parseByteBits parses a byte (mxfp4's E8M0 scale) written "0x" + 2 hex digits.
func parseByteBits(s string) (uint16, error) { return parseHexBits(s, 2) }

func parseHexBits(s string, digits int) (uint16, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != digits {
		return 0, fmt.Errorf("%q: want 0x and %d hex digits", s, digits)
	}
	v, err := strconv.ParseUint(h, 16, 16)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return uint16(v), nil
}

// oneOf returns a parser accepting exactly the given words.
func oneOf(words ...string) func(string) (uint16, error) {
	return func(s string) (uint16, error) {
		for _, w := range words {
			if s == w {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("%q: want one of %s", s, strings.Join(words, ", "))
	}
}
