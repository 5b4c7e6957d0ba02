package dequant

import (
	"math"
	"testing"
)

// FuzzChunk decodes arbitrary block bytes as an arbitrary type and chunk: it
// must not panic, the two strategies must agree bit for bit, and the CPU form
// must decode the block without panicking. The seed corpus is in
// testdata/fuzz/FuzzChunk.
func FuzzChunk(f *testing.F) {
	f.Add(uint8(IQ2_XXS), uint8(3), []byte{0x00, 0x3c, 0xff, 0x01, 0x80})
	f.Fuzz(func(t *testing.T, typ, il uint8, data []byte) {
		tp := Type(typ % uint8(numTypes))
		block := make([]byte, tp.Layout().BlockBytes)
		copy(block, data) // short inputs are zero-padded, long ones cut
		c := int(il) % tp.Chunks()
		var a, b [16]float32
		CPUDecoder(tp)(block, make([]float32, tp.Layout().BlockWeights))
		Decoder(tp, ByteReads)(block, c, &a)
		Decoder(tp, WordReads)(block, c, &b)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s il=%d block %x weight %d: bytes %#08x, words %#08x", tp, c, block, i, math.Float32bits(a[i]), math.Float32bits(b[i]))
			}
		}
	})
}
