package isa

import (
	"testing"
)

func TestMMA8Chain(t *testing.T) {
	var c, b, a [64]float32
	for i := range b {
		b[i] = float32(i%7) - 3
		a[i] = float32(i%5)*0.5 - 1
		c[i] = float32(i) * 0.25
	}
	want := c
	for u := 0; u < 8; u++ {
		for r := 0; r < 8; r++ {
			acc := want[u*8+r]
			for k := 0; k < 8; k++ {
				acc += b[u*8+k] * a[k*8+r]
			}
			want[u*8+r] = acc
		}
	}
	MMA8(&c, &b, &a)
	if c != want {
		t.Fatalf("MMA8 differs from the k-ordered chain")
	}
}

func TestViewExtents(t *testing.T) {
	mem := make([]float32, 64)
	for i := range mem {
		mem[i] = float32(i)
	}
	v := PackedView(8, 4, 3) // 4 wide, 3 rows, starting at 8
	if got := v.At(mem, 2, 1); got != 8+2+4 {
		t.Errorf("At(2,1) = %v, want 14", got)
	}
	if got := v.At(mem, 4, 0); got != 0 {
		t.Errorf("At outside d0 = %v, want 0", got)
	}
	if got := v.At(mem, 0, 3); got != 0 {
		t.Errorf("At outside d1 = %v, want 0", got)
	}
}

func TestTableComplete(t *testing.T) {
	// ops without emulator semantics: timing only (the emulator computes
	// map0's values elsewhere; a barrier orders the simdgroups' sections; the
	// mat-vec kernels' activation arithmetic and mul_mv_ext's decode
	// arithmetic have values load_w and the dots hold)
	timingOnly := map[Code]bool{OpALU: true, OpLoadMeta: true, OpBarrier: true, OpMem: true, OpVecPrep: true, OpDequantW: true}
	for c := Code(0); c < NumCodes; c++ {
		in := c.Info()
		if in.Name == "" || in.Doc == "" || in.Timing == "" || in.expand == nil || in.regs == nil {
			t.Errorf("op %d: incomplete table row %+v", c, in)
		}
		if (in.exec == nil) != timingOnly[c] {
			t.Errorf("op %s: exec set = %v, want %v", in.Name, in.exec != nil, !timingOnly[c])
		}
	}
	for cl := Class(0); cl < NumClasses; cl++ {
		if got, err := ParseClass(cl.String()); err != nil || got != cl {
			t.Errorf("class %d: name %q parses to %v, %v", cl, cl.String(), got, err)
		}
	}
}

func TestMergeKeepsDependences(t *testing.T) {
	in := []Inst{
		{Class: ClassMMA8, Count: 1, ILP: 1, Wait: WaitTG},
		{Class: ClassMMA8, Count: 1, ILP: 1, Wait: WaitTG},
		{Class: ClassFP32, Count: 4, ILP: 4},
		{Class: ClassFP32, Count: 4, ILP: 4, Wait: WaitALU},
	}
	out := merge(in)
	if len(out) != 3 || out[0].Count != 2 || out[0].ILP != 2 {
		t.Fatalf("merge = %+v: want two independent MMAs joined, the dependent fp32 group kept apart", out)
	}
}

// TestScatterBytesPerRow: a scattered token row moves 4 bytes per weight row
// through threadgroup memory and to dst, whatever the tile's row count (float4
// passes of up to 32 lanes, then one scalar pass for the rows past the last
// float4), in as many instructions as float4 passes plus the tail.
func TestScatterBytesPerRow(t *testing.T) {
	for rows := 1; rows <= 256; rows++ {
		p := &Program{}
		p.Tiling.Rows = rows
		var tgBytes, stored, unique, instrs int
		for _, in := range expandScatter(p, 0, Op{Code: OpScatter}, nil) {
			switch in.Class {
			case ClassTGLoad:
				tgBytes += int(in.Count) * int(in.Bytes)
				instrs += int(in.Count)
			case ClassDevStore:
				stored += int(in.Count) * int(in.Bytes)
				unique += int(in.Unique)
			}
		}
		vec := rows / 4
		wantInstrs := (vec+31)/32 + min(1, rows%4)
		if tgBytes != 4*rows || stored != 4*rows || unique != 4*rows || instrs != wantInstrs {
			t.Errorf("rows %d: threadgroup bytes %d, stored %d, unique %d (want %d each); %d loads, want %d",
				rows, tgBytes, stored, unique, 4*rows, instrs, wantInstrs)
		}
	}
}
