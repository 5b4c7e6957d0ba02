package dequant

import (
	"reflect"
	"testing"
)

// TestChunkCostConsistency checks structural properties every ChunkCost entry
// must have, for every type and strategy.
func TestChunkCostConsistency(t *testing.T) {
	for _, typ := range Types() {
		l := typ.Layout()
		// The chunk's share of the block, rounded up.
		share := (l.BlockBytes + typ.Chunks() - 1) / typ.Chunks()
		bytesCost, wordsCost := ChunkCost(typ, ByteReads), ChunkCost(typ, WordReads)
		for _, s := range strategies {
			c := ChunkCost(typ, s)
			name := typ.String() + "/" + s.String()
			if got := c.BytesFrom(Device); got < share {
				t.Errorf("%s: %d device bytes per chunk, less than the chunk's share %d of a %d-byte block", name, got, share, l.BlockBytes)
			}
			if c.FP32 < 0 || c.Int < 0 || c.Convert < 0 || c.Temps < 0 {
				t.Errorf("%s: negative count in %+v", name, c)
			}
			for _, ld := range c.Loads {
				switch ld.Width {
				case 1, 2, 4, 8, 16:
				default:
					t.Errorf("%s: load %+v: width not a power of two up to 16", name, ld)
				}
				if ld.Count <= 0 || ld.What == "" || (ld.Space != Device && ld.Space != Constant) {
					t.Errorf("%s: malformed load %+v", name, ld)
				}
				if ld.Space == Constant && !typ.Codebook() {
					t.Errorf("%s: constant-memory load %+v for a type without codebook", name, ld)
				}
				if ld.What == "ksigns" && s == WordReads {
					t.Errorf("%s: WordReads must not load ksigns_iq2xs", name)
				}
			}
			// Every value except f16's (already half) is converted to half once.
			if typ.Quantized() && c.Convert < 16 {
				t.Errorf("%s: Convert %d < 16 (the 16 quant values to float)", name, c.Convert)
			}
			if typ.Quantized() && c.FP32 < 16 {
				t.Errorf("%s: FP32 %d < 16 (at least one scale multiply per weight)", name, c.FP32)
			}
		}
		if !typ.Codebook() {
			if !reflect.DeepEqual(bytesCost, wordsCost) {
				t.Errorf("%s: strategies differ for a non-codebook type: %+v vs %+v", typ, bytesCost, wordsCost)
			}
			continue
		}
		// Codebook types: same device traffic and the same 16 grid bytes, but
		// strictly fewer constant-memory loads and more integer work in WordReads.
		if bytesCost.BytesFrom(Device) != wordsCost.BytesFrom(Device) {
			t.Errorf("%s: device bytes differ between strategies", typ)
		}
		if bytesCost.LoadsFrom(Constant) <= wordsCost.LoadsFrom(Constant) {
			t.Errorf("%s: WordReads has %d constant loads, ByteReads %d: want strictly fewer", typ, wordsCost.LoadsFrom(Constant), bytesCost.LoadsFrom(Constant))
		}
		if grid(bytesCost) != 16 || grid(wordsCost) != 16 {
			t.Errorf("%s: grid bytes per chunk %d (bytes) / %d (words), want 16", typ, grid(bytesCost), grid(wordsCost))
		}
		if wordsCost.Int <= bytesCost.Int || wordsCost.FP32 != bytesCost.FP32 || wordsCost.Convert != bytesCost.Convert {
			t.Errorf("%s: WordReads should only add integer work: %+v vs %+v", typ, wordsCost, bytesCost)
		}
		// 16 weights, each with a sign test (3 Int) and 2 FP32 (R5).
		if bytesCost.Int < 48 || bytesCost.FP32 < 32 {
			t.Errorf("%s: %+v below the per-weight minimum of 48 Int, 32 FP32", typ, bytesCost)
		}
	}
}

func grid(c Cost) int {
	n := 0
	for _, l := range c.Loads {
		if l.What == "grid" {
			n += l.Bytes()
		}
	}
	return n
}

// TestChunkCostTable pins the derived numbers (see the table above ChunkCost),
// so that a change to them is a deliberate edit of both.
func TestChunkCostTable(t *testing.T) {
	tests := []struct {
		typ                        Type
		s                          Strategy
		dev, devLoads, cnst, cLoad int
		fp32, integer, conv, temps int
	}{
		{F32, ByteReads, 64, 4, 0, 0, 16, 0, 0, 0},
		{F16, WordReads, 32, 2, 0, 0, 0, 0, 0, 0},
		{Q4_0, ByteReads, 18, 9, 0, 0, 19, 20, 16, 8},
		{Q8_0, ByteReads, 18, 5, 0, 0, 16, 0, 16, 9},
		{IQ2_XXS, ByteReads, 10, 5, 18, 18, 35, 63, 17, 11},
		{IQ2_XXS, WordReads, 10, 5, 16, 4, 35, 87, 17, 7},
		{IQ2_XS, ByteReads, 7, 4, 18, 18, 35, 56, 17, 11},
		{IQ2_XS, WordReads, 7, 4, 16, 4, 35, 80, 17, 7},
		{IQ2_S, ByteReads, 8, 7, 16, 16, 35, 59, 17, 11},
		{IQ2_S, WordReads, 8, 7, 16, 4, 35, 75, 17, 7},
		{IQ3_XXS, ByteReads, 10, 7, 18, 18, 35, 57, 17, 11},
		{IQ3_XXS, WordReads, 10, 7, 16, 4, 35, 81, 17, 7},
		{IQ3_S, ByteReads, 10, 9, 16, 16, 33, 69, 17, 11},
		{IQ3_S, WordReads, 10, 9, 16, 4, 33, 85, 17, 7},
	}
	for _, tc := range tests {
		c := ChunkCost(tc.typ, tc.s)
		got := [8]int{c.BytesFrom(Device), c.LoadsFrom(Device), c.BytesFrom(Constant), c.LoadsFrom(Constant), c.FP32, c.Int, c.Convert, c.Temps}
		want := [8]int{tc.dev, tc.devLoads, tc.cnst, tc.cLoad, tc.fp32, tc.integer, tc.conv, tc.temps}
		if got != want {
			t.Errorf("%s/%s: [devB devN constB constN FP32 Int Conv Temps] = %v, want %v", tc.typ, tc.s, got, want)
		}
	}
}

func TestChunkCostFreshSlices(t *testing.T) {
	a := ChunkCost(IQ2_XXS, ByteReads)
	a.Loads[0].Count = 99
	if b := ChunkCost(IQ2_XXS, ByteReads); b.Loads[0].Count == 99 {
		t.Fatal("ChunkCost returns shared Loads")
	}
}

func TestSpaceString(t *testing.T) {
	for sp, want := range map[Space]string{Device: "device", Constant: "constant", 7: "Space(7)"} {
		if got := sp.String(); got != want {
			t.Errorf("Space(%d).String() = %q, want %q", uint8(sp), got, want)
		}
	}
}
