// Package isa is the simdgroup-level instruction set of the mul_mm_id kernels:
// one op table (Table) whose rows give each operation's operands, its
// functional semantics (the emulator executes them on a Machine), its
// expansion into timing instructions (classes, counts, chains, waits, bytes)
// and its register footprint; and Program, a kernel threadgroup as per-
// simdgroup op streams (prologue, k-loop body, epilogue) with its tiling,
// counters and registers. The emulator and the timing model both read
// programs built from this table (package tile builds them), so there is one
// description of the kernel.
package isa
