package dequant

//go:generate go run ./internal/gentables -in tables -out tables_gen.go

// LookupTable is a copy of one of ggml's lookup tables (ggml-common.h) built into
// this package, in the element form of golden/tables/index.json.
type LookupTable struct {
	Name         string   // ggml's name, e.g. "ksigns_iq2xs", "iq2xxs_grid"
	ElementType  string   // "uint8", "uint32" or "uint64"
	ElementBytes int      // 1, 4 or 8
	Values       []uint64 // element i, zero-extended
}

// LookupTables returns fresh copies of the seven lookup tables the decoders use
// (kmask_iq2xs, ksigns_iq2xs and the five grids), in the order of the golden
// index. The grid values are rebuilt from the byte views the ByteReads decoders
// read; tests check that the word views hold the same bytes.
func LookupTables() []LookupTable {
	return []LookupTable{
		bytesTable("kmask_iq2xs", kmaskIQ2XS[:]),
		bytesTable("ksigns_iq2xs", ksignsIQ2XS[:]),
		grid8Table("iq2xxs_grid", iq2xxsGridBytes[:]),
		grid8Table("iq2xs_grid", iq2xsGridBytes[:]),
		grid8Table("iq2s_grid", iq2sGridBytes[:]),
		grid4Table("iq3xxs_grid", iq3xxsGridBytes[:]),
		grid4Table("iq3s_grid", iq3sGridBytes[:]),
	}
}

func bytesTable(name string, b []uint8) LookupTable {
	v := make([]uint64, len(b))
	for i, x := range b {
		v[i] = uint64(x)
	}
	return LookupTable{Name: name, ElementType: "uint8", ElementBytes: 1, Values: v}
}

func grid8Table(name string, g [][8]uint8) LookupTable {
	v := make([]uint64, len(g))
	for i, e := range g {
		for j := 7; j >= 0; j-- {
			v[i] = v[i]<<8 | uint64(e[j])
		}
	}
	return LookupTable{Name: name, ElementType: "uint64", ElementBytes: 8, Values: v}
}

func grid4Table(name string, g [][4]uint8) LookupTable {
	v := make([]uint64, len(g))
	for i, e := range g {
		for j := 3; j >= 0; j-- {
			v[i] = v[i]<<8 | uint64(e[j])
		}
	}
	return LookupTable{Name: name, ElementType: "uint32", ElementBytes: 4, Values: v}
}
