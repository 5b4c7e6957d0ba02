package golden

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/fileio"
)

var update = flag.Bool("update", false, "rewrite the constructed fixture testdata/good/mulmatid")

const mulmatidFixture = "testdata/good/mulmatid"

// buildMulMatIDFixture CONSTRUCTS a tiny mulmatid/ directory in the golden
// format (it is not ggml output): config "T" with E = 3 experts, U = 2, k = 32,
// m = 2, q4_0 weights with random nibbles and normal scales, 2 tokens routed
// to experts {0, 2} and {2, 1}, activations for src1_ne1 = 2 and 1. ref_f64 and
// ref_f16in are computed as the golden README defines them from this package's
// q4_0 decoder (for these scales Metal's and ggml's q4_0 values are equal up to
// the sign of zero); dst is a copy of ref_f64 rounded to float32, since there is
// no ggml CPU run here. Case T_q4_0_n2_b1 omits ref_f64/ref_f16in to exercise
// the optional fields. It returns the files by name, manifest.json included.
func buildMulMatIDFixture() map[string][]byte {
	const (
		E, U, K, M, N = 3, 2, 32, 2, 2
		typ           = "q4_0"
	)
	r := rand.New(rand.NewPCG(7, 11))
	files := map[string][]byte{}
	var list []Descriptor
	add := func(name string, b []byte) Descriptor {
		files[name] = b
		d := Descriptor{File: name, Bytes: int64(len(b)), SHA256: sha256Hex(b)}
		list = append(list, d)
		return d
	}
	f32s := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}

	// Weights: E*M rows of one 18-byte q4_0 block each.
	w := make([]byte, E*M*18)
	for row := 0; row < E*M; row++ {
		blk := w[18*row : 18*row+18]
		binary.LittleEndian.PutUint16(blk, dequant.HalfFromFloat32(float32(0.05+0.01*float64(row))))
		for j := 2; j < 18; j++ {
			blk[j] = byte(r.Uint32())
		}
	}
	weights := make([][]float32, E*M) // decoded rows
	for row := range weights {
		var c [16]float32
		for il := 0; il < 2; il++ {
			dequant.Decoder(dequant.Q4_0, dequant.ByteReads)(w[18*row:18*row+18], il, &c)
			weights[row] = append(weights[row], c[:]...)
		}
	}
	wd := add("T_w_q4_0.bin", w)

	ids := [N][U]int32{{0, 2}, {2, 1}}
	idb := make([]byte, 4*N*U)
	for t := range ids {
		for s, e := range ids[t] {
			binary.LittleEndian.PutUint32(idb[4*(t*U+s):], uint32(e))
		}
	}
	idd := add("T_ids_n2.i32", idb)
	tpe := []int{1, 1, 2}

	acts := map[int][]float32{}
	actd := map[int]Descriptor{}
	for _, b1 := range []int{2, 1} {
		a := make([]float32, K*b1*N)
		for i := range a {
			a[i] = 2*r.Float32() - 1
		}
		acts[b1] = a
		actd[b1] = add(fixtureName("T_act_n2_b", b1, ".f32"), f32s(a))
	}

	cfg := MulMatIDConfig{
		Name: "T", NExpert: E, NExpertUsed: U, K: K, M: M,
		WeightsSeed: "0x7", WeightsRule: "constructed test fixture: random nibbles, d = 0.05 + 0.01*row",
		Weights: []MulMatIDWeights{{
			Type: typ, GGMLTypeID: 2, Data: wd, NE: []int64{K, M, E}, NB: []int64{18, 18, 18 * M},
			RowBytes: 18, ExpertBytes: 18 * M, Quantizer: "constructed",
		}},
		Routes: []MulMatIDRoute{{
			NTokens: N, Routing: "pattern", IDs: idd, TokensPerExpert: tpe,
			Activations: []MulMatIDActivation{
				{Src1NE1: 2, NE: []int64{K, 2, N, 1}, Data: actd[2]},
				{Src1NE1: 1, NE: []int64{K, 1, N, 1}, Data: actd[1]},
			},
		}},
	}

	var cases []MulMatIDCase
	for _, b1 := range []int{2, 1} {
		name := fixtureName("T_q4_0_n2_b", b1, "")
		ref64 := make([]float32, M*U*N)
		refh := make([]float32, M*U*N)
		var maxAbs, sumSq, maxHDiff float64
		for t := 0; t < N; t++ {
			for s := 0; s < U; s++ {
				act := acts[b1][(t*b1+s%b1)*K:][:K]
				for row := 0; row < M; row++ {
					wrow := weights[int(ids[t][s])*M+row]
					var f, h float64
					for j := 0; j < K; j++ {
						f += float64(wrow[j]) * float64(act[j])
						h += float64(dequant.RoundHalf(wrow[j])) * float64(dequant.RoundHalf(act[j]))
					}
					i := (t*U+s)*M + row
					ref64[i], refh[i] = float32(f), float32(h)
					maxAbs = math.Max(maxAbs, math.Abs(float64(ref64[i])))
					sumSq += float64(ref64[i]) * float64(ref64[i])
					maxHDiff = math.Max(maxHDiff, math.Abs(float64(refh[i])-float64(ref64[i])))
				}
			}
		}
		outNE := []int64{M, U, N, 1}
		dst := Tensor{Role: "dst (constructed: copy of ref_f64)", Type: "f32", NE: outNE, Data: add(name+".out.f32", f32s(ref64))}
		equal := 0
		for i := range ref64 {
			if math.Float32bits(ref64[i]) == math.Float32bits(refh[i]) {
				equal++
			}
		}
		c := MulMatIDCase{
			Name: name, Config: "T", TypeA: typ, NExpert: E, NExpertUsed: U, NTokens: N, K: K, M: M, Src1NE1: b1,
			Src0:                Tensor{Role: "as (expert weights)", Type: typ, NE: []int64{K, M, E, 1}, NB: []int64{18, 18, 18 * M, 18 * M * E}, Data: wd},
			Src1:                Tensor{Role: "b (activations)", Type: "f32", NE: []int64{K, int64(b1), N, 1}, Data: actd[b1]},
			IDs:                 Tensor{Role: "ids", Type: "i32", NE: []int64{U, N, 1, 1}, Data: idd},
			Dst:                 dst,
			TokensPerExpert:     tpe,
			Routing:             "pattern: constructed",
			MetalKernelExpected: "mul_mv_id (n_tokens < 32)",
			CPUVecDot:           "none (constructed fixture)",
			Stats: &MulMatIDStats{
				MaxAbsRefF64: maxAbs, RMSRefF64: math.Sqrt(sumSq / float64(len(ref64))),
				MaxAbsRefF16InMinusRefF64: maxHDiff, DstBitwiseEqualToRefF16In: equal, Threads1And2Identical: true,
			},
			Description: "constructed test fixture",
		}
		if b1 == U {
			c.RefF64 = &Tensor{Role: "reference f64", Type: "f32", NE: outNE, Data: add(name+".ref64.f32", f32s(ref64))}
			c.RefF16In = &Tensor{Role: "reference f16 inputs", Type: "f32", NE: outNE, Data: add(name+".refh.f32", f32s(refh))}
		}
		cases = append(cases, c)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].File < list[j].File })
	m := MulMatIDManifest{
		Header: Header{
			FormatVersion: 1,
			Producer:      Producer{Library: "none", Commit: "constructed", Generator: "golden/fixture_test.go", GeneratorVersion: 1, Set: "fixture"},
			ByteOrder:     "little-endian",
		},
		Operation:  "constructed test fixture in the golden mulmatid format (not ggml output)",
		IndexOrder: "as in the golden README",
		Configs:    []MulMatIDConfig{cfg},
		Cases:      cases,
		Files:      list,
	}
	js, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		panic(err)
	}
	files["manifest.json"] = append(js, '\n')
	return files
}

func fixtureName(prefix string, n int, suffix string) string {
	return prefix + string(rune('0'+n)) + suffix
}

// TestMulMatIDFixture keeps the committed constructed fixture equal to what
// buildMulMatIDFixture makes (go test ./golden -run TestMulMatIDFixture -update
// rewrites it).
func TestMulMatIDFixture(t *testing.T) {
	files := buildMulMatIDFixture()
	if *update {
		if err := os.MkdirAll(mulmatidFixture, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range files {
		if ok, err := fileio.Current(filepath.Join(mulmatidFixture, name), want, *update); err != nil || !ok {
			t.Errorf("%s/%s differs from the builder's output (run with -update): %v", mulmatidFixture, name, err)
		}
	}
	entries, err := os.ReadDir(mulmatidFixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("%s has %d files, the builder makes %d (run with -update)", mulmatidFixture, len(entries), len(files))
	}
}
