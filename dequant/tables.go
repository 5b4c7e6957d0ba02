package dequant

import "fmt"

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

// LookupTables returns fresh copies of the thirteen lookup tables the decoders
// use, in the order of the two golden sets' indexes: kmask_iq2xs, ksigns_iq2xs
// and the five iq2/iq3 grids (golden/tables), then kvalues_iq4nl, kvalues_mxfp4,
// iq1s_grid, iq1s_grid_gpu, e8m0_to_fp32_half and e8m0_to_fp32
// (golden-types/tables). The grid values are rebuilt from the byte views the
// decoders read; tests check that the word views hold the same bytes.
func LookupTables() []LookupTable {
	iq2iq3 := []Type{IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S}
	return []LookupTable{
		used(bytesTable("kmask_iq2xs", kmaskIQ2XS[:]), iq2iq3...),
		used(bytesTable("ksigns_iq2xs", ksignsIQ2XS[:]), IQ2_XXS, IQ2_XS, IQ3_XXS),
		used(gridTable("iq2xxs_grid", iq2xxsGridBytes[:]), IQ2_XXS),
		used(gridTable("iq2xs_grid", iq2xsGridBytes[:]), IQ2_XS),
		used(gridTable("iq2s_grid", iq2sGridBytes[:]), IQ2_S),
		used(gridTable("iq3xxs_grid", iq3xxsGridBytes[:]), IQ3_XXS),
		used(gridTable("iq3s_grid", iq3sGridBytes[:]), IQ3_S),
		used(int8Table("kvalues_iq4nl", kvaluesIQ4NL[:]), IQ4_NL, IQ4_XS),
		used(int8Table("kvalues_mxfp4", kvaluesMXFP4[:]), MXFP4),
		used(grid8Int8Table("iq1s_grid", iq1sGrid[:]), IQ1_S, IQ1_M),
		used(gridTable("iq1s_grid_gpu", iq1sGridGPU[:]), IQ1_S, IQ1_M),
		used(wordsTable("e8m0_to_fp32_half", e8m0ToFP32Half[:]), MXFP4),
		used(wordsTable("e8m0_to_fp32", e8m0ToFP32[:]), MXFP4),
	}
}

func used(t LookupTable, types ...Type) LookupTable {
	t.UsedBy = types
	return t
}

func bytesTable(name string, b []uint8) LookupTable {
	v := make([]uint64, len(b))
	for i, x := range b {
		v[i] = uint64(x)
	}
	return LookupTable{Name: name, ElementType: "uint8", ElementBytes: 1, Values: v}
}

// gridTable packs each grid entry's bytes into one little-endian word: a
// uint64 for 8-byte entries, a uint32 for 4-byte ones.
func gridTable[E [8]uint8 | [4]uint8](name string, g []E) LookupTable {
	var zero E
	width := len(zero)
	v := make([]uint64, len(g))
	for i, e := range g {
		for j := width - 1; j >= 0; j-- {
			v[i] = v[i]<<8 | uint64(e[j])
		}
	}
	return LookupTable{Name: name, ElementType: fmt.Sprintf("uint%d", 8*width), ElementBytes: width, Values: v}
}

func int8Table(name string, b []int8) LookupTable {
	v := make([]uint64, len(b))
	for i, x := range b {
		v[i] = uint64(uint8(x))
	}
	return LookupTable{Name: name, ElementType: "int8", ElementBytes: 1, Values: v}
}

func grid8Int8Table(name string, g [][8]int8) LookupTable {
	v := make([]uint64, len(g))
	for i, e := range g {
		for j := 7; j >= 0; j-- {
			v[i] = v[i]<<8 | uint64(uint8(e[j]))
		}
	}
	return LookupTable{Name: name, ElementType: "uint64", ElementBytes: 8, Values: v}
}

func wordsTable(name string, w []uint32) LookupTable {
	v := make([]uint64, len(w))
	for i, x := range w {
		v[i] = uint64(x)
	}
	return LookupTable{Name: name, ElementType: "uint32", ElementBytes: 4, Values: v}
}
