package dequant

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type testTableIndex struct {
	Tables []struct {
		Name         string `json:"name"`
		File         string `json:"file"`
		ElementType  string `json:"element_type"`
		ElementBytes int    `json:"element_bytes"`
		Count        int    `json:"count"`
		FileSHA256   string `json:"file_sha256"`
		RawLESHA256  string `json:"raw_le_sha256"`
	} `json:"tables"`
}

// readTestTableIndex reads the tables of both golden sets' index.json copies
// (testdata/golden and testdata/golden-types) as one list.
func readTestTableIndex(t *testing.T) testTableIndex {
	t.Helper()
	var all testTableIndex
	for _, dir := range []string{goldenDir, goldenTypesDir} {
		raw, err := os.ReadFile(filepath.Join(dir, "tables", "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		var idx testTableIndex
		if err := json.Unmarshal(raw, &idx); err != nil {
			t.Fatal(err)
		}
		all.Tables = append(all.Tables, idx.Tables...)
	}
	return all
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// packedViews returns each built-in table packed little-endian twice: once from
// the byte view the ByteReads decoders use, once from the word view the
// WordReads decoders use (the same bytes for kmask/ksigns, which have no words).
func packedViews() map[string][2][]byte {
	flat8 := func(g [][8]uint8) []byte {
		var b []byte
		for _, e := range g {
			b = append(b, e[:]...)
		}
		return b
	}
	flat4 := func(g [][4]uint8) []byte {
		var b []byte
		for _, e := range g {
			b = append(b, e[:]...)
		}
		return b
	}
	words2 := func(g [][2]uint32) []byte {
		var b []byte
		for _, e := range g {
			b = binary.LittleEndian.AppendUint32(b, e[0])
			b = binary.LittleEndian.AppendUint32(b, e[1])
		}
		return b
	}
	words1 := func(g []uint32) []byte {
		var b []byte
		for _, e := range g {
			b = binary.LittleEndian.AppendUint32(b, e)
		}
		return b
	}
	int8s := func(v []int8) []byte {
		b := make([]byte, len(v))
		for i, x := range v {
			b[i] = byte(x)
		}
		return b
	}
	var iq1s []byte
	for _, e := range iq1sGrid {
		iq1s = append(iq1s, int8s(e[:])...)
	}
	return map[string][2][]byte{
		"kvalues_iq4nl":     {int8s(kvaluesIQ4NL[:]), int8s(kvaluesIQ4NL[:])},
		"kvalues_mxfp4":     {int8s(kvaluesMXFP4[:]), int8s(kvaluesMXFP4[:])},
		"iq1s_grid":         {iq1s, iq1s},
		"iq1s_grid_gpu":     {flat4(iq1sGridGPU[:]), flat4(iq1sGridGPU[:])},
		"e8m0_to_fp32_half": {words1(e8m0ToFP32Half[:]), words1(e8m0ToFP32Half[:])},
		"e8m0_to_fp32":      {words1(e8m0ToFP32[:]), words1(e8m0ToFP32[:])},
		"kmask_iq2xs":       {kmaskIQ2XS[:], kmaskIQ2XS[:]},
		"ksigns_iq2xs":      {ksignsIQ2XS[:], ksignsIQ2XS[:]},
		"iq2xxs_grid":       {flat8(iq2xxsGridBytes[:]), words2(iq2xxsGridWords[:])},
		"iq2xs_grid":        {flat8(iq2xsGridBytes[:]), words2(iq2xsGridWords[:])},
		"iq2s_grid":         {flat8(iq2sGridBytes[:]), words2(iq2sGridWords[:])},
		"iq3xxs_grid":       {flat4(iq3xxsGridBytes[:]), words1(iq3xxsGridWords[:])},
		"iq3s_grid":         {flat4(iq3sGridBytes[:]), words1(iq3sGridWords[:])},
	}
}

// TestTablesRawSHA256 recomputes the raw_le_sha256 of golden index.json from both
// views of every built-in table.
func TestTablesRawSHA256(t *testing.T) {
	idx := readTestTableIndex(t)
	views := packedViews()
	seen := map[string]bool{}
	for _, tab := range idx.Tables {
		v, ok := views[tab.Name]
		if !ok {
			continue // fp16_to_fp32 is not built in
		}
		seen[tab.Name] = true
		for i, view := range []string{"byte view", "word view"} {
			if got := len(v[i]); got != tab.Count*tab.ElementBytes {
				t.Errorf("%s %s: %d bytes, want %d", tab.Name, view, got, tab.Count*tab.ElementBytes)
			}
			if got := sha(v[i]); got != tab.RawLESHA256 {
				t.Errorf("%s %s: raw_le_sha256 %s, index says %s", tab.Name, view, got, tab.RawLESHA256)
			}
		}
	}
	if len(seen) != len(views) || len(views) != len(LookupTables()) {
		t.Errorf("the index.json files list %d of the %d built-in tables (LookupTables has %d)", len(seen), len(views), len(LookupTables()))
	}
}

// TestTableFiles checks the committed text copies (the generator's input) against
// index.json's file_sha256 and against the generated arrays, so tables_gen.go
// cannot drift from tables/*.txt without a test failing.
func TestTableFiles(t *testing.T) {
	idx := readTestTableIndex(t)
	built := map[string]LookupTable{}
	for _, lt := range LookupTables() {
		built[lt.Name] = lt
	}
	for _, tab := range idx.Tables {
		lt, ok := built[tab.Name]
		if !ok {
			continue
		}
		t.Run(tab.Name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("tables", tab.File))
			if err != nil {
				t.Fatal(err)
			}
			if got := sha(raw); got != tab.FileSHA256 {
				t.Errorf("file_sha256 %s, index says %s", got, tab.FileSHA256)
			}
			vals, err := parseTableText(raw, tab.Name, tab.ElementType, tab.ElementBytes, tab.Count)
			if err != nil {
				t.Fatal(err)
			}
			if lt.ElementType != tab.ElementType || lt.ElementBytes != tab.ElementBytes {
				t.Errorf("LookupTables: element %s/%d, index says %s/%d", lt.ElementType, lt.ElementBytes, tab.ElementType, tab.ElementBytes)
			}
			if len(lt.Values) != len(vals) {
				t.Fatalf("LookupTables: %d values, file has %d", len(lt.Values), len(vals))
			}
			for i := range vals {
				if lt.Values[i] != vals[i] {
					t.Fatalf("element %d: built in %#x, file %#x", i, lt.Values[i], vals[i])
				}
			}
		})
	}
}

func parseTableText(raw []byte, name, typ string, size, count int) ([]uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	if !sc.Scan() || sc.Text() != fmt.Sprintf("# name=%s type=%s count=%d", name, typ, count) {
		return nil, fmt.Errorf("bad header %q", sc.Text())
	}
	var vals []uint64
	for sc.Scan() {
		h, ok := strings.CutPrefix(sc.Text(), "0x")
		if !ok || len(h) != 2*size {
			return nil, fmt.Errorf("line %d: %q", len(vals)+2, sc.Text())
		}
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	if len(vals) != count {
		return nil, fmt.Errorf("%d values, want %d", len(vals), count)
	}
	return vals, nil
}

// TestKsignsIdentity checks the documented identity the WordReads strategy
// relies on (kernel-facts §7.3): ksigns_iq2xs[k] == k | (popcount(k)&1) << 7.
func TestKsignsIdentity(t *testing.T) {
	for k := range ksignsIQ2XS {
		want := uint8(k | (bits.OnesCount(uint(k))&1)<<7)
		if ksignsIQ2XS[k] != want || parity7(uint32(k)) != want {
			t.Errorf("k=%d: ksigns %#02x, parity7 %#02x, identity %#02x", k, ksignsIQ2XS[k], parity7(uint32(k)), want)
		}
	}
	for j, m := range kmaskIQ2XS {
		if m != 1<<j {
			t.Errorf("kmask_iq2xs[%d] = %#02x, want %#02x", j, m, 1<<j)
		}
	}
}

// TestLookupTablesAreCopies checks that callers cannot modify the built-in tables.
func TestLookupTablesAreCopies(t *testing.T) {
	a := LookupTables()
	a[1].Values[0] = 0xff
	if b := LookupTables(); b[1].Values[0] != uint64(ksignsIQ2XS[0]) || ksignsIQ2XS[0] != 0 {
		t.Fatal("LookupTables exposes the built-in arrays")
	}
}

// TestIQ1GridViews checks the relation of the two iq1 grids (golden-types README
// §2): every nibble of iq1s_grid_gpu, the Metal table, is the iq1s_grid (CPU)
// value + 1, element j at bits 8*(j%4) + 4*(j/4).
func TestIQ1GridViews(t *testing.T) {
	for i, e := range iq1sGrid {
		g := iq1sGridGPU[i]
		for j, v := range e {
			nib := int(g[j%4] >> (4 * (j / 4)) & 15)
			if nib != int(v)+1 || v < -1 || v > 1 {
				t.Fatalf("entry %d element %d: CPU %d, Metal nibble %d", i, j, v, nib)
			}
		}
	}
}

// TestE8M0Tables checks the two e8m0 tables against the functions they tabulate:
// ggml_e8m0_to_fp32_half (ggml-impl.h L477–495: 0x00200000 << e for e < 2, else
// (e-1) << 23), the CPU's, and the shader's e8m0_to_fp32 (ggml-metal.metal
// L66–76: 0x00400000 for e = 0, else e << 23, so e = 255 is +inf).
func TestE8M0Tables(t *testing.T) {
	for e := 0; e < 256; e++ {
		half := uint32(e-1) << 23
		full := uint32(e) << 23
		if e < 2 {
			half = 0x00200000 << e
		}
		if e == 0 {
			full = 0x00400000
		}
		if e8m0ToFP32Half[e] != half || e8m0ToFP32[e] != full {
			t.Errorf("e = %d: tables %#08x, %#08x; functions %#08x, %#08x", e, e8m0ToFP32Half[e], e8m0ToFP32[e], half, full)
		}
		// the CPU's scale is half the shader's for every e >= 1
		if e > 0 && math.Float32frombits(half)*2 != math.Float32frombits(full) {
			t.Errorf("e = %d: 2*%g != %g", e, math.Float32frombits(half), math.Float32frombits(full))
		}
	}
}

// TestShaderFloatTables checks the float tables the Metal decoders derive from
// the integer ones against the literals of ggml-metal.metal L46–52: the iq4_nl
// levels, and the E2M1 values of mxfp4 (half of kvalues_mxfp4, entry 8 +0).
func TestShaderFloatTables(t *testing.T) {
	iq4 := [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	fp4 := [16]float32{0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6}
	for i := range iq4 {
		if kvaluesIQ4NLF[i] != iq4[i] || math.Float32bits(kvaluesMXFP4F[i]) != math.Float32bits(fp4[i]) {
			t.Errorf("entry %d: %g, %g; shader %g, %g", i, kvaluesIQ4NLF[i], kvaluesMXFP4F[i], iq4[i], fp4[i])
		}
	}
}
