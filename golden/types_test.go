package golden

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/emulate"
	"github.com/metalsim/metalsim/tile"
)

// typesFixture builds a golden-types directory in a temporary directory from
// package dequant's trimmed copy (../dequant/testdata/golden-types: tables
// index and dequant/) and table text files, and writes the external
// fp16_to_fp32 table where its index.json points (../../golden/tables/ from the
// tables/ folder), made by fp16TableText. It returns the set's directory.
func typesFixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "golden-types")
	copyDir(t, "../dequant/testdata/golden-types/dequant", filepath.Join(root, "dequant"))
	tables := filepath.Join(root, "tables")
	if err := os.MkdirAll(tables, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../dequant/testdata/golden-types/tables/index.json", filepath.Join(tables, "index.json"))
	for _, name := range []string{"kvalues_iq4nl", "kvalues_mxfp4", "iq1s_grid", "iq1s_grid_gpu", "e8m0_to_fp32_half", "e8m0_to_fp32"} {
		copyFile(t, filepath.Join("../dequant/tables", name+".txt"), filepath.Join(tables, name+".txt"))
	}
	ext := filepath.Join(root, "..", "golden", "tables")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "fp16_to_fp32.txt"), fp16TableText(), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// fp16TableText writes ggml's fp16 -> fp32 table in the golden text format,
// computed in float64 from the binary16 definition (not with package dequant):
// value (1 + m/1024) * 2^(e-15), subnormals m * 2^-24, NaNs quiet with the
// payload shifted left by 13. The index's file_sha256 then checks it against
// the first set's file byte for byte.
func fp16TableText() []byte {
	var b strings.Builder
	b.WriteString("# name=fp16_to_fp32 type=uint32 count=65536\n")
	for h := 0; h < 1<<16; h++ {
		sign, e, m := h>>15, h>>10&31, h&1023
		var bits uint32
		switch {
		case e == 31 && m == 0:
			bits = 0x7f800000
		case e == 31:
			bits = 0x7fc00000 | uint32(m)<<13
		case e == 0:
			bits = math.Float32bits(float32(math.Ldexp(float64(m), -24)))
		default:
			bits = math.Float32bits(float32(math.Ldexp(1+float64(m)/1024, e-15)))
		}
		fmt.Fprintf(&b, "0x%08x\n", bits|uint32(sign)<<31)
	}
	return []byte(b.String())
}

// TestVerifyTypesFixture verifies the trimmed golden-types copy: its six
// tables, every block entry in the CPU form and both Metal-form strategies,
// the fp32 -> bf16 conversion and the external fp16 table.
func TestVerifyTypesFixture(t *testing.T) {
	details := map[string]string{}
	for _, r := range verifyPasses(t, typesFixture(t), 6, 3*17*3+2, "the 6 tables of golden-types; 17 types x 3 sets x 3 forms, the conversion, fp16_to_fp32") {
		details[r.Name] = r.Detail
	}
	for name, want := range map[string]string{
		"fp16_to_fp32":       "(external table ../../golden/tables/fp16_to_fp32.txt)",
		"fp32_to_bf16":       "BF16FromFloat32 equals ggml_fp32_to_bf16 on 512 inputs",
		"bf16_edge/cpu":      "the blocks hold bits_per_block",
		"q4_K_quant/bytes":   "documented Metal differences (0 sign of zero,",
		"mxfp4_edge/words":   "documented Metal differences (0 sign of zero, 6 from inexact scale steps)",
		"q5_0_edge/bytes":    "sign of zero",
		"iq1_m_edge/cpu":     "CPU form: 1280 values bit-exact",
		"q2_K_randbytes/cpu": "CPU form: 256 values bit-exact",
	} {
		if !strings.Contains(details[name], want) {
			t.Errorf("%s: detail %q, want one containing %q", name, details[name], want)
		}
	}
}

// TestCorruptTypesFixture damages the golden-types copy one thing at a time.
func TestCorruptTypesFixture(t *testing.T) {
	dqMan := filepath.Join("dequant", "manifest.json")
	dq := func(edit func(m map[string]any)) func(*testing.T, string) {
		return func(t *testing.T, root string) { editJSON(t, filepath.Join(root, dqMan), edit) }
	}
	entry := func(m map[string]any, name string) map[string]any {
		for _, e := range m["entries"].([]any) {
			if e.(map[string]any)["name"] == name {
				return e.(map[string]any)
			}
		}
		panic(name)
	}
	readDequant := func(root string) error {
		_, err := ReadDequantManifest(filepath.Join(root, "dequant"))
		return err
	}
	verifyDequant := func(root string) error { return failing(VerifyDequant(root)) }
	verifyTables := func(root string) error { return failing(VerifyTables(root)) }
	tests := []corruption{
		{"bf16 block_bytes", dq(func(m map[string]any) { entry(m, "bf16_edge")["block_bytes"] = 32 }), readDequant,
			[]string{dqMan, `"bf16_edge"`, "block_bytes/elements_per_block: 32/1", "one 2-byte element"}},
		{"bf16 n_elements not a multiple of 16", dq(func(m map[string]any) {
			e := entry(m, "bf16_edge")
			e["n_blocks"], e["n_elements"] = 63, 63
		}), readDequant, []string{dqMan, `"bf16_edge"`, "n_elements: 63", "groups of 16"}},
		{"bits_per_block length", dq(func(m map[string]any) {
			e := entry(m, "bf16_edge")
			e["bits_per_block"] = e["bits_per_block"].([]any)[1:]
		}), readDequant, []string{dqMan, `"bf16_edge"`, "bits_per_block: 63 values for n_blocks = 64"}},
		{"bits_per_block value", dq(func(m map[string]any) { entry(m, "bf16_edge")["bits_per_block"].([]any)[5] = "0x1234" }), verifyDequant,
			[]string{"FAIL dequant/bf16_edge/cpu", "element 5", "bits_per_block[5] says 0x1234"}},
		{"bits_per_block on a block type", dq(func(m map[string]any) {
			entry(m, "q4_K_edge")["bits_per_block"] = entry(m, "q4_K_edge")["d_bits_per_block"]
		}), readDequant,
			[]string{dqMan, `"q4_K_edge"`, "bits_per_block: only bf16"}},
		{"e_bits_per_block format", dq(func(m map[string]any) { entry(m, "mxfp4_edge")["e_bits_per_block"].([]any)[2] = "0x001" }), readDequant,
			[]string{dqMan, `"mxfp4_edge"`, "e_bits_per_block[2]", "0x and 2 hex digits"}},
		{"dmin_bits_per_block format", dq(func(m map[string]any) { entry(m, "q2_K_edge")["dmin_bits_per_block"].([]any)[0] = "zz" }), readDequant,
			[]string{dqMan, `"q2_K_edge"`, "dmin_bits_per_block[0]"}},
		{"source_per_block word", dq(func(m map[string]any) { entry(m, "bf16_edge")["source_per_block"].([]any)[0] = "made up" }), readDequant,
			[]string{dqMan, `"bf16_edge"`, "source_per_block[0]", "fixed, random"}},
		{"conversion with both outputs", dq(func(m map[string]any) {
			e := entry(m, "fp32_to_bf16")
			e["output_f16"] = e["output_bf16"]
		}), readDequant, []string{dqMan, `"fp32_to_bf16"`, "not both"}},
		{"external table missing", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "..", "golden", "tables", "fp16_to_fp32.txt"))
		}, verifyDequant, []string{"FAIL dequant/fp16_to_fp32", "external table", "missing"}},
		{"external table changed", func(t *testing.T, root string) {
			modifyFile(t, filepath.Join(root, "..", "golden", "tables", "fp16_to_fp32.txt"), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), "0x3f800000", "0x3f800001", 1))
			})
		}, verifyDequant, []string{"FAIL dequant/fp16_to_fp32", "sha256"}},
		{"external table path", func(t *testing.T, root string) {
			editJSON(t, filepath.Join(root, "tables", "index.json"), func(m map[string]any) {
				m["external_tables"].([]any)[0].(map[string]any)["file"] = "/etc/fp16_to_fp32.txt"
			})
		}, verifyTables, []string{"external_tables[0]", "fp16_to_fp32", "relative path"}},
		{"a needed table unlisted", func(t *testing.T, root string) {
			editJSON(t, filepath.Join(root, "tables", "index.json"), func(m map[string]any) {
				var keep []any
				for _, x := range m["tables"].([]any) {
					if x.(map[string]any)["name"] != "iq1s_grid_gpu" {
						keep = append(keep, x)
					}
				}
				m["tables"] = keep
			})
		}, verifyTables, []string{"FAIL tables/iq1s_grid_gpu", "not listed", "iq1_s"}},
		{"wrong metal value", func(t *testing.T, root string) {
			// a low-nibble value of q4_1 (exact scale steps) changed in the
			// file: both forms must notice
			modifyFile(t, filepath.Join(root, "dequant", "q4_1_edge.f32"), func(b []byte) []byte {
				b[4*(2*32+5)] ^= 1 // kept block 2 (source block 3, d = 0x8001) weight 5
				return b
			})
			b, _ := os.ReadFile(filepath.Join(root, "dequant", "q4_1_edge.f32"))
			editJSON(t, filepath.Join(root, dqMan), func(m map[string]any) {
				entry(m, "q4_1_edge")["f32"].(map[string]any)["sha256"] = sha256Hex(b)
				for _, f := range m["files"].([]any) {
					if f.(map[string]any)["file"] == "q4_1_edge.f32" {
						f.(map[string]any)["sha256"] = sha256Hex(b)
					}
				}
			})
		}, verifyDequant, []string{"FAIL dequant/q4_1_edge/cpu", "FAIL dequant/q4_1_edge/bytes", "block 2 weight 5"}},
	}
	checkCorruptions(t, typesFixture, tests)
}

// sharedGoldenTypes is the full shared golden-types set (repo/../shared).
const sharedGoldenTypes = "../../shared/golden-types"

// TestSharedGoldenTypes verifies the tables and dequant sets of the full
// golden-types set, skipped only when it is absent (CI runs simrun golden on it).
func TestSharedGoldenTypes(t *testing.T) {
	verifySharedSet(t, sharedGoldenTypes)
}

// TestVerifyMulMatIDTypes emulates the committed golden-types cases (trimmed,
// see testdata/README.md) on both paths and variants: every check passes, the
// references recomputed from ggml's to_float equal the manifest's, q4_K is
// judged against the Metal-form reference and bf16 against ref_bf16in.
func TestVerifyMulMatIDTypes(t *testing.T) {
	res, checks := verifyMulMatID(t, typesMulMatID)
	for i, r := range res {
		ck := checks[i]
		switch ck.Case.TypeA {
		case "q4_K":
			if ck.MetalRefs == 0 || !strings.Contains(r.Detail, "Metal-form references") {
				t.Errorf("%s: %d outputs of the Metal-form reference differ from ref_f16in (want some): %s", r.Name, ck.MetalRefs, r.Detail)
			}
		case "bf16":
			if !strings.Contains(r.Detail, "ref_bf16in") {
				t.Errorf("%s: %s", r.Name, r.Detail)
			}
		default:
			if ck.MetalRefs != 0 || ck.RefsComputed {
				t.Errorf("%s: the manifest's ref_f16in should apply: %+v", r.Name, ck)
			}
		}
	}
}

// typesMulMatID holds the committed golden-types mulmatid cut.
const typesMulMatID = "testdata/types"

// TestQ4KNeedsMetalReference shows why q4_K is judged against its Metal-form
// reference: the emulated kernel (the shader's half d/16 for the high nibbles)
// is far outside the accumulation tolerance of ref_f16in, which sums ggml's
// to_float; and bf16 staged as half would miss ref_bf16in.
func TestQ4KNeedsMetalReference(t *testing.T) {
	m, err := ReadMulMatIDManifest(filepath.Join(typesMulMatID, "mulmatid"))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Case("KA_q4_K_n33_b1")
	if c == nil {
		t.Fatal("case KA_q4_K_n33_b1 missing")
	}
	p, tens := caseProblem(t, m.Dir, c)
	res, err := emulate.MulMatID(p, tile.Kernel{Variant: tile.Upstream(), Path: tile.Simdgroup}, tens, 0)
	if err != nil {
		t.Fatal(err)
	}
	refh, err := readF32(m.Dir, c.RefF16In.Data)
	if err != nil {
		t.Fatal(err)
	}
	ref := Reference(p, tens)
	worst := 0.0
	for i, v := range res.Dst {
		worst = worstRatio(worst, math.Abs(float64(v)-float64(refh[i])), AccumulationTolerance(p.K, ref.SumAbs[i]))
	}
	if worst <= 10 {
		t.Errorf("q4_K emulation within %.3g x the tolerance of ref_f16in: the Metal-form weights should differ clearly", worst)
	}
	b := m.Case("KA_bf16_n33_b1")
	refb, _ := readF32(m.Dir, b.RefBF16In.Data)
	refhb, _ := readF32(m.Dir, b.RefF16In.Data)
	if differing(refb, refhb) == 0 {
		t.Error("ref_bf16in equals ref_f16in: bfloat staging would not be tested")
	}
}

// caseProblem reads a case's operands.
func caseProblem(t *testing.T, dir string, c *MulMatIDCase) (tile.Problem, *emulate.Tensors) {
	t.Helper()
	p := tile.Problem{Experts: c.NExpert, Used: c.NExpertUsed, M: c.M, K: c.K, Tokens: c.NTokens,
		Broadcast: c.Src1NE1 == 1 && c.NExpertUsed > 1, TypeA: c.TypeAType}
	w, err := c.Src0.Data.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	src1, err := readF32(dir, c.Src1.Data)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := readI32(dir, c.IDs.Data)
	if err != nil {
		t.Fatal(err)
	}
	return p, &emulate.Tensors{Weights: w, Src1: src1, IDs: ids}
}
