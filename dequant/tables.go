package dequant

import (
	"encoding/binary"
	"fmt"
)

//go:generate go run ./internal/gentables -in tables -out tables_gen.go

// LookupTable is a copy of one of ggml's lookup tables (ggml-common.h) built into
// this package, in the element form of golden/tables/index.json.
type LookupTable struct {
	Name         string   // ggml's name, e.g. "ksigns_iq2xs", "iq2xxs_grid"
	ElementType  string   // "uint8", "int8", "uint32" or "uint64"
	ElementBytes int      // 1, 4 or 8
	Values       []uint64 // element i's raw bits (int8: its two's-complement byte), zero-extended
	UsedBy       []Type   // the types whose decoders read it
}

// The views the decoders read of the grids whose generated arrays
// (tables_gen.go) hold ggml's uint64 or uint32 elements: byte views, read one
// byte per load like the Metal shader (ByteReads) and ggml's CPU code, and for
// the 8-byte iq2 grids the word view the WordReads strategy reads, one
// little-endian uint32 per load. The iq3 grids' word views are their generated
// arrays. init fills them.
var (
	// iq2xxsGridBytes[i][j] is byte j (little-endian) of iq2xxs_grid entry i;
	// likewise the other byte views.
	iq2xxsGridBytes [256][8]uint8
	iq2xsGridBytes  [512][8]uint8
	iq2sGridBytes   [1024][8]uint8
	iq3xxsGridBytes [256][4]uint8
	iq3sGridBytes   [512][4]uint8
	iq1sGrid        [2048][8]int8 // the CPU's: each byte -1, 0 or +1
	iq1sGridGPU     [2048][4]uint8

	// iq2xxsGridWords[i][w] holds bytes 4w..4w+3 of iq2xxs_grid entry i;
	// likewise the other word views.
	iq2xxsGridWords [256][2]uint32
	iq2xsGridWords  [512][2]uint32
	iq2sGridWords   [1024][2]uint32
)

func init() {
	grid8Views(iq2xxsGridBytes[:], iq2xxsGridWords[:], iq2xxsGridValues[:])
	grid8Views(iq2xsGridBytes[:], iq2xsGridWords[:], iq2xsGridValues[:])
	grid8Views(iq2sGridBytes[:], iq2sGridWords[:], iq2sGridValues[:])
	grid4Bytes(iq3xxsGridBytes[:], iq3xxsGridWords[:])
	grid4Bytes(iq3sGridBytes[:], iq3sGridWords[:])
	grid4Bytes(iq1sGridGPU[:], iq1sGridGPUValues[:])
	for i, v := range iq1sGridValues {
		for j := range iq1sGrid[i] {
			iq1sGrid[i][j] = int8(v >> (8 * j))
		}
	}
}

// grid8Views fills the byte and word views of an 8-byte grid.
func grid8Views(bytes [][8]uint8, words [][2]uint32, vals []uint64) {
	for i, v := range vals {
		binary.LittleEndian.PutUint64(bytes[i][:], v)
		words[i] = [2]uint32{uint32(v), uint32(v >> 32)}
	}
}

// grid4Bytes fills the byte view of a 4-byte grid.
func grid4Bytes(bytes [][4]uint8, vals []uint32) {
	for i, v := range vals {
		binary.LittleEndian.PutUint32(bytes[i][:], v)
	}
}

// LookupTables returns fresh copies of the thirteen lookup tables the decoders
// use, in the order of the two golden sets' indexes: kmask_iq2xs, ksigns_iq2xs
// and the five iq2/iq3 grids (golden/tables), then kvalues_iq4nl, kvalues_mxfp4,
// iq1s_grid, iq1s_grid_gpu, e8m0_to_fp32_half and e8m0_to_fp32
// (golden-types/tables), from the generated arrays; tests check that the byte
// and word views hold the same bytes.
func LookupTables() []LookupTable {
	iq2iq3 := []Type{IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S}
	return []LookupTable{
		used(elements("kmask_iq2xs", kmaskIQ2XS[:]), iq2iq3...),
		used(elements("ksigns_iq2xs", ksignsIQ2XS[:]), IQ2_XXS, IQ2_XS, IQ3_XXS),
		used(elements("iq2xxs_grid", iq2xxsGridValues[:]), IQ2_XXS),
		used(elements("iq2xs_grid", iq2xsGridValues[:]), IQ2_XS),
		used(elements("iq2s_grid", iq2sGridValues[:]), IQ2_S),
		used(elements("iq3xxs_grid", iq3xxsGridWords[:]), IQ3_XXS),
		used(elements("iq3s_grid", iq3sGridWords[:]), IQ3_S),
		used(elements("kvalues_iq4nl", kvaluesIQ4NL[:]), IQ4_NL, IQ4_XS),
		used(elements("kvalues_mxfp4", kvaluesMXFP4[:]), MXFP4),
		used(elements("iq1s_grid", iq1sGridValues[:]), IQ1_S, IQ1_M),
		used(elements("iq1s_grid_gpu", iq1sGridGPUValues[:]), IQ1_S, IQ1_M),
		used(elements("e8m0_to_fp32_half", e8m0ToFP32Half[:]), MXFP4),
		used(elements("e8m0_to_fp32", e8m0ToFP32[:]), MXFP4),
	}
}

func used(t LookupTable, types ...Type) LookupTable {
	t.UsedBy = types
	return t
}

// elements copies a generated array into a LookupTable, an int8 element as its
// two's-complement byte.
func elements[E uint8 | int8 | uint32 | uint64](name string, vals []E) LookupTable {
	v := make([]uint64, len(vals))
	for i, x := range vals {
		v[i] = uint64(x)
		if x < 0 {
			v[i] &= 0xff
		}
	}
	return LookupTable{Name: name, ElementType: fmt.Sprintf("%T", vals[0]), ElementBytes: binary.Size(vals[0]), Values: v}
}
