package dequant

// The 256-weight K-quants and tq2_0: Metal's dequantize_q2_K (ggml-metal.metal
// L709–726 at ggml d99724f), _q3_K (L728–755), _q4_K (L762–779, with
// get_scale_min_k4_just2 L757–760), _q5_K (L781–802), _q6_K (L804–835) and
// _tq2_0 (L1050–1067). Chunk il of a 256-weight block covers weights 16il ..
// 16il+15. The products are exact in float32 (see decode_small.go); the
// float32() conversions keep Go from fusing a multiply into an add.

// quarterCoef is the shader's half constant `coef` of q2_K/q3_K for the 2-bit
// field j = (il/2)%4 (1, 1/4, 1/16, 1/64): it scales the unshifted field
// q & (3 << 2j) back to the code.
var quarterCoef = [4]float32{1, 1.0 / 4, 1.0 / 16, 1.0 / 64}

// decodeQ2K is dequantize_q2_K: dl = d * (sc & 15) * coef, ml = dmin * (sc >> 4)
// with sc = scales[il], and out[i] = dl * (q[i] & mask) - ml over the 16 bytes
// q = qs + 32*(il/8) + 16*(il&1), mask = 3 << 2j.
func decodeQ2K(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(Q2_K, il))
	}
	b = b[:84:84]
	d, dmin := halfAt(b, 80), halfAt(b, 82)
	sc := devU8(b, il)
	j := il / 2 % 4
	dl := float32(d*float32(sc&15)) * quarterCoef[j]
	ml := dmin * float32(sc>>4)
	mask := uint8(3) << (2 * j)
	o := 16 + 32*(il/8) + 16*(il&1)
	maskedAffine16(out, b, o, mask, dl, ml)
}

// decodeQ3K is dequantize_q3_K: the 6-bit scale assembled from scales[il%8] and
// scales[8+il%4] (for il >= 8 it comes out times 16 and is divided back),
// dl = d * (scale - 32), ml = 4*dl, dl *= coef; out[i] = dl * (q[i] & mask)
// minus ml unless bit il/2 of hmask[16*(il&1) + i] is set.
func decodeQ3K(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(Q3_K, il))
	}
	b = b[:110:110]
	d := halfAt(b, 108)
	s2, s1 := devU8(b, 96+il%8), devU8(b, 104+il%4)
	q4 := il / 4
	kmask1 := uint8(3) << (2 * q4)
	kmask2 := uint8(0x0F)
	if il >= 8 {
		kmask2 = 0xF0
	}
	shift := 4
	if q4&1 != 0 {
		shift = 2
	}
	dlInt := int16(s2&kmask2) | int16(s1&kmask1)<<shift
	var dl float32
	if il < 8 {
		dl = d * (float32(dlInt) - 32)
	} else {
		dl = d * (float32(dlInt)/16 - 32)
	}
	ml := 4 * dl
	j := il / 2 & 3
	dl *= quarterCoef[j]
	mask := uint8(3) << (2 * j)
	m := uint8(1) << (il / 2)
	qo, ho := 32+32*(il/8)+16*(il&1), 16*(il&1)
	for i := 0; i < 16; i++ {
		// With the high bit set the shader subtracts +0, which leaves every
		// value (zeros of either sign included) unchanged.
		v := float32(dl * float32(devU8(b, qo+i)&mask))
		if devU8(b, ho+i)&m == 0 {
			v -= ml
		}
		out[i] = v
	}
}

// scaleMinK4 is get_scale_min_k4_just2(j, k, scales at off): the 6-bit scale and
// min of sub-block j+k of a q4_K/q5_K block (j even). For j < 4 it reads 2 scale
// bytes, otherwise 3.
func scaleMinK4(b []byte, off, j, k int) (sc, mn uint8) {
	if j < 4 {
		return devU8(b, off+j+k) & 63, devU8(b, off+j+4+k) & 63
	}
	hi := devU8(b, off+j+4+k)
	return hi&0xF | devU8(b, off+j-4+k)&0xc0>>2, hi>>4 | devU8(b, off+j+k)&0xc0>>2
}

// decodeQ4K is dequantize_q4_K: 64-weight group c = il/4, low nibbles of
// q = qs + 32c + 16*(il&1) for il%4 < 2, high nibbles (unshifted, times d/16
// divided in half precision) otherwise; out[i] = dl * (q[i] & mask) - ml.
func decodeQ4K(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(Q4_K, il))
	}
	b = b[:144:144]
	c, lo := il/4, il&3 < 2
	sc, mn := scaleMinK4(b, 4, 2*c, il&3/2)
	d := halfAt(b, 0)
	mask := uint8(0x0F)
	if !lo {
		d, mask = roundedHalf(d/16), 0xF0
	}
	dmin := halfAt(b, 2)
	dl, ml := d*float32(sc), dmin*float32(mn)
	o := 16 + 32*c + 16*(il&1)
	maskedAffine16(out, b, o, mask, dl, ml)
}

// decodeQ5K is dequantize_q5_K: as q4_K with d/16 in float (exact) and the
// fifth bit, bit il/2 of qh[16*(il&1) + i], adding 16 (low) or 256 (high,
// unshifted) to the code.
func decodeQ5K(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(Q5_K, il))
	}
	b = b[:176:176]
	c, lo := il/4, il&3 < 2
	sc, mn := scaleMinK4(b, 4, 2*c, il&3/2)
	d := halfAt(b, 0)
	mask, qhVal := uint8(0x0F), float32(16)
	if !lo {
		d, mask, qhVal = d/16, 0xF0, 256
	}
	dmin := halfAt(b, 2)
	dl, ml := d*float32(sc), dmin*float32(mn)
	ul := uint8(1) << (il / 2)
	qo, ho := 48+32*c+16*(il&1), 16+16*(il&1)
	for i := 0; i < 16; i++ {
		x := float32(devU8(b, qo+i) & mask) // adding the shader's 0 changes nothing
		if devU8(b, ho+i)&ul != 0 {
			x += qhVal
		}
		out[i] = float32(dl*x) - ml
	}
}

// decodeQ6K is dequantize_q6_K: the 6-bit codes of 16 weights assembled four at
// a time from two uint16 of ql and two of qh, dl0 = d * scales[il] (d in half,
// promoted), ml = dl0 * 32; weight 4r+k = (dl0 / 256^k) * (code << 8k) - ml.
func decodeQ6K(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(Q6_K, il))
	}
	b = b[:210:210]
	g := il / 2 & 3
	qlOff := 2 * (32*(il/8) + 16*(il/2&1) + 8*(il&1))
	qhOff := 128 + 2*(16*(il/8)+8*(il&1))
	sc := float32(int8(devU8(b, 192+il)))
	d := halfAt(b, 208)
	kmask1 := uint32(0x03030303) << (2 * g)
	kmask2 := uint32(0x0F0F0F0F)
	shrL := 0
	if g > 1 {
		kmask2, shrL = 0xF0F0F0F0, 4
	}
	shlH, shrH := [4]int{4, 2, 0, 0}[g], 0
	if g > 2 {
		shrH = 2
	}
	dl0 := d * sc
	ml := dl0 * 32
	dl := [4]float32{dl0, dl0 / 256, dl0 / (256 * 256), dl0 / (256 * 256 * 256)}
	for r := 0; r < 4; r++ {
		low := (uint32(devU16(b, qlOff+4*r)) | uint32(devU16(b, qlOff+4*r+2))<<16) & kmask2
		high := (uint32(devU16(b, qhOff+4*r)) | uint32(devU16(b, qhOff+4*r+2))<<16) & kmask1
		q := high<<shlH>>shrH | low>>shrL
		for k := 0; k < 4; k++ {
			out[4*r+k] = float32(dl[k]*float32(q&(0xFF<<(8*k)))) - ml
		}
	}
}

// decodeTQ2_0 is dequantize_tq2_0: weight i = 16il + k sits in byte
// 32*((i>>7)&1) + (i&31), bits 2*((i>>5)&3); out = d * float(code - 1).
func decodeTQ2_0(b []byte, il int, out *[16]float32) {
	if uint(il) > 15 {
		panic(badChunk(TQ2_0, il))
	}
	b = b[:66:66]
	d := halfAt(b, 64)
	o, sh := 32*(il/8)+16*(il&1), 2*(il/2&3)
	for k := 0; k < 16; k++ {
		out[k] = d * float32(int(devU8(b, o+k)>>sh&3)-1)
	}
}

// maskedAffine16 is the q2_K and q4_K arithmetic of a chunk: out[i] = dl *
// (byte o+i & mask) - ml for the 16 bytes from o (the float32() keeps Go from
// fusing the multiply and subtract).
func maskedAffine16(out *[16]float32, b []byte, o int, mask uint8, dl, ml float32) {
	for i := 0; i < 16; i++ {
		out[i] = float32(dl*float32(devU8(b, o+i)&mask)) - ml
	}
}
