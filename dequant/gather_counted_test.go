//go:build countedcopy

package dequant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/metalsim/metalsim/fileio"
)

// TestGatherTableCurrent recomputes gather_gen.go from the decoders: for every
// type with constant-table loads, both strategies and both lane patterns, it
// runs the load-counting copy of the decoder for each of a simdgroup's 32
// lanes on ggml's quantizer output (the *_quant blocks of the two shared
// golden sets: 16 rows, 14 of them ~N(0,1) with outliers and two edge-case
// rows, quantized with a synthetic importance matrix for the iq types) and
// counts, per load instruction (the k-th table load of every lane), the
// distinct 32-byte sectors and the busiest bank's distinct words. The table
// must equal the recomputation to its two printed decimals; -update-gather
// rewrites it. The shared sets are not in the repository (CI has them beside
// it); the test is skipped only when they are absent.
const gatherFile = "gather_gen.go"

// sharedGoldenSets are the full golden sets beside the repository.
var sharedGoldenSets = []string{"../../shared/golden", "../../shared/golden-types"}

// constTable is a constant table the decoders read, by its address range.
type constTable struct {
	id    string // the shader's table (byte and word copies of one table share it)
	what  string // Load.What
	base  uintptr
	bytes uintptr
}

func tableOf[T any](id, what string, p *T) constTable {
	return constTable{id, what, uintptr(unsafe.Pointer(p)), unsafe.Sizeof(*p)}
}

var constTables = []constTable{
	tableOf("ksigns_iq2xs", "ksigns", &ksignsIQ2XS),
	tableOf("iq2xxs_grid", "grid", &iq2xxsGridBytes), tableOf("iq2xxs_grid", "grid", &iq2xxsGridWords),
	tableOf("iq2xs_grid", "grid", &iq2xsGridBytes), tableOf("iq2xs_grid", "grid", &iq2xsGridWords),
	tableOf("iq2s_grid", "grid", &iq2sGridBytes), tableOf("iq2s_grid", "grid", &iq2sGridWords),
	tableOf("iq3xxs_grid", "grid", &iq3xxsGridBytes), tableOf("iq3xxs_grid", "grid", &iq3xxsGridWords),
	tableOf("iq3s_grid", "grid", &iq3sGridBytes), tableOf("iq3s_grid", "grid", &iq3sGridWords),
	tableOf("iq1s_grid_gpu", "grid", &iq1sGridGPU),
	tableOf("kvalues_iq4nl_f", "kvalues", &kvaluesIQ4NLF),
	tableOf("kvalues_mxfp4_f", "kvalues", &kvaluesMXFP4F),
}

// tableAt returns the table holding address a and a's byte offset in it, and
// false if a is in no known table.
func tableAt(a uintptr) (constTable, int, bool) {
	for _, c := range constTables {
		if a >= c.base && a < c.base+c.bytes {
			return c, int(a - c.base), true
		}
	}
	return constTable{}, 0, false
}

// constAt is tableAt for a load that must be in a known table.
func constAt(t *testing.T, a uintptr) (constTable, int) {
	c, off, ok := tableAt(a)
	if !ok {
		t.Fatalf("constant load at %#x is in no known table", a)
	}
	return c, off
}

// quantRows reads a type's quantizer blocks from the shared golden sets:
// the blocks and the number of rows they form.
func quantRows(t *testing.T, typ Type) (blocks []byte, rows int, ok bool) {
	for _, set := range sharedGoldenSets {
		raw, err := os.ReadFile(filepath.Join(set, "dequant", "manifest.json"))
		if err != nil {
			continue
		}
		var m struct {
			Entries []struct {
				testEntry
				Quantizer struct {
					NRows int `json:"nrows"`
				} `json:"quantizer"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, e := range m.Entries {
			if e.Name == typ.String()+"_quant" {
				return readTestFile(t, filepath.Join(set, "dequant"), e.Blocks), e.Quantizer.NRows, true
			}
		}
	}
	return nil, 0, false
}

// laneChunk is the block and chunk one lane decodes for one load.
type laneChunk struct{ block, il int }

// patternLoads returns, for each simdgroup load group of pattern p over
// rows x blocksPerRow blocks of typ, the 32 lanes' chunks.
func patternLoads(typ Type, p Pattern, rows, blocksPerRow int) [][lanesPerSG]laneChunk {
	l := typ.Layout()
	subs := blocksPerRow * l.BlockWeights / 32 // 32-weight sub-blocks per row
	at := func(row, sub, h int) laneChunk {
		return laneChunk{row*blocksPerRow + sub*32/l.BlockWeights, sub*32%l.BlockWeights/16 + h}
	}
	var out [][lanesPerSG]laneChunk
	switch p {
	case TilePattern:
		for r0 := 0; r0+16 <= rows; r0 += 16 {
			for sub := 0; sub < subs; sub++ {
				var g [lanesPerSG]laneChunk
				for lane := range g {
					g[lane] = at(r0+lane/2, sub, lane%2)
				}
				out = append(out, g)
			}
		}
	case RowPattern:
		// rows of fewer than 32 sub-blocks (the 32-weight types' test rows)
		// continue into the next row, which follows in memory
		for s0 := 0; s0+lanesPerSG <= rows*subs; s0 += lanesPerSG {
			for h := 0; h < 2; h++ {
				var g [lanesPerSG]laneChunk
				for lane := range g {
					g[lane] = at((s0+lane)/subs, (s0+lane)%subs, h)
				}
				out = append(out, g)
			}
		}
	}
	return out
}

const lanesPerSG = 32

// computeGather recomputes every row of the table.
func computeGather(t *testing.T) ([]gatherRow, bool) {
	var out []gatherRow
	for _, typ := range Types() {
		if ChunkCost(typ, ByteReads).LoadsFrom(Constant) == 0 {
			continue
		}
		blocks, rows, ok := quantRows(t, typ)
		if !ok {
			return nil, false
		}
		l := typ.Layout()
		blocksPerRow := len(blocks) / l.BlockBytes / rows
		for _, s := range strategies {
			if s != ByteReads && !typ.Codebook() {
				continue
			}
			for p := range numPatterns {
				type acc struct{ sectors, banks, n float64 }
				sums := map[string]*acc{}
				var whats []string
				for _, g := range patternLoads(typ, p, rows, blocksPerRow) {
					var seqs [lanesPerSG][]uintptr
					for lane, c := range g {
						b := blocks[c.block*l.BlockBytes : (c.block+1)*l.BlockBytes]
						resetLoads(b)
						var v [16]float32
						DecoderCounted(typ, s)(b, c.il, &v)
						seqs[lane] = slices.Clone(loadCounter.consts)
					}
					for k := range seqs[0] {
						sectors := map[[2]any]bool{}
						words := map[int]bool{}
						var what string
						for lane := range seqs {
							if len(seqs[lane]) != len(seqs[0]) {
								t.Fatalf("%s/%s: lanes issue %d and %d constant loads", typ, s, len(seqs[lane]), len(seqs[0]))
							}
							c, off := constAt(t, seqs[lane][k])
							what = c.what
							sectors[[2]any{c.id, off / SectorBytes}] = true
							words[off/BankBytes] = true
						}
						perBank := map[int]int{}
						busiest := 0
						for w := range words {
							perBank[w%BankCount]++
							busiest = max(busiest, perBank[w%BankCount])
						}
						a := sums[what]
						if a == nil {
							a = &acc{}
							sums[what] = a
							whats = append(whats, what)
						}
						a.sectors += float64(len(sectors))
						a.banks += float64(busiest)
						a.n++
					}
				}
				slices.Sort(whats)
				for _, w := range whats {
					a := sums[w]
					out = append(out, gatherRow{typ, s, p, w, Gather{a.sectors / a.n, a.banks / a.n}})
				}
			}
		}
	}
	return out, true
}

// renderGather renders the table file.
func renderGather(rows []gatherRow) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by TestGatherTableCurrent from the decoders and ggml's quantizer output (go test ./dequant -run TestGatherTableCurrent -update-gather); DO NOT EDIT.\n\n")
	b.WriteString("package dequant\n\n")
	b.WriteString("// gatherTable: per type, strategy, lane pattern and table, the mean distinct\n// 32-byte sectors and busiest-bank words of one simdgroup load instruction.\n")
	b.WriteString("var gatherTable = []gatherRow{\n")
	names := map[Strategy]string{ByteReads: "ByteReads", WordReads: "WordReads"}
	pnames := map[Pattern]string{TilePattern: "TilePattern", RowPattern: "RowPattern"}
	for _, r := range rows {
		fmt.Fprintf(&b, "\t{%s, %s, %s, %q, Gather{Sectors: %.2f, BankWords: %.2f}},\n",
			goTypeName(r.Type), names[r.Strategy], pnames[r.Pattern], r.What, r.Sectors, r.BankWords)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// goTypeName is the Go constant of a type (IQ2_XXS for iq2_xxs).
func goTypeName(t Type) string {
	return string(bytes.ToUpper([]byte(t.String())))
}

func TestGatherTableCurrent(t *testing.T) {
	rows, ok := computeGather(t)
	if !ok {
		t.Skip("shared golden sets not available beside the repository")
	}
	want, err := renderGather(rows)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := fileio.Current(gatherFile, want, *updateGather); err != nil {
		t.Fatal(err)
	} else if !ok {
		t.Fatalf("%s differs from the recomputation (run go test ./dequant -run TestGatherTableCurrent -update-gather):\n%s", gatherFile, want)
	}
}
