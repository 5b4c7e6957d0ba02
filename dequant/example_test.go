package dequant_test

import (
	"encoding/binary"
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// Decode the second 16-weight chunk of a q4_0 block, then round the values to
// half as the Metal kernel does when it stages them in threadgroup memory.
func ExampleDecoder() {
	block := make([]byte, dequant.Q4_0.Layout().BlockBytes)
	binary.LittleEndian.PutUint16(block, dequant.HalfFromFloat32(0.1)) // scale d
	for j := 0; j < 16; j++ {
		block[2+j] = byte(j)<<4 | 0x8 // high nibble j (weights 16..31), low nibble 8
	}
	decode := dequant.Decoder(dequant.Q4_0, dequant.ByteReads)
	var out [16]float32
	decode(block, 1, &out) // il = 1: weights 16..31
	for i := 0; i < 16; i += 5 {
		fmt.Printf("w[%d] = %.7g, as half %.7g\n", 16+i, out[i], dequant.RoundHalf(out[i]))
	}
	// Output:
	// w[16] = -0.7998047, as half -0.7998047
	// w[21] = -0.2999268, as half -0.2998047
	// w[26] = 0.1999512, as half 0.1999512
	// w[31] = 0.6998291, as half 0.699707
}

// The codebook strategies produce identical values; they differ in cost.
func ExampleChunkCost() {
	for _, s := range []dequant.Strategy{dequant.ByteReads, dequant.WordReads} {
		c := dequant.ChunkCost(dequant.IQ2_XXS, s)
		fmt.Printf("%s: %d constant loads (%d B), %d device B, FP32 %d, Int %d\n",
			s, c.LoadsFrom(dequant.Constant), c.BytesFrom(dequant.Constant), c.BytesFrom(dequant.Device), c.FP32, c.Int)
	}
	// Output:
	// bytes: 6 constant loads (18 B), 10 device B, FP32 35, Int 63
	// words: 4 constant loads (16 B), 10 device B, FP32 35, Int 87
}

func ExampleHalfFromFloat32() {
	for _, f := range []float32{1, 65504, 65520, 1.0 / 3} {
		h := dequant.HalfFromFloat32(f)
		fmt.Printf("%g -> %#04x -> %g\n", f, h, dequant.Float32FromHalf(h))
	}
	// Output:
	// 1 -> 0x3c00 -> 1
	// 65504 -> 0x7bff -> 65504
	// 65520 -> 0x7c00 -> +Inf
	// 0.33333334 -> 0x3555 -> 0.33325195
}
