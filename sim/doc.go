// Package sim predicts the time of matmul dispatches on Apple GPUs: a
// Simulator turns a workload (tile.Workload: MUL_MAT_ID's map0 + mul_mm_id or
// mul_mv_id, MUL_MAT's mul_mm, mul_mv or mul_mv_ext) into the grids of the
// kernels llama.cpp dispatches, averages routing draws, adds map0 and the
// dispatch boundaries, and reports µs, occupancy, utilisation, the limiter
// and counters. It keeps what runs share (program builders, and through
// package engine the occupancy, memory patterns and measured core mixes);
// the engines themselves (the core model, the fast and detailed engines) are
// package engine, chips are package chips.
package sim
