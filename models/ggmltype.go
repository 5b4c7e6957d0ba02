package models

import (
	"fmt"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
)

// Storage of ggml tensor types (what a tensor of a type occupies), for every
// type a GGUF file can hold, not only those metalsim decodes: model sizes,
// parameter counts and weight bytes need them all. The block sizes are the GGUF
// parser's table (ggml's ggml_type_traits; docs/kernel-geometry.md §1 lists the
// same numbers from ggml-common.h); names are ggml's (ggml_type_name).

// TypeInfo is one ggml tensor type's storage.
type TypeInfo struct {
	Name         string // ggml's name: f32, q4_0, q4_K, mxfp4, ...
	ID           int    // ggml's enum ggml_type value (GGUF's tensor-info type)
	BlockWeights int    // elements per block
	BlockBytes   int    // bytes per block
}

// Bytes returns the bytes of n elements of the type (n a multiple of the
// block, which a row of a valid tensor always is).
func (t TypeInfo) Bytes(n int64) int64 {
	return n / int64(t.BlockWeights) * int64(t.BlockBytes)
}

// typeInfos are the ggml types with a storage trait, by id.
var typeInfos = func() []TypeInfo {
	var out []TypeInfo
	for id := gguf.GGMLTypeF32; id < gguf.GGMLTypeQ2_0+1; id++ {
		tr, ok := id.Trait()
		if !ok || tr.BlockSize == 0 {
			continue // deprecated ids (q4_2, q4_3)
		}
		out = append(out, TypeInfo{Name: ggmlTypeName(id), ID: int(id), BlockWeights: int(tr.BlockSize), BlockBytes: int(tr.TypeSize)})
	}
	return out
}()

// LookupType returns a ggml type by name (ggml's spelling, q4_K; case is
// ignored).
func LookupType(name string) (TypeInfo, error) {
	for _, t := range typeInfos {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return TypeInfo{}, fmt.Errorf("unknown ggml type %q", name)
}

// typeByID returns a ggml type by its enum value.
func typeByID(id int) (TypeInfo, bool) {
	for _, t := range typeInfos {
		if t.ID == id {
			return t, true
		}
	}
	return TypeInfo{}, false
}

// ggmlTypeName returns ggml's name of a tensor type: lower case except the
// K-quant suffix (q4_K), as ggml_type_name prints it.
func ggmlTypeName(t gguf.GGMLType) string {
	s := strings.ToLower(t.String())
	if strings.HasSuffix(s, "_k") {
		s = s[:len(s)-2] + "_K"
	}
	return s
}
