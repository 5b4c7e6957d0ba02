package dequant

// The other 256-weight iq types: Metal's dequantize_iq1_s (ggml-metal.metal
// L954–973 at ggml d99724f), _iq1_m (L975–1000) and _iq4_xs (L1030–1048). The
// iq1 types read iq1s_grid_gpu from constant memory one byte at a time: byte j
// of an entry holds element j in its low nibble and element j+4 in its high
// nibble, each as value + 1 in {0, 1, 2}. Both strategies decode them alike.

// iq1Delta is the shader's -1 - IQ1S_DELTA (sign bit set) or -1 + IQ1S_DELTA
// (IQ1S_DELTA = IQ1M_DELTA = 0.125f, ggml-common.h L1132–1133): the offset that
// turns a grid value + 1 back into value ± delta.
func iq1Delta(negative bool) float32 {
	if negative {
		return -1 - 0.125
	}
	return -1 + 0.125
}

// iq1Group8 writes dl * nibble + ml for the 8 elements of one iq1s_grid_gpu
// entry: out[j] from the low nibble of byte j, out[4+j] from the high nibble.
func iq1Group8(out *[8]float32, dl, ml float32, g *[4]uint8) {
	for j := range g {
		v := fromConst8(&g[j])
		out[j] = float32(dl*float32(v&0xf)) + ml
		out[4+j] = float32(dl*float32(v>>4)) + ml
	}
}

// decodeIQ1S is dequantize_iq1_s: sub-block ib32 = il/2 with the uint16
// qh[ib32] (3-bit scale in bits 12..14, delta sign in bit 15, and 3 high index
// bits per group of 8); dl = d * (2*scale + 1), ml = dl * iq1Delta; half h = il%2
// uses groups 2h, 2h+1 with indices qs[4*ib32 + 2h + e] | high bits << 8.
func decodeIQ1S(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(IQ1_S, il))
	}
	b = b[:50:50]
	ib32, h := il>>1, il&1
	d := halfAt(b, 0)
	qh := devU16(b, 34+2*ib32)
	dl := d * float32(2*int(qh>>12&7)+1)
	ml := dl * iq1Delta(qh&0x8000 != 0)
	hh := uint(qh >> (6 * h))
	o := 2 + 4*ib32 + 2*h
	g1 := &iq1sGridGPU[uint(devU8(b, o))|hh<<8&0x700]
	g2 := &iq1sGridGPU[uint(devU8(b, o+1))|hh<<5&0x700]
	iq1Group8((*[8]float32)(out[0:]), dl, ml, g1)
	iq1Group8((*[8]float32)(out[8:]), dl, ml, g2)
}

// decodeIQ1M is dequantize_iq1_m: the fp16 super-block scale is the top nibbles
// of the four uint16 scale words; the 3-bit sub-scale of half h of sub-block
// ib32 is bits 6*(ib32%2) + 3h of word ib32/2 (read again with its runtime
// index); qh[2*ib32 + h] holds the 3 high index bits and delta sign of both
// groups (bits 0..3 for the first, 4..7 for the second).
func decodeIQ1M(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(IQ1_M, il))
	}
	b = b[:56:56]
	ib32, h := il>>1, il&1
	s0, s1, s2, s3 := devU16(b, 48), devU16(b, 50), devU16(b, 52), devU16(b, 54)
	d := Float32FromHalf(s0>>12 | s1>>8&0x00f0 | s2>>4&0x0f00 | s3&0xf000)
	o := 4*ib32 + 2*h
	qh := uint(devU8(b, 32+2*ib32+h))
	sw := devU16(b, 48+2*(ib32/2))
	dl := d * float32(2*int(sw>>(6*(ib32%2)+3*h)&7)+1)
	ml1 := dl * iq1Delta(qh&0x08 != 0)
	ml2 := dl * iq1Delta(qh&0x80 != 0)
	g1 := &iq1sGridGPU[uint(devU8(b, o))|qh<<8&0x700]
	g2 := &iq1sGridGPU[uint(devU8(b, o+1))|qh<<4&0x700]
	iq1Group8((*[8]float32)(out[0:]), dl, ml1, g1)
	iq1Group8((*[8]float32)(out[8:]), dl, ml2, g2)
}

// decodeIQ4XS is dequantize_iq4_xs: the 6-bit scale of sub-block ib32 = il/2
// from scales_l (4 bits) and scales_h (2 bits), d = d * (ls - 32); the 4 uint32
// at qs + 16*ib32, nibble il%2 of byte i, times the level.
func decodeIQ4XS(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(IQ4_XS, il))
	}
	b = b[:136:136]
	ib32, h := il>>1, il&1
	d := halfAt(b, 0)
	sh, sl := devU16(b, 2), devU8(b, 4+ib32/2)
	ls := int(sl>>(4*(ib32%2))&0xf) | int(sh>>(2*ib32)&3)<<4
	dl := d * float32(ls-32)
	var w [4]uint32
	for r := range w {
		w[r] = devU32(b, 8+16*ib32+4*r)
	}
	iq4Chunk(out, dl, w, 4*uint(h))
}
