package dequant

// ggml's CPU reference dequantizers of the 256-weight types (ggml-quants.c at
// ggml d99724f; line ranges per function), one block at a time.

// cpuQ2K is dequantize_row_q2_K (L961–991): for half h, field j and 16-byte
// group s, sc = scales[8h+2j+s], dl = d * (sc & 15), ml = dmin * (sc >> 4),
// y = dl * ((qs[32h+16s+l] >> 2j) & 3) - ml.
func cpuQ2K(b []byte, y []float32) {
	b, y = b[:84:84], y[:256:256]
	d, dmin := cpuHalf(b, 80), cpuHalf(b, 82)
	e := 0
	for h := 0; h < 2; h++ {
		for j := 0; j < 4; j++ {
			for s := 0; s < 2; s++ {
				sc := b[8*h+2*j+s]
				dl, ml := d*float32(sc&15), dmin*float32(sc>>4)
				for l := 0; l < 16; l++ {
					y[e] = float32(dl*float32(b[16+32*h+16*s+l]>>(2*j)&3)) - ml
					e++
				}
			}
		}
	}
}

// q3KScale is the 6-bit scale i of a q3_K block minus 32, as the aux words of
// dequantize_row_q3_K rearrange it: low 4 bits from scales[i] (i < 8) or the high
// nibble of scales[i-8], high 2 bits from scales[8 + i%4] >> 2*(i/4).
func q3KScale(scales []byte, i int) int {
	lo := scales[i%8] & 15
	if i >= 8 {
		lo = scales[i-8] >> 4
	}
	hi := scales[8+i%4] >> (2 * (i / 4)) & 3
	return int(lo|hi<<4) - 32
}

// cpuQ3K is dequantize_row_q3_K (L1305–1353): dl = d * (scale - 32),
// y = dl * (2-bit code - (hmask bit ? 0 : 4)).
func cpuQ3K(b []byte, y []float32) {
	b, y = b[:110:110], y[:256:256]
	d := cpuHalf(b, 108)
	scales := b[96:108]
	e := 0
	for h := 0; h < 2; h++ {
		for j := 0; j < 4; j++ {
			m := uint8(1) << (4*h + j)
			for s := 0; s < 2; s++ {
				dl := d * float32(q3KScale(scales, 8*h+2*j+s))
				for l := 0; l < 16; l++ {
					q := int(b[32+32*h+16*s+l] >> (2 * j) & 3)
					if b[16*s+l]&m == 0 {
						q -= 4
					}
					y[e] = dl * float32(q)
					e++
				}
			}
		}
	}
}

// cpuScaleMinK4 is get_scale_min_k4 (L880–887) on the 12 scale bytes.
func cpuScaleMinK4(j int, q []byte) (sc, mn uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// cpuScalesK4 gives the scales and mins of the two 32-weight halves of
// 64-weight group c of a q4_K or q5_K block: d*sc and dmin*mn of scale
// pairs 2c and 2c+1.
func cpuScalesK4(c int, d, dmin float32, scales []byte) (d1, mn1, d2, mn2 float32) {
	sc1, m1 := cpuScaleMinK4(2*c, scales)
	sc2, m2 := cpuScaleMinK4(2*c+1, scales)
	return d * float32(sc1), dmin * float32(m1), d * float32(sc2), dmin * float32(m2)
}

// cpuQ4K is dequantize_row_q4_K (L1529–1551): per 64 weights two (scale, min)
// pairs; y = d*sc * nibble - dmin*mn.
func cpuQ4K(b []byte, y []float32) {
	b, y = b[:144:144], y[:256:256]
	d, dmin := cpuHalf(b, 0), cpuHalf(b, 2)
	scales := b[4:16]
	for c := 0; c < 4; c++ {
		d1, mn1, d2, mn2 := cpuScalesK4(c, d, dmin, scales)
		for l := 0; l < 32; l++ {
			q := b[16+32*c+l]
			y[64*c+l] = float32(d1*float32(q&15)) - mn1
			y[64*c+32+l] = float32(d2*float32(q>>4)) - mn2
		}
	}
}

// cpuQ5K is dequantize_row_q5_K (L1731–1756): q4_K with a fifth bit from qh
// adding 16.
func cpuQ5K(b []byte, y []float32) {
	b, y = b[:176:176], y[:256:256]
	d, dmin := cpuHalf(b, 0), cpuHalf(b, 2)
	scales := b[4:16]
	for c := 0; c < 4; c++ {
		d1, mn1, d2, mn2 := cpuScalesK4(c, d, dmin, scales)
		u1, u2 := uint8(1)<<(2*c), uint8(2)<<(2*c)
		for l := 0; l < 32; l++ {
			q, qh := b[48+32*c+l], b[16+l]
			x0, x1 := int(q&15), int(q>>4)
			if qh&u1 != 0 {
				x0 += 16
			}
			if qh&u2 != 0 {
				x1 += 16
			}
			y[64*c+l] = float32(d1*float32(x0)) - mn1
			y[64*c+32+l] = float32(d2*float32(x1)) - mn2
		}
	}
}

// cpuQ6K is dequantize_row_q6_K (L1939–1968): 6-bit codes from 4 low bits in ql
// and 2 high bits in qh, minus 32; y = d * scale * code.
func cpuQ6K(b []byte, y []float32) {
	b, y = b[:210:210], y[:256:256]
	d := cpuHalf(b, 208)
	for h := 0; h < 2; h++ {
		ql, qh, sc, yy := b[64*h:], b[128+32*h:], b[192+8*h:], y[128*h:]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int(ql[l]&15|(qh[l]&3)<<4) - 32
			q2 := int(ql[l+32]&15|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			yy[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
			yy[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
			yy[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
			yy[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
		}
	}
}

// cpuTQ2_0 is dequantize_row_tq2_0 (L2467–2484): y[128g+32l+m] =
// (code - 1) * d with code = (qs[32g+m] >> 2l) & 3.
func cpuTQ2_0(b []byte, y []float32) {
	b, y = b[:66:66], y[:256:256]
	d := cpuHalf(b, 64)
	for g := 0; g < 2; g++ {
		for l := 0; l < 4; l++ {
			for m := 0; m < 32; m++ {
				y[128*g+32*l+m] = float32(int(b[32*g+m]>>(2*l)&3)-1) * d
			}
		}
	}
}

// cpuIQ1S is dequantize_row_iq1_s (L2650–2673): dl = d * (2*scale + 1),
// y = dl * (iq1s_grid value + delta), delta = ±IQ1S_DELTA.
func cpuIQ1S(b []byte, y []float32) {
	b, y = b[:50:50], y[:256:256]
	d := cpuHalf(b, 0)
	for ib := 0; ib < 8; ib++ {
		qh := le16(b, 34+2*ib)
		dl := d * float32(2*int(qh>>12&7)+1)
		delta := float32(0.125)
		if qh&0x8000 != 0 {
			delta = -0.125
		}
		for l := 0; l < 4; l++ {
			g := &iq1sGrid[int(b[2+4*ib+l])|int(qh>>(3*l)&7)<<8]
			for j, v := range g {
				y[32*ib+8*l+j] = dl * (float32(v) + delta)
			}
		}
	}
}

// cpuIQ1M is dequantize_row_iq1_m (L2675–2723): the fp16 scale from the top
// nibbles of the 4 scale words, two 3-bit sub-scales per 32 weights, one delta
// sign per 8.
func cpuIQ1M(b []byte, y []float32) {
	b, y = b[:56:56], y[:256:256]
	var sc [4]uint16
	for i := range sc {
		sc[i] = le16(b, 48+2*i)
	}
	d := Float32FromHalf(sc[0]>>12 | sc[1]>>8&0x00f0 | sc[2]>>4&0x0f00 | sc[3]&0xf000)
	for ib := 0; ib < 8; ib++ {
		w := sc[ib/2] >> (6 * (ib % 2))
		dl := [2]float32{d * float32(2*int(w&7)+1), d * float32(2*int(w>>3&7)+1)}
		for l := 0; l < 4; l++ {
			qh := int(b[32+2*ib+l/2])
			shift, neg := 8, 0x08
			if l%2 == 1 {
				shift, neg = 4, 0x80
			}
			delta := float32(0.125)
			if qh&neg != 0 {
				delta = -0.125
			}
			g := &iq1sGrid[int(b[4*ib+l])|qh<<shift&0x700]
			for j, v := range g {
				y[32*ib+8*l+j] = dl[l/2] * (float32(v) + delta)
			}
		}
	}
}

// cpuIQ4XS is dequantize_row_iq4_xs (L2743–2764): dl = d * (6-bit scale - 32),
// y = dl * kvalues_iq4nl[nibble].
func cpuIQ4XS(b []byte, y []float32) {
	b, y = b[:136:136], y[:256:256]
	d := cpuHalf(b, 0)
	sh := le16(b, 2)
	for ib := 0; ib < 8; ib++ {
		ls := int(b[4+ib/2]>>(4*(ib%2))&15) | int(sh>>(2*ib)&3)<<4
		dl := d * float32(ls-32)
		for j := 0; j < 16; j++ {
			q := b[8+16*ib+j]
			y[32*ib+j] = dl * float32(kvaluesIQ4NL[q&15])
			y[32*ib+16+j] = dl * float32(kvaluesIQ4NL[q>>4])
		}
	}
}
