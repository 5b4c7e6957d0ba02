package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadDequantManifest feeds arbitrary bytes to ParseDequantManifest: it must
// never panic, and whatever it accepts must satisfy the documented invariants.
// Seed corpus: testdata/fuzz/FuzzReadDequantManifest plus the good fixture.
func FuzzReadDequantManifest(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "good", "dequant", "manifest.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseDequantManifest(data)
		if err != nil {
			if m != nil {
				t.Fatal("non-nil manifest with an error")
			}
			return
		}
		if m.FormatVersion != FormatVersion || m.ByteOrder != "little-endian" || len(m.Entries) == 0 {
			t.Fatalf("accepted header %d %q with %d entries", m.FormatVersion, m.ByteOrder, len(m.Entries))
		}
		for _, e := range m.Entries {
			if e.IsConversion() {
				if e.InputF32 == nil || e.OutputF16 == nil || e.InputF32.Bytes != 4*int64(e.Count) || e.OutputF16.Bytes != 2*int64(e.Count) {
					t.Fatalf("accepted conversion entry %+v", e)
				}
				continue
			}
			l := e.DType.Layout()
			if !e.DType.Quantized() || e.Blocks == nil || e.F32 == nil || e.NElements != e.NBlocks*l.BlockWeights ||
				e.Blocks.Bytes != int64(e.NBlocks*l.BlockBytes) || e.F32.Bytes != 4*int64(e.NElements) {
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
	if b, err := os.ReadFile(filepath.Join(mulmatidFixture, "manifest.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMulMatIDManifest(data)
		if err != nil {
			if m != nil {
				t.Fatal("non-nil manifest with an error")
			}
			return
		}
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
