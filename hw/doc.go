// Package hw reads what hardware wrote. It owns:
//
//   - [ParseTSV]: the calibration TSV files measured on real Macs (absolute
//     rows with a time per run, relative rows with a delta against a
//     baseline variant);
//   - [ParseLog]: the console output of llama.cpp's test-backend-ops in perf
//     and test mode, and its --output sql form;
//   - [Sniff]: telling those three formats apart from a file's first bytes;
//   - [ParseCase] and [Params]: the "OP(k=v,...)" case strings
//     test-backend-ops prints;
//   - [Row]: one measured case, whichever file it came from;
//   - [CalibrationRows] and [CalibrationFiles]: the calibration sets embedded
//     from hw/calibration/;
//   - [ReadFiles]: reading measurement files of any of those formats, each
//     through package fileio's bounded reader.
//
// Both sources become [Row] values with the same [Params] keys that
// test-backend-ops prints for a case (type_a, type_b, n_mats, n_used, b, m, n,
// k for MUL_MAT_ID), so callers can treat calibration rows and log rows alike.
// hw depends on no other package of the module but fileio: it keeps chip names and ops
// as the files write them and knows no chip model, kernel or timing. Judging the model with the rows (matching them to simulated cases,
// validation, fitting, the accuracy document) is package accuracy's job.
//
// Parsers are strict about structure and tolerant about layout: whitespace
// runs, ANSI colour codes and CRLF line ends are accepted, but a line that
// looks like a measurement of a known op and does not parse is reported with
// its line number instead of being dropped. [ParseTSV] rejects a whole file
// when any row is bad (a calibration file must be clean); [ParseLog] keeps the
// good lines and lists the bad ones in [Log.Errors].
package hw
