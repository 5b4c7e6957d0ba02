package tile

import (
	"fmt"
	"sync"

	"github.com/metalsim/metalsim/isa"
)

// programCache holds a builder's programs by tile context. It is safe for
// concurrent use; a cached program is fully expanded before it is shared, so
// it is never written again.
type programCache struct {
	mu    sync.Mutex
	cache map[Context]*isa.Program
}

// get returns the program of c, building it with build on first use. Repeat
// does not change a program, so it is not part of the key. kind names the
// builder in the panic an invalid program raises: that is a builder bug, not
// bad input.
func (pc *programCache) get(c Context, kind string, build func(Context) *isa.Program) *isa.Program {
	c.Repeat = false
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if p, ok := pc.cache[c]; ok {
		return p
	}
	p := build(c)
	if err := p.Validate(); err != nil {
		panic(fmt.Sprintf("tile: %s builder made an invalid program: %v", kind, err))
	}
	p.Timing()
	if pc.cache == nil {
		pc.cache = map[Context]*isa.Program{}
	}
	pc.cache[c] = p
	return p
}

// newProgram returns a program of nsg simdgroups with empty prologue, body and
// epilogue op lists, the shared base registers, steps k-steps and tgMem bytes
// of threadgroup memory; the builder fills in the ops and the tiling.
func newProgram(name string, nsg, steps, tgMem int) *isa.Program {
	return &isa.Program{
		Name:       name,
		NSG:        nsg,
		Steps:      steps,
		BaseRegs:   baseRegs,
		TGMemBytes: tgMem,
		Prologue:   make([][]isa.Op, nsg),
		Body:       make([][]isa.Op, nsg),
		Epilogue:   make([][]isa.Op, nsg),
	}
}
