package dequant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkDecoder measures one 16-value chunk decode per iteration (cycling
// through the chunks of 64 random blocks), per type and strategy.
func BenchmarkDecoder(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range Types() {
		l := typ.Layout()
		blocks := make([]byte, 64*l.BlockBytes)
		for i := range blocks {
			blocks[i] = byte(r.Uint32())
		}
		switch typ {
		case F32: // weights in (-1, 1)
			for i := 0; i < len(blocks); i += 4 {
				binary.LittleEndian.PutUint32(blocks[i:], math.Float32bits(2*r.Float32()-1))
			}
		case F16:
			for i := 0; i < len(blocks); i += 2 {
				binary.LittleEndian.PutUint16(blocks[i:], HalfFromFloat32(2*r.Float32()-1))
			}
		default: // random payload, finite normal scale d = 1
			for i := 0; i < 64; i++ {
				binary.LittleEndian.PutUint16(blocks[i*l.BlockBytes:], 0x3c00)
			}
		}
		for _, s := range strategies {
			if s == WordReads && !typ.Codebook() {
				continue
			}
			f := Decoder(typ, s)
			b.Run(typ.String()+"/"+s.String(), func(b *testing.B) {
				var out [16]float32
				n := 64 * typ.Chunks()
				i := 0
				for b.Loop() {
					blk, il := i/typ.Chunks(), i%typ.Chunks()
					f(blocks[blk*l.BlockBytes:(blk+1)*l.BlockBytes], il, &out)
					if i++; i == n {
						i = 0
					}
				}
			})
		}
	}
}
