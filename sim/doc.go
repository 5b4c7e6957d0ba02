// Package sim executes and times mul_mm_id programs on Apple GPUs. Chips are
// data (embedded JSON files, or a user's, each number with its source). The
// emulator runs a dispatch's programs for values; the timing model runs the
// same programs' instruction streams on a core model (SIMD partitions, pipes,
// shared ports, barriers, memory levels) through a calendar queue, either for
// every threadgroup (the detailed engine) or for the distinct mixes of
// resident threadgroups, cached, with the grid moved through threadgroup-level
// events (the fast engine). It also derives occupancy from a program's
// registers and threadgroup memory, and records timelines for traces.
package sim
