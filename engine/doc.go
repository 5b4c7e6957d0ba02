// Package engine times grids of threadgroup programs on a chip: the core
// model (one GPU core at simdgroup-instruction level: SIMD partitions, pipes,
// shared ports, barriers, memory levels, a calendar ready queue, in whole
// cycles) and the two engines that run it, sharing one dispatch policy and
// one event queue: the detailed engine (every instruction of every
// threadgroup, in global time order, with listeners for views such as
// timelines) and the fast engine (threadgroup-level events over the chip, each
// core's throughput for a mix of resident threadgroups measured once on the
// core model and cached by content). Caches holds what runs share.
package engine
