// Package plots draws the pictures of studies and validations (gonum/plot,
// PNG or SVG): predicted against measured times, sweeps, comparisons of two
// variants, occupancy against registers. They share one look: colour-blind
// safe colours, a legend beside the data, log axes that say so, every point
// inside its axes. Like the rest of trace it decides nothing: every number
// comes from a report or a study's rows.
package plots
