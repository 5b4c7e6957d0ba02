package tile

import (
	"fmt"
	"slices"

	"github.com/metalsim/metalsim/isa"
)

// Map0Used are the n_used values llama.cpp instantiates map0 for
// (kernel_mul_mm_id_map0_ne20_N, kernel-facts 2.3). For another value the
// host finds no pipeline; how that fails is not documented.
var Map0Used = []int{1, 2, 4, 5, 6, 8, 10, 16, 22}

// Map0Instantiated reports whether llama.cpp has a map0 kernel for n_used.
func Map0Instantiated(used int) bool { return slices.Contains(Map0Used, used) }

// Map0Missing says, for an n_used llama.cpp has no map0 kernel for, that a
// prediction times one as if it existed ("" when it has one).
func Map0Missing(used int) string {
	if Map0Instantiated(used) {
		return ""
	}
	return fmt.Sprintf("llama.cpp instantiates map0 only for n_used in %v (kernel-facts 2.3): with n_used = %d it finds no kernel; timed as if one existed", Map0Used, used)
}

// Map0Program is the timing program of kernel_mul_mm_id_map0 (kernel-facts 4.1):
// one threadgroup of n_mats threads (thread = expert) builds the routing map in
// chunks of n_mats tokens. Per chunk each thread stages one token's n_used ids
// into threadgroup memory as uint16, a barrier, then scans every token of the
// chunk (a broadcast threadgroup read, n_used compare-select-adds, one
// unconditional 4-byte device write and a count update), and a second barrier.
// Its values are computed by Map0; this program only carries its cost.
func Map0Program(p Problem) (*isa.Program, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	threads := p.Experts
	nsg := ceilDiv(threads, 32)
	// The full chunks repeat as the loop body, so the program has the same
	// size for any number of tokens. The body is rotated to start with the
	// previous chunk's closing barrier: a section then ends on a store, not a
	// barrier, and every chunk issues as it would written out one after
	// another (the core model charges a section's first group one issue
	// interval after the previous section's last, which a barrier release
	// inside a section does not).
	full, tail := p.Tokens/threads, p.Tokens%threads
	prog := newProgram(fmt.Sprintf("map0 n_mats=%d n_used=%d n=%d", p.Experts, p.Used, p.Tokens), nsg, max(0, full-1), 2*p.Experts*p.Used)
	prog.Tiling = isa.Tiling{Threads: 32 * nsg, TypeA: p.TypeA}
	mem := func(c isa.Class, s isa.Stream, n, bytes int, wait isa.Wait) isa.Op {
		return isa.Op{Code: isa.OpMem, A: uint8(c), B: uint8(s), N: uint16(n), Arg: int32(bytes), C: uint8(wait)}
	}
	barrier := isa.Op{Code: isa.OpBarrier}
	// chunk returns a chunk's ops up to its closing barrier
	chunk := func(tokens int) []isa.Op {
		ops := []isa.Op{
			mem(isa.ClassDevLoad, isa.StreamMeta, p.Used, 32*4, 0),
			{Code: isa.OpALU, A: uint8(isa.ClassInt), N: uint16(p.Used), B: uint8(p.Used), C: uint8(isa.WaitDevice)},
			mem(isa.ClassTGStore, isa.StreamNone, p.Used, 32*2, isa.WaitALU),
			barrier}
		for t := 0; t < tokens; t += 64 { // groups of at most 64 tokens keep counts small
			nt := min(64, tokens-t)
			ops = append(ops,
				mem(isa.ClassTGLoad, isa.StreamNone, nt*ceilDiv(2*p.Used, 16), 32*16, 0),
				isa.Op{Code: isa.OpALU, A: uint8(isa.ClassInt), N: uint16(nt * (3*p.Used + 1)), B: 4, C: uint8(isa.WaitTG)},
				mem(isa.ClassDevStore, isa.StreamOutput, nt, 32*4, 0))
		}
		return ops
	}
	for sg := 0; sg < nsg; sg++ {
		var epi []isa.Op
		if full > 0 {
			prog.Prologue[sg] = chunk(threads)
			if full > 1 {
				prog.Body[sg] = append([]isa.Op{barrier}, chunk(threads)...)
			}
			epi = append(epi, barrier)
		}
		if tail > 0 {
			epi = append(append(epi, chunk(tail)...), barrier)
		}
		prog.Epilogue[sg] = append(epi, mem(isa.ClassDevStore, isa.StreamOutput, 1, 32*4, isa.WaitALU))
	}
	return prog, prog.Validate()
}
