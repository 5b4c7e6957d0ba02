package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/metalsim/metalsim/dequant"
)

// fuzzParse seeds f with the files of seeds that exist, then feeds
// arbitrary bytes to parse: it must never panic, a rejection must come with no
// value, and check is given every value parse accepts.
func fuzzParse[T any](f *testing.F, parse func([]byte) (*T, error), seeds []string, check func(*testing.T, *T)) {
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parse(data)
		if err != nil {
			if v != nil {
				t.Fatalf("a value with the error %v", err)
			}
			return
		}
		check(t, v)
	})
}

// FuzzReadDequantManifest feeds arbitrary bytes to ParseDequantManifest: it must
// never panic, and whatever it accepts must satisfy the documented invariants.
// Seed corpus: testdata/fuzz/FuzzReadDequantManifest plus the good fixture.
func FuzzReadDequantManifest(f *testing.F) {
	seeds := []string{filepath.Join("testdata", "good", "dequant", "manifest.json"), "../dequant/testdata/golden-types/dequant/manifest.json"}
	fuzzParse(f, ParseDequantManifest, seeds, func(t *testing.T, m *DequantManifest) {
		if m.FormatVersion != FormatVersion || m.ByteOrder != "little-endian" || len(m.Entries) == 0 {
			t.Fatalf("accepted header %d %q with %d entries", m.FormatVersion, m.ByteOrder, len(m.Entries))
		}
		for _, e := range m.Entries {
			if e.IsConversion() {
				out, _ := e.Output()
				if e.InputF32 == nil || out == nil || e.InputF32.Bytes != 4*int64(e.Count) || out.Bytes != 2*int64(e.Count) {
					t.Fatalf("accepted conversion entry %+v", e)
				}
				continue
			}
			l := e.DType.Layout()
			if e.DType == dequant.F32 || e.DType == dequant.F16 || e.Blocks == nil || e.F32 == nil ||
				e.NElements != e.NBlocks*e.ElementsPerBlock || e.NElements%l.BlockWeights != 0 ||
				e.Blocks.Bytes != int64(e.NElements/l.BlockWeights*l.BlockBytes) || e.F32.Bytes != 4*int64(e.NElements) {
				t.Fatalf("accepted block entry %+v", e)
			}
		}
	})
}

// FuzzReadMulMatIDManifest feeds arbitrary bytes to ParseMulMatIDManifest: it
// must never panic, and every accepted case must resolve its config, weights
// and route. Seed corpus: testdata/fuzz/FuzzReadMulMatIDManifest plus the
// constructed fixture.
func FuzzReadMulMatIDManifest(f *testing.F) {
	seeds := []string{filepath.Join(mulmatidFixture, "manifest.json"), filepath.Join(typesMulMatID, "mulmatid", "manifest.json")}
	fuzzParse(f, ParseMulMatIDManifest, seeds, func(t *testing.T, m *MulMatIDManifest) {
		for i := range m.Cases {
			c := &m.Cases[i]
			cfg := m.Config(c.Config)
			if cfg == nil || cfg.weights(c.TypeA) == nil || cfg.route(c.NTokens) == nil || c.Stats == nil {
				t.Fatalf("accepted case %q without config, weights, route or stats", c.Name)
			}
			if k := c.MetalKernel(); k != KernelMulMMID && k != KernelMulMVID {
				t.Fatalf("accepted kernel %q", k)
			}
			if got := c.Dst.Data.Bytes; got != 4*int64(c.M*c.NExpertUsed*c.NTokens) {
				t.Fatalf("accepted dst of %d bytes", got)
			}
		}
	})
}

// FuzzParseTableIndex feeds arbitrary bytes to ParseTableIndex (tables/
// index.json of a golden set, as `simrun golden DIR` reads it): it must never
// panic, and whatever it accepts must have tables with unique names, a known
// element type of the stated size and a count that parseTableText can
// allocate. Seed corpus: testdata/fuzz/FuzzParseTableIndex (the committed
// index and broken variants).
func FuzzParseTableIndex(f *testing.F) {
	seeds := []string{"../dequant/testdata/golden-types/tables/index.json"} // external_tables, a bf16 layout
	fuzzParse(f, ParseTableIndex, seeds, func(t *testing.T, x *TableIndex) {
		if len(x.Tables) == 0 {
			t.Fatal("accepted an index without tables")
		}
		names := map[string]bool{}
		for _, tab := range x.Tables {
			n, ok := elementBytes(tab.ElementType)
			if names[tab.Name] || tab.Name == "" || !ok || n != tab.ElementBytes || tab.Count < 1 || tab.Count > 1<<24 {
				t.Fatalf("accepted table %+v", tab)
			}
			names[tab.Name] = true
		}
	})
}

// FuzzParseTableText feeds arbitrary text to parseTableText under a table
// header of each element size: it must never panic, and what it accepts has
// exactly the header's count of values, each within the element's bytes.
// Seed corpus: testdata/fuzz/FuzzParseTableText.
func FuzzParseTableText(f *testing.F) {
	f.Fuzz(func(t *testing.T, text []byte, count uint16, size uint8) {
		types := []string{"uint8", "uint16", "uint32", "uint64"}
		typ := types[int(size)%len(types)]
		n, _ := elementBytes(typ)
		info := &TableInfo{Name: "fuzz", ElementType: typ, ElementBytes: n, Count: int(count)}
		vals, err := parseTableText(text, info)
		if err != nil {
			if vals != nil {
				t.Fatal("values with an error")
			}
			return
		}
		if len(vals) != info.Count {
			t.Fatalf("accepted %d values under a header of %d", len(vals), info.Count)
		}
		for i, v := range vals {
			if n < 8 && v>>(8*n) != 0 {
				t.Fatalf("value %d = %#x does not fit %s", i, v, typ)
			}
		}
	})
}
