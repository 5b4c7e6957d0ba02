package engine

import "github.com/metalsim/metalsim/engine/lattice"

// latticeMix returns the weighted mean of the corners' measurements at
// precision p of the composition of classes A and B (A == B for a one-class
// composition, whose corners have B = 0).
func (v *cacheView) latticeMix(corners []lattice.Corner, A, B int, p precision) *mixResult {
	r := &mixResult{}
	var ids []int
	for _, c := range corners {
		if c.W == 0 {
			continue
		}
		ids = ids[:0]
		for range c.A {
			ids = append(ids, A)
		}
		for range c.B {
			ids = append(ids, B)
		}
		v.keyBuf = appendMixKey(v.keyBuf[:0], ids)
		m, n := v.cc.mix(v.keyBuf, ids, p)
		v.instr += n
		for _, e := range m.period {
			r.period.add(e.id, c.W*e.p)
		}
		r.util.AddScaled(m.util, c.W)
		r.idleSG += c.W * m.idleSG
		r.instr += m.instr
	}
	return r
}
