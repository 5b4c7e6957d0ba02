// Package trace renders what the simulator produced: counter tables (text, CSV,
// JSON), Chrome/Perfetto trace-event timelines and their Gantt pictures. It
// decides nothing: every number comes from sim or from a study's rows. The
// pictures of studies and validations are in trace/plots.
package trace
