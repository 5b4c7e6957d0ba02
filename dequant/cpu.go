package dequant

import (
	"fmt"
	"math"
)

// BlockFunc decodes one whole block: out[i] = weight i of the block for i <
// Layout().BlockWeights. block must hold the type's BlockBytes bytes and out at
// least BlockWeights floats (shorter slices panic). A BlockFunc does not
// allocate and keeps no state.
type BlockFunc func(block []byte, out []float32)

// CPUDecoder returns ggml's CPU reference dequantizer of t: the type traits'
// to_float, dequantize_row_<type> of ggml-quants.c (line ranges per function
// below, ggml d99724f), for one block, in float32 evaluated left to right as
// written and without fused multiply-adds (how the golden sets' generator
// compiled it). It is what the golden sets' .f32 files hold, bit for bit. For
// the iq2/iq3 types, q8_0, f32 and f16 the CPU expressions are the Metal
// functions' (docs/kernel-facts.md K7), so their CPU form is the ByteReads chunk
// decoder run over the block's chunks. CPUDecoder panics on an invalid Type.
func CPUDecoder(t Type) BlockFunc {
	switch t {
	case Q4_0:
		return cpuQ4_0
	case Q4_1:
		return cpuQ4_1
	case Q5_0:
		return cpuQ5_0
	case Q5_1:
		return cpuQ5_1
	case Q1_0:
		return cpuQ1_0
	case Q2_0:
		return cpuQ2_0
	case MXFP4:
		return cpuMXFP4
	case IQ4_NL:
		return cpuIQ4NL
	case Q2_K:
		return cpuQ2K
	case Q3_K:
		return cpuQ3K
	case Q4_K:
		return cpuQ4K
	case Q5_K:
		return cpuQ5K
	case Q6_K:
		return cpuQ6K
	case TQ2_0:
		return cpuTQ2_0
	case IQ1_S:
		return cpuIQ1S
	case IQ1_M:
		return cpuIQ1M
	case IQ4_XS:
		return cpuIQ4XS
	case BF16:
		return cpuBF16
	case F32, F16, Q8_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S:
		dec, n := Decoder(t, ByteReads), t.Chunks()
		return func(block []byte, out []float32) {
			out = out[:16*n]
			for il := 0; il < n; il++ {
				dec(block, il, (*[16]float32)(out[16*il:]))
			}
		}
	}
	panic(fmt.Sprintf("dequant: invalid Type(%d)", uint8(t)))
}

// cpuHalf widens the fp16 at b[off:] (GGML_FP16_TO_FP32).
func cpuHalf(b []byte, off int) float32 { return Float32FromHalf(le16(b, off)) }

func le16(b []byte, off int) uint16 { return uint16(b[off]) | uint16(b[off+1])<<8 }

// cpuQ4_0 is dequantize_row_q4_0 (L459–477): (nibble - 8) * d.
func cpuQ4_0(b []byte, y []float32) {
	b, y = b[:18:18], y[:32:32]
	d := cpuHalf(b, 0)
	for j := 0; j < 16; j++ {
		y[j] = float32(int(b[2+j]&15)-8) * d
		y[j+16] = float32(int(b[2+j]>>4)-8) * d
	}
}

// cpuQ4_1 is dequantize_row_q4_1 (L479–498): nibble * d + m.
func cpuQ4_1(b []byte, y []float32) {
	b, y = b[:20:20], y[:32:32]
	d, m := cpuHalf(b, 0), cpuHalf(b, 2)
	for j := 0; j < 16; j++ {
		y[j] = float32(float32(b[4+j]&15)*d) + m
		y[j+16] = float32(float32(b[4+j]>>4)*d) + m
	}
}

// q5Fifth returns the 5-bit codes of byte j of a q5_0/q5_1 block: the low and
// high nibble with bits j and j+16 of the little-endian qh word at qhOff.
func q5Fifth(b []byte, qhOff, qsOff, j int) (x0, x1 int) {
	qh := uint32(b[qhOff]) | uint32(b[qhOff+1])<<8 | uint32(b[qhOff+2])<<16 | uint32(b[qhOff+3])<<24
	xh0 := int(qh>>j<<4) & 0x10
	xh1 := int(qh>>(j+12)) & 0x10
	return int(b[qsOff+j]&15) | xh0, int(b[qsOff+j]>>4) | xh1
}

// cpuQ5_0 is dequantize_row_q5_0 (L500–524): (code - 16) * d.
func cpuQ5_0(b []byte, y []float32) {
	b, y = b[:22:22], y[:32:32]
	d := cpuHalf(b, 0)
	for j := 0; j < 16; j++ {
		x0, x1 := q5Fifth(b, 2, 6, j)
		y[j] = float32(x0-16) * d
		y[j+16] = float32(x1-16) * d
	}
}

// cpuQ5_1 is dequantize_row_q5_1 (L526–551): code * d + m.
func cpuQ5_1(b []byte, y []float32) {
	b, y = b[:24:24], y[:32:32]
	d, m := cpuHalf(b, 0), cpuHalf(b, 2)
	for j := 0; j < 16; j++ {
		x0, x1 := q5Fifth(b, 4, 8, j)
		y[j] = float32(float32(x0)*d) + m
		y[j+16] = float32(float32(x1)*d) + m
	}
}

// cpuQ1_0 is dequantize_row_q1_0 (L419–437): bit ? d : -d.
func cpuQ1_0(b []byte, y []float32) {
	b, y = b[:18:18], y[:128:128]
	d := cpuHalf(b, 0)
	negD := -d
	for j := range y {
		if b[2+j/8]>>(j%8)&1 != 0 {
			y[j] = d
		} else {
			y[j] = negD
		}
	}
}

// cpuQ2_0 is dequantize_row_q2_0 (L439–457): (code - 1) * d.
func cpuQ2_0(b []byte, y []float32) {
	b, y = b[:18:18], y[:64:64]
	d := cpuHalf(b, 0)
	for j := range y {
		q := int(b[2+j/4] >> (2 * (j % 4)) & 3)
		y[j] = float32(q-1) * d
	}
}

// cpuMXFP4 is dequantize_row_mxfp4 (L569–587): kvalues_mxfp4 (the doubled E2M1
// values) times GGML_E8M0_TO_FP32_HALF(e) = 2^(e-128) (ggml-impl.h L477–495).
func cpuMXFP4(b []byte, y []float32) {
	b, y = b[:17:17], y[:32:32]
	d := math.Float32frombits(e8m0ToFP32Half[b[0]])
	for j := 0; j < 16; j++ {
		y[j] = float32(kvaluesMXFP4[b[1+j]&15]) * d
		y[j+16] = float32(kvaluesMXFP4[b[1+j]>>4]) * d
	}
}

// cpuIQ4NL is dequantize_row_iq4_nl (L2725–2741): d * kvalues_iq4nl[nibble].
func cpuIQ4NL(b []byte, y []float32) {
	b, y = b[:18:18], y[:32:32]
	d := cpuHalf(b, 0)
	for j := 0; j < 16; j++ {
		y[j] = d * float32(kvaluesIQ4NL[b[2+j]&15])
		y[j+16] = d * float32(kvaluesIQ4NL[b[2+j]>>4])
	}
}

// cpuBF16 is ggml_bf16_to_fp32_row: each 16-bit pattern becomes the upper half
// of a binary32.
func cpuBF16(b []byte, y []float32) {
	b, y = b[:32:32], y[:16:16]
	for i := range y {
		y[i] = Float32FromBF16(le16(b, 2*i))
	}
}

// CPUChunkDecoder returns chunk il (weights 16·il .. 16·il+15) of ggml's CPU
// to_float of a block (CPUDecoder) as a ChunkFunc. It is what the mat-vec
// kernels kernel_mul_mv_<type>_f32 multiply: they compute their scales in
// float32 (pre-scaling the activations instead of the codes), without the
// mat-mat dequantizers' half-precision steps, so their weights are ggml's
// (docs/kernel-facts-types.md §2). For the types whose CPU form is the Metal
// chunk decoder it is that decoder; for the others it decodes the whole block
// and does not allocate.
func CPUChunkDecoder(t Type) ChunkFunc {
	switch t {
	case F32, F16, Q8_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S:
		return Decoder(t, ByteReads)
	}
	dec, n := CPUDecoder(t), t.Layout().BlockWeights
	return func(block []byte, il int, out *[16]float32) {
		var buf [256]float32
		dec(block, buf[:n])
		copy(out[:], buf[16*il:16*il+16])
	}
}
