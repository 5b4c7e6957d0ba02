package golden

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/tile"
)

// TestVerifyMulMatIDSubset emulates the committed real cases on both paths and
// variants and requires every check to pass.
func TestVerifyMulMatIDSubset(t *testing.T) {
	res, checks := verifyMulMatID(t, "testdata")
	for i, r := range res {
		if checks[i].RefsComputed {
			t.Errorf("%s: references were computed although the manifest has them", r.Name)
		}
	}
}

// verifyMulMatID runs VerifyMulMatID on the golden set in dir, whose
// mulmatid/ holds the 6 committed cases, and requires every one to pass.
func verifyMulMatID(t *testing.T, dir string) ([]Result, []MulMatIDCheck) {
	t.Helper()
	res, checks, err := VerifyMulMatID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results, want the 6 committed cases", len(res))
	}
	for _, r := range res {
		if !r.Pass {
			t.Error(r)
		}
	}
	return res, checks
}

// TestReferenceMatchesManifest: the references computed here from the Metal
// dequantizers equal the generator's float64 references bit for bit (same
// increasing-k float64 sums, one rounding to float32).
func TestReferenceMatchesManifest(t *testing.T) {
	m, err := ReadMulMatIDManifest(filepath.Join("testdata", "mulmatid"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Cases {
		c := &m.Cases[i]
		p := tile.Problem{Experts: c.NExpert, Used: c.NExpertUsed, M: c.M, K: c.K, Tokens: c.NTokens,
			Broadcast: c.Src1NE1 == 1 && c.NExpertUsed > 1, TypeA: c.TypeAType}
		w, err := c.Src0.Data.Read(m.Dir)
		if err != nil {
			t.Fatal(err)
		}
		src1, err := readF32(m.Dir, c.Src1.Data)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := readI32(m.Dir, c.IDs.Data)
		if err != nil {
			t.Fatal(err)
		}
		ref := Reference(p, &emulate.Tensors{Weights: w, Src1: src1, IDs: ids})
		for _, want := range []struct {
			name string
			d    *Tensor
			got  []float32
		}{{"ref_f64", c.RefF64, ref.F64}, {"ref_f16in", c.RefF16In, ref.F16In}} {
			vals, err := readF32(m.Dir, want.d.Data)
			if err != nil {
				t.Fatal(err)
			}
			for j := range vals {
				if math.Float32bits(vals[j]) != math.Float32bits(want.got[j]) {
					t.Errorf("%s %s[%d]: computed %v, manifest %v", c.Name, want.name, j, want.got[j], vals[j])
					break
				}
			}
		}
	}
}

// TestVerifyMulMatIDWithoutRefs drops the references from the manifest: the
// checks must still pass with computed ones.
func TestVerifyMulMatIDWithoutRefs(t *testing.T) {
	m, err := ReadMulMatIDManifest(filepath.Join("testdata", "mulmatid"))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cases[0]
	c.RefF64, c.RefF16In = nil, nil
	ck := CheckMulMatIDCase(m.Dir, &c)
	if ck.Err != nil || !ck.RefsComputed || ck.WorstRatio > 1 || ck.WorstDst > 1 || !ck.HalfTileSame {
		t.Fatalf("%s without references: %+v", c.Name, ck)
	}
}

// TestAccumulationToleranceCatchesWrongOrder: an error of one ulp-sized term per
// output is within the bound, a dropped k-step is not.
func TestAccumulationToleranceCatchesWrongOrder(t *testing.T) {
	sumAbs := 100.0
	tol := AccumulationTolerance(256, sumAbs)
	if tol <= 0 || tol > 1e-3*sumAbs {
		t.Fatalf("tolerance %g for K=256, S=%g: want a small positive bound", tol, sumAbs)
	}
	// dropping one of 256 comparable terms moves the sum by about S/256
	if sumAbs/256 <= tol {
		t.Fatalf("tolerance %g would hide a dropped term of size %g", tol, sumAbs/256)
	}
}

// TestNaNFails: a NaN in an output or a reference is past every bound, in the
// running worst ratio and in the verdict.
func TestNaNFails(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct{ worst, d, bound, want float64 }{
		{0.5, 0.1, 1, 0.5},
		{0, 2, 1, 2},
		{0, nan, 1, math.Inf(1)},
		{0, 1, nan, math.Inf(1)},
		{0, 0.1, 0, math.Inf(1)},
		{0.3, 0, 0, 0.3},
	} {
		if got := worstRatio(tc.worst, tc.d, tc.bound); got != tc.want {
			t.Errorf("worstRatio(%g, %g, %g) = %g, want %g", tc.worst, tc.d, tc.bound, got, tc.want)
		}
	}
	for _, ck := range []MulMatIDCheck{{WorstRatio: nan, HalfTileSame: true}, {WorstDst: nan, HalfTileSame: true}} {
		if pass, detail := ck.verdict(); pass {
			t.Errorf("%+v passed: %s", ck, detail)
		}
	}
	if pass, _ := (&MulMatIDCheck{WorstRatio: 0.5, WorstDst: 0.5, HalfTileSame: true}).verdict(); !pass {
		t.Error("a case within its bounds failed")
	}
}
