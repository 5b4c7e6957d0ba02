package isa

// The state and count columns of the op table (op.go): what machine state an
// op addresses, so NewMachine sizes it from the program's ops, and what work
// an op counts, so Program.Counts adds it up. Each function is one cell.

// stateSize is the functional state a program's ops address, per simdgroup.
type stateSize struct {
	frags      int // 8x8 half fragment registers
	accs       int // 8x8 float accumulators
	bPasses    int // B staging passes (a simdgroup loads every pass before it stores any)
	laneAccs   int // mat-vec lane accumulators
	tokenSlots int // mat-vec activation token slots
	rowSlots   int // mat-vec weight row slots
}

// need raises *n to at least v.
func need(n *int, v int) { *n = max(*n, v) }

func accState(op Op, s *stateSize)  { need(&s.accs, int(op.A)+1) }
func fragState(op Op, s *stateSize) { need(&s.frags, int(op.A)+1) }
func bPassState(op Op, s *stateSize) {
	need(&s.bPasses, int(op.N)+1)
}

func mmaState(op Op, s *stateSize) {
	need(&s.accs, int(op.A)+1)
	need(&s.frags, max(int(op.B), int(op.C))+1)
}

func laneAccRangeState(op Op, s *stateSize) { need(&s.laneAccs, int(op.A)+int(op.N)) }
func tokenSlotState(op Op, s *stateSize)    { need(&s.tokenSlots, int(op.N)+1) }
func rowSlotState(op Op, s *stateSize)      { need(&s.rowSlots, int(op.B)+1) }

// fmaVecState: fma_vec and dot_w address row slot B's weights; their
// accumulators and token slots are those load_vec and vzero size.
func fmaVecState(op Op, s *stateSize) { need(&s.rowSlots, int(op.B)+1) }

// programState sizes the state of every op of p.
func programState(p *Program) stateSize {
	var s stateSize
	for sec := SecPrologue; sec < NumSections; sec++ {
		for sg := 0; sg < p.NSG; sg++ {
			for _, op := range p.Ops(sec, sg) {
				if f := table[op.Code].state; f != nil {
					f(op, &s)
				}
			}
		}
	}
	return s
}

func countMMA8(_ Op, _ int, c *Counts)      { c.MMA8++ }
func countFragLoad(_ Op, _ int, c *Counts)  { c.FragLoads++ }
func countDequant(_ Op, _ int, c *Counts)   { c.DequantChunks += lanes } // a chunk per lane
func countMatmul2D(_ Op, sg int, c *Counts) { c.Matmul2D += perThreadgroup(sg) }
func countBarrier(_ Op, sg int, c *Counts)  { c.Barriers += perThreadgroup(sg) }

// perThreadgroup counts a threadgroup-wide event once, at simdgroup 0.
func perThreadgroup(sg int) int64 {
	if sg == 0 {
		return 1
	}
	return 0
}
