// Package accuracy judges the timing model with what hardware measured: the
// rows package hw parses from calibration TSVs and test-backend-ops logs.
//
//   - [Match] maps each measured row to a simulator case: the chip, the GPU
//     path, the kernel variant and the Metal kernel the host dispatches for
//     the row's shape (mul_mm_id or mul_mv_id for MUL_MAT_ID; mul_mm, mul_mv
//     or mul_mv_ext for MUL_MAT), or the reason the row is not modelled.
//   - [Validate] predicts every modelled case and reports, per row, the error
//     of the prediction; per variant-vs-baseline pair, the error of the
//     predicted delta; per chip and path and overall, the MAPE, WMAPE,
//     largest error, R² of log times and the delta errors ([Summary]).
//   - [Fit] adjusts named chip parameters ([ParseFitParam]) to the rows, with
//     optional leave-one-problem-out cross-validation, and records the fit's
//     provenance for the chip file ([FitResult.Record]).
//   - [Report] prints a validation as text, JSON or Markdown, as the headline
//     comparison, and as docs/accuracy.md ([Report.WriteAccuracyDoc]).
package accuracy
