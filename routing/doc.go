// Package routing holds the routings of a MUL_MAT_ID: which experts each
// token's slots read, drawn for timing (tokens per expert) and for the
// kernels that need the ids themselves (mul_mv_id), and the spec parser
// ("uniform", "zipf:S", "hot:H:F", "file:PATH") that studies and the
// command line read them from. The draws themselves are tile's.
package routing
