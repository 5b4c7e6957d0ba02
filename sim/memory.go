package sim

import (
	"fmt"

	"github.com/metalsim/metalsim/isa"
)

// progMem is what the memory model needs to know about one program: for every
// simdgroup and k-step, whether its weight load touches a cache line its
// threadgroup has not touched before (a line's first touch goes to DRAM, later
// ones hit a cache), and how many threadgroups read the same activation rows.
type progMem struct {
	lines    [][]bool
	actReuse int
	key      string // the pattern and reuse rendered: equal keys, equal patterns
}

const lineBytes = 128 // global cache line (apple-gpu.md 2.1, E PT-MB)

// newProgMem derives the line pattern from the tile geometry: row r of a tile
// starts r*rowBytes past a line-aligned tile base (tiles start at multiples of
// NR0 rows, and NR0*rowBytes is a multiple of 128 for every type), and k-step s
// reads the row's bytes [s*b, (s+1)*b) with b = RowBytesPerStep.
func newProgMem(p *isa.Program, actReuse int) *progMem {
	pm := &progMem{actReuse: max(1, actReuse)}
	defer pm.render()
	tl := &p.Tiling
	if p.Exit || p.Steps == 0 {
		return pm
	}
	b := tl.RowBytesPerStep
	rowBytes := b * float64(p.Steps)
	per := tl.NK / 16
	pm.lines = make([][]bool, p.NSG)
	for sg := 0; sg < p.NSG; sg++ {
		rows := map[int]bool{}
		for item := 32 * sg; item < tl.NR0*per; item += tl.Threads {
			for lane := 0; lane < 32 && item+lane < tl.NR0*per; lane++ {
				rows[min((item+lane)/per, tl.Rows-1)] = true
			}
		}
		l := make([]bool, p.Steps)
		for r := range rows {
			off := float64(r) * rowBytes
			for s := range l {
				if s == 0 {
					l[s] = true
					continue
				}
				last := int((off + float64(s+1)*b - 1) / lineBytes)
				prev := int((off + float64(s)*b - 1) / lineBytes)
				if last > prev {
					l[s] = true
				}
			}
		}
		pm.lines[sg] = l
	}
	return pm
}

// newLine reports whether simdgroup sg's weight load of step touches a new line.
func (pm *progMem) newLine(sg, step int) bool {
	if pm.lines == nil {
		return false
	}
	l := pm.lines[sg]
	return l[step%len(l)]
}

// render sets pm.key, the one definition of when two patterns are equal.
func (pm *progMem) render() {
	var b []byte
	b = fmt.Appendf(b, "%d:", pm.actReuse)
	for _, l := range pm.lines {
		for _, x := range l {
			if x {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		b = append(b, '|')
	}
	pm.key = string(b)
}

// sameLines reports whether two patterns have the same lines and reuse.
func (pm *progMem) sameLines(o *progMem) bool { return pm.key == o.key }

// canonical returns the first progMem with the same line pattern and reuse seen
// in sets (adding pm if it is new), so equal patterns compare equal by pointer.
func (pm *progMem) canonical(sets map[string]*progMem) *progMem {
	if c, ok := sets[pm.key]; ok {
		return c
	}
	sets[pm.key] = pm
	return pm
}
