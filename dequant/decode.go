package dequant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// ChunkFunc decodes chunk il of one block: out[i] = weight 16*il + i of the
// block, in float32, computed exactly as the Metal dequantize_<type> function
// computes it before the conversion to half (the caller rounds to half, see
// RoundHalf).
//
// block must hold exactly the type's Layout().BlockBytes bytes (a shorter slice
// panics); any byte content is accepted (NaN or infinite scales just propagate).
// il must lie in [0, Type.Chunks()); other values panic. A ChunkFunc does not
// allocate and keeps no state, so it is safe for concurrent use.
type ChunkFunc func(block []byte, il int, out *[16]float32)

// Decoder returns the chunk decoder of t using strategy s. Only the five iq
// (codebook) types have two code paths; for the other types both strategies
// return the same function. Decoder panics on an invalid Type or Strategy.
func Decoder(t Type, s Strategy) ChunkFunc {
	if s >= numStrategies {
		panic(fmt.Sprintf("dequant: invalid Strategy(%d)", uint8(s)))
	}
	words := s == WordReads
	switch t {
	case F32:
		return decodeF32
	case F16:
		return decodeF16
	case Q4_0:
		return decodeQ4_0
	case Q8_0:
		return decodeQ8_0
	case IQ2_XXS:
		return pick(words, decodeIQ2XXSWords, decodeIQ2XXSBytes)
	case IQ2_XS:
		return pick(words, decodeIQ2XSWords, decodeIQ2XSBytes)
	case IQ2_S:
		return pick(words, decodeIQ2SWords, decodeIQ2SBytes)
	case IQ3_XXS:
		return pick(words, decodeIQ3XXSWords, decodeIQ3XXSBytes)
	case IQ3_S:
		return pick(words, decodeIQ3SWords, decodeIQ3SBytes)
	}
	panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
}

func pick(words bool, w, b ChunkFunc) ChunkFunc {
	if words {
		return w
	}
	return b
}

// badChunk is the panic value for an il outside [0, t.Chunks()).
func badChunk(t Type, il int) string {
	return fmt.Sprintf("dequant: %s chunk index il = %d out of range [0, %d)", t, il, t.Chunks())
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// halfAt widens the fp16 at the start of b (the block scale d).
func halfAt(b []byte) float32 { return Float32FromHalf(le16(b)) }

// signed returns v * (bit != 0 ? -1 : 1) as Metal's `v * (signs & kmask ? -1.f : 1.f)`:
// for every non-NaN v multiplying by -1 is exactly flipping the sign bit (so +0
// becomes -0), which is what this does without a branch. (For a NaN the sign
// bit is flipped too; both strategies share this helper, so they agree.)
func signed(v float32, bit uint8) float32 {
	nz := uint32(bit) | -uint32(bit) // bit 31 set iff bit != 0
	return math.Float32frombits(math.Float32bits(v) ^ nz&0x80000000)
}

// parity7 is the WordReads replacement for ksigns_iq2xs[k] (k < 128): the seven
// stored sign bits plus an 8th bit that makes the count of set bits even.
func parity7(k uint32) uint8 {
	return uint8(k | uint32(bits.OnesCount32(k)&1)<<7)
}

// ---- passthrough types ----------------------------------------------------

func decodeF32(b []byte, il int, out *[16]float32) {
	if il != 0 {
		panic(badChunk(F32, il))
	}
	b = b[:64:64]
	for i := range out {
		out[i] = math.Float32frombits(le32(b[4*i:]))
	}
}

func decodeF16(b []byte, il int, out *[16]float32) {
	if il != 0 {
		panic(badChunk(F16, il))
	}
	b = b[:32:32]
	for i := range out {
		out[i] = Float32FromHalf(le16(b[2*i:]))
	}
}

// ---- q4_0, q8_0 -------------------------------------------------------------

// decodeQ4_0 is Metal's dequantize_q4_0, not ggml's CPU formula. The scale
// arithmetic happens in half: d1 = il ? half(d/16) : d, md = half(-8*d); then
// for each of the 8 uint16 words of qs, masked with mask0 = il ? 0x00F0 : 0x000F
// (low byte) and mask1 = mask0<<8 (high byte):
//
//	out[2i]   = d1       * float(qs[i] & mask0) + md
//	out[2i+1] = (d1/256) * float(qs[i] & mask1) + md
//
// The products are exact, so a fused multiply-add gives the same result; the
// float32() conversions below only keep Go from fusing on some platforms.
func decodeQ4_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q4_0, il))
	}
	b = b[:18:18]
	dh := le16(b)
	d1h, mask0 := dh, uint16(0x000F)
	if il != 0 {
		// d/16 is exact in float32; HalfFromFloat32 rounds it once, as the half
		// division does.
		d1h, mask0 = HalfFromFloat32(Float32FromHalf(dh)/16), 0x00F0
	}
	d1 := Float32FromHalf(d1h)
	d2 := d1 / 256
	md := Float32FromHalf(HalfFromFloat32(-8 * Float32FromHalf(dh)))
	mask1 := mask0 << 8
	for i := 0; i < 8; i++ {
		q := le16(b[2+2*i:])
		out[2*i] = float32(d1*float32(q&mask0)) + md
		out[2*i+1] = float32(d2*float32(q&mask1)) + md
	}
}

// decodeQ8_0 is Metal's dequantize_q8_0: float(qs[16*il + i]) * d.
func decodeQ8_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 1 {
		panic(badChunk(Q8_0, il))
	}
	b = b[:34:34]
	d := halfAt(b)
	qs := (*[16]byte)(b[2+16*il : 18+16*il])
	for i, q := range qs {
		out[i] = float32(int8(q)) * d
	}
}

// ---- iq2_xxs ----------------------------------------------------------------
//
// Sub-block ib32 = il/2 owns the 4 uint16 at qs + 4*ib32: g = words 0,1 (four
// 8-bit grid indices), s = words 2,3 (four 7-bit sign indices, 4-bit scale at
// bits 28..31). Half h = il%2 uses grid indices 2h, 2h+1 and sign indices
// (s >> 14h) & 127, (s >> (14h+7)) & 127.

func iq2xxsHeader(b []byte, il int) (dl float32, g, s uint32, h int) {
	if uint(il) > 15 {
		panic(badChunk(IQ2_XXS, il))
	}
	b = b[:66:66]
	q := b[2+8*(il>>1):]
	g = uint32(le16(q)) | uint32(le16(q[2:]))<<16
	s = uint32(le16(q[4:])) | uint32(le16(q[6:]))<<16
	dl = halfAt(b) * (0.5 + float32(s>>28)) * 0.25
	return dl, g, s, il & 1
}

func decodeIQ2XXSBytes(b []byte, il int, out *[16]float32) {
	dl, g, s, h := iq2xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		grid := &iq2xxsGridBytes[uint8(g>>(16*h+8*e))]
		signs := ksignsIQ2XS[s>>(14*h+7*e)&127]
		group8Bytes((*[8]float32)(out[8*e:]), dl, grid, signs)
	}
}

func decodeIQ2XXSWords(b []byte, il int, out *[16]float32) {
	dl, g, s, h := iq2xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		w := &iq2xxsGridWords[uint8(g>>(16*h+8*e))]
		signs := parity7(s >> (14*h + 7*e) & 127)
		group8Words((*[8]float32)(out[8*e:]), dl, w[0], w[1], signs)
	}
}

// ---- iq2_xs -----------------------------------------------------------------
//
// dl uses nibble h of scales[ib32]; the two uint16 q = qs[4*ib32 + 2h + e] give
// grid index q & 511 and sign index q >> 9.

func iq2xsHeader(b []byte, il int) (dl float32, q []byte) {
	if uint(il) > 15 {
		panic(badChunk(IQ2_XS, il))
	}
	b = b[:74:74]
	ib32, h := il>>1, il&1
	sc := b[66+ib32] >> (4 * h) & 15
	dl = halfAt(b) * (0.5 + float32(sc)) * 0.25
	return dl, b[2+8*ib32+4*h : 6+8*ib32+4*h]
}

func decodeIQ2XSBytes(b []byte, il int, out *[16]float32) {
	dl, q := iq2xsHeader(b, il)
	for e := 0; e < 2; e++ {
		v := le16(q[2*e:])
		group8Bytes((*[8]float32)(out[8*e:]), dl, &iq2xsGridBytes[v&511], ksignsIQ2XS[v>>9])
	}
}

func decodeIQ2XSWords(b []byte, il int, out *[16]float32) {
	dl, q := iq2xsHeader(b, il)
	for e := 0; e < 2; e++ {
		v := le16(q[2*e:])
		w := &iq2xsGridWords[v&511]
		group8Words((*[8]float32)(out[8*e:]), dl, w[0], w[1], parity7(uint32(v>>9)))
	}
}

// ---- iq2_s ------------------------------------------------------------------
//
// q = qs + 4*ib32 + 2h (low 8 index bits), sign bytes at q + 32, qh' =
// qh[ib32] >> 4h: index e is q[e] | ((qh' << (8-2e)) & 0x300). The sign bytes
// are used as they are (no ksigns lookup in either strategy).

func iq2sHeader(b []byte, il int) (dl float32, idx0, idx1 uint, sg0, sg1 uint8) {
	if uint(il) > 15 {
		panic(badChunk(IQ2_S, il))
	}
	b = b[:82:82]
	ib32, h := il>>1, il&1
	o := 2 + 4*ib32 + 2*h
	qh := uint(b[66+ib32] >> (4 * h))
	sc := b[74+ib32] >> (4 * h) & 15
	dl = halfAt(b) * (0.5 + float32(sc)) * 0.25
	idx0 = (uint(b[o]) | qh<<8&0x300) & 1023
	idx1 = (uint(b[o+1]) | qh<<6&0x300) & 1023
	return dl, idx0, idx1, b[o+32], b[o+33]
}

func decodeIQ2SBytes(b []byte, il int, out *[16]float32) {
	dl, i0, i1, s0, s1 := iq2sHeader(b, il)
	group8Bytes((*[8]float32)(out[0:]), dl, &iq2sGridBytes[i0], s0)
	group8Bytes((*[8]float32)(out[8:]), dl, &iq2sGridBytes[i1], s1)
}

func decodeIQ2SWords(b []byte, il int, out *[16]float32) {
	dl, i0, i1, s0, s1 := iq2sHeader(b, il)
	w0, w1 := &iq2sGridWords[i0], &iq2sGridWords[i1]
	group8Words((*[8]float32)(out[0:]), dl, w0[0], w0[1], s0)
	group8Words((*[8]float32)(out[8:]), dl, w1[0], w1[1], s1)
}

// ---- iq3_xxs ----------------------------------------------------------------
//
// q3 = qs + 8*ib32 (8-bit indices of 4-byte entries; half h uses q3[4h..4h+3]),
// a = uint32 at qs + 64 + 4*ib32 (sign indices + 4-bit scale). The first 8
// weights use entries q3[4h], q3[4h+1] and signs (a >> 14h) & 127, the next 8
// entries q3[4h+2], q3[4h+3] and signs (a >> (14h+7)) & 127.

func iq3xxsHeader(b []byte, il int) (dl float32, q3 *[4]byte, a uint32, h int) {
	if uint(il) > 15 {
		panic(badChunk(IQ3_XXS, il))
	}
	b = b[:98:98]
	ib32, h := il>>1, il&1
	q3 = (*[4]byte)(b[2+8*ib32+4*h:])
	a = uint32(le16(b[66+4*ib32:])) | uint32(le16(b[68+4*ib32:]))<<16
	dl = halfAt(b) * (0.5 + float32(a>>28)) * 0.5
	return dl, q3, a, h
}

func decodeIQ3XXSBytes(b []byte, il int, out *[16]float32) {
	dl, q3, a, h := iq3xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		signs := ksignsIQ2XS[a>>(14*h+7*e)&127]
		group8Bytes3((*[8]float32)(out[8*e:]), dl, &iq3xxsGridBytes[q3[2*e]], &iq3xxsGridBytes[q3[2*e+1]], signs)
	}
}

func decodeIQ3XXSWords(b []byte, il int, out *[16]float32) {
	dl, q3, a, h := iq3xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		signs := parity7(a >> (14*h + 7*e) & 127)
		group8Words((*[8]float32)(out[8*e:]), dl, iq3xxsGridWords[q3[2*e]], iq3xxsGridWords[q3[2*e+1]], signs)
	}
}

// ---- iq3_s ------------------------------------------------------------------
//
// q = qs + 8*ib32 + 4h, qh' = qh[ib32] >> 4h, entry e (0..3) has index
// q[e] | ((qh' << (8-e)) & 256); sign bytes signs[4*ib32 + 2h + 0/1] (used as
// they are); dl = d * (1 + 2*((scales[ib32/2] >> 4*(ib32%2)) & 15)).

func iq3sHeader(b []byte, il int) (dl float32, idx [4]uint, sg0, sg1 uint8) {
	if uint(il) > 15 {
		panic(badChunk(IQ3_S, il))
	}
	b = b[:110:110]
	ib32, h := il>>1, il&1
	q := (*[4]byte)(b[2+8*ib32+4*h:])
	qh := uint(b[66+ib32] >> (4 * h))
	sc := b[106+ib32/2] >> (4 * (ib32 % 2)) & 15
	dl = halfAt(b) * float32(1+2*int(sc))
	for e := range idx {
		idx[e] = (uint(q[e]) | qh<<(8-e)&256) & 511
	}
	sg := 74 + 4*ib32 + 2*h
	return dl, idx, b[sg], b[sg+1]
}

func decodeIQ3SBytes(b []byte, il int, out *[16]float32) {
	dl, idx, s0, s1 := iq3sHeader(b, il)
	group8Bytes3((*[8]float32)(out[0:]), dl, &iq3sGridBytes[idx[0]], &iq3sGridBytes[idx[1]], s0)
	group8Bytes3((*[8]float32)(out[8:]), dl, &iq3sGridBytes[idx[2]], &iq3sGridBytes[idx[3]], s1)
}

func decodeIQ3SWords(b []byte, il int, out *[16]float32) {
	dl, idx, s0, s1 := iq3sHeader(b, il)
	group8Words((*[8]float32)(out[0:]), dl, iq3sGridWords[idx[0]], iq3sGridWords[idx[1]], s0)
	group8Words((*[8]float32)(out[8:]), dl, iq3sGridWords[idx[2]], iq3sGridWords[idx[3]], s1)
}

// ---- 8-weight groups ----------------------------------------------------------

// group8Bytes is the ByteReads inner loop: 8 grid bytes read one at a time,
// out[j] = dl * grid[j] * (signs & kmask_iq2xs[j] ? -1 : 1).
func group8Bytes(out *[8]float32, dl float32, grid *[8]uint8, signs uint8) {
	for j, g := range grid {
		out[j] = signed(dl*float32(g), signs&kmaskIQ2XS[j])
	}
}

// group8Bytes3 is group8Bytes for two 4-byte iq3 entries: ga gives weights 0..3
// (sign bits 0..3), gb weights 4..7 (sign bits 4..7).
func group8Bytes3(out *[8]float32, dl float32, ga, gb *[4]uint8, signs uint8) {
	for j, g := range ga {
		out[j] = signed(dl*float32(g), signs&kmaskIQ2XS[j])
	}
	for j, g := range gb {
		out[4+j] = signed(dl*float32(g), signs&kmaskIQ2XS[4+j])
	}
}

// group8Words is the WordReads inner loop: the 8 magnitudes come from two
// little-endian words (one 8-byte iq2 entry, or two 4-byte iq3 entries) and are
// extracted with shifts and masks.
func group8Words(out *[8]float32, dl float32, lo, hi uint32, signs uint8) {
	out[0] = signed(dl*float32(lo&0xff), signs&0x01)
	out[1] = signed(dl*float32(lo>>8&0xff), signs&0x02)
	out[2] = signed(dl*float32(lo>>16&0xff), signs&0x04)
	out[3] = signed(dl*float32(lo>>24), signs&0x08)
	out[4] = signed(dl*float32(hi&0xff), signs&0x10)
	out[5] = signed(dl*float32(hi>>8&0xff), signs&0x20)
	out[6] = signed(dl*float32(hi>>16&0xff), signs&0x40)
	out[7] = signed(dl*float32(hi>>24), signs&0x80)
}
