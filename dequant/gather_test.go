package dequant

import "testing"

// TestTableGather: every constant load of every chunk cost has a row for
// both patterns, sectors lie in [1, 32] and a bank's words in [1, 32].
func TestTableGather(t *testing.T) {
	for _, typ := range Types() {
		for _, s := range strategies {
			for _, l := range ChunkCost(typ, s).Loads {
				if l.Space != Constant {
					continue
				}
				for p := range numPatterns {
					g, ok := TableGather(typ, s, p, l.What)
					if !ok {
						t.Errorf("%s/%s %s %s: no gather row", typ, s, p, l.What)
						continue
					}
					if g.Sectors < 1 || g.Sectors > 32 || g.BankWords < 1 || g.BankWords > 32 {
						t.Errorf("%s/%s %s %s: %+v out of range", typ, s, p, l.What, g)
					}
				}
			}
		}
	}
}
