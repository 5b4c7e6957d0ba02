package plots

import (
	"bytes"
	"image/color"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/accuracy"
	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/tile"
)

// smallTSV measures a small shape on two chips, both variants, and one
// mul_mv_id row: quick to predict, with pairs on both chips.
const smallTSV = "# chip\tgpu_path\top\ttype_a\ttype_b\tn_experts\tn_used\tm\tk\tn\tvariant\tus_per_run\tstatistic\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t32\tupstream\t40.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t32\thalftile\t30.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t64\tupstream\t50.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t64\thalftile\t41.0\tmin-of-3\n" +
	"M1 Pro 16-core GPU\tsimdgroup\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t8\tupstream\t20.0\tmin-of-3\n" +
	"M5 10-core GPU\ttensor\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t32\tupstream\t25.0\tsingle-pass\n" +
	"M5 10-core GPU\ttensor\tMUL_MAT_ID\tq4_0\tf32\t16\t4\t256\t512\t32\thalftile\t24.0\tsingle-pass\n"

func smallReport(t *testing.T) *accuracy.Report {
	t.Helper()
	rows, err := hw.ParseTSV(strings.NewReader(smallTSV), "small.tsv")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := accuracy.Match(rows, accuracy.MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := accuracy.Validate(cases, sim.NewSimulator(), sim.Options{Draws: 1})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAccuracyPicture: the picture holds both panels' axis labels, every
// chip, kernel and reference in its legend, one point per modelled row and
// per pair in its chip's colour, and the worst row's label.
func TestAccuracyPicture(t *testing.T) {
	rep := smallReport(t)
	var b bytes.Buffer
	if err := WriteAccuracy(&b, "svg", rep); err != nil {
		t.Fatal(err)
	}
	pic := readPicture(t, b.String())
	pic.requireTexts(t, "accuracy", "measured µs per op (log scale)", "predicted µs per op (log scale)", "measured Δ %", "predicted Δ %",
		"M1 Pro 16-core GPU", "M5 10-core GPU", "mul_mm_id", "mul_mv_id", "y = x: predicted = measured", "±10 % of measured")
	rows, pairs := AccuracyPoints(rep)
	if rows != 7 || pairs != 3 {
		t.Fatalf("%d rows and %d pairs drawn, want 7 and 3", rows, pairs)
	}
	for i, chip := range []string{"M1 Pro 16-core GPU", "M5 10-core GPU"} {
		want := 0
		for _, r := range rep.Rows {
			if r.Modelled && r.Row.HasTime && r.Chip.Name == chip {
				want++
			}
		}
		for _, p := range rep.Pairs {
			if p.Chip == chip {
				want++
			}
		}
		if got := pic.filled(colour(i)); got != want {
			t.Errorf("%s: %d points in its colour, want %d", chip, got, want)
		}
	}
	worst := rep.Rows[0]
	for _, r := range rep.Rows {
		if math.Abs(r.ErrorPct) > math.Abs(worst.ErrorPct) {
			worst = r
		}
	}
	n, _ := worst.Row.Params.Get("n")
	label := worst.Variant.Name + " n=" + n + ": " + strconv.FormatFloat(worst.ErrorPct, 'f', 1, 64) + " %"
	if worst.ErrorPct >= 0 {
		label = worst.Variant.Name + " n=" + n + ": +" + strconv.FormatFloat(worst.ErrorPct, 'f', 1, 64) + " %"
	}
	pic.requireTexts(t, "the worst row", label)
	var none accuracy.Report
	if err := WriteAccuracy(&b, "svg", &none); err == nil || !strings.Contains(err.Error(), "nothing to draw") {
		t.Errorf("an empty report: %v", err)
	}
	if err := WriteAccuracy(&b, "pdf", rep); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("pdf: %v", err)
	}
}

// compareRows are a comparison of two chips at three n, built by hand.
func compareRows() []study.CompareRow {
	var rows []study.CompareRow
	for _, chip := range []string{"M1 Pro 16-core GPU", "M5 10-core GPU"} {
		for i, n := range []int{128, 32, 512} { // out of order: the lines join them in n order
			a := 1000 + 100*float64(i)
			b := a * (0.6 + 0.1*float64(i))
			rows = append(rows, study.CompareRow{Chip: chip, Shape: "m=768,k=2048", N: n,
				A: study.CompareSide{Variant: "upstream", Path: "simdgroup", Us: a}, B: study.CompareSide{Variant: "halftile", Path: "simdgroup", Us: b},
				DeltaUs: b - a, DeltaPct: 100 * (b - a) / a})
		}
	}
	return rows
}

// TestComparePicture: the axis labels name the log2 scale and what the time
// is, the legend names every series, each series has its points (A, B and
// Δ per n, and its legend icon), measured points are rings, and the Δ axis
// reaches past the lowest delta.
func TestComparePicture(t *testing.T) {
	rows := compareRows()
	measured := []Measured{{Row: 0, Side: 0, Us: 1010}, {Row: 0, Side: 1, Us: 700}, {Row: 2, Side: 0, Us: 1250}}
	var b bytes.Buffer
	if err := WriteCompare(&b, "svg", rows, "upstream", "halftile", measured); err != nil {
		t.Fatal(err)
	}
	pic := readPicture(t, b.String())
	pic.requireTexts(t, "compare", "n (tokens, log2 scale)", "µs per MUL_MAT_ID", "Δ %", "32", "128", "512",
		"M1 Pro 16-core GPU, m=768,k=2048", "M5 10-core GPU, m=768,k=2048", "A: upstream", "B: halftile",
		"predicted (filled)", "measured (hollow): 3 points", "-40")
	for i := range 2 {
		if got := pic.filled(colour(i)); got != 3*3+1 {
			t.Errorf("series %d: %d filled points, want 10 (A, B and Δ at 3 n, and the legend's)", i, got)
		}
	}
	// three measured times on the first series, and one measured Δ (row 0)
	if got := pic.rings(colour(0)); got != 4 {
		t.Errorf("%d measured rings, want 4", got)
	}
	if got := pic.rings(colour(1)); got != 0 {
		t.Errorf("%d measured rings on the second series, want none", got)
	}

	layer := append(compareRows()[:3], study.CompareRow{Chip: "M1 Pro 16-core GPU", Shape: "layer", N: 32, Total: true,
		A: study.CompareSide{Us: 3000}, B: study.CompareSide{Us: 2000}, DeltaPct: -33})
	b.Reset()
	if err := WriteCompare(&b, "svg", layer, "upstream", "halftile", nil); err != nil {
		t.Fatal(err)
	}
	pic = readPicture(t, b.String())
	pic.requireTexts(t, "a layer", "µs: per matmul, and their sum for the layer", "M1 Pro 16-core GPU, layer total (sum of the matmuls)")
	if pic.hasText("µs per MUL_MAT_ID") || pic.hasText("measured (hollow): 0 points") {
		t.Errorf("a layer's picture calls its time µs per MUL_MAT_ID, or lists measured points: %q", pic.texts)
	}
}

// TestMeasuredPoints: a measured row matches the point of its chip, path,
// variant and problem, and only mul_mm_id rows do.
func TestMeasuredPoints(t *testing.T) {
	m1 := chips.MustLookup("M1 Pro 16-core GPU")
	up, _ := tile.LookupVariant("upstream")
	ht, _ := tile.LookupVariant("halftile")
	prob := tile.Problem{Experts: 128, Used: 8, M: 768, K: 2048, Tokens: 32}
	rows := []study.CompareRow{{Chip: m1.Name, N: 32, Problem: prob,
		A: study.CompareSide{Variant: "upstream", Path: "simdgroup"}, B: study.CompareSide{Variant: "halftile", Path: "simdgroup"}}}
	row := func(v tile.Variant, kernel string, us float64) accuracy.Case {
		return accuracy.Case{Row: hw.Row{USPerRun: us, HasTime: true}, Chip: m1, Path: tile.Simdgroup, Kernel: kernel, Problem: prob, Variant: v, Modelled: true}
	}
	other := prob
	other.Tokens = 64
	cases := []accuracy.Case{row(ht, accuracy.KernelMulMMID, 1700), row(up, accuracy.KernelMulMVID, 1), row(up, accuracy.KernelMulMMID, 2700)}
	cases = append(cases, accuracy.Case{Row: hw.Row{USPerRun: 9, HasTime: true}, Chip: m1, Kernel: accuracy.KernelMulMMID, Problem: other, Variant: up, Modelled: true})
	got := MeasuredPoints(rows, cases)
	want := []Measured{{Row: 0, Side: 0, Us: 2700}, {Row: 0, Side: 1, Us: 1700}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("measured %+v, want %+v", got, want)
	}
}

// TestOccupancyPicture: the picture names its axes, every resource's bound
// and the kernel's limiter, and marks the kernel's count.
func TestOccupancyPicture(t *testing.T) {
	m1 := chips.MustLookup("M1 Pro 16-core GPU")
	var b bytes.Buffer
	if err := WriteOccupancy(&b, "svg", m1, "halftile/simdgroup", 128, 60, 8192, 16, 128); err != nil {
		t.Fatal(err)
	}
	pic := readPicture(t, b.String())
	o, err := chips.OccupancyFor(m1, 128, 60, 8192)
	if err != nil {
		t.Fatal(err)
	}
	pic.requireTexts(t, "occupancy", "registers per thread", "simdgroups per core", "resident: the least of the bounds",
		"registers: 12-96 SGs", "threadgroup memory: 28 SGs", "halftile/simdgroup, limited by "+o.Limiter,
		"60 registers: 24 SGs (6 TGs), limited by registers")
	if got := pic.filled(color.Black); got != 2 {
		t.Errorf("%d black marks, want 2 (the kernel's count and its legend icon)", got)
	}
}

// sweepRows are a sweep of two variants over three n and, with routings,
// over them too.
func sweepRows(routings ...string) []*study.Row {
	if len(routings) == 0 {
		routings = []string{"uniform"}
	}
	var rows []*study.Row
	for vi, v := range []string{"upstream", "halftile"} {
		for ri, r := range routings {
			for ni, n := range []int{32, 256, 2048} {
				rows = append(rows, &study.Row{SweepID: "0123456789abcdef", Chip: "M1 Pro 16-core GPU", Variant: v, Routing: r, Skew: strconv.Itoa(ri),
					N: n, Experts: 128, Used: 8, M: 768, K: 2048, TypeA: "q4_0", TypeB: "f32", TotalUs: float64(1000*(ni+1) + 100*ri + 10*vi)})
			}
		}
	}
	rows = append(rows, &study.Row{Chip: "M1 Pro 16-core GPU", Variant: "upstream", Routing: "uniform", N: 64, Error: "failed"})
	return rows
}

// sweepPicture checks that rows plot as kind and returns their SVG sweep plot,
// read and as text.
func sweepPicture(t *testing.T, rows []*study.Row, kind string) (picture, string) {
	t.Helper()
	if k := SweepKind(rows); k != kind {
		t.Fatalf("kind %q, want %q", k, kind)
	}
	var b bytes.Buffer
	if err := WriteSweep(&b, "svg", rows); err != nil {
		t.Fatal(err)
	}
	return readPicture(t, b.String()), b.String()
}

// TestSweepLines: one swept axis draws a line per chip and variant over it,
// every point in its variant's colour; a failed point is left out.
func TestSweepLines(t *testing.T) {
	rows := sweepRows()
	pic, _ := sweepPicture(t, rows, "lines over n")
	pic.requireTexts(t, "sweep lines", "n (tokens, log2 scale)", "predicted µs per MUL_MAT_ID", "32", "256", "2048",
		"M1 Pro 16-core GPU, upstream", "M1 Pro 16-core GPU, halftile")
	if pic.hasText("64") {
		t.Error("the failed point's n is on the axis")
	}
	for i := range 2 {
		if got := pic.filled(colour(i)); got != 3+1 {
			t.Errorf("variant %d: %d points, want 4 (3 n and the legend's)", i, got)
		}
	}
	if k := SweepKind(sweepRows("uniform", "zipf:1")[3:6]); k != "lines over n" {
		t.Errorf("one routing's rows: %q", k)
	}
}

// TestSweepHeatmap: n and the routing both swept draw one heatmap per chip
// and variant, every cell labelled with its time.
func TestSweepHeatmap(t *testing.T) {
	rows := sweepRows("zipf:0", "zipf:1")
	pic, _ := sweepPicture(t, rows, "heatmap")
	pic.requireTexts(t, "heatmap", "n (tokens)", "routing", "zipf:0", "zipf:1", "µs",
		"M1 Pro 16-core GPU, upstream", "M1 Pro 16-core GPU, halftile")
	for _, r := range rows {
		if r.Error == "" {
			pic.requireTexts(t, "a cell", cellText(r.TotalUs))
		}
	}
	// times over more than a factor of four take a log colour scale
	for _, r := range rows {
		r.TotalUs *= float64(r.N) / 32
	}
	pic, _ = sweepPicture(t, rows, "heatmap")
	pic.requireTexts(t, "a log heatmap", "µs (log scale)")
}

// TestSweepOverRouting: routings of different kinds at one n are categories:
// each series' points, side by side, not joined.
func TestSweepOverRouting(t *testing.T) {
	var rows []*study.Row
	for _, r := range sweepRows("uniform", "hot:4:0.5") {
		if r.N == 256 {
			r.Skew = ""
			rows = append(rows, r)
		}
	}
	pic, svg := sweepPicture(t, rows, "lines over routing")
	pic.requireTexts(t, "over routing", "routing", "uniform", "hot:4:0.5", "predicted µs per MUL_MAT_ID", "M1 Pro 16-core GPU, upstream")
	for i := range 2 {
		if got := pic.filled(colour(i)); got != 2+1 {
			t.Errorf("variant %d: %d points, want 3 (2 routings and the legend's)", i, got)
		}
	}
	if strings.Contains(svg, "stroke:"+hex(colour(0))) {
		t.Error("categories joined by a line")
	}
}

func TestTicksAndRanges(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(150, 6000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, ","); got != "200,500,1000,2000,5000" {
		t.Errorf("log ticks over 150..6000: %s", got)
	}
	labels = nil
	for _, tk := range (logTicks{}).Ticks(3, 2e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, ","); got != "10,100,1000,10000,1e5,1e6" {
		t.Errorf("log ticks over six decades: %s", got)
	}
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 8800, "0,2000,4000,6000,8000"},
		{-40, 10, "-40,-30,-20,-10,0,10"},
		{0.2, 0.9, "0.2,0.4,0.6,0.8"},
	} {
		labels = nil
		for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, ","); got != tc.want {
			t.Errorf("linear ticks over %v..%v: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
	for _, tc := range []struct{ lo, hi, wantLo, wantHi float64 }{
		{-38.4, 0, -40, 0},
		{-3.4, 0.9, -4, 1},
		{5, 5, 4, 6},
	} {
		if lo, hi := niceRange(tc.lo, tc.hi); lo != tc.wantLo || hi != tc.wantHi {
			t.Errorf("niceRange(%v, %v) = %v, %v; want %v, %v", tc.lo, tc.hi, lo, hi, tc.wantLo, tc.wantHi)
		}
	}
}
