package tile

import (
	"fmt"
	"math/rand/v2"
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

// UniformRouting draws, for every token, Used distinct experts uniformly at random
// (test-backend-ops shuffles 0..n_mats-1 per token and takes the first n_used).
func UniformRouting(p Problem, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f652d726f7574))
	ids := make([]int32, p.Tokens*p.Used)
	perm := make([]int32, p.Experts)
	for t := 0; t < p.Tokens; t++ {
		drawDistinct(rng, perm, ids[t*p.Used:(t+1)*p.Used])
	}
	return ids
}

// UniformCounts draws the same routing as UniformRouting with the same seed but
// keeps only the tokens per expert, in O(experts) memory: timing mode needs no ids.
func UniformCounts(p Problem, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f652d726f7574))
	tpe := make([]int32, p.Experts)
	perm := make([]int32, p.Experts)
	slot := make([]int32, p.Used)
	for t := 0; t < p.Tokens; t++ {
		drawDistinct(rng, perm, slot)
		for _, e := range slot {
			tpe[e]++
		}
	}
	return tpe
}

// drawDistinct fills out with len(out) distinct values of [0, len(perm)) by a
// partial Fisher-Yates shuffle of perm, which must hold the identity permutation
// (a zeroed perm is initialised on first use); the swaps are undone afterwards so
// each draw costs O(len(out)), not O(len(perm)).
func drawDistinct(rng *rand.Rand, perm, out []int32) {
	n := len(perm)
	if n > 1 && perm[1] == 0 {
		for i := range perm {
			perm[i] = int32(i)
		}
	}
	var js [32]int
	swaps := js[:0]
	for i := range out {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
		out[i] = perm[i]
		swaps = append(swaps, j)
	}
	for i := len(swaps) - 1; i >= 0; i-- {
		j := swaps[i]
		perm[i], perm[j] = perm[j], perm[i]
	}
}
