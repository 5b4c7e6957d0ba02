package engine

import (
	"testing"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// TestPortCyclesGathers: a coalesced access occupies its port bytes over
// bytes per clock; a gather at least its sectors over the L1's sectors per
// clock, or its busiest bank's words in threadgroup memory.
func TestPortCyclesGathers(t *testing.T) {
	chip, _, _ := headlineBuilder(t, "M1 Pro 16-core GPU", tile.Upstream(), tile.Simdgroup)
	m := newModel(chip, true) // 64 B/clk L1 and threadgroup ports, 2 sectors per clock
	for _, tc := range []struct {
		in   isa.Inst
		pipe int
		want float64
	}{
		{isa.Inst{Bytes: 256}, pipeL1, 4},                       // coalesced: 256 / 64
		{isa.Inst{Bytes: 32, Sectors: 21.5}, pipeL1, 10.75},     // a byte gather of 21.5 sectors
		{isa.Inst{Bytes: 128, Sectors: 1}, pipeL1, 2},           // a read all lanes share: its bytes
		{isa.Inst{Bytes: 32, BankWords: 3.75}, pipeTGMem, 3.75}, // a byte gather from a threadgroup copy
		{isa.Inst{Bytes: 512, BankWords: 3.75}, pipeTGMem, 8},   // bytes dominate
		{isa.Inst{Bytes: 32, Sectors: 21.5}, pipeTGMem, 1},      // sectors are the L1's only
	} {
		if got := m.portCycles(&tc.in, tc.pipe); got != tc.want {
			t.Errorf("%+v on pipe %d: %v port cycles, want %v", tc.in, tc.pipe, got, tc.want)
		}
	}
}

// TestMatmulChipChoices: the chip decides whether a second matmul2d call's
// regathers and the accumulate adds are issued, and what a short call's
// start costs: the half-tile's tensor-path program loses exactly its
// flagged instructions, and a call start holds the dispatch port for the
// chip's call cost.
func TestMatmulChipChoices(t *testing.T) {
	chip, b, steps := headlineBuilder(t, "M5 10-core GPU", tile.HalfTile(), tile.Tensor)
	k := b.Kernel
	prog := b.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1, Steps: steps})
	count := func(tim *isa.Timing, f func(isa.Inst) bool) (n int) {
		for _, in := range tim.Insts[isa.SecBody][0] {
			if f(in) {
				n += int(in.Count)
			}
		}
		return n
	}
	all := prog.Timing()
	re := count(all, func(in isa.Inst) bool { return in.Regather })
	acc := count(all, func(in isa.Inst) bool { return in.Accumulate })
	starts := count(all, func(in isa.Inst) bool { return in.CallStart })
	if re == 0 || acc == 0 || starts != 2 {
		t.Fatalf("half-tile body of simdgroup 0: %d regathers, %d accumulate adds, %d call starts; want some, some, 2", re, acc, starts)
	}
	total := count(all, func(isa.Inst) bool { return true })
	for _, tc := range []struct {
		regather, accumulate float64
		want                 int
	}{{1, 1, total}, {0, 1, total - re}, {1, 0, total - acc}, {0, 0, total - re - acc}} {
		c := chip.Clone()
		c.Matmul2DRegather.Value, c.Matmul2DAccumulateAdds.Value = tc.regather, tc.accumulate
		if got := count(newModel(c, true).timing(prog), func(isa.Inst) bool { return true }); got != tc.want {
			t.Errorf("regather %v, accumulate %v: %d instructions, want %d", tc.regather, tc.accumulate, got, tc.want)
		}
	}
	c := chip.Clone()
	c.Matmul2DCallClk.Value = 16
	m := newModel(c, true)
	held := 0
	for _, o := range m.code(prog).ops[isa.SecBody][0] {
		switch o.hold {
		case uint32(m.dispatch):
		case uint32(m.dispatch + 16):
			held++
		default:
			t.Errorf("a %v op holds the dispatch port %d cycles, want %d or %d", o.class, o.hold, m.dispatch, m.dispatch+16)
		}
	}
	if held != starts {
		t.Errorf("%d ops hold the dispatch port for the call cost, want the %d call starts", held, starts)
	}
}
