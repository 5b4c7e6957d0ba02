package tile

import (
	"fmt"
)

// RouteMap is what kernel_mul_mm_id_map0 builds: for every expert, the number of
// routed (token, slot) pairs and their codes token·Used + slot in increasing
// token order.
type RouteMap struct {
	TPE  []int32   // tokens (rows) per expert
	Rows [][]int32 // per expert: codes token*Used + slot, increasing token order
}

// Map0 builds the routing map from ids (ids[t*Used+s] = expert of slot s of
// token t). Every id must name an expert and no token may use an expert twice
// (map0 assumes it; its slot sum would be wrong otherwise).
func Map0(p Problem, ids []int32) (RouteMap, error) {
	if len(ids) != p.Tokens*p.Used {
		return RouteMap{}, fmt.Errorf("ids: %d values, want n*n_used = %d*%d = %d", len(ids), p.Tokens, p.Used, p.Tokens*p.Used)
	}
	rm := RouteMap{TPE: make([]int32, p.Experts), Rows: make([][]int32, p.Experts)}
	for t := 0; t < p.Tokens; t++ {
		row := ids[t*p.Used : (t+1)*p.Used]
		for s, e := range row {
			if e < 0 || int(e) >= p.Experts {
				return RouteMap{}, fmt.Errorf("ids[%d][%d] = %d: expert must be in [0, %d)", t, s, e, p.Experts)
			}
			for s2 := 0; s2 < s; s2++ {
				if row[s2] == e {
					return RouteMap{}, fmt.Errorf("ids[%d]: expert %d used by slots %d and %d (map0 needs distinct experts per token)", t, e, s2, s)
				}
			}
			rm.Rows[e] = append(rm.Rows[e], int32(t*p.Used+s))
		}
	}
	for e := range rm.TPE {
		rm.TPE[e] = int32(len(rm.Rows[e]))
	}
	return rm, nil
}
