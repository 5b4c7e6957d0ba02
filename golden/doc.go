// Package golden reads and checks the golden reference directories produced
// from ggml's CPU code: the first set (format: /work/shared/golden/README.md)
// and golden-types, the 17 further weight types in the same formats with a few
// additions (/work/shared/golden-types/README.md: external_tables, .bf16 files,
// bf16's whole-value lists and ref_bf16in reference). A directory holds three
// manifests (tables/index.json, dequant/manifest.json, mulmatid/manifest.json),
// the file descriptors they hold, and the files they name.
//
// Reading is strict: every manifest is validated as a whole (format_version 1,
// little-endian byte order, known type names, sizes consistent with the block
// layouts of package dequant and with each other, descriptors well-formed and
// listed in the manifest's flat files[] array, every named file present with
// the stated size). Errors name the manifest file, the entry and the field, and
// give the expected and actual values. Nothing panics on bad input.
//
// VerifyTables, VerifyDequant and VerifyMulMatID compare package dequant and
// the emulator against the golden data and report one Result per checked item,
// the lines `simrun golden` prints.
package golden
