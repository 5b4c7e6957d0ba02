// Package hw reads what hardware wrote: the calibration TSV files measured on
// real Macs and the console (or --output sql) logs of llama.cpp's
// test-backend-ops in perf and test mode.
//
// Both sources become [Row] values with the same [Params] keys that
// test-backend-ops prints for a case (type_a, type_b, n_mats, n_used, b, m, n,
// k for MUL_MAT_ID), so callers can treat calibration rows and log rows alike.
// The package only parses: matching rows to simulated cases and fitting live
// on top of it.
//
// Parsers are strict about structure and tolerant about layout: whitespace
// runs, ANSI colour codes and CRLF line ends are accepted, but a line that
// looks like a measurement of a known op and does not parse is reported with
// its line number instead of being dropped. [ParseTSV] rejects a whole file
// when any row is bad (a calibration file must be clean); [ParseLog] keeps the
// good lines and lists the bad ones in [Log.Errors].
package hw
