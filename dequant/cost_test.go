package dequant

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
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
				if ld.Space == Constant && !typ.Codebook() && !constTableTypes[typ] {
					t.Errorf("%s: constant-memory load %+v for a type without a constant table", name, ld)
				}
				if ld.What == "ksigns" && s == WordReads {
					t.Errorf("%s: WordReads must not load ksigns_iq2xs", name)
				}
			}
			// Integer codes are converted to float once each; float-table types
			// (kvalues_*_f) and q1_0 (a select between ±d) convert none.
			if typ.Quantized() && !constTableTypes[typ] && typ != Q1_0 && c.Convert < 16 {
				t.Errorf("%s: Convert %d < 16 (the 16 quant values to float)", name, c.Convert)
			}
			if typ.Quantized() && typ != Q1_0 && c.FP32 < 16 {
				t.Errorf("%s: FP32 %d < 16 (at least one scale multiply per weight)", name, c.FP32)
			}
		}
		if !typ.Codebook() {
			if !reflect.DeepEqual(bytesCost, wordsCost) {
				t.Errorf("%s: strategies differ for a non-codebook type: %+v vs %+v", typ, bytesCost, wordsCost)
			}
			continue
		}
		// Codebook types: same device traffic, the same 16 grid bytes in the
		// same number of grid loads (the byte runs of R10 against the words),
		// no more constant-memory loads and more integer work in WordReads.
		if bytesCost.BytesFrom(Device) != wordsCost.BytesFrom(Device) {
			t.Errorf("%s: device bytes differ between strategies", typ)
		}
		if gb, gw := gridLoads(bytesCost), gridLoads(wordsCost); gb != gw {
			t.Errorf("%s: %d grid loads with ByteReads, %d with WordReads: want equal (R10)", typ, gb, gw)
		}
		if bytesCost.LoadsFrom(Constant) < wordsCost.LoadsFrom(Constant) {
			t.Errorf("%s: WordReads has %d constant loads, ByteReads %d: want no more", typ, wordsCost.LoadsFrom(Constant), bytesCost.LoadsFrom(Constant))
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

// constTableTypes are the non-codebook types that read a constant-memory table:
// the iq1 grid or a float level table.
var constTableTypes = map[Type]bool{IQ1_S: true, IQ1_M: true, IQ4_NL: true, IQ4_XS: true, MXFP4: true}

// gridLoads is the number of grid load instructions of a cost.
func gridLoads(c Cost) int {
	n := 0
	for _, l := range c.Loads {
		if l.What == "grid" {
			n += l.Count
		}
	}
	return n
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

// TestChunkCostTable pins the hand-derived ALU and register counts (derived in
// docs/kernel-facts-types.md §1.3), so that a change to them is a deliberate
// edit of both. The loads are not restated here: TestChunkCostLoadsCounted
// compares them with what the decoders read.
func TestChunkCostTable(t *testing.T) {
	tests := []struct {
		typ                        Type
		s                          Strategy
		fp32, integer, conv, temps int
	}{
		{F32, ByteReads, 16, 0, 0, 0},
		{F16, WordReads, 0, 0, 0, 0},
		{BF16, ByteReads, 0, 0, 0, 0},
		{Q4_0, ByteReads, 19, 20, 16, 8},
		{Q8_0, ByteReads, 16, 0, 16, 9},
		{IQ2_XXS, ByteReads, 35, 63, 17, 11},
		{IQ2_XXS, WordReads, 35, 87, 17, 7},
		{IQ2_XS, ByteReads, 35, 56, 17, 11},
		{IQ2_XS, WordReads, 35, 80, 17, 7},
		{IQ2_S, ByteReads, 35, 59, 17, 11},
		{IQ2_S, WordReads, 35, 75, 17, 7},
		{IQ3_XXS, ByteReads, 35, 57, 17, 11},
		{IQ3_XXS, WordReads, 35, 81, 17, 7},
		{IQ3_S, ByteReads, 33, 69, 17, 11},
		{IQ3_S, WordReads, 33, 85, 17, 7},
		{Q4_1, ByteReads, 18, 20, 16, 8},
		{Q5_0, ByteReads, 17, 125, 16, 8},
		{Q5_1, ByteReads, 16, 125, 16, 8},
		{Q1_0, ByteReads, 1, 48, 0, 2},
		{Q2_0, ByteReads, 32, 16, 16, 3},
		{MXFP4, ByteReads, 16, 21, 0, 10},
		{IQ4_NL, ByteReads, 16, 33, 0, 5},
		{Q2_K, ByteReads, 19, 28, 18, 12},
		{Q3_K, ByteReads, 23, 95, 17, 20},
		{Q4_K, ByteReads, 19, 36, 18, 13},
		{Q5_K, ByteReads, 35, 87, 18, 22},
		{Q6_K, ByteReads, 21, 68, 17, 17},
		{TQ2_0, ByteReads, 16, 37, 16, 9},
		{IQ1_S, ByteReads, 18, 32, 17, 7},
		{IQ1_M, WordReads, 19, 46, 17, 7},
		{IQ4_XS, ByteReads, 17, 35, 1, 6},
	}
	seen := map[Type]bool{}
	for _, tc := range tests {
		seen[tc.typ] = true
		c := ChunkCost(tc.typ, tc.s)
		got := [4]int{c.FP32, c.Int, c.Convert, c.Temps}
		want := [4]int{tc.fp32, tc.integer, tc.conv, tc.temps}
		if got != want {
			t.Errorf("%s/%s: [FP32 Int Conv Temps] = %v, want %v", tc.typ, tc.s, got, want)
		}
	}
	for _, typ := range Types() {
		if !seen[typ] {
			t.Errorf("%s: no row in the pinned table", typ)
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

var updateDoc = flag.Bool("update-doc", false, "rewrite the cost table in docs/kernel-facts-types.md from ChunkCost")

const (
	costDoc      = "../docs/kernel-facts-types.md"
	costDocBegin = "<!-- cost table: rendered from dequant.ChunkCost by TestCostTableDoc (go test ./dequant -run TestCostTableDoc -update-doc) -->\n"
	costDocEnd   = "<!-- end of the cost table -->\n"
)

// renderCostTable renders ChunkCost for every decoded type as the Markdown
// table of docs/kernel-facts-types.md §1.3.
func renderCostTable() string {
	var b strings.Builder
	b.WriteString("| type | strategy | device loads | constant loads | FP32 | Int | Convert | Temps |\n")
	b.WriteString("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n")
	loads := func(c Cost, sp Space) string {
		var parts []string
		for _, l := range c.Loads {
			if l.Space == sp {
				parts = append(parts, fmt.Sprintf("%d×%dB %s", l.Count, l.Width, l.What))
			}
		}
		if parts == nil {
			return "—"
		}
		return strings.Join(parts, ", ")
	}
	for _, typ := range Types() {
		ss := []Strategy{ByteReads}
		if typ.Codebook() {
			ss = strategies
		}
		for _, s := range ss {
			name := "both"
			if typ.Codebook() {
				name = s.String()
			}
			c := ChunkCost(typ, s)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d |\n", typ, name, loads(c, Device), loads(c, Constant), c.FP32, c.Int, c.Convert, c.Temps)
		}
	}
	return b.String()
}

// TestCostTableDoc requires the cost table of docs/kernel-facts-types.md to be
// the one rendered from ChunkCost (-update-doc rewrites it).
func TestCostTableDoc(t *testing.T) {
	checkDocSection(t, costDocBegin, costDocEnd, renderCostTable(), "the cost table differs from ChunkCost")
}

// checkDocSection requires the text of costDoc between the markers begin
// and end to be rendered, or rewrites it with -update-doc; differ says what
// a difference means.
func checkDocSection(t *testing.T, begin, end, rendered, differ string) {
	t.Helper()
	raw, err := os.ReadFile(costDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no markers %q ... %q", costDoc, begin, end)
	}
	want := doc[:i+len(begin)] + rendered + doc[j:]
	if *updateDoc {
		if err := os.WriteFile(costDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s: %s (go test ./dequant -run %s -update-doc)", costDoc, differ, t.Name())
	}
}
