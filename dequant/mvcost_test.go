package dequant

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// read is one load a lane's step makes: its address space, byte offset in the
// block (device loads) and width.
type read struct {
	space Space
	off   int
	width int
}

func devAt(off, width int) read { return read{Device, off, width} }

// seq returns n device reads of width bytes at off, off+width, ...
func seq(off, width, n int) []read {
	out := make([]read, n)
	for i := range out {
		out[i] = devAt(off+i*width, width)
	}
	return out
}

// table returns n reads of a lookup table in space sp.
func table(sp Space, width, n int) []read {
	out := make([]read, n)
	for i := range out {
		out[i] = read{sp, -1, width}
	}
	return out
}

// entries returns the reads of n table entries of size bytes that the kernel
// reads byte by byte (grid[j], j = 0..size-1, from a uint8 pointer into the
// aligned entry): each entry's run of adjacent bytes is one load per
// byteRunBytes of it (V6).
func entries(sp Space, n, size int) []read {
	var out []read
	for range n {
		for b := 0; b < size; b += byteRunBytes {
			out = append(out, read{sp, -1, min(byteRunBytes, size-b)})
		}
	}
	return out
}

func cat(rs ...[]read) []read { return slices.Concat(rs...) }

// mvReader lists the reads of one row in one k-step by the lane at position p
// of the lanes sharing a block (p < lanes), written from the kernel's index
// arithmetic (ggml-metal.metal at d99724f, lines in docs/kernel-facts-types.md
// §2.1), independently of the cost table.
type mvReader struct {
	lanes int
	reads func(p int) []read
}

// mvReaders are the main forms. The lane position p is the kernel's index of
// the lane's share of the block: il/8 (q4_0 family), il (q8_0), it (mxfp4,
// iq4_nl, iq4_xs, K-quants with 8 lanes per block), tid (q3_K, q5_K, q6_K),
// htg (tq2_0), the sub-block ib (iq types).
var mvReaders = [numTypes]mvReader{
	F32:  {1, func(int) []read { return seq(0, 16, 4) }},
	F16:  {1, func(int) []read { return seq(0, 8, 4) }},
	BF16: {1, func(int) []read { return seq(0, 8, 4) }},
	Q4_0: {2, func(p int) []read { return cat([]read{devAt(0, 2)}, seq(2+8*p, 2, 4)) }},
	Q4_1: {2, func(p int) []read { return cat([]read{devAt(0, 2), devAt(2, 2)}, seq(4+8*p, 2, 4)) }},
	Q5_0: {2, func(p int) []read { return cat([]read{devAt(0, 2), devAt(2, 4)}, seq(6+8*p, 2, 4)) }},
	Q5_1: {2, func(p int) []read { return cat([]read{devAt(0, 2), devAt(2, 2), devAt(4, 4)}, seq(8+8*p, 2, 4)) }},
	Q8_0: {4, func(p int) []read { return cat(seq(2+8*p, 1, 8), []read{devAt(0, 2)}) }},
	Q1_0: {8, func(p int) []read { return cat([]read{devAt(0, 2)}, seq(2+2*p, 1, 2)) }},
	Q2_0: {4, func(p int) []read { return cat([]read{devAt(0, 2)}, seq(2+4*p, 1, 4)) }},
	MXFP4: {2, func(p int) []read {
		return cat([]read{devAt(0, 1)}, seq(1+8*p, 1, 8), table(Threadgroup, 4, 16))
	}},
	IQ4_NL: {2, func(p int) []read {
		return cat([]read{devAt(0, 2)}, seq(2+8*p, 2, 4), table(Threadgroup, 4, 16))
	}},
	IQ4_XS: {16, func(p int) []read {
		ib, il := p/2, p%2
		return cat([]read{devAt(0, 2), devAt(2, 2), devAt(4+ib/2, 1)}, seq(8+16*ib+8*il, 4, 2), table(Threadgroup, 4, 16))
	}},
	Q2_K: {8, func(p int) []read {
		iq, ir := p/4, p%4
		is := 8 * ir / 16
		var sc []read
		for _, o := range []int{0, 2, 4, 6} {
			sc = append(sc, devAt(8*iq+is+o, 1))
		}
		return cat([]read{devAt(80, 2), devAt(82, 2)}, sc, seq(16+32*iq+8*ir, 2, 4))
	}},
	Q3_K: {8, func(p int) []read {
		ip, il, ir := p/4, 2*((p%4)/2), p%2
		q, h := 32+32*ip+8*ir, 8*ir
		sc := []read{devAt(96+8, 2), devAt(96+10, 2), devAt(96+2*il, 2), devAt(96+2*il+2, 2)}
		return cat([]read{devAt(108, 2)}, sc, seq(q, 2, 4), seq(q+16, 2, 4), seq(h, 2, 4), seq(h+16, 2, 4))
	}},
	Q4_K: {8, func(p int) []read {
		iq, ir := p/4, p%4
		sc := []read{devAt(4+2*iq, 2), devAt(4+2*iq+4, 2), devAt(4+2*iq+8, 2)}
		q1 := 16 + 32*iq + 8*ir
		return cat([]read{devAt(0, 2), devAt(2, 2)}, sc, seq(q1, 2, 4), seq(q1+64, 2, 4))
	}},
	Q5_K: {8, func(p int) []read {
		iq, ir := p/4, p%4
		q1 := 48 + 32*iq + 8*ir
		sc := []read{devAt(4+2*iq, 2), devAt(4+2*iq+4, 2), devAt(4+2*iq+8, 2)}
		return cat([]read{devAt(0, 2), devAt(2, 2)}, sc, seq(q1, 1, 8), seq(q1+64, 1, 8), seq(16+8*ir, 1, 8))
	}},
	Q6_K: {16, func(p int) []read {
		ip, il := p/8, p%8
		l0 := 4 * il
		is := 8*ip + l0/16
		q1 := 64*ip + l0
		var sc []read
		for _, o := range []int{0, 2, 4, 6} {
			sc = append(sc, devAt(192+is+o, 1))
		}
		return cat([]read{devAt(208, 2)}, sc, seq(q1, 1, 4), seq(q1+32, 1, 4), seq(128+32*ip+l0, 1, 4))
	}},
	TQ2_0: {8, func(p int) []read { return cat([]read{devAt(64, 2)}, seq(4*p, 1, 4), seq(4*p+32, 1, 4)) }},
	IQ2_XXS: {8, func(ib int) []read {
		q := 2 + 8*ib
		return cat([]read{devAt(0, 2)}, seq(q, 1, 4), seq(q+4, 2, 2), entries(Threadgroup, 4, 8), table(Threadgroup, 1, 4))
	}},
	IQ2_XS: {8, func(ib int) []read {
		return cat([]read{devAt(0, 2), devAt(66+ib, 1)}, seq(2+8*ib, 2, 4), entries(Threadgroup, 4, 8), table(Threadgroup, 1, 4))
	}},
	IQ2_S: {8, func(ib int) []read {
		return cat([]read{devAt(0, 2), devAt(74+ib, 1), devAt(66+ib, 1)}, seq(2+4*ib, 1, 4), seq(34+4*ib, 1, 4), entries(Constant, 4, 8))
	}},
	IQ3_XXS: {8, func(ib int) []read {
		return cat([]read{devAt(0, 2)}, seq(66+4*ib, 2, 2), seq(2+8*ib, 1, 8), entries(Threadgroup, 8, 4), table(Threadgroup, 1, 4))
	}},
	IQ3_S: {8, func(ib int) []read {
		return cat([]read{devAt(0, 2), devAt(106+ib/2, 1), devAt(66+ib, 1)}, seq(2+8*ib, 1, 8), seq(74+4*ib, 1, 4), entries(Threadgroup, 8, 4))
	}},
	IQ1_S: {8, func(ib int) []read {
		return cat([]read{devAt(0, 2)}, seq(2+4*ib, 1, 4), []read{devAt(34+2*ib, 2)}, entries(Constant, 4, 4))
	}},
	IQ1_M: {8, func(ib int) []read {
		return cat(seq(48, 2, 4), []read{devAt(48+2*(ib/2), 2)}, seq(4*ib, 1, 4), seq(32+2*ib, 1, 2), entries(Constant, 4, 4))
	}},
}

// floatReaders are the plain and _short forms (the "block" is metalsim's
// 16-element unit: 64 bytes of f32, 32 of f16/bf16).
var floatReaders = [numMatVecForms][numTypes]mvReader{
	MatVecPlain: {
		F32:  {2, func(p int) []read { return seq(32*p, 4, 8) }},
		F16:  {2, func(p int) []read { return seq(16*p, 2, 8) }},
		BF16: {2, func(p int) []read { return seq(16*p, 2, 8) }},
	},
	MatVecShort: {
		F32:  {1, func(int) []read { return seq(0, 4, 16) }},
		F16:  {1, func(int) []read { return seq(0, 2, 16) }},
		BF16: {1, func(int) []read { return seq(0, 2, 16) }},
	},
}

// chunk4Readers list the reads of dequantize_<type>_t4 for chunk il (one of
// BlockWeights/4 per block).
var chunk4Readers = [numTypes]func(il int) []read{
	F32:    func(il int) []read { return []read{devAt(16*il, 16)} },
	F16:    func(il int) []read { return []read{devAt(8*il, 8)} },
	BF16:   func(il int) []read { return []read{devAt(8*il, 8)} },
	Q1_0:   func(il int) []read { return []read{devAt(0, 2), devAt(2+il*4/8, 1)} },
	Q2_0:   func(il int) []read { return []read{devAt(0, 2), devAt(2+il, 1)} },
	Q4_0:   func(il int) []read { return cat([]read{devAt(0, 2)}, seq(2+4*(il%4), 2, 2)) },
	Q4_1:   func(il int) []read { return cat([]read{devAt(0, 2), devAt(2, 2)}, seq(4+4*(il%4), 2, 2)) },
	Q5_0:   func(il int) []read { return cat([]read{devAt(0, 2), devAt(2, 4)}, seq(6+4*(il%4), 2, 2)) },
	Q5_1:   func(il int) []read { return cat([]read{devAt(0, 2), devAt(2, 2), devAt(4, 4)}, seq(8+4*(il%4), 2, 2)) },
	Q8_0:   func(il int) []read { return []read{devAt(0, 2), devAt(2+4*il, 4)} },
	MXFP4:  func(il int) []read { return cat([]read{devAt(0, 1)}, seq(1+4*(il%4), 1, 4), table(Constant, 4, 4)) },
	IQ4_NL: func(il int) []read { return cat([]read{devAt(0, 2)}, seq(2+4*(il%4), 2, 2), table(Constant, 4, 4)) },
}

// loadShape is the count of loads per (space, width).
func loadShape(ls []Load) map[[2]int]int {
	m := map[[2]int]int{}
	for _, l := range ls {
		m[[2]int{int(l.Space), l.Width}] += l.Count
	}
	return m
}

func readShape(rs []read) map[[2]int]int {
	m := map[[2]int]int{}
	for _, r := range rs {
		m[[2]int{int(r.space), r.width}]++
	}
	return m
}

// checkReads requires the reads of every position to have the cost's load
// shape, to stay in the block, and all positions together to read every
// byte of it.
func checkReads(t *testing.T, name string, bb int, loads []Load, positions int, reads func(int) []read) {
	t.Helper()
	want := loadShape(loads)
	covered := make([]bool, bb)
	for p := 0; p < positions; p++ {
		rs := reads(p)
		if got := readShape(rs); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, lane position %d: reads by (space, width) %v, the cost data has %v", name, p, got, want)
		}
		for _, r := range rs {
			if r.space != Device {
				continue
			}
			if r.off < 0 || r.off+r.width > bb {
				t.Errorf("%s, lane position %d: read [%d, %d) outside the %d-byte block", name, p, r.off, r.off+r.width, bb)
				continue
			}
			for b := r.off; b < r.off+r.width; b++ {
				covered[b] = true
			}
		}
	}
	if i := slices.Index(covered, false); i >= 0 {
		t.Errorf("%s: byte %d of the block is read by no lane", name, i)
	}
}

// TestMatVecCostLoads checks the loads of the mat-vec cost data against the
// kernels' index arithmetic: per lane position the same loads by address
// space and width, all inside the block, and every byte of the block read by
// one of the lanes sharing it; the lanes per block times the weights per lane
// make the block.
func TestMatVecCostLoads(t *testing.T) {
	for _, typ := range Types() {
		for _, f := range matVecForms(typ) {
			c := MatVecCosts(typ, f)
			r := mvReaders[typ]
			if f != MatVecMain {
				r = floatReaders[f][typ]
			}
			name := fmt.Sprintf("%s %s", typ, f)
			if r.reads == nil {
				t.Errorf("%s: no reader", name)
				continue
			}
			if l := typ.Layout(); r.lanes*c.Weights != l.BlockWeights {
				t.Errorf("%s: %d lanes per block x %d weights per lane != %d weights per block", name, r.lanes, c.Weights, l.BlockWeights)
			}
			checkReads(t, name, typ.Layout().BlockBytes, c.Row.Loads, r.lanes, r.reads)
			for _, l := range c.Step.Loads {
				if l.Space != Device || l.What != "y" {
					t.Errorf("%s: step load %+v: the step loads activations only", name, l)
				}
			}
			if got := c.Step.BytesFrom(Device); got != 4*c.Weights {
				t.Errorf("%s: %d activation bytes per step, want 4 x %d weights", name, got, c.Weights)
			}
		}
	}
	for _, typ := range Types() {
		c, ok := Chunk4Cost(typ)
		rd := chunk4Readers[typ]
		if ok != (rd != nil) {
			t.Errorf("%s: Chunk4Cost ok = %v, reader %v", typ, ok, rd != nil)
			continue
		}
		if ok {
			checkReads(t, typ.String()+" _t4", typ.Layout().BlockBytes, c.Loads, typ.Layout().BlockWeights/4, rd)
		}
	}
}

// TestMatVecCostConsistency checks what every row must have: every code of
// the lane's weights converted or selected, at least one FP32 per weight.
func TestMatVecCostConsistency(t *testing.T) {
	for _, typ := range Types() {
		c := MatVecCosts(typ, MatVecMain)
		if c.Row.FP32 < c.Weights {
			t.Errorf("%s: Row FP32 %d < %d weights", typ, c.Row.FP32, c.Weights)
		}
		// converted codes: every type but the float ones, the float-table
		// types, the select-based q1_0/q2_0 and tq2_0 (which converts its
		// bytes and takes the 2-bit fields apart with float floors)
		if typ.Quantized() && !constTableTypes[typ] && typ != Q1_0 && typ != Q2_0 && typ != TQ2_0 && c.Row.Convert < c.Weights {
			t.Errorf("%s: Row Convert %d < %d weights", typ, c.Row.Convert, c.Weights)
		}
	}
	for _, f := range []MatVecForm{MatVecPlain, MatVecShort} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MatVecCosts(q4_0, %s): no panic", f)
				}
			}()
			MatVecCosts(Q4_0, f)
		}()
	}
	if _, ok := Chunk4Cost(Q4_K); ok {
		t.Error("Chunk4Cost(q4_K): the K-quants' mul_mv_ext uses the mat-mat dequantizer")
	}
}

const (
	mvDocBegin = "<!-- mat-vec cost table: rendered from dequant.MatVecCosts and dequant.Chunk4Cost by TestMatVecCostDoc (go test ./dequant -run TestMatVecCostDoc -update-doc) -->\n"
	mvDocEnd   = "<!-- end of the mat-vec cost table -->\n"
)

func loadList(ls []Load, sp Space) string {
	var parts []string
	for _, l := range ls {
		if l.Space == sp {
			parts = append(parts, fmt.Sprintf("%d×%dB %s", l.Count, l.Width, l.What))
		}
	}
	if parts == nil {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func tables(ls []Load) string {
	var parts []string
	for _, sp := range []Space{Threadgroup, Constant} {
		if s := loadList(ls, sp); s != "—" {
			parts = append(parts, s+" ("+sp.String()+")")
		}
	}
	if parts == nil {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// matVecForms are the mat-vec forms typ has: the main one, and the plain
// and short ones of the float types.
func matVecForms(typ Type) []MatVecForm {
	if typ.Quantized() {
		return []MatVecForm{MatVecMain}
	}
	return []MatVecForm{MatVecMain, MatVecPlain, MatVecShort}
}

// renderMatVecTable renders MatVecCosts and Chunk4Cost as the tables of
// docs/kernel-facts-types.md §2.2.
func renderMatVecTable() string {
	var b strings.Builder
	b.WriteString("| type | form | weights/lane | step: activation loads | step FP32 | row: device loads | row: table reads | FP32 | Int | Convert | Temps |\n")
	b.WriteString("| --- | --- | ---: | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, typ := range Types() {
		for _, f := range matVecForms(typ) {
			c := MatVecCosts(typ, f)
			form := "—"
			if !typ.Quantized() {
				form = f.String()
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %d | %s | %s | %d | %d | %d | %d |\n", typ, form, c.Weights,
				loadList(c.Step.Loads, Device), c.Step.FP32, loadList(c.Row.Loads, Device), tables(c.Row.Loads),
				c.Row.FP32, c.Row.Int, c.Row.Convert, c.Row.Temps)
		}
	}
	b.WriteString("\n| type | `dequantize_<type>_t4`: device loads | constant loads | FP32 | Int | Convert | Temps |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, typ := range Types() {
		if c, ok := Chunk4Cost(typ); ok {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d |\n", typ, loadList(c.Loads, Device), loadList(c.Loads, Constant), c.FP32, c.Int, c.Convert, c.Temps)
		}
	}
	return b.String()
}

// TestMatVecCostDoc requires the mat-vec cost tables of
// docs/kernel-facts-types.md to be the ones rendered from the data
// (-update-doc rewrites them): a change to a count is an edit of both.
func TestMatVecCostDoc(t *testing.T) {
	checkDocSection(t, mvDocBegin, mvDocEnd, renderMatVecTable(), "the mat-vec cost tables differ from the data")
}
