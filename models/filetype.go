package models

import (
	"fmt"
	"strings"
)

// FileType is a llama-quantize file type (docs/quantize-rules.md §2): the
// name llama-quantize takes, llama.h's LLAMA_FTYPE value, the default ggml
// type of its quantizable tensors, whether its low-bit tensors need an
// importance matrix, and the description llama.cpp prints for a file of the
// type (llama_model_ftype_name in src/llama-model-loader.cpp, as llama-bench's
// model column shows it; several index copies agree).
type FileType struct {
	Name     string // llama-quantize's name, e.g. Q4_K_M
	ID       int    // LLAMA_FTYPE value (general.file_type)
	Default  string // default ggml type of the quantizable tensors
	Imatrix  bool   // its low-bit tensors need an importance matrix (so real files had one)
	Describe string // llama.cpp's description of a file of this type
}

// fileTypes is docs/quantize-rules.md §2. Descriptions not read in the
// source (IQ3_S, IQ3_M, IQ4_XS, Q1_0, Q2_0) are the llama-quantize name.
var fileTypes = []FileType{
	{"F32", 0, "f32", false, "all F32"},
	{"F16", 1, "f16", false, "F16"},
	{"Q4_0", 2, "q4_0", false, "Q4_0"},
	{"Q4_1", 3, "q4_1", false, "Q4_1"},
	{"Q8_0", 7, "q8_0", false, "Q8_0"},
	{"Q5_0", 8, "q5_0", false, "Q5_0"},
	{"Q5_1", 9, "q5_1", false, "Q5_1"},
	{"Q2_K", 10, "q2_K", false, "Q2_K - Medium"},
	{"Q3_K_S", 11, "q3_K", false, "Q3_K - Small"},
	{"Q3_K_M", 12, "q3_K", false, "Q3_K - Medium"},
	{"Q3_K_L", 13, "q3_K", false, "Q3_K - Large"},
	{"Q4_K_S", 14, "q4_K", false, "Q4_K - Small"},
	{"Q4_K_M", 15, "q4_K", false, "Q4_K - Medium"},
	{"Q5_K_S", 16, "q5_K", false, "Q5_K - Small"},
	{"Q5_K_M", 17, "q5_K", false, "Q5_K - Medium"},
	{"Q6_K", 18, "q6_K", false, "Q6_K"},
	{"IQ2_XXS", 19, "iq2_xxs", true, "IQ2_XXS - 2.0625 bpw"},
	{"IQ2_XS", 20, "iq2_xs", true, "IQ2_XS - 2.3125 bpw"},
	{"Q2_K_S", 21, "q2_K", true, "Q2_K - Small"},
	{"IQ3_XS", 22, "iq3_s", false, "IQ3_XS - 3.3 bpw"},
	{"IQ3_XXS", 23, "iq3_xxs", true, "IQ3_XXS - 3.0625 bpw"},
	{"IQ1_S", 24, "iq1_s", true, "IQ1_S - 1.5625 bpw"},
	{"IQ4_NL", 25, "iq4_nl", false, "IQ4_NL - 4.5 bpw"},
	{"IQ3_S", 26, "iq3_s", false, "IQ3_S"},
	{"IQ3_M", 27, "iq3_s", false, "IQ3_M"},
	{"IQ2_S", 28, "iq2_xs", true, "IQ2_S - 2.5 bpw"},
	{"IQ2_M", 29, "iq2_s", true, "IQ2_M - 2.7 bpw"},
	{"IQ4_XS", 30, "iq4_xs", false, "IQ4_XS"},
	{"IQ1_M", 31, "iq1_m", true, "IQ1_M - 1.75 bpw"},
	{"BF16", 32, "bf16", false, "BF16"},
	{"TQ1_0", 36, "tq1_0", false, "TQ1_0 - 1.69 bpw ternary"},
	{"TQ2_0", 37, "tq2_0", false, "TQ2_0 - 2.06 bpw ternary"},
	{"MXFP4_MOE", 38, "mxfp4", false, "MXFP4 MoE"},
	{"Q1_0", 40, "q1_0", false, "Q1_0"},
	{"Q2_0", 41, "q2_0", false, "Q2_0"},
}

// fileTypeAliases are llama-quantize's other names (TOOL L22-63).
var fileTypeAliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// FileTypes returns the file types in LLAMA_FTYPE order.
func FileTypes() []FileType { return append([]FileType(nil), fileTypes...) }

// ParseFileType maps a llama-quantize file type name (any case, or an alias
// such as Q4_K) to its file type.
func ParseFileType(s string) (FileType, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if a, ok := fileTypeAliases[name]; ok {
		name = a
	}
	for _, ft := range fileTypes {
		if ft.Name == name {
			return ft, nil
		}
	}
	names := make([]string, len(fileTypes))
	for i, ft := range fileTypes {
		names[i] = ft.Name
	}
	return FileType{}, fmt.Errorf("unknown file type %q (llama-quantize's: %s; lower case accepted)", s, strings.Join(names, ", "))
}

// fileTypeByID returns the file type of a general.file_type value.
func fileTypeByID(id int) (FileType, bool) {
	for _, ft := range fileTypes {
		if ft.ID == id {
			return ft, true
		}
	}
	return FileType{}, false
}

// quantized reports whether the default type is a quantized one (not f32,
// f16, bf16): only then do the per-tensor rules apply.
func (ft FileType) quantized() bool {
	return ft.Default != "f32" && ft.Default != "f16" && ft.Default != "bf16"
}
