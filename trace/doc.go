// Package trace renders what the simulator produced: counter tables (text, CSV,
// JSON), Chrome/Perfetto trace-event timelines and plots. It decides nothing:
// every number comes from sim.
package trace
