// Package models describes the models metalsim simulates: whole models as
// llama.cpp runs them (Config: the published configuration numbers, each with
// its config key and source document, and llama.cpp's architecture), their
// weight tensors and the types llama-quantize gives them for a file type
// (Config.Tensors, Config.Quantize), whole models read from a GGUF file's
// header (ReadGGUFModel), and the expert matmuls of one MoE layer (Preset,
// Model.Layer, ReadGGUF), which `simrun model` times.
//
// GGUF files are read with github.com/gpustack/gguf-parser-go: GGUF's metadata
// and tensor-info layout is versioned (v1 counts are 32-bit, v2+ 64-bit),
// little- or big-endian, with typed and nested array values, shard files and
// alignment padding; a maintained, fuzz-hardened parser beats hand-written
// code for that. Only the header is read, never the tensor data.
package models
