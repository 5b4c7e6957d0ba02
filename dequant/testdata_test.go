package dequant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Helpers reading the committed trimmed golden set under testdata/golden (see
// its README.md). The golden package has the full, validating reader; these
// are deliberately minimal so that the dequant tests depend on nothing else.

// goldenDir and goldenTypesDir hold trimmed copies of the two shared golden
// sets (see their README.md files).
const (
	goldenDir      = "testdata/golden"
	goldenTypesDir = "testdata/golden-types"
)

type testDescriptor struct {
	File   string `json:"file"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

type testEntry struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Variant          string          `json:"variant"`
	NBlocks          int             `json:"n_blocks"`
	BlockBytes       int             `json:"block_bytes"`
	ElementsPerBlock int             `json:"elements_per_block"`
	SourceBlocks     []int           `json:"source_blocks"`
	Blocks           *testDescriptor `json:"blocks"`
	F32              *testDescriptor `json:"f32"`
	Count            int             `json:"count"`
	InputF32         *testDescriptor `json:"input_f32"`
	OutputF16        *testDescriptor `json:"output_f16"`
	OutputBF16       *testDescriptor `json:"output_bf16"`
}

// readTestFile reads a file named by a descriptor and checks size and digest.
func readTestFile(t *testing.T, dir string, d *testDescriptor) []byte {
	t.Helper()
	if d == nil {
		t.Fatalf("missing file descriptor in %s", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, d.File))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if len(b) != d.Bytes || hex.EncodeToString(sum[:]) != d.SHA256 {
		t.Fatalf("%s: %d bytes sha256 %x, manifest says %d bytes sha256 %s", d.File, len(b), sum, d.Bytes, d.SHA256)
	}
	return b
}

// readTestManifest reads the dequant manifest of the trimmed golden copy set
// (goldenDir or goldenTypesDir).
func readTestManifest(t *testing.T, set string) []testEntry {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(set, "dequant", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Entries []testEntry `json:"entries"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) == 0 {
		t.Fatal("no entries in the test manifest")
	}
	return m.Entries
}

// testSets are both trimmed golden copies.
var testSets = []string{goldenDir, goldenTypesDir}

// eachBlockEntry calls f with every block entry of both trimmed golden
// copies (the conversion entries aside): its type, blocks and ggml's floats.
func eachBlockEntry(t *testing.T, f func(e testEntry, typ Type, blocks []byte, want []float32)) {
	t.Helper()
	for _, set := range testSets {
		for _, e := range readTestManifest(t, set) {
			if e.Variant != "conversion" {
				typ, blocks, want := testBlocks(t, set, e)
				f(e, typ, blocks, want)
			}
		}
	}
}

// testBlocks reads a block entry's blocks and floats and returns them with the
// entry's type; bf16 entries (one element per ggml block) are regrouped into
// dequant's 16-element blocks by the caller's use of Layout.
func testBlocks(t *testing.T, set string, e testEntry) (Type, []byte, []float32) {
	t.Helper()
	typ, err := ParseType(e.Type)
	if err != nil {
		t.Fatalf("%s: %v", e.Name, err)
	}
	dir := filepath.Join(set, "dequant")
	blocks := readTestFile(t, dir, e.Blocks)
	want := float32s(readTestFile(t, dir, e.F32))
	l := typ.Layout()
	if len(want)%l.BlockWeights != 0 || len(blocks) != len(want)/l.BlockWeights*l.BlockBytes {
		t.Fatalf("%s: %d bytes and %d floats do not fit %s's layout %+v", e.Name, len(blocks), len(want), typ, l)
	}
	return typ, blocks, want
}

func float32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
