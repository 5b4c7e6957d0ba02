package hw

import (
	"fmt"
	"sort"
	"strings"
)

// What a parsed log holds besides its rows, counted for messages.

// OpCount is the number of lines of one op.
type OpCount struct {
	Op     string
	Reason string // Skipped.Reason: "other op", "grad mode", ...
	Lines  int
}

// SkippedOps counts the lines in Skipped per op and reason (backend lines
// excluded), sorted by op name, then reason.
func (l *Log) SkippedOps() []OpCount {
	type key struct{ op, reason string }
	counts := map[key]int{}
	for _, s := range l.Skipped {
		if s.Op != "" {
			counts[key{s.Op, s.Reason}]++
		}
	}
	out := make([]OpCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, OpCount{Op: k.op, Reason: k.reason, Lines: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Op != out[j].Op {
			return out[i].Op < out[j].Op
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// CheckRows returns nil when the log holds measurement rows, else an error
// "SOURCE: no measurement rows (N lines skipped: ...)" that counts the lines
// read instead by reason (malformed, with their line numbers; test-mode
// results; not supported; other ops; ...). A log that is valid but measures
// nothing this package reads, such as one of only header lines or one whose
// perf lines are all truncated, is no measurement file.
func (l *Log) CheckRows(source string) error {
	if len(l.Rows) > 0 {
		return nil
	}
	var parts []string
	total := 0
	add := func(n int, one, many string) {
		if n > 0 {
			total += n
			if n > 1 {
				one = many
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, one))
		}
	}
	if len(l.Errors) > 0 {
		lines := make([]int, len(l.Errors))
		for i, e := range l.Errors {
			lines[i] = e.Line
		}
		add(len(l.Errors), "malformed ("+lineList(lines)+")", "malformed ("+lineList(lines)+")")
	}
	add(len(l.Tests), "test-mode result", "test-mode results")
	add(len(l.Unsupported), "case not supported by the backend", "cases not supported by the backend")
	reasons := map[string]int{}
	var order []string
	for _, s := range l.Skipped {
		if reasons[s.Reason] == 0 {
			order = append(order, s.Reason)
		}
		reasons[s.Reason]++
	}
	for _, r := range order {
		switch r {
		case "other op":
			add(reasons[r], "line of another op", "lines of other ops")
		case "backend skipped":
			add(reasons[r], "skipped backend", "skipped backends")
		default:
			add(reasons[r], "row of "+r, "rows of "+r)
		}
	}
	if total == 0 {
		return fmt.Errorf("%s: no measurement rows (no perf line of MUL_MAT_ID, MUL_MAT_ID_FUSION or MUL_MAT, "+
			"such as \"  MUL_MAT_ID(type_a=q4_0,...): 8 runs - 3258.60 us/run - ...\")", source)
	}
	noun := "lines"
	if total == 1 {
		noun = "line"
	}
	return fmt.Errorf("%s: no measurement rows (%d %s skipped: %s)", source, total, noun, strings.Join(parts, ", "))
}

// lineList renders line numbers as "line 4" or "lines 4, 7, 9 and 12 more".
func lineList(lines []int) string {
	const show = 5
	if len(lines) == 1 {
		return fmt.Sprintf("line %d", lines[0])
	}
	var b strings.Builder
	b.WriteString("lines ")
	for i, n := range lines {
		if i == show {
			fmt.Fprintf(&b, " and %d more", len(lines)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", n)
	}
	return b.String()
}
