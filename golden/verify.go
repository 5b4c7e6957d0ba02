package golden

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/fileio"
)

// Result is one checked item, one line of `simrun golden` output.
type Result struct {
	Set    string // "tables" or "dequant" (the lead's VerifyMulMatID adds "mulmatid")
	Name   string // table name, "<entry>/<strategy>", "fp32_to_fp16" or "fp16_to_fp32"
	Pass   bool
	Detail string // what was compared and, on failure, the first difference
}

// String formats r as "PASS set/name: detail" (or FAIL).
func (r Result) String() string {
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s %s/%s: %s", verdict, r.Set, r.Name, r.Detail)
}

// dirExists reports whether path is a directory; errors other than "does not
// exist" are returned.
func dirExists(path string) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, fmt.Errorf("%s: not a directory", path)
	}
	return true, nil
}

// readPart reads the part folder (tables, dequant, mulmatid) of the golden
// set dir with read and returns the document and the folder; the document is
// nil, with no error, when the set has no such folder.
func readPart[T any](dir, part string, read func(string) (*T, error)) (*T, string, error) {
	pdir := filepath.Join(dir, part)
	if ok, err := dirExists(pdir); !ok {
		return nil, pdir, err
	}
	doc, err := read(pdir)
	return doc, pdir, err
}

// VerifyTables compares the lookup tables built into package dequant with
// dir/tables. Every table index.json lists is checked (in index order): it must
// be built in, its text file's SHA-256 must equal file_sha256, its values must
// equal the built-in ones, and the built-in values packed little-endian must
// hash to raw_le_sha256. Every built-in table that a type of the index's
// block_layouts reads must be listed. fp16_to_fp32 (listed, or named in
// external_tables) is checked by VerifyDequant. It returns (nil, nil) when dir
// has no tables/ folder, and an error when index.json cannot be read or is
// invalid.
func VerifyTables(dir string) ([]Result, error) {
	idx, tdir, err := readPart(dir, "tables", ReadTableIndex)
	if idx == nil || err != nil {
		return nil, err
	}
	builtIn := map[string]dequant.LookupTable{}
	for _, lt := range dequant.LookupTables() {
		builtIn[lt.Name] = lt
	}
	var out []Result
	for i := range idx.Tables {
		info := &idx.Tables[i]
		if info.Name == fp16Table {
			continue
		}
		r := Result{Set: "tables", Name: info.Name}
		if lt, ok := builtIn[info.Name]; ok {
			r.Detail, r.Pass = verifyTable(tdir, info, lt)
		} else {
			r.Detail = "listed in index.json, but package dequant has no such table"
		}
		out = append(out, r)
	}
	layoutTypes := map[dequant.Type]bool{}
	for _, b := range idx.BlockLayouts {
		if t, err := dequant.ParseType(b.Type); err == nil {
			layoutTypes[t] = true
		}
	}
	for _, lt := range dequant.LookupTables() {
		if idx.Table(lt.Name) != nil {
			continue
		}
		for _, t := range lt.UsedBy {
			if layoutTypes[t] {
				out = append(out, Result{Set: "tables", Name: lt.Name,
					Detail: fmt.Sprintf("not listed in index.json, but block_layouts has %s, whose decoder reads it", t)})
				break
			}
		}
	}
	return out, nil
}

// fp16Table is the fp16 -> fp32 table's name in the golden indexes.
const fp16Table = "fp16_to_fp32"

func verifyTable(dir string, info *TableInfo, lt dequant.LookupTable) (string, bool) {
	if info == nil {
		return "not listed in index.json", false
	}
	if info.ElementBytes != lt.ElementBytes || info.Count != len(lt.Values) {
		return fmt.Sprintf("index says %d x %s, built in %d x %s", info.Count, info.ElementType, len(lt.Values), lt.ElementType), false
	}
	raw := make([]byte, 0, len(lt.Values)*lt.ElementBytes)
	for _, v := range lt.Values {
		for b := 0; b < lt.ElementBytes; b++ {
			raw = append(raw, byte(v>>(8*b)))
		}
	}
	if got := sha256Hex(raw); got != info.RawLESHA256 {
		return fmt.Sprintf("raw_le_sha256: index says %s, built-in table has %s", info.RawLESHA256, got), false
	}
	text, err := fileio.ReadFile(filepath.Join(dir, info.File), fileio.GoldenData)
	if err != nil {
		return err.Error(), false
	}
	if got := sha256Hex(text); got != info.FileSHA256 {
		return fmt.Sprintf("file %q: sha256: index file_sha256 says %s, file has %s", info.File, info.FileSHA256, got), false
	}
	vals, err := parseTableText(text, info)
	if err != nil {
		return fmt.Sprintf("file %q: %v", info.File, err), false
	}
	for i, v := range vals {
		if v != lt.Values[i] {
			return fmt.Sprintf("file %q: element %d: file %#x, built in %#x", info.File, i, v, lt.Values[i]), false
		}
	}
	return fmt.Sprintf("%d x %s equal; file_sha256 and raw_le_sha256 match", len(vals), info.ElementType), true
}

// parseTableText parses a table text file (golden README §2) strictly.
func parseTableText(text []byte, info *TableInfo) ([]uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	want := fmt.Sprintf("# name=%s type=%s count=%d", info.Name, info.ElementType, info.Count)
	if !sc.Scan() || sc.Text() != want {
		return nil, fmt.Errorf("line 1: header %q, want %q", sc.Text(), want)
	}
	vals := make([]uint64, 0, info.Count)
	for line := 2; sc.Scan(); line++ {
		h, ok := strings.CutPrefix(sc.Text(), "0x")
		if !ok || len(h) != 2*info.ElementBytes || strings.ToLower(h) != h {
			return nil, fmt.Errorf("line %d: %q: want 0x and %d lower-case hex digits", line, sc.Text(), 2*info.ElementBytes)
		}
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		vals = append(vals, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(vals) != info.Count {
		return nil, fmt.Errorf("count: %d elements, header says %d", len(vals), info.Count)
	}
	return vals, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// VerifyDequant checks package dequant against dir/dequant/manifest.json. Every
// block entry is decoded with CPUDecoder, which must equal its .f32 file bit for
// bit ("<entry>/cpu"), and with both strategies of the Metal-form Decoder
// ("<entry>/bytes", "<entry>/words"), whose values must equal the file's or
// differ as dequant.CompareMetal documents (golden README §3, golden-types
// README §3.1): a +0 for the CPU's -0 in the offset-adding types, or the value of
// an inexact half (mxfp4: +inf) scale step, equal to an independent float64
// model; Detail counts them. For bf16 the blocks must also hold the entry's
// bits_per_block. The conversion entry checks HalfFromFloat32 (fp32_to_fp16)
// or BF16FromFloat32 (fp32_to_bf16); if the set has fp16_to_fp32.txt (in
// tables/, or named by index.json's external_tables), Float32FromHalf is checked
// on all 65536 patterns. It returns (nil, nil) when dir has no dequant/ folder
// and an error when the manifest cannot be read or is invalid; a bad data file
// is a failing Result.
func VerifyDequant(dir string) ([]Result, error) {
	m, ddir, err := readPart(dir, "dequant", ReadDequantManifest)
	if m == nil || err != nil {
		return nil, err
	}
	var out []Result
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.IsConversion() {
			out = append(out, verifyConversion(ddir, e))
			continue
		}
		out = append(out, verifyBlocks(ddir, e)...)
	}
	if r, ok := verifyWidening(filepath.Join(dir, "tables")); ok {
		out = append(out, r)
	}
	return out, nil
}

// blockForms are the decoders verifyBlocks runs: the CPU form, then both
// strategies of the Metal form.
var blockForms = []string{"cpu", dequant.ByteReads.String(), dequant.WordReads.String()}

func verifyBlocks(dir string, e *DequantEntry) []Result {
	fail := func(detail string) []Result {
		var rs []Result
		for _, f := range blockForms {
			rs = append(rs, Result{"dequant", e.Name + "/" + f, false, detail})
		}
		return rs
	}
	blocks, err := e.Blocks.Read(dir)
	if err != nil {
		return fail(err.Error())
	}
	raw, err := e.F32.Read(dir)
	if err != nil {
		return fail(err.Error())
	}
	want := make([]float32, e.NElements)
	for i := range want {
		want[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	// where names element i as the manifest numbers it (a bf16 block is one element)
	where := func(i int) string {
		return fmt.Sprintf("block %d weight %d", i/e.ElementsPerBlock, i%e.ElementsPerBlock)
	}
	rs := []Result{verifyCPU(e, blocks, want, where)}
	for _, s := range []dequant.Strategy{dequant.ByteReads, dequant.WordReads} {
		rs = append(rs, verifyMetal(e, s, blocks, want, where))
	}
	return rs
}

// verifyCPU compares CPUDecoder with the file bit for bit.
func verifyCPU(e *DequantEntry, blocks []byte, want []float32, where func(int) string) Result {
	t := e.DType
	l := t.Layout()
	r := Result{Set: "dequant", Name: e.Name + "/cpu"}
	for i, s := range e.BitsPerBlock {
		if v, _ := parseHalfBits(s); binary.LittleEndian.Uint16(blocks[2*i:]) != v {
			r.Detail = fmt.Sprintf("element %d: the blocks hold %#04x, bits_per_block[%d] says %s", i, binary.LittleEndian.Uint16(blocks[2*i:]), i, s)
			return r
		}
	}
	decode := dequant.CPUDecoder(t)
	got := make([]float32, l.BlockWeights)
	bad, first := 0, ""
	for b := 0; b < e.NElements/l.BlockWeights; b++ {
		decode(blocks[b*l.BlockBytes:(b+1)*l.BlockBytes], got)
		for j, g := range got {
			i := b*l.BlockWeights + j
			if math.Float32bits(g) != math.Float32bits(want[i]) {
				if bad++; bad == 1 {
					first = fmt.Sprintf("%s: got %g (%#08x), ggml %g (%#08x)", where(i), g, math.Float32bits(g), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
	r.Pass = bad == 0
	switch {
	case !r.Pass:
		r.Detail = fmt.Sprintf("CPU form: %d of %d values differ from ggml; first: %s", bad, e.NElements, first)
	case e.BitsPerBlock != nil:
		r.Detail = fmt.Sprintf("CPU form: %d values bit-exact; the blocks hold bits_per_block", e.NElements)
	default:
		r.Detail = fmt.Sprintf("CPU form: %d values bit-exact", e.NElements)
	}
	return r
}

// verifyMetal compares the Metal-form decoder with the file, allowing the
// documented differences.
func verifyMetal(e *DequantEntry, s dequant.Strategy, blocks []byte, want []float32, where func(int) string) Result {
	t := e.DType
	l := t.Layout()
	decode := dequant.Decoder(t, s)
	var chunk [16]float32
	var kinds [dequant.Unexplained + 1]int
	first := ""
	for b := 0; b < e.NElements/l.BlockWeights; b++ {
		block := blocks[b*l.BlockBytes : (b+1)*l.BlockBytes]
		for il := 0; il < t.Chunks(); il++ {
			decode(block, il, &chunk)
			for j, got := range chunk {
				i := b*l.BlockWeights + 16*il + j
				k := dequant.CompareMetal(t, block, il, j, got, want[i])
				if kinds[k]++; k == dequant.Unexplained && first == "" {
					first = fmt.Sprintf("%s: got %g (%#08x), ggml %g (%#08x)",
						where(i), got, math.Float32bits(got), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
	r := Result{Set: "dequant", Name: e.Name + "/" + s.String(), Pass: first == ""}
	n, documented := e.NElements, kinds[dequant.ZeroSign]+kinds[dequant.ScaleStep]
	switch {
	case !r.Pass:
		r.Detail = fmt.Sprintf("%d of %d values differ from ggml; first: %s", kinds[dequant.Unexplained], n, first)
	case documented > 0:
		r.Detail = fmt.Sprintf("%d values: %d bit-exact, %d documented Metal differences (%d sign of zero, %d from inexact scale steps)",
			n, kinds[dequant.BitExact], documented, kinds[dequant.ZeroSign], kinds[dequant.ScaleStep])
	default:
		r.Detail = fmt.Sprintf("%d values bit-exact", n)
	}
	return r
}

func verifyConversion(dir string, e *DequantEntry) Result {
	r := Result{Set: "dequant", Name: e.Name}
	in, err := e.InputF32.Read(dir)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	od, bf16 := e.Output()
	out, err := od.Read(dir)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	conv, name, ref := dequant.HalfFromFloat32, "HalfFromFloat32", "ggml_fp32_to_fp16"
	if bf16 {
		conv, name, ref = dequant.BF16FromFloat32, "BF16FromFloat32", "ggml_fp32_to_bf16"
	}
	bad, first := 0, ""
	for i := 0; i < e.Count; i++ {
		f := math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:]))
		want := binary.LittleEndian.Uint16(out[2*i:])
		if got := conv(f); got != want {
			if bad++; bad == 1 {
				first = fmt.Sprintf("input %d (%#08x): got %#04x, ggml %#04x", i, math.Float32bits(f), got, want)
			}
		}
	}
	r.Pass = bad == 0
	if r.Pass {
		r.Detail = fmt.Sprintf("%s equals %s on %d inputs", name, ref, e.Count)
	} else {
		r.Detail = fmt.Sprintf("%d of %d conversions differ; first: %s", bad, e.Count, first)
	}
	return r
}

// verifyWidening checks Float32FromHalf against fp16_to_fp32.txt (ok = false
// when the set has none): the file tables/fp16_to_fp32.txt, or the file
// index.json's external_tables names for it (golden-types points at the first
// set's copy; a missing external file is a failure). When index.json lists the
// table, the file's digest and the packed values' digest are checked too.
func verifyWidening(tdir string) (Result, bool) {
	r := Result{Set: "dequant", Name: fp16Table}
	file := fp16Table + ".txt"
	var fileSHA, rawSHA string
	external := false
	if idx, err := ReadTableIndex(tdir); err == nil {
		if ti := idx.Table(fp16Table); ti != nil {
			file, fileSHA, rawSHA = ti.File, ti.FileSHA256, ti.RawLESHA256
		} else if ex := idx.External(fp16Table); ex != nil {
			file, fileSHA, rawSHA, external = ex.File, ex.FileSHA256, ex.RawLESHA256, true
		}
	}
	path := filepath.Join(tdir, filepath.FromSlash(file))
	text, err := fileio.ReadFile(path, fileio.GoldenData)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !external:
		return Result{}, false
	case errors.Is(err, fs.ErrNotExist):
		r.Detail = fmt.Sprintf("external table %q (%s): missing; this set's index.json takes it from another golden set, which must sit beside it", file, path)
		return r, true
	case err != nil:
		r.Detail = err.Error()
		return r, true
	}
	if got := sha256Hex(text); fileSHA != "" && got != fileSHA {
		r.Detail = fmt.Sprintf("file %q: sha256: index file_sha256 says %s, file has %s", file, fileSHA, got)
		return r, true
	}
	info := &TableInfo{Name: fp16Table, File: file, ElementType: "uint32", ElementBytes: 4, Count: 1 << 16}
	vals, err := parseTableText(text, info)
	if err != nil {
		r.Detail = fmt.Sprintf("file %q: %v", file, err)
		return r, true
	}
	raw := make([]byte, 0, 4<<16)
	for h, want := range vals {
		got := math.Float32bits(dequant.Float32FromHalf(uint16(h)))
		if uint64(got) != want {
			r.Detail = fmt.Sprintf("half %#04x: Float32FromHalf gives %#08x, table %#08x", h, got, want)
			return r, true
		}
		raw = binary.LittleEndian.AppendUint32(raw, got)
	}
	if got := sha256Hex(raw); rawSHA != "" && got != rawSHA {
		r.Detail = fmt.Sprintf("file %q: raw_le_sha256: index says %s, the values hash to %s", file, rawSHA, got)
		return r, true
	}
	r.Pass = true
	r.Detail = "Float32FromHalf equals ggml's fp16 -> fp32 on all 65536 patterns"
	if external {
		r.Detail += fmt.Sprintf(" (external table %s)", file)
	}
	return r, true
}

// VerifyAll verifies every set a golden directory holds (VerifyTables,
// VerifyDequant, VerifyMulMatID) and returns the results in that order and
// the folders it does not hold ("tables/", ...). An error names the set.
func VerifyAll(dir string) (results []Result, absent []string, err error) {
	for _, step := range []struct {
		name string
		f    func(string) ([]Result, error)
	}{
		{"tables", VerifyTables},
		{"dequant", VerifyDequant},
		{"mulmatid", func(d string) ([]Result, error) { r, _, err := VerifyMulMatID(d); return r, err }},
	} {
		res, err := step.f(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", step.name, err)
		}
		if len(res) == 0 {
			absent = append(absent, step.name+"/")
		}
		results = append(results, res...)
	}
	return results, absent, nil
}

// Summary is the closing line of a verification of dir ("golden: P passed,
// F failed", and the sets it does not hold) and the number failed; an error
// when nothing was checked.
func Summary(dir string, results []Result, absent []string) (string, int, error) {
	if len(results) == 0 { // nothing was checked: no summary that reads like a result
		return "", 0, fmt.Errorf("%s holds no tables/, dequant/ or mulmatid/ folder", dir)
	}
	failed := 0
	for _, r := range results {
		if !r.Pass {
			failed++
		}
	}
	s := fmt.Sprintf("golden: %d passed, %d failed", len(results)-failed, failed)
	if len(absent) > 0 {
		s += fmt.Sprintf(" (not in %s, so not checked: %s)", dir, strings.Join(absent, ", "))
	}
	return s, failed, nil
}
