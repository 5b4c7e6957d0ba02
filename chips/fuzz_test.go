package chips_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// fuzzProblem is a shape small enough to time once per fuzz input (8 k-steps,
// a few dozen threadgroups) that still has full tiles, edge tiles and an
// empty half-tile.
var fuzzProblem = tile.Problem{Experts: 4, Used: 2, M: 96, K: 256, Tokens: 40, TypeA: dequant.Q4_0}

// FuzzParseChip: a chip file (--chip-file, read by LoadFile, which may take
// calibrated values from an embedded chip) is either rejected with an error
// that names the file, or accepted, and then the timing model runs on it: a
// small problem on both paths and both engines gives finite, positive times
// or a clear error (a kernel that does not fit the chip), never a panic, a
// NaN or an endless loop. The seeds are every embedded chip (chips/data) and
// the broken files of testdata/fuzz/FuzzParseChip.
func FuzzParseChip(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("data", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("embedded chips: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "fuzz.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := chips.LoadFile(file)
		if err != nil {
			if c != nil {
				t.Fatalf("LoadFile returned a chip with the error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "chip file "+file+": ") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		s := sim.NewSimulator()
		for _, path := range []tile.Path{tile.Simdgroup, tile.Tensor} {
			for _, engine := range []sim.Engine{sim.Fast, sim.Detailed} {
				k := tile.Kernel{Variant: tile.HalfTile(), Path: path}
				r, err := s.Run(fuzzProblem, k, c, sim.Options{Engine: engine, Draws: 1})
				if err != nil {
					if strings.TrimSpace(err.Error()) == "" {
						t.Fatalf("%v/%v: empty error", path, engine)
					}
					continue
				}
				for name, v := range map[string]float64{"KernelUs": r.KernelUs, "TotalUs": r.TotalUs, "KernelCycles": r.KernelCycles} {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Fatalf("%v/%v: %s = %g, want finite and positive", path, engine, name, v)
					}
				}
			}
		}
	})
}
