package dequant

import "encoding/binary"

// Every read a Metal-form decoder makes of its block or of a constant-memory
// table goes through one of the helpers below, one call per read the shader
// writes (after the common-subexpression elimination of ChunkCost's rule R1;
// adjacent byte reads of one table entry share a load, byteRunBytes).
// They compile to plain reads; their only job is to mark the loads, so that the
// test-only copy of the decoders (generated from these files on every test
// run: TestCountedCopy) can count every load by address space and width and
// compare the count with ChunkCost.

// b is the block or a slice of it (a decoder may slice out the region a chunk
// reads first, which lets the compiler drop the per-load bounds checks).

// devU8 is a 1-byte device load of b[off].
func devU8(b []byte, off int) uint8 { return b[off] }

// devU16 is a 2-byte device load: the little-endian uint16 at b[off:].
func devU16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }

// devU32 is a 4-byte device load: the little-endian uint32 at b[off:].
func devU32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// devBytes4 is a 4-byte device load of packed bytes (a packed_char4): the 4
// bytes at b[off:].
func devBytes4(b []byte, off int) *[4]byte { return (*[4]byte)(b[off:]) }

// devU128 is a 16-byte device load (a float4, half2x4 or bfloat2x4 row of a
// 4x4 matrix): the 16 bytes at b[off:].
func devU128(b []byte, off int) *[16]byte { return (*[16]byte)(b[off:]) }

// byteRunBytes is the most adjacent bytes of one aligned table entry that one
// load of a lane reads: Apple's load instructions read up to four values of
// a format (8, 16 or 32 bits) per lane, and the 8-bit format zero-extends
// each byte into its own register (docs/physics-evidence.md §1.7). A run of
// 1-byte reads of one entry at adjacent offsets, as ggml's dequantizers write
// them, is one load per byteRunBytes of the run (ChunkCost's rule R10); the
// counting copy of the decoders counts the fromConst8 calls of such a run so.
const byteRunBytes = 4

// fromConst8 is a 1-byte read of *p, a byte of a constant-memory table (the
// address lets the counting copy see which table bytes the lanes of a
// simdgroup touch, gather.go, and which reads of one entry are adjacent:
// byteRunBytes).
func fromConst8(p *uint8) uint8 { return *p }

// fromConst32 is one 4-byte load of *p, a word of a constant-memory table.
func fromConst32(p *uint32) uint32 { return *p }

// fromConstF32 is one 4-byte load of *p, an entry of a constant-memory float table.
func fromConstF32(p *float32) float32 { return *p }
