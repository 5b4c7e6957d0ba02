package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
	"github.com/metalsim/metalsim/trace"
)

// smallTrace records a small half-tile dispatch on two cores: few tokens per
// expert, so most tiles are half-tiles.
func smallTrace(t *testing.T, v tile.Variant, opt trace.RecordOptions) (*trace.Timeline, []byte) {
	t.Helper()
	chip := chips.MustLookup("M1 Pro 16-core GPU")
	p := tile.Problem{Experts: 32, Used: 4, M: 256, K: 512, Tokens: 144, TypeA: dequant.Q4_0}
	rec, err := trace.NewRecorder(opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.NewSimulator().Observe(p, tile.Kernel{Variant: v, Path: tile.Simdgroup}, chip, 1, rec); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := trace.WritePerfetto(&buf, rec.Timeline())
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) || st.Events != st.Spans+st.Counters+st.Metadata {
		t.Fatalf("stats %+v for %d bytes", st, buf.Len())
	}
	return rec.Timeline(), buf.Bytes()
}

// traceFile is the trace-event JSON object format, parsed loosely so the test
// sees exactly what a viewer sees.
type traceFile struct {
	DisplayTimeUnit string           `json:"displayTimeUnit"`
	OtherData       map[string]any   `json:"otherData"`
	TraceEvents     []map[string]any `json:"traceEvents"`
}

type track struct {
	pid, tid int
}

// validate checks the trace-event format rules a viewer relies on and returns
// the X events by track name.
func validate(t *testing.T, data []byte) map[string][]map[string]any {
	t.Helper()
	var f traceFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if f.DisplayTimeUnit != "ns" && f.DisplayTimeUnit != "ms" {
		t.Errorf("displayTimeUnit = %q", f.DisplayTimeUnit)
	}
	if len(f.TraceEvents) == 0 {
		t.Fatal("no trace events")
	}
	num := func(e map[string]any, k string) (float64, bool) {
		n, ok := e[k].(json.Number)
		if !ok {
			return 0, false
		}
		x, err := n.Float64()
		return x, err == nil
	}
	procNames := map[int]string{}
	threadNames := map[track]string{}
	lastX := map[track][2]float64{} // ts, end
	lastC := map[string]float64{}
	byTrack := map[track][]map[string]any{}
	var usedPIDs []int
	var usedTracks []track
	for i, e := range f.TraceEvents {
		where := fmt.Sprintf("event %d %v", i, e)
		name, _ := e["name"].(string)
		ph, _ := e["ph"].(string)
		if name == "" {
			t.Fatalf("%s: no name", where)
		}
		pidF, ok := num(e, "pid")
		if !ok {
			t.Fatalf("%s: no pid", where)
		}
		pid := int(pidF)
		args, _ := e["args"].(map[string]any)
		ts, hasTS := num(e, "ts")
		switch ph {
		case "M":
			switch name {
			case "process_name", "thread_name":
				s, _ := args["name"].(string)
				if s == "" {
					t.Fatalf("%s: metadata without args.name", where)
				}
				if name == "process_name" {
					procNames[pid] = s
				} else {
					tid, ok := num(e, "tid")
					if !ok {
						t.Fatalf("%s: thread_name without tid", where)
					}
					threadNames[track{pid, int(tid)}] = s
				}
			case "process_sort_index", "thread_sort_index":
				if _, ok := args["sort_index"].(json.Number); !ok {
					t.Fatalf("%s: no numeric sort_index", where)
				}
			default:
				t.Fatalf("%s: unknown metadata event", where)
			}
		case "X":
			dur, okD := num(e, "dur")
			tid, okT := num(e, "tid")
			if !hasTS || !okD || !okT || ts < 0 || dur <= 0 {
				t.Fatalf("%s: complete event needs ts >= 0, dur > 0, tid", where)
			}
			k := track{pid, int(tid)}
			if l, ok := lastX[k]; ok {
				if ts < l[0] {
					t.Fatalf("%s: ts %v before the previous %v on its track", where, ts, l[0])
				}
				if ts < l[1]-1e-9 {
					t.Fatalf("%s: starts at %v inside the previous span (ends %v)", where, ts, l[1])
				}
			} else {
				usedTracks = append(usedTracks, k)
			}
			lastX[k] = [2]float64{ts, ts + dur}
			byTrack[k] = append(byTrack[k], e)
			usedPIDs = append(usedPIDs, pid)
		case "C":
			if !hasTS || len(args) == 0 {
				t.Fatalf("%s: counter needs ts and args", where)
			}
			for a, v := range args {
				if _, ok := v.(json.Number); !ok {
					t.Fatalf("%s: counter series %q is not a number", where, a)
				}
			}
			key := fmt.Sprint(pid, name)
			if l, ok := lastC[key]; ok && ts < l {
				t.Fatalf("%s: counter ts %v before the previous %v", where, ts, l)
			}
			lastC[key] = ts
			usedPIDs = append(usedPIDs, pid)
		default:
			t.Fatalf("%s: unexpected ph %q", where, ph)
		}
	}
	for _, pid := range usedPIDs {
		if procNames[pid] == "" {
			t.Fatalf("pid %d has events but no process_name", pid)
		}
	}
	out := map[string][]map[string]any{}
	for _, k := range usedTracks {
		n := threadNames[k]
		if n == "" {
			t.Fatalf("track %v has spans but no thread_name", k)
		}
		out[n] = byTrack[k]
	}
	return out
}

// TestPerfettoFormat: the output parses back as trace-event JSON with the
// required fields, per-track monotonic timestamps and names; in half-tiles the
// upper simdgroups (2, 3) wait at barriers and never compute.
func TestPerfettoFormat(t *testing.T) {
	tl, data := smallTrace(t, tile.HalfTile(), trace.RecordOptions{Full: true})
	if !tl.Complete || tl.Truncated {
		t.Fatalf("complete %v truncated %v", tl.Complete, tl.Truncated)
	}
	tracks := validate(t, data)
	var halfWait, halfCompute, fullCompute, halfTGs int
	names := make([]string, 0, len(tracks))
	for n := range tracks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasPrefix(n, "core 0 /") && !strings.HasPrefix(n, "core 1 /") {
			t.Fatalf("track %q of an untraced core", n)
		}
		upper := strings.HasSuffix(n, "/ SG 2") || strings.HasSuffix(n, "/ SG 3")
		for _, e := range tracks[n] {
			args, _ := e["args"].(map[string]any)
			name := e["name"].(string)
			if !strings.Contains(n, "/ SG ") {
				if args["half_tile"] == true {
					halfTGs++
				}
				continue
			}
			tg, _ := args["tg"].(json.Number).Int64()
			info, ok := tl.TG(int(tg))
			if !ok {
				t.Fatalf("span %v names threadgroup %d the timeline lacks", e, tg)
			}
			switch {
			case info.HalfTile && upper && name == "barrier wait":
				halfWait++
			case info.HalfTile && upper && name == "compute":
				halfCompute++
			case !info.HalfTile && info.Tokens > 0 && upper && name == "compute":
				fullCompute++
			}
		}
	}
	if halfTGs == 0 || halfWait == 0 {
		t.Fatalf("half-tiles %d, barrier waits of their SGs 2-3 %d: want some", halfTGs, halfWait)
	}
	if halfCompute != 0 {
		t.Errorf("SGs 2-3 of half-tiles show %d compute spans, want none", halfCompute)
	}
	if fullCompute == 0 {
		t.Errorf("SGs 2-3 of full tiles show no compute")
	}
}

// TestPerfettoUpstreamComputesEverywhere: without the half-skip every
// simdgroup of a computing tile computes.
func TestPerfettoUpstreamComputesEverywhere(t *testing.T) {
	tl, data := smallTrace(t, tile.Upstream(), trace.RecordOptions{EndUs: 30})
	tracks := validate(t, data)
	compute := map[string]int{}
	for n, evs := range tracks {
		for _, e := range evs {
			if e["name"] == "compute" {
				compute[n[strings.LastIndex(n, "/ ")+2:]]++
			}
		}
	}
	for sg := 0; sg < 4; sg++ {
		if compute[fmt.Sprintf("SG %d", sg)] == 0 {
			t.Errorf("SG %d: no compute spans (%v)", sg, compute)
		}
	}
	if tl.Complete {
		t.Errorf("a 30 µs window of a longer dispatch reports a complete run")
	}
}

// TestPerfettoTruncated: the event cap stops recording and the file says so.
func TestPerfettoTruncated(t *testing.T) {
	tl, data := smallTrace(t, tile.HalfTile(), trace.RecordOptions{MaxEvents: 300, SampleUs: 2})
	if !tl.Truncated {
		t.Fatal("300 events: not truncated")
	}
	validate(t, data)
	var f traceFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.OtherData["truncated"] != true {
		t.Errorf("otherData.truncated = %v", f.OtherData["truncated"])
	}
	n := 0
	for _, e := range f.TraceEvents {
		if e["ph"] != "M" {
			n++
		}
	}
	if n > 300 {
		t.Errorf("%d events past a cap of 300", n)
	}
}

// TestPerfettoDeterministic: the same run writes the same bytes.
func TestPerfettoDeterministic(t *testing.T) {
	_, a := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 20})
	_, b := smallTrace(t, tile.HalfTile(), trace.RecordOptions{EndUs: 20})
	if !bytes.Equal(a, b) {
		t.Fatal("two identical runs wrote different traces")
	}
}
