// Package dequant decodes ggml weight blocks in two forms: the way the Metal
// mat-mat kernels (kernel_mul_mm, kernel_mul_mm_id) do, 16 consecutive weights per
// call chosen by a chunk index il, in the shader's float32 (and, where it has
// them, half-precision) arithmetic and one of two codebook-read strategies
// (Decoder); and the way ggml's CPU reference to_float does, one block at a time
// (CPUDecoder), bit-exact with ggml. It also reports, as data, what one 16-value
// chunk of the Metal form costs (loads by width and address space, ALU
// instructions), which the timing engine consumes. It knows nothing about tiles.
package dequant

import (
	"fmt"
	"strings"
)

// Type is a ggml tensor element type that the mat-mat kernels read as weights (src0).
type Type uint8

// The weight types metalsim decodes. F32, F16 and BF16 are passthrough types
// whose "block" is the 16-element matrix the Metal kernels address (float4x4,
// half4x4, bfloat4x4).
const (
	F32 Type = iota
	F16
	Q4_0
	Q8_0
	IQ2_XXS
	IQ2_XS
	IQ2_S
	IQ3_XXS
	IQ3_S
	Q4_1
	Q5_0
	Q5_1
	Q2_K
	Q3_K
	Q4_K
	Q5_K
	Q6_K
	IQ1_S
	IQ1_M
	IQ4_NL
	IQ4_XS
	MXFP4
	BF16
	Q1_0
	Q2_0
	TQ2_0
	numTypes
)

// Layout describes how a type lies in memory: BlockBytes bytes hold BlockWeights
// consecutive weights of one row (ggml's block struct, or the 16-element matrix
// for the passthrough types).
type Layout struct {
	Name         string // ggml type name, as in kernel names and test-backend-ops
	GGMLTypeID   int    // ggml's enum ggml_type value
	BlockBytes   int    // bytes of one block
	BlockWeights int    // weights in one block
}

// layouts are ggml's block sizes (ggml-common.h at ggml d99724f; the golden
// sets' tables/index.json measured them with sizeof).
var layouts = [numTypes]Layout{
	F32:     {"f32", 0, 64, 16},
	F16:     {"f16", 1, 32, 16},
	Q4_0:    {"q4_0", 2, 18, 32},
	Q8_0:    {"q8_0", 8, 34, 32},
	IQ2_XXS: {"iq2_xxs", 16, 66, 256},
	IQ2_XS:  {"iq2_xs", 17, 74, 256},
	IQ2_S:   {"iq2_s", 22, 82, 256},
	IQ3_XXS: {"iq3_xxs", 18, 98, 256},
	IQ3_S:   {"iq3_s", 21, 110, 256},
	Q4_1:    {"q4_1", 3, 20, 32},
	Q5_0:    {"q5_0", 6, 22, 32},
	Q5_1:    {"q5_1", 7, 24, 32},
	Q2_K:    {"q2_K", 10, 84, 256},
	Q3_K:    {"q3_K", 11, 110, 256},
	Q4_K:    {"q4_K", 12, 144, 256},
	Q5_K:    {"q5_K", 13, 176, 256},
	Q6_K:    {"q6_K", 14, 210, 256},
	IQ1_S:   {"iq1_s", 19, 50, 256},
	IQ1_M:   {"iq1_m", 29, 56, 256},
	IQ4_NL:  {"iq4_nl", 20, 18, 32},
	IQ4_XS:  {"iq4_xs", 23, 136, 256},
	MXFP4:   {"mxfp4", 39, 17, 32},
	BF16:    {"bf16", 30, 32, 16},
	Q1_0:    {"q1_0", 41, 18, 128},
	Q2_0:    {"q2_0", 42, 18, 64},
	TQ2_0:   {"tq2_0", 35, 66, 256},
}

// Types returns every weight type metalsim decodes and times, in a fixed
// order: what --type, a test-backend-ops row's type_a and a GGUF tensor may
// name.
func Types() []Type {
	out := make([]Type, numTypes)
	for i := range out {
		out[i] = Type(i)
	}
	return out
}

// TypeNames lists the names of Types, comma-separated, for help texts.
func TypeNames() string {
	var names []string
	for _, t := range Types() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// Valid reports whether t is one of the types (Types).
func (t Type) Valid() bool { return t < numTypes }

// Layout returns the memory layout of t. It panics on an invalid Type, which
// can only be made by converting an unchecked integer; use ParseType for input.
func (t Type) Layout() Layout { return layouts[t] }

// String returns ggml's name of the type ("q4_0", "iq2_xs", ...).
func (t Type) String() string {
	if !t.Valid() {
		return fmt.Sprintf("Type(%d)", uint8(t))
	}
	return layouts[t].Name
}

// Chunks returns nl, the number of 16-weight chunks in one block (the range of il).
func (t Type) Chunks() int { return layouts[t].BlockWeights / 16 }

// Quantized reports whether t is a block-quantized type (not f32, f16 or bf16).
func (t Type) Quantized() bool { return t != F32 && t != F16 && t != BF16 }

// StagesBFloat reports whether the mat-mat kernels of t stage their operands in
// threadgroup memory as bfloat instead of half: only bf16, whose
// kernel_mul_mm_bf16_f32 and kernel_mul_mm_id_bf16_f32 are instantiated with
// bfloat for both the weights and the activations (ggml-metal.metal L11044,
// L11105 at ggml d99724f). Use RoundStaged to apply that rounding.
func (t Type) StagesBFloat() bool { return t == BF16 }

// RoundStaged rounds f the way the mat-mat kernels of weight type t store an
// operand value in threadgroup memory: to bfloat for bf16 (RoundBF16), to half
// for every other type (RoundHalf).
func (t Type) RoundStaged(f float32) float32 {
	if t == BF16 {
		return RoundBF16(f)
	}
	return RoundHalf(f)
}

// Codebook reports whether t decodes through an iq2/iq3 codebook grid, i.e.
// whether the codebook-read Strategy changes anything for it. iq1_s and iq1_m
// read a grid too, but upstream reads it byte by byte and no word-read variant
// of them exists, so both strategies decode them the same way.
func (t Type) Codebook() bool {
	switch t {
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S:
		return true
	}
	return false
}

// RowBytes returns the bytes of one row of k weights, or an error naming k when k
// is not a positive multiple of the block size.
func (t Type) RowBytes(k int) (int, error) {
	l := layouts[t]
	if k <= 0 || k%l.BlockWeights != 0 {
		return 0, fmt.Errorf("k = %d: must be a positive multiple of the %s block size %d", k, l.Name, l.BlockWeights)
	}
	return k / l.BlockWeights * l.BlockBytes, nil
}

// ParseType maps the ggml name of a type (Types: "q4_0", "q4_K", "mxfp4", ...,
// in ggml's case) to a Type. The error lists the allowed names.
func ParseType(s string) (Type, error) {
	for t, l := range layouts {
		if l.Name == s {
			return Type(t), nil
		}
	}
	names := make([]string, numTypes)
	for i, l := range layouts {
		names[i] = l.Name
	}
	return 0, fmt.Errorf("unknown weight type %q (allowed: %s)", s, strings.Join(names, ", "))
}

// Strategy is how an iq dequantizer reads its codebook grid entries from constant
// memory.
type Strategy uint8

const (
	// ByteReads reads each grid entry byte by byte (4 or 8 uint8 loads) and looks
	// the sign pattern up in ksigns_iq2xs, as upstream ggml does.
	ByteReads Strategy = iota
	// WordReads reads each grid entry as one (iq3: 4-byte entries) or two (iq2:
	// 8-byte entries) little-endian uint32 words and computes the sign pattern as
	// k | parity(k)<<7 instead of loading ksigns_iq2xs (llama.cpp PR #28301's
	// first revision).
	WordReads
	numStrategies
)

var strategyNames = [numStrategies]string{"bytes", "words"}

// String returns "bytes" or "words".
func (s Strategy) String() string {
	if s >= numStrategies {
		return fmt.Sprintf("Strategy(%d)", uint8(s))
	}
	return strategyNames[s]
}

// ParseStrategy maps "bytes" or "words" to a Strategy.
func ParseStrategy(s string) (Strategy, error) {
	for i, n := range strategyNames {
		if n == s {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown codebook read strategy %q (allowed: bytes, words)", s)
}
