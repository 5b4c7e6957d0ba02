// Package trace renders what the simulator produced: counter tables (text, CSV,
// JSON), Chrome/Perfetto trace-event timelines and plots (of a run, of a
// comparison's rows, of occupancy). It decides nothing: every number comes
// from sim or from a study's rows.
package trace
