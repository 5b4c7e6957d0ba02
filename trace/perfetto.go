package trace

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/isa"
)

// The Chrome trace-event format (the JSON Object Format of "Trace Event Format",
// which ui.perfetto.dev and chrome://tracing open): a traceEvents array of
// complete events (ph "X": name, ts, dur, pid, tid), counters (ph "C": name,
// ts, pid, args holding the series) and metadata (ph "M": process_name,
// thread_name and their sort indices). Timestamps are in µs; we print them
// with 0.1 ns resolution from exact integers, so a span that ends where the
// next begins prints the same number for both.

// Process ids: one process for the chip-wide counters, one per core.
const (
	chipPID     = 1
	corePIDBase = 100
)

// PerfettoStats counts what WritePerfetto wrote.
type PerfettoStats struct {
	Events   int // all trace events
	Spans    int // complete events (ph X)
	Counters int // counter samples (ph C)
	Metadata int // process and thread names and sort indices (ph M)
	Bytes    int64
}

// WritePerfetto writes a timeline as Chrome trace-event JSON: a process per
// traced core with a track per threadgroup slot (threadgroup spans) and per
// simdgroup of the slot (phase, barrier-wait and idle spans), a resident
// threadgroups counter per core, and a chip process with the DRAM bandwidth
// counter.
func WritePerfetto(w io.Writer, tl *Timeline) (PerfettoStats, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	var st PerfettoStats
	var evs []event
	add := func(e event) { evs = append(evs, e) }

	// metadata: names and order of processes and threads
	meta := []event{
		{name: "process_name", ph: 'M', pid: chipPID, args: []arg{{"name", str("chip: " + tl.Chip)}}},
		{name: "process_sort_index", ph: 'M', pid: chipPID, args: []arg{{"sort_index", num(0)}}},
	}
	type trackKey struct{ core, slot, sg int }
	seen := map[trackKey]bool{}
	var tracks []trackKey
	for _, sp := range tl.Spans {
		k := trackKey{sp.Core, sp.Slot, sp.SG}
		if !seen[k] {
			seen[k] = true
			tracks = append(tracks, k)
		}
	}
	// a threadgroup's slot track comes before its simdgroups' tracks even if
	// it has no span of its own in the window
	for _, k := range slices.Clone(tracks) {
		if tg := (trackKey{k.core, k.slot, -1}); !seen[tg] {
			seen[tg] = true
			tracks = append(tracks, tg)
		}
	}
	slices.SortFunc(tracks, func(a, b trackKey) int {
		return cmp.Or(cmp.Compare(a.core, b.core), cmp.Compare(a.slot, b.slot), cmp.Compare(a.sg, b.sg))
	})
	for _, c := range tl.Cores {
		meta = append(meta,
			event{name: "process_name", ph: 'M', pid: corePIDBase + c, args: []arg{{"name", str(fmt.Sprintf("core %d", c))}}},
			event{name: "process_sort_index", ph: 'M', pid: corePIDBase + c, args: []arg{{"sort_index", num(1 + c)}}})
	}
	for _, k := range tracks {
		name := fmt.Sprintf("core %d / TG slot %d", k.core, k.slot)
		if k.sg >= 0 {
			name += fmt.Sprintf(" / SG %d", k.sg)
		}
		pid, tid := corePIDBase+k.core, tidOf(k.core, k.slot, k.sg)
		meta = append(meta,
			event{name: "thread_name", ph: 'M', pid: pid, tid: tid, args: []arg{{"name", str(name)}}},
			event{name: "thread_sort_index", ph: 'M', pid: pid, tid: tid, args: []arg{{"sort_index", num(tid - 10000*k.core)}}})
	}

	idleNs := num(math.Round(1e4*tl.Us(tl.IdleCycles)) / 10)
	units := func(cycles int64) int64 { return int64(math.Round(float64(cycles) / tl.ClockMHz * 1e4)) }
	for _, sp := range tl.Spans {
		e := event{ph: 'X', pid: corePIDBase + sp.Core, tid: tidOf(sp.Core, sp.Slot, sp.SG), ts: units(sp.Start)}
		e.dur = units(sp.End) - e.ts
		if e.dur <= 0 {
			continue // shorter than the printed resolution
		}
		tg, _ := tl.TG(sp.TG)
		switch sp.Kind {
		case SpanThreadgroup:
			e.name, e.cat, e.cname = tgName(tg), "threadgroup", "generic_work"
			e.args = []arg{{"tg", num(tg.ID)}, {"expert", num(tg.Z)}, {"row_tile", num(tg.Y)}, {"token_tile", num(tg.X)},
				{"rows", num(tg.Rows)}, {"tokens", num(tg.Tokens)}, {"k_steps", num(tg.Steps)}, {"half_tile", boolean(tg.HalfTile)}}
		case SpanPhase:
			e.name, e.cat, e.cname = sp.Phase.String(), "phase", phaseColor[min(sp.Phase, isa.NumPhases)]
			e.args = []arg{{"tg", num(tg.ID)}, {"what", str(phaseDoc[min(sp.Phase, isa.NumPhases)])}}
		case SpanBarrier:
			e.name, e.cat, e.cname = "barrier wait", "barrier", "bad"
			e.args = []arg{{"tg", num(tg.ID)}}
		case SpanIdle:
			e.name, e.cat, e.cname = "idle", "idle", "grey"
			e.args = []arg{{"tg", num(tg.ID)}, {"threshold_ns", idleNs}}
		default:
			return st, fmt.Errorf("trace: unknown span kind %v", sp.Kind)
		}
		if sp.Open {
			e.args = append(e.args, arg{"cut", str("still running at the end of the window or run")})
		}
		add(e)
	}
	for _, s := range tl.Samples {
		switch s.Kind {
		case CounterResident:
			add(event{name: "resident", ph: 'C', pid: corePIDBase + s.Core, ts: units(s.T), args: []arg{{"threadgroups", num(s.Value)}}})
		case CounterDRAM:
			add(event{name: "DRAM", ph: 'C', pid: chipPID, ts: units(s.T), args: []arg{{"GB/s", num(math.Round(s.Value*1000) / 1000)}}})
		default:
			return st, fmt.Errorf("trace: unknown counter kind %v", s.Kind)
		}
	}
	// one time order: every track's timestamps are then monotonic
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.ts, b.ts) })

	other := []arg{
		{"generator", str("metalsim simrun trace")},
		{"chip", str(tl.Chip)}, {"kernel", str(tl.Kernel)}, {"problem", str(tl.Problem)},
		{"seed", num(float64(tl.Seed))},
		{"window_us", str(fmt.Sprintf("%.6g:%.6g", tl.Us(tl.Start), tl.Us(tl.End)))},
		{"cores", str(coreList(tl.Cores))},
		{"idle_threshold_ns", idleNs},
		{"dram_sample_us", num(tl.Us(tl.Sample))},
		{"complete_run", boolean(tl.Complete)},
		{"simulated_us", num(math.Round(tl.Us(tl.SimulatedCycles)*1000) / 1000)},
		{"truncated", boolean(tl.Truncated)},
		{"max_events", num(float64(tl.MaxEvents))},
	}
	var b []byte
	b = append(b, `{"displayTimeUnit":"ns","otherData":`...)
	b = appendArgs(b, other)
	b = append(b, `,"traceEvents":[`...)
	first := true
	for _, list := range [][]event{meta, evs} {
		for i := range list {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '\n')
			b = list[i].appendJSON(b)
			switch list[i].ph {
			case 'X':
				st.Spans++
			case 'C':
				st.Counters++
			case 'M':
				st.Metadata++
			}
			st.Events++
			if len(b) > 1<<15 {
				if _, err := bw.Write(b); err != nil {
					return st, err
				}
				b = b[:0]
			}
		}
	}
	b = append(b, "\n]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	st.Bytes = cw.n
	return st, nil
}

// tidOf numbers the tracks: unique over the whole trace, in display order
// inside a core (a slot's threadgroup track, then its simdgroups).
func tidOf(core, slot, sg int) int { return 10000*core + 64*slot + sg + 2 }

func tgName(tg TGInfo) string {
	if tg.Tokens == 0 {
		return fmt.Sprintf("exit e=%d y=%d x=%d", tg.Z, tg.Y, tg.X)
	}
	s := fmt.Sprintf("tile e=%d y=%d x=%d, %d tokens", tg.Z, tg.Y, tg.X, tg.Tokens)
	if tg.HalfTile {
		s += ", half"
	}
	return s
}

var phaseColor = [isa.NumPhases + 1]string{"olive", "yellow", "good", "rail_load", "grey"}

var phaseDoc = [isa.NumPhases + 1]string{
	"prologue: routing reads, address arithmetic, zeroing accumulators and padding",
	"dequantize A and stage A and B tiles into threadgroup memory",
	"fragment loads and multiply-accumulate (simdgroup MMA or matmul2d)",
	"epilogue: accumulators to staging, scatter to dst",
	"",
}

// event is one trace event; ts and dur are in units of 0.1 ns.
type event struct {
	name, cat, cname string
	ph               byte
	ts, dur          int64
	pid, tid         int
	args             []arg
}

type arg struct {
	key string
	val value
}

// value is a JSON scalar already rendered.
type value string

func str(s string) value {
	b, _ := json.Marshal(s)
	return value(b)
}

func num[T int | float64](x T) value {
	return value(strconv.FormatFloat(float64(x), 'f', -1, 64))
}

func boolean(b bool) value { return value(strconv.FormatBool(b)) }

func appendTime(b []byte, units int64) []byte {
	b = strconv.AppendInt(b, units/10000, 10)
	if f := units % 10000; f != 0 {
		b = append(b, '.')
		s := strconv.FormatInt(10000+f, 10)[1:]
		for len(s) > 1 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		b = append(b, s...)
	}
	return b
}

func appendArgs(b []byte, args []arg) []byte {
	b = append(b, '{')
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, str(a.key)...)
		b = append(b, ':')
		b = append(b, a.val...)
	}
	return append(b, '}')
}

func (e *event) appendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = append(b, str(e.name)...)
	if e.cat != "" {
		b = append(b, `,"cat":`...)
		b = append(b, str(e.cat)...)
	}
	b = append(b, `,"ph":"`...)
	b = append(b, e.ph, '"')
	b = append(b, `,"ts":`...)
	b = appendTime(b, e.ts)
	if e.ph == 'X' {
		b = append(b, `,"dur":`...)
		b = appendTime(b, e.dur)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.pid), 10)
	if e.ph == 'X' || e.tid != 0 {
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(e.tid), 10)
	}
	if e.cname != "" {
		b = append(b, `,"cname":`...)
		b = append(b, str(e.cname)...)
	}
	if len(e.args) > 0 {
		b = append(b, `,"args":`...)
		b = appendArgs(b, e.args)
	}
	return append(b, '}')
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// coreList renders core indices as "0,3,5" (otherData holds strings).
func coreList(cores []int) string {
	s := make([]string, len(cores))
	for i, c := range cores {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
