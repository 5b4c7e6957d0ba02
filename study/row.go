package study

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
)

// Row is one sweep point: its definition and its result. Its CSV columns and
// JSON fields are Columns(), in field order (Detail's after Op). A MUL_MAT
// point (op mul_mat) has no experts, routing or seed: experts, used and b are
// 0, routing and skew empty, seed 0, and draws 1 (its dispatch does not
// depend on a routing); bs and nr are its batch dims (weight matrices and
// activation batches per matrix, at least 1), 0 for a MUL_MAT_ID. path is
// empty for the mat-vec kernels.
type Row struct {
	Index            int     `json:"index"`
	Points           int     `json:"points"`
	SweepID          string  `json:"sweep_id"`
	Chip             string  `json:"chip"`
	Variant          string  `json:"variant"`
	Path             string  `json:"path"`
	Routing          string  `json:"routing"`
	Skew             string  `json:"skew"`
	N                int     `json:"n"`
	Experts          int     `json:"experts"`
	Used             int     `json:"used"`
	M                int     `json:"m"`
	K                int     `json:"k"`
	TypeA            string  `json:"type_a"`
	TypeB            string  `json:"type_b"`
	B                int     `json:"b"`
	Engine           string  `json:"engine"`
	Draws            int     `json:"draws"`
	Seed             uint64  `json:"seed"`
	TotalUs          float64 `json:"total_us"`
	KernelUs         float64 `json:"kernel_us"`
	Map0Us           float64 `json:"map0_us"`
	DispatchUs       float64 `json:"dispatch_us"`
	TFLOPS           float64 `json:"tflops"`
	DRAMBytes        float64 `json:"dram_bytes"`
	TGsPerCore       int     `json:"tgs_per_core"`
	OccupancyLimiter string  `json:"occupancy_limiter"`
	Registers        int     `json:"registers_per_thread"`
	Limiter          string  `json:"limiter"`
	Threadgroups     int64   `json:"threadgroups"`
	Tiles            int64   `json:"tiles"`
	Exited           int64   `json:"exited"`
	HalfTilesSkipped int64   `json:"half_tiles_skipped"`
	MMA8             int64   `json:"mma8"`
	MMA8Skipped      int64   `json:"mma8_skipped"`
	MMA16            int64   `json:"mma16"`
	MMA16Skipped     int64   `json:"mma16_skipped"`
	Matmul2D         int64   `json:"matmul2d"`
	Matmul2DSkipped  int64   `json:"matmul2d_skipped"`
	Error            string  `json:"error"`
	Op               string  `json:"op"`
	Bs               int     `json:"bs"`
	Nr               int     `json:"nr"`
	Detail
}

// Columns returns the CSV header, in Row field order.
func Columns() []string { return slices.Clone(columns) }

var columns = slices.Concat([]string{"index", "points", "sweep_id", "chip", "variant", "path", "routing", "skew", "n", "experts", "used", "m", "k",
	"type_a", "type_b", "b", "engine", "draws", "seed", "total_us", "kernel_us", "map0_us", "dispatch_us", "tflops", "dram_bytes",
	"tgs_per_core", "occupancy_limiter", "registers_per_thread", "limiter", "threadgroups", "tiles", "exited", "half_tiles_skipped",
	"mma8", "mma8_skipped", "mma16", "mma16_skipped", "matmul2d", "matmul2d_skipped", "error", "op", "bs", "nr"}, detailColumns)

// Record renders the row as its CSV record, floats at their CSV precision
// (csvFloat).
func (r *Row) Record() []string {
	i := func(v int) string { return strconv.Itoa(v) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	us := func(v float64) string { return csvFloat(v, usDecimals) }
	rec := []string{i(r.Index), i(r.Points), r.SweepID, r.Chip, r.Variant, r.Path, r.Routing, r.Skew, i(r.N), i(r.Experts), i(r.Used),
		i(r.M), i(r.K), r.TypeA, r.TypeB, i(r.B), r.Engine, i(r.Draws), strconv.FormatUint(r.Seed, 10),
		us(r.TotalUs), us(r.KernelUs), us(r.Map0Us), us(r.DispatchUs), csvFloat(r.TFLOPS, tflopsDecimals), csvFloat(r.DRAMBytes, bytesDecimals), i(r.TGsPerCore), r.OccupancyLimiter, i(r.Registers), r.Limiter,
		i64(r.Threadgroups), i64(r.Tiles), i64(r.Exited), i64(r.HalfTilesSkipped), i64(r.MMA8), i64(r.MMA8Skipped),
		i64(r.MMA16), i64(r.MMA16Skipped), i64(r.Matmul2D), i64(r.Matmul2DSkipped), r.Error, r.Op, i(r.Bs), i(r.Nr)}
	return append(rec, r.Detail.record()...)
}

// fill copies a run's outcome into the row.
func (r *Row) fill(o *Outcome) {
	res := o.Result
	r.Detail = DetailOf(o.Kernel, res, o.Notes)
	r.Draws = res.Draws
	r.TotalUs, r.KernelUs, r.Map0Us, r.DispatchUs, r.TFLOPS = res.TotalUs, res.KernelUs, res.Map0Us, res.OverheadUs, res.TFLOPS
	r.TGsPerCore, r.OccupancyLimiter, r.Limiter = res.Occupancy.TGsPerCore, res.Occupancy.Limiter, res.Limit.String()
	r.Registers, r.DRAMBytes = res.Registers.Total, res.DRAMBytes
	c := res.Counters
	r.Threadgroups, r.Tiles, r.Exited = c.Launched, c.Active, c.Exited
	r.HalfTilesSkipped = c.Skipped.HalfTiles
	r.MMA8, r.MMA8Skipped, r.MMA16, r.MMA16Skipped = c.Work.MMA8, c.Skipped.MMA8, c.Work.MMA16, c.Skipped.MMA16
	r.Matmul2D, r.Matmul2DSkipped = c.Work.Matmul2D, c.Skipped.Matmul2D
}

// Digest returns the row's digest: 16 hex digits of the FNV-1a 64 hash,
// through splitmix64, of its CSV record (every field, length-prefixed).
// Shard outputs carry it in a last column (or field) "digest", so that Merge
// catches a row edited after the sweep wrote it.
func (r *Row) Digest() string {
	h := fnv.New64a()
	for _, f := range r.Record() {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return fmt.Sprintf("%016x", splitmix64(h.Sum64()))
}

// digestColumn is the column (and JSON field) of a row's digest in a shard
// output.
const digestColumn = "digest"

// Writer writes a sweep's rows as CSV or JSON; Merge writes the rows it read
// back with it, so merged shards are byte-identical to an unsharded run.
type Writer struct {
	w       io.Writer
	json    bool
	points  int
	rows    int
	csv     *csv.Writer
	digests bool
}

// NewWriter starts an output of a sweep of points points whose definition
// has the given id (Sweep.ID); JSON carries both in its header. With digests
// (a shard of a sharded run) every row ends with its Digest.
func NewWriter(w io.Writer, asJSON bool, points int, id string, digests bool) (*Writer, error) {
	sw := &Writer{w: w, json: asJSON, points: points, digests: digests}
	if asJSON {
		_, err := fmt.Fprintf(w, `{"points":%d,"sweep_id":%q,"rows":[`, points, id)
		return sw, err
	}
	sw.csv = csv.NewWriter(w)
	if digests {
		return sw, sw.csv.Write(append(Columns(), digestColumn))
	}
	return sw, sw.csv.Write(columns)
}

// writeJSONRow writes one row's encoded object.
func (sw *Writer) writeJSONRow(raw []byte) error {
	sep := ",\n"
	if sw.rows == 0 {
		sep = "\n"
	}
	sw.rows++
	if _, err := io.WriteString(sw.w, sep); err != nil {
		return err
	}
	_, err := sw.w.Write(raw)
	return err
}

// Write writes one row.
func (sw *Writer) Write(r *Row) error {
	if !sw.json {
		rec := r.Record()
		if sw.digests {
			rec = append(rec, r.Digest())
		}
		return sw.csv.Write(rec)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if sw.digests {
		raw = fmt.Appendf(raw[:len(raw)-1], `,%q:%q}`, digestColumn, r.Digest())
	}
	return sw.writeJSONRow(raw)
}

// Close ends the output.
func (sw *Writer) Close() error {
	if sw.json {
		_, err := io.WriteString(sw.w, "\n]}\n")
		return err
	}
	sw.csv.Flush()
	return sw.csv.Error()
}

// WritePoint writes one point's row (simrun simulate's --format): the CSV
// header and its record, or its JSON object on a line.
func WritePoint(w io.Writer, asJSON bool, r *Row) error {
	if asJSON {
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(raw, '\n'))
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(columns); err != nil {
		return err
	}
	if err := cw.Write(r.Record()); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// Failures counts the rows with an error and returns the first's text
// ("point I (chip, variant, routing, n = N): error"), for a sweep's or a
// merge's closing line.
func Failures(rows []*Row) (n int, first string) {
	for _, r := range rows {
		if r.Error != "" {
			if n == 0 {
				first = fmt.Sprintf("point %d (%s, %s, %s, n = %d): %s", r.Index, r.Chip, r.Variant, r.Routing, r.N, r.Error)
			}
			n++
		}
	}
	return n, first
}
