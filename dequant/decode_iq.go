package dequant

// The iq2 and iq3 codebook types, in both codebook-read strategies: Metal's
// dequantize_iq2_xxs (ggml-metal.metal L837–860 at ggml d99724f), _iq2_xs
// (L862–881), _iq2_s (L935–952), _iq3_xxs (L883–908) and _iq3_s (L910–933).
// ByteReads follows the shader; WordReads reads the same grid entries as uint32
// words and computes the ksigns bytes (see Strategy).

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
	o := 2 + 8*(il>>1)
	g = uint32(devU16(b, o)) | uint32(devU16(b, o+2))<<16
	s = uint32(devU16(b, o+4)) | uint32(devU16(b, o+6))<<16
	dl = halfAt(b, 0) * (0.5 + float32(s>>28)) * 0.25
	return dl, g, s, il & 1
}

func decodeIQ2XXSBytes(b []byte, il int, out *[16]float32) {
	dl, g, s, h := iq2xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		grid := &iq2xxsGridBytes[uint8(g>>(16*h+8*e))]
		signs := fromConst8(&ksignsIQ2XS[s>>(14*h+7*e)&127])
		group8Bytes((*[8]float32)(out[8*e:]), dl, grid, signs)
	}
}

func decodeIQ2XXSWords(b []byte, il int, out *[16]float32) {
	dl, g, s, h := iq2xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		w := &iq2xxsGridWords[uint8(g>>(16*h+8*e))]
		signs := parity7(s >> (14*h + 7*e) & 127)
		group8Words((*[8]float32)(out[8*e:]), dl, fromConst32(&w[0]), fromConst32(&w[1]), signs)
	}
}

// ---- iq2_xs -----------------------------------------------------------------
//
// dl uses nibble h of scales[ib32]; the two uint16 q = qs[4*ib32 + 2h + e] give
// grid index q & 511 and sign index q >> 9.

func iq2xsHeader(b []byte, il int) (dl float32, q0, q1 uint16) {
	if uint(il) > 15 {
		panic(badChunk(IQ2_XS, il))
	}
	b = b[:74:74]
	ib32, h := il>>1, il&1
	sc := devU8(b, 66+ib32) >> (4 * h) & 15
	dl = halfAt(b, 0) * (0.5 + float32(sc)) * 0.25
	o := 2 + 8*ib32 + 4*h
	return dl, devU16(b, o), devU16(b, o+2)
}

func decodeIQ2XSBytes(b []byte, il int, out *[16]float32) {
	dl, q0, q1 := iq2xsHeader(b, il)
	for e, v := range [2]uint16{q0, q1} {
		group8Bytes((*[8]float32)(out[8*e:]), dl, &iq2xsGridBytes[v&511], fromConst8(&ksignsIQ2XS[v>>9]))
	}
}

func decodeIQ2XSWords(b []byte, il int, out *[16]float32) {
	dl, q0, q1 := iq2xsHeader(b, il)
	for e, v := range [2]uint16{q0, q1} {
		w := &iq2xsGridWords[v&511]
		group8Words((*[8]float32)(out[8*e:]), dl, fromConst32(&w[0]), fromConst32(&w[1]), parity7(uint32(v>>9)))
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
	qh := uint(devU8(b, 66+ib32) >> (4 * h))
	sc := devU8(b, 74+ib32) >> (4 * h) & 15
	dl = halfAt(b, 0) * (0.5 + float32(sc)) * 0.25
	idx0 = (uint(devU8(b, o)) | qh<<8&0x300) & 1023
	idx1 = (uint(devU8(b, o+1)) | qh<<6&0x300) & 1023
	return dl, idx0, idx1, devU8(b, o+32), devU8(b, o+33)
}

func decodeIQ2SBytes(b []byte, il int, out *[16]float32) {
	dl, i0, i1, s0, s1 := iq2sHeader(b, il)
	group8Bytes((*[8]float32)(out[0:]), dl, &iq2sGridBytes[i0], s0)
	group8Bytes((*[8]float32)(out[8:]), dl, &iq2sGridBytes[i1], s1)
}

func decodeIQ2SWords(b []byte, il int, out *[16]float32) {
	dl, i0, i1, s0, s1 := iq2sHeader(b, il)
	w0, w1 := &iq2sGridWords[i0], &iq2sGridWords[i1]
	group8Words((*[8]float32)(out[0:]), dl, fromConst32(&w0[0]), fromConst32(&w0[1]), s0)
	group8Words((*[8]float32)(out[8:]), dl, fromConst32(&w1[0]), fromConst32(&w1[1]), s1)
}

// ---- iq3_xxs ----------------------------------------------------------------
//
// q3 = qs + 8*ib32 (8-bit indices of 4-byte entries; half h uses q3[4h..4h+3]),
// a = uint32 at qs + 64 + 4*ib32 (sign indices + 4-bit scale). The first 8
// weights use entries q3[4h], q3[4h+1] and signs (a >> 14h) & 127, the next 8
// entries q3[4h+2], q3[4h+3] and signs (a >> (14h+7)) & 127.

func iq3xxsHeader(b []byte, il int) (dl float32, q3 []byte, a uint32, h int) {
	if uint(il) > 15 {
		panic(badChunk(IQ3_XXS, il))
	}
	b = b[:98:98]
	ib32, h := il>>1, il&1
	q3 = b[2+8*ib32+4*h:][:4] // read one byte per entry where it is used
	a = uint32(devU16(b, 66+4*ib32)) | uint32(devU16(b, 68+4*ib32))<<16
	dl = halfAt(b, 0) * (0.5 + float32(a>>28)) * 0.5
	return dl, q3, a, h
}

func decodeIQ3XXSBytes(b []byte, il int, out *[16]float32) {
	dl, q3, a, h := iq3xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		signs := fromConst8(&ksignsIQ2XS[a>>(14*h+7*e)&127])
		group8Bytes3((*[8]float32)(out[8*e:]), dl, &iq3xxsGridBytes[devU8(q3, 2*e)], &iq3xxsGridBytes[devU8(q3, 2*e+1)], signs)
	}
}

func decodeIQ3XXSWords(b []byte, il int, out *[16]float32) {
	dl, q3, a, h := iq3xxsHeader(b, il)
	for e := 0; e < 2; e++ {
		signs := parity7(a >> (14*h + 7*e) & 127)
		group8Words((*[8]float32)(out[8*e:]), dl, fromConst32(&iq3xxsGridWords[devU8(q3, 2*e)]), fromConst32(&iq3xxsGridWords[devU8(q3, 2*e+1)]), signs)
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
	qh := uint(devU8(b, 66+ib32) >> (4 * h))
	sc := devU8(b, 106+ib32/2) >> (4 * (ib32 % 2)) & 15
	dl = halfAt(b, 0) * float32(1+2*int(sc))
	q := b[2+8*ib32+4*h:][:4]
	for e := range idx {
		idx[e] = (uint(devU8(q, e)) | qh<<(8-e)&256) & 511
	}
	sg := 74 + 4*ib32 + 2*h
	return dl, idx, devU8(b, sg), devU8(b, sg+1)
}

func decodeIQ3SBytes(b []byte, il int, out *[16]float32) {
	dl, idx, s0, s1 := iq3sHeader(b, il)
	group8Bytes3((*[8]float32)(out[0:]), dl, &iq3sGridBytes[idx[0]], &iq3sGridBytes[idx[1]], s0)
	group8Bytes3((*[8]float32)(out[8:]), dl, &iq3sGridBytes[idx[2]], &iq3sGridBytes[idx[3]], s1)
}

func decodeIQ3SWords(b []byte, il int, out *[16]float32) {
	dl, idx, s0, s1 := iq3sHeader(b, il)
	group8Words((*[8]float32)(out[0:]), dl, fromConst32(&iq3sGridWords[idx[0]]), fromConst32(&iq3sGridWords[idx[1]]), s0)
	group8Words((*[8]float32)(out[8:]), dl, fromConst32(&iq3sGridWords[idx[2]]), fromConst32(&iq3sGridWords[idx[3]]), s1)
}

// ---- 8-weight groups ----------------------------------------------------------

// group8Bytes is the ByteReads inner loop: 8 grid bytes read one at a time,
// out[j] = dl * grid[j] * (signs & kmask_iq2xs[j] ? -1 : 1).
func group8Bytes(out *[8]float32, dl float32, grid *[8]uint8, signs uint8) {
	for j := range grid {
		out[j] = signed(dl*float32(fromConst8(&grid[j])), signs&kmaskIQ2XS[j])
	}
}

// group8Bytes3 is group8Bytes for two 4-byte iq3 entries: ga gives weights 0..3
// (sign bits 0..3), gb weights 4..7 (sign bits 4..7).
func group8Bytes3(out *[8]float32, dl float32, ga, gb *[4]uint8, signs uint8) {
	for j := range ga {
		out[j] = signed(dl*float32(fromConst8(&ga[j])), signs&kmaskIQ2XS[j])
	}
	for j := range gb {
		out[4+j] = signed(dl*float32(fromConst8(&gb[j])), signs&kmaskIQ2XS[4+j])
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
