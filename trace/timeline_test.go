package trace_test

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

// drawTimeline renders a timeline and fails the test on an error.
func drawTimeline(t *testing.T, tl *trace.Timeline, opt trace.TimelineOptions) ([]byte, trace.TimelineStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := trace.WriteTimeline(&buf, tl, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Fatalf("stats say %d bytes, wrote %d", st.Bytes, buf.Len())
	}
	return buf.Bytes(), st
}

func TestTimelinePNG(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 40})
	data, st := drawTimeline(t, tl, trace.TimelineOptions{Format: "png"})
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1056 || b.Dy() < 300 || b.Dy() > 3000 {
		t.Errorf("picture %dx%d: want 1056 pixels wide and a height that follows the rows", b.Dx(), b.Dy())
	}
	// the phase colours are there, and the picture is mostly drawn on
	want := map[color.RGBA]string{
		{R: 44, G: 160, B: 44, A: 255}:  "compute",
		{R: 255, G: 187, B: 51, A: 255}: "stage",
		{R: 214, G: 39, B: 40, A: 255}:  "barrier wait",
	}
	seen := map[string]int{}
	white := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if name, ok := want[c]; ok {
				seen[name]++
			}
			if c == (color.RGBA{R: 255, G: 255, B: 255, A: 255}) {
				white++
			}
		}
	}
	for _, name := range want {
		if seen[name] < 500 {
			t.Errorf("%d pixels of %s: want a visible share", seen[name], name)
		}
	}
	if frac := float64(white) / float64(b.Dx()*b.Dy()); frac > 0.7 {
		t.Errorf("%.0f%% of the picture is white", 100*frac)
	}
	// two cores, each slot with 4 simdgroups
	if st.Rows == 0 || st.Rows%4 != 0 || st.OmittedRows != 0 || st.Threadgroups == 0 || st.Rects < st.Rows {
		t.Errorf("stats %+v", st)
	}
	if len(st.BySG) != 4 {
		t.Errorf("BySG has %d simdgroups, want 4", len(st.BySG))
	}
}

// TestTimelineTimes checks the time the stats report against the spans.
func TestTimelineTimes(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 40})
	_, st := drawTimeline(t, tl, trace.TimelineOptions{Format: "png"})
	var spans float64
	for _, sp := range tl.Spans {
		if sp.SG >= 0 {
			spans += tl.Us(sp.End - sp.Start)
		}
	}
	var drawn, bySG float64
	for k, v := range st.Time {
		drawn += v
		for _, s := range st.BySG {
			bySG += s[k]
		}
	}
	if math.Abs(drawn-spans) > 1e-6*spans || math.Abs(bySG-drawn) > 1e-6*drawn {
		t.Errorf("drawn %.6f µs, by simdgroup %.6f µs, spans %.6f µs", drawn, bySG, spans)
	}
	sh := trace.Shares(st.Time)
	var sum float64
	for _, f := range sh {
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 || sh[trace.KindCompute] == 0 || sh[trace.KindBarrier] == 0 || sh[trace.KindStage] == 0 {
		t.Errorf("shares %v", sh)
	}
	// the half-tile's upper simdgroups compute less than the lower ones
	lower, upper := trace.Shares(st.BySG[0]), trace.Shares(st.BySG[2])
	if !(upper[trace.KindCompute] < lower[trace.KindCompute]) || !(upper[trace.KindBarrier] > lower[trace.KindBarrier]) {
		t.Errorf("sg0 %v, sg2 %v: want sg2 to compute less and wait more", lower, upper)
	}
	if trace.Shares([trace.NumTimelineKinds]float64{}) != [trace.NumTimelineKinds]float64{} {
		t.Error("shares of nothing are not zero")
	}
}

func TestTimelineSVG(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 40})
	data, st := drawTimeline(t, tl, trace.TimelineOptions{Format: "svg"})
	dec := xml.NewDecoder(bytes.NewReader(data))
	elems := map[string]int{}
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = v.Name.Local
			}
			elems[v.Name.Local]++
		case xml.CharData:
			text.Write(v)
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	if elems["path"] < st.Rects {
		t.Errorf("%d paths for %d rectangles", elems["path"], st.Rects)
	}
	for _, w := range []string{"c0 s0 sg0", "c1 s0 sg3", "compute", "barrier wait", "halftile/simdgroup", "µs from the dispatch start"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("SVG text lacks %q", w)
		}
	}
}

func TestTimelineRowCap(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 40})
	_, all := drawTimeline(t, tl, trace.TimelineOptions{Format: "png"})
	// whole slots while they fit
	_, st := drawTimeline(t, tl, trace.TimelineOptions{Format: "png", MaxRows: 9})
	if st.Rows != 8 || st.OmittedRows != all.Rows-8 {
		t.Errorf("cap 9: %d rows, %d left out; want 8 (two slots) and %d", st.Rows, st.OmittedRows, all.Rows-8)
	}
	// a cap below one slot draws that slot's first rows
	_, st = drawTimeline(t, tl, trace.TimelineOptions{Format: "svg", MaxRows: 3})
	if st.Rows != 3 || st.OmittedRows != all.Rows-3 {
		t.Errorf("cap 3: %d rows, %d left out", st.Rows, st.OmittedRows)
	}
	data, _ := drawTimeline(t, tl, trace.TimelineOptions{Format: "svg", MaxRows: 3})
	if !bytes.Contains(data, []byte("more not drawn")) {
		t.Error("the picture does not say rows were left out")
	}
}

func TestTimelineColumns(t *testing.T) {
	tl, _ := smallTrace(t, tile.Upstream(), trace.RecordOptions{EndUs: 40})
	// coarse columns: every span is shorter than one, all drawn as shares
	_, coarse := drawTimeline(t, tl, trace.TimelineOptions{Format: "png", Columns: 4})
	if coarse.Binned == 0 || coarse.Binned != coarse.Rects {
		t.Errorf("4 columns: %d of %d rectangles binned, want all", coarse.Binned, coarse.Rects)
	}
	// fine columns: (nearly) every span drawn exactly
	_, fine := drawTimeline(t, tl, trace.TimelineOptions{Format: "png", Columns: 1 << 20})
	if fine.Binned*20 > fine.Rects {
		t.Errorf("2^20 columns: %d of %d rectangles binned", fine.Binned, fine.Rects)
	}
	if coarse.Time != fine.Time {
		t.Errorf("the time drawn depends on the columns: %v vs %v", coarse.Time, fine.Time)
	}
}

func TestTimelineDeterministic(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 20})
	a, _ := drawTimeline(t, tl, trace.TimelineOptions{Format: "svg"})
	b, _ := drawTimeline(t, tl, trace.TimelineOptions{Format: "svg"})
	if !bytes.Equal(a, b) {
		t.Error("two renderings of one timeline differ")
	}
}

func TestTimelineErrors(t *testing.T) {
	tl, _ := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 20})
	for _, tc := range []struct {
		tl   *trace.Timeline
		opt  trace.TimelineOptions
		want string
	}{
		{tl, trace.TimelineOptions{Format: "pdf"}, `format "pdf"`},
		{tl, trace.TimelineOptions{Format: "png", MaxRows: -1}, "max rows = -1"},
		{tl, trace.TimelineOptions{Format: "png", MaxRows: trace.MaxTimelineRows + 1}, "max rows = 1025"},
		{tl, trace.TimelineOptions{Format: "png", Columns: -2}, "columns = -2"},
		{tl, trace.TimelineOptions{Format: "png", Width: 1}, "width"},
		{&trace.Timeline{}, trace.TimelineOptions{Format: "png"}, "empty timeline"},
		{&trace.Timeline{ClockMHz: 1000, Start: 0, End: 1000}, trace.TimelineOptions{Format: "svg"}, "no simdgroup spans"},
	} {
		if _, err := trace.WriteTimeline(io.Discard, tc.tl, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
	if s := trace.TimelineKind(9).String(); s != "TimelineKind(9)" {
		t.Errorf("kind 9 prints %q", s)
	}
}
