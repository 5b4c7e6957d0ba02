package golden

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Test fixtures (see testdata/README.md):
//   - testdata/good/dequant: a few real blocks cut from the shared golden set;
//   - testdata/good/mulmatid: CONSTRUCTED (fixture_test.go), not ggml output;
//   - tables: assembled in a temporary directory from package dequant's copies
//     of the table files and index.json (minus the two tables dequant does not
//     carry: fp16_to_fp32, kvalues_iq4nl).

// fixtureRoot builds a complete golden directory in a temporary directory.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyDir(t, "testdata/good/dequant", filepath.Join(root, "dequant"))
	copyDir(t, mulmatidFixture, filepath.Join(root, "mulmatid"))
	tables := filepath.Join(root, "tables")
	copyDir(t, "../dequant/tables", tables)
	copyFile(t, "../dequant/testdata/golden/tables/index.json", filepath.Join(tables, "index.json"))
	editJSON(t, filepath.Join(tables, "index.json"), func(m map[string]any) {
		var keep []any
		for _, x := range m["tables"].([]any) {
			if n := x.(map[string]any)["name"]; n != "fp16_to_fp32" && n != "kvalues_iq4nl" {
				keep = append(keep, x)
			}
		}
		m["tables"] = keep
	})
	return root
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editJSON rewrites a JSON file through a generic map.
func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.MarshalIndent(m, "", " "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// at walks maps and arrays of a decoded JSON value: at(m, "entries", 0).
func at(v any, path ...any) map[string]any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

func modifyFile(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadGoodFixtures(t *testing.T) {
	root := fixtureRoot(t)

	dm, err := ReadDequantManifest(filepath.Join(root, "dequant"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dm.Entries) != 5 || dm.Entries[0].DType.String() != "q4_0" || !dm.Entries[4].IsConversion() || dm.Dir == "" {
		t.Errorf("dequant manifest parsed as %+v", dm.Entries)
	}

	x, err := ReadTableIndex(filepath.Join(root, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	if x.Table("iq2s_grid") == nil || x.Table("iq2s_grid").Count != 1024 || len(x.BlockLayouts) != 8 {
		t.Errorf("table index parsed as %+v", x.Tables)
	}

	mm, err := ReadMulMatIDManifest(filepath.Join(root, "mulmatid"))
	if err != nil {
		t.Fatal(err)
	}
	c := mm.Case("T_q4_0_n2_b2")
	if c == nil || c.RefF64 == nil || c.RefF16In == nil || c.Stats == nil || c.MetalKernel() != KernelMulMVID || c.TypeAType.String() != "q4_0" {
		t.Fatalf("case T_q4_0_n2_b2 parsed as %+v", c)
	}
	if c1 := mm.Case("T_q4_0_n2_b1"); c1 == nil || c1.RefF64 != nil || c1.RefF16In != nil || c1.Src1NE1 != 1 {
		t.Errorf("case T_q4_0_n2_b1 (no refs) parsed as %+v", c1)
	}
	if _, err := c.Src0.Data.Read(mm.Dir); err != nil {
		t.Error(err)
	}
	if cfg := mm.Config("T"); cfg == nil || cfg.Routes[0].TokensPerExpert[2] != 2 || cfg.Weights[0].DType.String() != "q4_0" {
		t.Errorf("config T parsed as %+v", cfg)
	}
}

// verifyPasses runs VerifyTables and VerifyDequant on the set at root,
// checks that they give tables and dequant results (what names them, for the
// error) and that every result passes, and returns the results.
func verifyPasses(t *testing.T, root string, tables, dequant int, what string) []Result {
	t.Helper()
	rs, err := VerifyTables(root)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := VerifyDequant(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != tables || len(ds) != dequant {
		t.Errorf("VerifyTables, VerifyDequant: %d and %d results, want %d and %d (%s)", len(rs), len(ds), tables, dequant, what)
	}
	all := append(rs, ds...)
	for _, r := range all {
		if !r.Pass {
			t.Error(r)
		}
	}
	return all
}

func TestVerifyFixtures(t *testing.T) {
	for _, r := range verifyPasses(t, fixtureRoot(t), 7, 3*4+1, "the tables; CPU form and both strategies per entry, the conversion") {
		want := "161 documented Metal differences (50 sign of zero, 111 from inexact scale steps)"
		if r.Name == "q4_0_edge/cpu" {
			want = "CPU form: 512 values bit-exact"
		}
		if strings.HasPrefix(r.Name, "q4_0_edge/") && !strings.Contains(r.Detail, want) {
			t.Errorf("%s: detail %q, want one containing %q", r.Name, r.Detail, want)
		}
	}
}

func TestVerifyMissingFolders(t *testing.T) {
	dir := t.TempDir()
	for name, f := range map[string]func(string) ([]Result, error){"VerifyTables": VerifyTables, "VerifyDequant": VerifyDequant} {
		if rs, err := f(dir); rs != nil || err != nil {
			t.Errorf("%s on an empty directory: %v, %v; want nil, nil", name, rs, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tables"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyTables(dir); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("VerifyTables with a file named tables: err %v", err)
	}
}

// failing turns the failing Results of a Verify function into an error.
func failing(rs []Result, err error) error {
	if err != nil {
		return err
	}
	var msgs []string
	for _, r := range rs {
		if !r.Pass {
			msgs = append(msgs, r.String())
		}
	}
	if msgs == nil {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// TestCorruptFixtures damages one thing at a time and requires an error (or a
// failing Result) that names the manifest file, the entry and the field.
func TestCorruptFixtures(t *testing.T) {
	readDequant := func(root string) error {
		_, err := ReadDequantManifest(filepath.Join(root, "dequant"))
		return err
	}
	readMulMatID := func(root string) error {
		_, err := ReadMulMatIDManifest(filepath.Join(root, "mulmatid"))
		return err
	}
	readTables := func(root string) error {
		_, err := ReadTableIndex(filepath.Join(root, "tables"))
		return err
	}
	verifyDequant := func(root string) error { return failing(VerifyDequant(root)) }
	verifyTables := func(root string) error { return failing(VerifyTables(root)) }

	dq := func(edit func(m map[string]any)) func(*testing.T, string) {
		return func(t *testing.T, root string) { editJSON(t, filepath.Join(root, "dequant", "manifest.json"), edit) }
	}
	mm := func(edit func(m map[string]any)) func(*testing.T, string) {
		return func(t *testing.T, root string) { editJSON(t, filepath.Join(root, "mulmatid", "manifest.json"), edit) }
	}
	tb := func(edit func(m map[string]any)) func(*testing.T, string) {
		return func(t *testing.T, root string) { editJSON(t, filepath.Join(root, "tables", "index.json"), edit) }
	}
	file := func(rel string, f func([]byte) []byte) func(*testing.T, string) {
		return func(t *testing.T, root string) { modifyFile(t, filepath.Join(root, rel), f) }
	}
	flip := func(b []byte) []byte { b[len(b)/2] ^= 1; return b }
	dqMan, mmMan, tbMan := filepath.Join("dequant", "manifest.json"), filepath.Join("mulmatid", "manifest.json"), filepath.Join("tables", "index.json")

	tests := []corruption{
		// dequant/manifest.json
		{"dequant bad JSON", file(dqMan, func(b []byte) []byte { return b[:len(b)/2] }), readDequant,
			[]string{dqMan, "bad JSON"}},
		{"dequant trailing data", file(dqMan, func(b []byte) []byte { return append(b, "{}"...) }), readDequant,
			[]string{dqMan, "trailing data"}},
		{"dequant format_version", dq(func(m map[string]any) { m["format_version"] = 2 }), readDequant,
			[]string{dqMan, "format_version: 2"}},
		{"dequant format_version type", dq(func(m map[string]any) { m["format_version"] = "1" }), readDequant,
			[]string{dqMan, "format_version"}},
		{"dequant byte_order", dq(func(m map[string]any) { m["byte_order"] = "big-endian" }), readDequant,
			[]string{dqMan, "byte_order", "big-endian"}},
		{"dequant unknown type", dq(func(m map[string]any) { at(m, "entries", 0)["type"] = "q5_k" }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "type", `"q5_k"`}},
		{"dequant unquantized type", dq(func(m map[string]any) { at(m, "entries", 0)["type"] = "f16" }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "type", "f16"}},
		{"dequant ggml_type_id", dq(func(m map[string]any) { at(m, "entries", 0)["ggml_type_id"] = 3 }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "ggml_type_id: 3", "2"}},
		{"dequant n_elements", dq(func(m map[string]any) { at(m, "entries", 1)["n_elements"] = 65 }), readDequant,
			[]string{dqMan, `entries[1] "q8_0_quant"`, "n_elements: 65", "64"}},
		{"dequant block_bytes", dq(func(m map[string]any) { at(m, "entries", 1)["block_bytes"] = 35 }), readDequant,
			[]string{dqMan, `entries[1] "q8_0_quant"`, "block_bytes: 35", "have 34"}},
		{"dequant elements_per_block", dq(func(m map[string]any) { at(m, "entries", 2)["elements_per_block"] = 32 }), readDequant,
			[]string{dqMan, `entries[2] "iq2_xxs_randbytes"`, "elements_per_block: 32", "256"}},
		{"dequant n_blocks", dq(func(m map[string]any) { at(m, "entries", 2)["n_blocks"] = 0 }), readDequant,
			[]string{dqMan, `entries[2] "iq2_xxs_randbytes"`, "n_blocks: 0"}},
		{"dequant blocks bytes vs n_blocks", dq(func(m map[string]any) { at(m, "entries", 0, "blocks")["bytes"] = 287 }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "blocks", "q4_0_edge.blocks", "bytes: 287", "288"}},
		{"dequant missing f32", dq(func(m map[string]any) { delete(at(m, "entries", 3), "f32") }), readDequant,
			[]string{dqMan, `entries[3] "iq3_s_edge"`, "f32: missing"}},
		{"dequant sha256 format", dq(func(m map[string]any) { at(m, "entries", 0, "f32")["sha256"] = "ABC" }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "f32", "sha256", `"ABC"`}},
		{"dequant descriptor not in files", dq(func(m map[string]any) {
			at(m, "entries", 0, "f32")["sha256"] = strings.Repeat("0", 64)
		}), readDequant, []string{dqMan, `entries[0] "q4_0_edge"`, "f32", "q4_0_edge.f32", "differs from files[]"}},
		{"dequant path escape", dq(func(m map[string]any) { at(m, "entries", 0, "f32")["file"] = "../q4_0_edge.f32" }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "f32", "plain file name"}},
		{"dequant unknown variant", dq(func(m map[string]any) { at(m, "entries", 1)["variant"] = "fancy" }), readDequant,
			[]string{dqMan, `entries[1] "q8_0_quant"`, "variant", "fancy"}},
		{"dequant d_bits_per_block", dq(func(m map[string]any) { at(m, "entries", 0)["d_bits_per_block"].([]any)[3] = "zz" }), readDequant,
			[]string{dqMan, `entries[0] "q4_0_edge"`, "d_bits_per_block[3]", "zz"}},
		{"dequant conversion count", dq(func(m map[string]any) { at(m, "entries", 4)["count"] = 65 }), readDequant,
			[]string{dqMan, `entries[4] "fp32_to_fp16"`, "input_f32", "bytes: 256", "260"}},
		{"dequant duplicate name", dq(func(m map[string]any) { at(m, "entries", 1)["name"] = "q4_0_edge" }), readDequant,
			[]string{dqMan, `entries[1] "q4_0_edge"`, "duplicate"}},
		{"dequant files unsorted", dq(func(m map[string]any) {
			f := m["files"].([]any)
			f[0], f[1] = f[1], f[0]
		}), readDequant, []string{dqMan, "files[1]", "not sorted"}},
		{"dequant truncated file", file("dequant/q8_0_quant.f32", func(b []byte) []byte { return b[:100] }), readDequant,
			[]string{dqMan, "q8_0_quant.f32", "bytes", "256", "100"}},
		{"dequant missing file", func(t *testing.T, root string) { os.Remove(filepath.Join(root, "dequant", "iq3_s_edge.blocks")) }, readDequant,
			[]string{dqMan, "iq3_s_edge.blocks", "missing"}},
		{"dequant bad sha", file("dequant/q4_0_edge.blocks", flip), verifyDequant,
			[]string{"FAIL dequant/q4_0_edge/bytes", "FAIL dequant/q4_0_edge/words", `"q4_0_edge.blocks"`, "sha256: manifest says"}},
		{"dequant wrong values", func(t *testing.T, root string) {
			// A consistent manifest whose f32 disagrees with the blocks.
			modifyFile(t, filepath.Join(root, "dequant", "q8_0_quant.f32"), flip)
			b, _ := os.ReadFile(filepath.Join(root, "dequant", "q8_0_quant.f32"))
			editJSON(t, filepath.Join(root, "dequant", "manifest.json"), func(m map[string]any) {
				at(m, "entries", 1, "f32")["sha256"] = sha256Hex(b)
				for _, f := range m["files"].([]any) {
					if f.(map[string]any)["file"] == "q8_0_quant.f32" {
						f.(map[string]any)["sha256"] = sha256Hex(b)
					}
				}
			})
		}, verifyDequant, []string{"FAIL dequant/q8_0_quant/bytes", "1 of 64 values differ from ggml; first: block 1 weight 0"}},

		// mulmatid/manifest.json
		{"mulmatid bad JSON", file(mmMan, func(b []byte) []byte { return append([]byte("x"), b...) }), readMulMatID,
			[]string{mmMan, "bad JSON"}},
		{"mulmatid format_version", mm(func(m map[string]any) { m["format_version"] = 0 }), readMulMatID,
			[]string{mmMan, "format_version: 0"}},
		{"mulmatid unknown type_a", mm(func(m map[string]any) { at(m, "cases", 0)["type_a"] = "q9_9" }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "type_a", `"q9_9"`}},
		{"mulmatid type_a without weights", mm(func(m map[string]any) { at(m, "cases", 0)["type_a"] = "iq2_xs" }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "type_a", "no iq2_xs weights"}},
		{"mulmatid unknown config", mm(func(m map[string]any) { at(m, "cases", 1)["config"] = "Z" }), readMulMatID,
			[]string{mmMan, `cases[1] "T_q4_0_n2_b1"`, "config", `"Z"`}},
		{"mulmatid k", mm(func(m map[string]any) { at(m, "cases", 1)["k"] = 64 }), readMulMatID,
			[]string{mmMan, `cases[1] "T_q4_0_n2_b1"`, "k: 64", "32"}},
		{"mulmatid src1 ne", mm(func(m map[string]any) { at(m, "cases", 0, "src1")["ne"].([]any)[1] = 1 }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "src1: ne"}},
		{"mulmatid src1_ne1", mm(func(m map[string]any) { at(m, "cases", 0)["src1_ne1"] = 3 }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "src1_ne1 = 3"}},
		{"mulmatid dst bytes", mm(func(m map[string]any) { at(m, "cases", 0, "dst", "data")["bytes"] = 31 }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "dst: data", "bytes: 31", "32"}},
		{"mulmatid ref_f16in type", mm(func(m map[string]any) { at(m, "cases", 0, "ref_f16in")["type"] = "f16" }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "ref_f16in: type", `"f16"`}},
		{"mulmatid stats missing", mm(func(m map[string]any) { delete(at(m, "cases", 0), "stats") }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "stats: missing"}},
		{"mulmatid metal kernel", mm(func(m map[string]any) { at(m, "cases", 0)["metal_kernel_expected"] = "mul_mm" }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "metal_kernel_expected", `"mul_mm"`}},
		{"mulmatid case tokens_per_expert", mm(func(m map[string]any) {
			tpe := at(m, "cases", 1)["tokens_per_expert"].([]any)
			tpe[0], tpe[2] = tpe[2], tpe[0]
		}), readMulMatID, []string{mmMan, `cases[1] "T_q4_0_n2_b1"`, "tokens_per_expert[0]: 2", "1"}},
		{"mulmatid route tokens_per_expert sum", mm(func(m map[string]any) {
			at(m, "configs", 0, "routes", 0)["tokens_per_expert"].([]any)[0] = 0
		}), readMulMatID, []string{mmMan, `configs[0] "T"`, "routes[0]", "tokens_per_expert: sum 3", "4"}},
		{"mulmatid weights nb", mm(func(m map[string]any) { at(m, "configs", 0, "weights", 0)["nb"].([]any)[1] = 19 }), readMulMatID,
			[]string{mmMan, `configs[0] "T"`, `weights[0] "q4_0"`, "nb"}},
		{"mulmatid weights type", mm(func(m map[string]any) { at(m, "configs", 0, "weights", 0)["type"] = "q4_1" }), readMulMatID,
			[]string{mmMan, `configs[0] "T"`, `weights[0] "q4_1"`, "type"}},
		{"mulmatid n_expert_used", mm(func(m map[string]any) { at(m, "configs", 0)["n_expert_used"] = 4 }), readMulMatID,
			[]string{mmMan, `configs[0] "T"`, "n_expert_used: 4", "1..3"}},
		{"mulmatid src0 not the config's", mm(func(m map[string]any) { at(m, "cases", 0, "src0", "data")["file"] = "T_act_n2_b2.f32" }), readMulMatID,
			[]string{mmMan, `cases[0] "T_q4_0_n2_b2"`, "src0: data"}},
		{"mulmatid duplicate case", mm(func(m map[string]any) { at(m, "cases", 1)["name"] = "T_q4_0_n2_b2" }), readMulMatID,
			[]string{mmMan, `cases[1] "T_q4_0_n2_b2"`, "duplicate"}},
		{"mulmatid truncated weights", file("mulmatid/T_w_q4_0.bin", func(b []byte) []byte { return b[:90] }), readMulMatID,
			[]string{mmMan, "T_w_q4_0.bin", "bytes: manifest says 108, file has 90"}},

		// tables/index.json and table files
		{"tables element_bytes", tb(func(m map[string]any) { at(m, "tables", 2)["element_bytes"] = 4 }), readTables,
			[]string{tbMan, `tables[2] "iq2xxs_grid"`, "element_bytes: 4", "8"}},
		{"tables block_bytes", tb(func(m map[string]any) { at(m, "block_layouts", 0)["block_bytes"] = 19 }), readTables,
			[]string{tbMan, `block_layouts[0] "q4_0"`, "block_bytes: 19", "18"}},
		{"tables layout type", tb(func(m map[string]any) { at(m, "block_layouts", 1)["type"] = "q8_1" }), readTables,
			[]string{tbMan, `block_layouts[1] "q8_1"`, "type"}},
		{"tables field offset", tb(func(m map[string]any) { at(m, "block_layouts", 2, "fields", 1)["offset"] = 4 }), readTables,
			[]string{tbMan, `block_layouts[2] "iq2_xxs"`, `fields[1] "qs"`, "offset: 4"}},
		{"tables missing file", func(t *testing.T, root string) { os.Remove(filepath.Join(root, "tables", "iq3s_grid.txt")) }, readTables,
			[]string{tbMan, `"iq3s_grid"`, "iq3s_grid.txt", "missing"}},
		{"tables text changed", file("tables/iq3xxs_grid.txt", func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "0x04040404", "0x04040406", 1))
		}), verifyTables, []string{"FAIL tables/iq3xxs_grid", `"iq3xxs_grid.txt"`, "sha256"}},
		{"tables value changed", func(t *testing.T, root string) {
			p := filepath.Join(root, "tables", "ksigns_iq2xs.txt")
			modifyFile(t, p, func(b []byte) []byte { return []byte(strings.Replace(string(b), "0x81", "0x01", 1)) })
			b, _ := os.ReadFile(p)
			editJSON(t, filepath.Join(root, "tables", "index.json"), func(m map[string]any) { at(m, "tables", 1)["file_sha256"] = sha256Hex(b) })
		}, verifyTables, []string{"FAIL tables/ksigns_iq2xs", "element 1", "file 0x1", "built in 0x81"}},
		{"tables raw digest", tb(func(m map[string]any) { at(m, "tables", 0)["raw_le_sha256"] = strings.Repeat("a", 64) }), verifyTables,
			[]string{"FAIL tables/kmask_iq2xs", "raw_le_sha256"}},
		{"tables entry missing", tb(func(m map[string]any) { m["tables"] = m["tables"].([]any)[1:] }), verifyTables,
			[]string{"FAIL tables/kmask_iq2xs", "not listed"}},
	}
	checkCorruptions(t, fixtureRoot, tests)
}

// corruption is one damage done to a fixture: mutate applies it, check reads
// or verifies the damaged set, and its error must contain every want.
type corruption struct {
	name   string
	mutate func(*testing.T, string)
	check  func(string) error
	want   []string
}

// checkCorruptions applies each corruption to a fresh copy of a fixture
// (built by fixture) and checks the error it must cause.
func checkCorruptions(t *testing.T, fixture func(*testing.T) string, tests []corruption) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t)
			tc.mutate(t, root)
			err := tc.check(root)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestDescriptorRead(t *testing.T) {
	dir := t.TempDir()
	content := []byte("golden")
	if err := os.WriteFile(filepath.Join(dir, "f.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	good := Descriptor{File: "f.bin", Bytes: 6, SHA256: sha256Hex(content)}
	tests := []struct {
		name string
		d    Descriptor
		want string // "" = success
	}{
		{"good", good, ""},
		{"wrong size", Descriptor{"f.bin", 7, good.SHA256}, `file "f.bin"` + fmt.Sprintf(" (%s): bytes: manifest says 7, file has 6", filepath.Join(dir, "f.bin"))},
		{"wrong digest", Descriptor{"f.bin", 6, strings.Repeat("0", 64)}, "sha256: manifest says " + strings.Repeat("0", 64) + ", file has " + good.SHA256},
		{"missing file", Descriptor{"g.bin", 6, good.SHA256}, `file "g.bin"`},
		{"absolute name", Descriptor{"/etc/passwd", 6, good.SHA256}, "plain file name"},
		{"sub directory", Descriptor{"a/f.bin", 6, good.SHA256}, "plain file name"},
		{"empty name", Descriptor{"", 6, good.SHA256}, "file: missing"},
		{"negative size", Descriptor{"f.bin", -1, good.SHA256}, "bytes: -1"},
		{"upper-case digest", Descriptor{"f.bin", 6, strings.ToUpper(good.SHA256)}, "sha256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.d.Read(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && string(b) != string(content):
				t.Fatalf("read %q", b)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestResultString(t *testing.T) {
	r := Result{Set: "dequant", Name: "q8_0_quant/bytes", Pass: true, Detail: "2048 values bit-exact"}
	if got, want := r.String(), "PASS dequant/q8_0_quant/bytes: 2048 values bit-exact"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.Pass = false
	if got := r.String(); !strings.HasPrefix(got, "FAIL ") {
		t.Errorf("got %q", got)
	}
}

// verifySharedSet runs VerifyTables and VerifyDequant on a full shared set
// (skipping the test when it is absent), requires results from both and every
// one to pass, and returns VerifyDequant's.
func verifySharedSet(t *testing.T, dir string) []Result {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared set %s not available: %v", dir, err)
	}
	var rs []Result
	for _, v := range []struct {
		name string
		f    func(string) ([]Result, error)
	}{{"VerifyTables", VerifyTables}, {"VerifyDequant", VerifyDequant}} {
		var err error
		if rs, err = v.f(dir); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if len(rs) == 0 {
			t.Fatalf("%s: no results", v.name)
		}
		for _, r := range rs {
			if !r.Pass {
				t.Errorf("%s: %v", v.name, r)
			} else if testing.Verbose() {
				t.Log(r)
			}
		}
	}
	return rs
}

// sharedGolden is the full shared golden set, relative to this package's
// directory (repo/../shared/golden).
const sharedGolden = "../../shared/golden"

// TestSharedGolden runs every verification on the full shared golden set and
// requires every result to pass. It is skipped only when the set is absent.
func TestSharedGolden(t *testing.T) {
	rs := verifySharedSet(t, sharedGolden)
	// The fp16 -> fp32 table is part of the shared set: it must have been checked.
	if last := rs[len(rs)-1]; last.Name != "fp16_to_fp32" {
		t.Errorf("fp16_to_fp32.txt was not verified (last result %v)", last)
	}

	m, err := ReadMulMatIDManifest(filepath.Join(sharedGolden, "mulmatid"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) != 176 || len(m.Configs) != 3 {
		t.Errorf("mulmatid: %d configs, %d cases; want 3, 176", len(m.Configs), len(m.Cases))
	}
	for _, d := range m.Files {
		if _, err := d.Read(m.Dir); err != nil {
			t.Error(err)
		}
	}
	mm, mv := 0, 0
	for i := range m.Cases {
		c := &m.Cases[i]
		if c.RefF64 == nil || c.RefF16In == nil {
			t.Errorf("case %s: references missing", c.Name)
		}
		if c.MetalKernel() == KernelMulMMID {
			mm++
		} else {
			mv++
		}
	}
	t.Logf("mulmatid: %d cases for mul_mm_id, %d for mul_mv_id", mm, mv)
}
