// Package study runs design-space studies over the simulator: sweeps (the
// cartesian product of chips, variants, routings and token counts, sharded
// across machines and merged back into the bytes of one run), comparisons of
// two variants, and the expert matmuls of a model's MoE layer. It owns each
// study's rows and their CSV and JSON schema, the rules that make a point's
// results the same in every run that contains it (point seeds, sweep ids),
// and the parsers of the lists a study is given. A front end (cmd/simrun)
// parses its flags into these types, calls them and prints the rows.
package study
