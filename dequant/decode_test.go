package dequant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

var strategies = []Strategy{ByteReads, WordReads}

// decodeBlock decodes all chunks of one block into a slice of BlockWeights floats.
func decodeBlock(f ChunkFunc, t Type, block []byte) []float32 {
	out := make([]float32, 0, t.Layout().BlockWeights)
	var c [16]float32
	for il := 0; il < t.Chunks(); il++ {
		f(block, il, &c)
		out = append(out, c[:]...)
	}
	return out
}

// TestCPUDecoderGolden decodes every committed golden block of both sets with
// CPUDecoder and compares bit for bit with ggml's CPU output (±0, subnormals,
// inf and NaN payloads of the edge sets included).
func TestCPUDecoderGolden(t *testing.T) {
	eachBlockEntry(t, func(e testEntry, typ Type, blocks []byte, want []float32) {
		l := typ.Layout()
		f := CPUDecoder(typ)
		got := make([]float32, l.BlockWeights)
		bad := 0
		for b := 0; b < len(want)/l.BlockWeights; b++ {
			f(blocks[b*l.BlockBytes:(b+1)*l.BlockBytes], got)
			for i, g := range got {
				w := want[b*l.BlockWeights+i]
				if math.Float32bits(g) != math.Float32bits(w) {
					if bad++; bad <= 5 {
						t.Errorf("%s: element %d: got %g (%#08x), ggml %g (%#08x)", e.Name, b*l.BlockWeights+i, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d values differ", e.Name, bad, len(want))
		}
	})
}

// TestDecoderGolden decodes every committed golden block of both sets with
// both strategies of the Metal-form decoders and requires every value to equal
// ggml's CPU output bit for bit or to differ as documented (CompareMetal: a +0
// for the CPU's -0 in the offset-adding types, or the value of an inexact half
// scale step as an independent float64 model computes it). It also requires
// each documented kind to occur where golden-types README §3.1 counts it, so
// that the trimmed copy keeps exercising them.
func TestDecoderGolden(t *testing.T) {
	kinds := map[string]map[MetalDifference]int{}
	eachBlockEntry(t, func(e testEntry, typ Type, blocks []byte, want []float32) {
		l := typ.Layout()
		k := map[MetalDifference]int{}
		for _, s := range strategies {
			f := Decoder(typ, s)
			for b := 0; b < len(want)/l.BlockWeights; b++ {
				block := blocks[b*l.BlockBytes : (b+1)*l.BlockBytes]
				got := decodeBlock(f, typ, block)
				for i, g := range got {
					w := want[b*l.BlockWeights+i]
					d := CompareMetal(typ, block, i/16, i%16, g, w)
					if k[d]++; d == Unexplained && k[d] <= 5 {
						t.Errorf("%s/%s: block %d (source %d) weight %d: Metal form %g (%#08x), ggml %g (%#08x)",
							e.Name, s, b, e.SourceBlocks[b*l.BlockWeights/e.ElementsPerBlock], i, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
		kinds[e.Name] = k
	})
	for _, c := range []struct {
		entry string
		kind  MetalDifference
	}{
		{"q4_0_edge", ZeroSign}, {"q4_0_edge", ScaleStep}, {"q4_1_quant", ScaleStep}, {"q4_1_edge", ScaleStep},
		{"q5_0_quant", ZeroSign}, {"q5_0_edge", ScaleStep}, {"mxfp4_edge", ScaleStep}, {"q3_K_quant", ZeroSign},
		{"q4_K_quant", ScaleStep}, {"q4_K_edge", ScaleStep}, {"q6_K_quant", ZeroSign}, {"iq1_s_edge", ZeroSign},
		{"iq1_m_edge", ZeroSign},
	} {
		if kinds[c.entry][c.kind] == 0 {
			t.Errorf("%s: no value of kind %q left in the trimmed copy", c.entry, c.kind)
		}
	}
}

// q4Metal64 is an independent model of Metal's dequantize_q4_0 for one weight,
// in float64 with explicit half roundings: nibble n of chunk il (so the masked
// integer is n for il = 0 and 16n for il = 1), d the block scale.
//
//	d1 = il ? half(d/16) : d;  md = half(-8d);  result = float32(d1 * (n or 16n) + md)
//
// The float64 sum is exact (both terms are multiples of 2^-28 below 2^20), so
// the final float32 conversion is the single rounding float32 arithmetic does.
func q4Metal64(d float64, n, il int) float32 {
	d1, x := d, float64(n)
	if il == 1 {
		d1, x = roundHalf64(d/16), float64(16*n)
	}
	return float32(d1*x + roundHalf64(-8*d))
}

// q4ScaleExact reports whether chunk il of a q4_0 block with scale d uses exact
// half scales (README "Expected agreement"): -8d does not overflow and, for
// il = 1, d/16 is representable in half.
func q4ScaleExact(d float64, il int) bool {
	if math.IsInf(roundHalf64(-8*d), 0) {
		return false
	}
	return il == 0 || roundHalf64(d/16) == d/16
}

// TestQ4_0Golden compares Metal-form q4_0 with ggml's CPU output. Every value
// must equal the independent model q4Metal64. Where the half scales are exact
// the two must agree bit for bit except for the documented sign of zero (CPU
// (q-8)*d gives -0.0 for q = 8 with d < 0, or q > 8 with d = -0, or q < 8 with
// d = +0; Metal's d*q + (-8d) gives +0.0). Where they are not exact, Metal's
// values differ and only the model is the judge. No block is skipped.
func TestQ4_0Golden(t *testing.T) {
	dir := filepath.Join(goldenDir, "dequant")
	for _, e := range readTestManifest(t, goldenDir) {
		if e.Type != "q4_0" {
			continue
		}
		blocks := readTestFile(t, dir, e.Blocks)
		want := float32s(readTestFile(t, dir, e.F32))
		t.Run(e.Name, func(t *testing.T) {
			var zeroSign, inexactDiff, inexactBlocks int
			for b := 0; b < e.NBlocks; b++ {
				block := blocks[18*b : 18*b+18]
				d := float64(Float32FromHalf(binary.LittleEndian.Uint16(block)))
				if !q4ScaleExact(d, 1) {
					inexactBlocks++
				}
				for _, s := range strategies {
					got := decodeBlock(Decoder(Q4_0, s), Q4_0, block)
					for i, g := range got {
						il, j := i/16, i%16
						n := int(block[2+j] & 15)
						if il == 1 {
							n = int(block[2+j] >> 4)
						}
						w := want[32*b+i]
						gb, wb := math.Float32bits(g), math.Float32bits(w)
						where := fmt.Sprintf("block %d (d=%#04x=%g) weight %d (q=%d) %s", b, binary.LittleEndian.Uint16(block), d, i, n, s)
						if mb := math.Float32bits(q4Metal64(d, n, il)); gb != mb {
							t.Errorf("%s: got %g (%#08x), Metal model %g (%#08x)", where, g, gb, math.Float32frombits(mb), mb)
						}
						switch {
						case !q4ScaleExact(d, il):
							if gb != wb && s == ByteReads {
								inexactDiff++
							}
						case w == 0:
							// CPU zero: Metal must give +0.0 whatever the CPU sign.
							if gb != 0 {
								t.Errorf("%s: got %#08x, want +0.0 (CPU %#08x)", where, gb, wb)
							}
							if wb != 0 && s == ByteReads {
								zeroSign++
							}
						case gb != wb:
							t.Errorf("%s: got %g (%#08x), CPU %g (%#08x) with exact scales", where, g, gb, w, wb)
						}
					}
				}
			}
			t.Logf("%d blocks: %d values -0.0 on CPU / +0.0 on Metal; %d blocks with inexact half scales, %d values differ there",
				e.NBlocks, zeroSign, inexactBlocks, inexactDiff)
		})
	}
}

// TestQ4_0MetalModelAllScales runs every finite half scale d with all 16 nibble
// values in both chunks against the independent model.
func TestQ4_0MetalModelAllScales(t *testing.T) {
	var block [18]byte
	for j := 0; j < 16; j++ {
		block[2+j] = byte(j | (15-j)<<4) // low nibble j, high nibble 15-j
	}
	f := Decoder(Q4_0, ByteReads)
	var out [16]float32
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 {
			continue // inf/NaN scales: no model; FuzzChunk covers them for panics
		}
		binary.LittleEndian.PutUint16(block[:], uint16(h))
		d := float64(Float32FromHalf(uint16(h)))
		for il := 0; il < 2; il++ {
			f(block[:], il, &out)
			for i, g := range out {
				// out[2k] is the low byte of word k = byte 2k, out[2k+1] byte 2k+1.
				n := int(block[2+i] & 15)
				if il == 1 {
					n = int(block[2+i] >> 4)
				}
				if want := q4Metal64(d, n, il); math.Float32bits(g) != math.Float32bits(want) {
					t.Fatalf("d=%#04x il=%d i=%d (q=%d): got %g (%#08x), model %g (%#08x)",
						h, il, i, n, g, math.Float32bits(g), want, math.Float32bits(want))
				}
			}
		}
	}
}

// TestStrategiesAgree decodes random blocks (including random, non-finite
// scales) of every type with both strategies and requires identical bits.
func TestStrategiesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range Types() {
		t.Run(typ.String(), func(t *testing.T) {
			block := make([]byte, typ.Layout().BlockBytes)
			for n := 0; n < 2000; n++ {
				for i := range block {
					block[i] = byte(r.Uint32())
				}
				a := decodeBlock(Decoder(typ, ByteReads), typ, block)
				b := decodeBlock(Decoder(typ, WordReads), typ, block)
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						t.Fatalf("block %x weight %d: bytes %#08x, words %#08x", block, i, math.Float32bits(a[i]), math.Float32bits(b[i]))
					}
				}
			}
		})
	}
}

// TestDecoderChunkOrder checks the chunk → weight mapping on blocks built so that
// each weight's value identifies it.
func TestDecoderChunkOrder(t *testing.T) {
	tests := []struct {
		name  string
		typ   Type
		block func() []byte
		want  func(i int) float32
	}{
		{"f32", F32, func() []byte {
			b := make([]byte, 64)
			for i := 0; i < 16; i++ {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)+0.5))
			}
			return b
		}, func(i int) float32 { return float32(i) + 0.5 }},
		{"f16", F16, func() []byte {
			b := make([]byte, 32)
			for i := 0; i < 16; i++ {
				binary.LittleEndian.PutUint16(b[2*i:], HalfFromFloat32(float32(i)-4))
			}
			return b
		}, func(i int) float32 { return float32(i) - 4 }},
		{"q8_0", Q8_0, func() []byte {
			b := make([]byte, 34)
			binary.LittleEndian.PutUint16(b, 0x3c00) // d = 1
			for i := 0; i < 32; i++ {
				b[2+i] = byte(i - 16)
			}
			return b
		}, func(i int) float32 { return float32(i - 16) }},
		{"q4_0", Q4_0, func() []byte {
			b := make([]byte, 18)
			binary.LittleEndian.PutUint16(b, 0xbc00) // d = -1
			for j := 0; j < 16; j++ {
				b[2+j] = byte(j | (15-j)<<4) // weight j = j, weight 16+j = 15-j
			}
			return b
		}, func(i int) float32 {
			q := i
			if i >= 16 {
				q = 31 - i
			}
			return float32(8 - q) // (q-8)*(-1); q = 8 gives +0 on Metal
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			block := tc.block()
			for _, s := range strategies {
				got := decodeBlock(Decoder(tc.typ, s), tc.typ, block)
				for i, g := range got {
					if w := tc.want(i); math.Float32bits(g) != math.Float32bits(w) {
						t.Errorf("%s weight %d: got %g, want %g", s, i, g, w)
					}
				}
			}
		})
	}
}

// TestDecoderIQSignsAndScale builds one iq2_xxs sub-block by hand: grid entry 0
// (all magnitudes 8), sign index 1 (ksigns 0x81: weights 0 and 7 negative),
// scale nibble 3: dl = d * 3.5 * 0.25.
func TestDecoderIQSignsAndScale(t *testing.T) {
	block := make([]byte, 66)
	binary.LittleEndian.PutUint16(block, 0x3c00)            // d = 1
	binary.LittleEndian.PutUint32(block[2+8*2:], 0)         // sub-block 2: grid indices 0,0,0,0
	binary.LittleEndian.PutUint32(block[2+8*2+4:], 3<<28|1) // sign index 1 for group 0, scale 3
	for _, s := range strategies {
		var out [16]float32
		Decoder(IQ2_XXS, s)(block, 4, &out) // il 4 = sub-block 2, first half
		for i, g := range out {
			want := float32(8 * 3.5 * 0.25)
			if i == 0 || i == 7 {
				want = -want
			}
			if g != want {
				t.Errorf("%s weight %d: got %g, want %g", s, i, g, want)
			}
		}
	}
}

func TestDecoderPanics(t *testing.T) {
	tests := []struct {
		name string
		call func()
		want string
	}{
		{"bad type", func() { Decoder(Type(200), ByteReads) }, "invalid Type"},
		{"bad strategy", func() { Decoder(Q4_0, Strategy(9)) }, "invalid Strategy"},
		{"q4_0 il 2", func() { Decoder(Q4_0, ByteReads)(make([]byte, 18), 2, new([16]float32)) }, "il = 2 out of range [0, 2)"},
		{"iq3_s il 16", func() { Decoder(IQ3_S, WordReads)(make([]byte, 110), 16, new([16]float32)) }, "il = 16 out of range [0, 16)"},
		{"f16 il -1", func() { Decoder(F16, WordReads)(make([]byte, 32), -1, new([16]float32)) }, "il = -1 out of range [0, 1)"},
		{"short block", func() { Decoder(IQ2_XS, ByteReads)(make([]byte, 73), 0, new([16]float32)) }, "out of range"},
		{"bad cost type", func() { ChunkCost(numTypes, ByteReads) }, "invalid Type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.call()
		})
	}
}

func TestCPUDecoder(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "invalid Type") {
			t.Errorf("CPUDecoder(numTypes): panic %v, want invalid Type", r)
		}
	}()
	for _, typ := range Types() {
		f := CPUDecoder(typ)
		block := make([]byte, typ.Layout().BlockBytes)
		out := make([]float32, typ.Layout().BlockWeights)
		if n := testing.AllocsPerRun(20, func() { f(block, out) }); n != 0 {
			t.Errorf("%s: CPUDecoder allocates %v times per block", typ, n)
		}
	}
	CPUDecoder(numTypes)
}

func TestDecoderDoesNotAllocate(t *testing.T) {
	for _, typ := range Types() {
		for _, s := range strategies {
			f := Decoder(typ, s)
			block := make([]byte, typ.Layout().BlockBytes)
			var out [16]float32
			n := testing.AllocsPerRun(100, func() {
				for il := 0; il < typ.Chunks(); il++ {
					f(block, il, &out)
				}
			})
			if n != 0 {
				t.Errorf("%s/%s: %v allocations per block", typ, s, n)
			}
		}
	}
}
