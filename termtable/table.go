// Package termtable lays out tables for a terminal: aligned columns, a
// heading over groups of columns, section titles between rows, and a width
// limit met by leaving out the columns marked least needed first.
package termtable

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Gap is the space between two columns.
const Gap = "  "

// DefaultWidth is the width tables fit by default: a terminal of 120 columns.
const DefaultWidth = 120

// Column is one column of a table.
type Column struct {
	Name string // the header
	// Group is a heading over this column and its neighbours of the same
	// Group, on a line above the header ("": none); over one column it is a
	// second header line.
	Group string
	Right bool // right-aligned (numbers)
	// Drop orders the columns a width limit leaves out: 0 is always shown,
	// the highest is left out first (the rightmost among equals).
	Drop int
}

// Table is a table being filled: rows of cells, one per column, and
// section titles between them.
type Table struct {
	cols  []Column
	lines []line
}

// line is a row of cells or, when title is set, a section title.
type line struct {
	cells []string
	title string
}

// New starts a table of the given columns.
func New(cols ...Column) *Table { return &Table{cols: cols} }

// Row adds a row; missing trailing cells are empty, extra cells are an error
// at Write.
func (t *Table) Row(cells ...string) { t.lines = append(t.lines, line{cells: cells}) }

// Section adds a title line before the rows that follow it; it is printed as
// given, after a blank line unless it opens the table.
func (t *Table) Section(title string) { t.lines = append(t.lines, line{title: title}) }

// Rows returns the number of rows added (section titles aside).
func (t *Table) Rows() int {
	n := 0
	for _, l := range t.lines {
		if l.title == "" {
			n++
		}
	}
	return n
}

// Write prints the table no wider than width characters (0: no limit),
// leaving out columns by their Drop order until it fits, and returns the
// names of the columns it left out, in table order. A table that still does
// not fit when only Drop-0 columns remain is printed with those. Trailing
// spaces are trimmed.
func (t *Table) Write(w io.Writer, width int) ([]string, error) {
	for _, l := range t.lines {
		if len(l.cells) > len(t.cols) {
			return nil, fmt.Errorf("termtable: a row of %d cells in a table of %d columns", len(l.cells), len(t.cols))
		}
	}
	shown := make([]bool, len(t.cols))
	for i := range shown {
		shown[i] = true
	}
	widths := t.widths(shown)
	for width > 0 && total(widths, shown) > width {
		drop := -1
		for i, c := range t.cols {
			if shown[i] && c.Drop > 0 && (drop < 0 || c.Drop >= t.cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		shown[drop] = false
		widths = t.widths(shown)
	}
	var omitted []string
	for i, c := range t.cols {
		if !shown[i] {
			omitted = append(omitted, c.Name)
		}
	}
	var b strings.Builder
	if g := t.groupLine(widths, shown); g != "" {
		b.WriteString(g)
	}
	header := make([]string, len(t.cols))
	for i, c := range t.cols {
		header[i] = c.Name
	}
	b.WriteString(t.render(header, widths, shown))
	for i, l := range t.lines {
		if l.title != "" {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(strings.TrimRight(l.title, " ") + "\n")
			continue
		}
		b.WriteString(t.render(l.cells, widths, shown))
	}
	_, err := io.WriteString(w, b.String())
	return omitted, err
}

// OmittedNote is the line to print after a table that left out columns:
// which, and the flag that shows them; "" when none was left out.
func OmittedNote(omitted []string, width int, flag string) string {
	if len(omitted) == 0 {
		return ""
	}
	return fmt.Sprintf("(left out to fit %d columns: %s; %s shows every column)", width, strings.Join(omitted, ", "), flag)
}

// Width is the number of characters s takes on a terminal: one per rune (the
// tables' text has no wide or combining characters).
func Width(s string) int { return utf8.RuneCountInString(s) }

// widths returns each shown column's width: its widest cell or header, and
// wide enough that each group's heading fits over its columns.
func (t *Table) widths(shown []bool) []int {
	ws := make([]int, len(t.cols))
	for i, c := range t.cols {
		if !shown[i] {
			continue
		}
		ws[i] = Width(c.Name)
		for _, l := range t.lines {
			if i < len(l.cells) {
				ws[i] = max(ws[i], Width(l.cells[i]))
			}
		}
	}
	for _, g := range t.groups(shown) {
		span := spanWidth(ws, shown, g.from, g.to)
		need := Width(g.name) // over one column: the name, aligned as the column
		if g.from != g.last {
			need += 4 // over several: "─ name ─" at least
		}
		ws[g.last] += max(need-span, 0)
	}
	return ws
}

// group is a run of shown columns under one heading: from..to (inclusive)
// in column indices, last the rightmost shown one.
type group struct {
	name           string
	from, to, last int
}

// groups returns the headings over the shown columns, left to right; a
// heading's run ends at the next shown column of another group.
func (t *Table) groups(shown []bool) []group {
	var out []group
	for i, c := range t.cols {
		if !shown[i] || c.Group == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].name == c.Group && t.adjacent(shown, out[n-1].last, i) {
			out[n-1].to, out[n-1].last = i, i
			continue
		}
		out = append(out, group{name: c.Group, from: i, to: i, last: i})
	}
	return out
}

// adjacent reports whether no shown column lies between columns a < b.
func (t *Table) adjacent(shown []bool, a, b int) bool {
	return !slices.Contains(shown[a+1:b], true)
}

// spanWidth is the width of the shown columns from..to with the gaps
// between them.
func spanWidth(ws []int, shown []bool, from, to int) int {
	n, cols := 0, 0
	for i := from; i <= to; i++ {
		if shown[i] {
			n += ws[i]
			cols++
		}
	}
	return n + (cols-1)*len(Gap)
}

// total is the width of a line of the shown columns.
func total(ws []int, shown []bool) int {
	n, cols := 0, 0
	for i, w := range ws {
		if shown[i] {
			n += w
			cols++
		}
	}
	return n + max(cols-1, 0)*len(Gap)
}

// groupLine renders the headings line: "── name ──" centred over a group of
// several columns, the name aligned as the column over a group of one; ""
// when the table has no group.
func (t *Table) groupLine(ws []int, shown []bool) string {
	gs := t.groups(shown)
	if len(gs) == 0 {
		return ""
	}
	var b strings.Builder
	col := 0 // the next column to account for
	first := true
	for _, g := range gs {
		for ; col < g.from; col++ {
			if shown[col] {
				if !first {
					b.WriteString(Gap)
				}
				b.WriteString(strings.Repeat(" ", ws[col]))
				first = false
			}
		}
		if !first {
			b.WriteString(Gap)
		}
		first = false
		span := spanWidth(ws, shown, g.from, g.to)
		switch {
		case g.from == g.last && t.cols[g.from].Right:
			b.WriteString(strings.Repeat(" ", span-Width(g.name)) + g.name)
		case g.from == g.last:
			b.WriteString(g.name + strings.Repeat(" ", span-Width(g.name)))
		default:
			fill := span - Width(g.name) - 2
			left := fill / 2
			b.WriteString(strings.Repeat("─", left) + " " + g.name + " " + strings.Repeat("─", fill-left))
		}
		col = g.to + 1
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

// render lays out one row of cells in the shown columns.
func (t *Table) render(cells []string, ws []int, shown []bool) string {
	var b strings.Builder
	first := true
	for i, c := range t.cols {
		if !shown[i] {
			continue
		}
		if !first {
			b.WriteString(Gap)
		}
		first = false
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		pad := strings.Repeat(" ", ws[i]-Width(cell))
		if c.Right {
			b.WriteString(pad + cell)
		} else {
			b.WriteString(cell + pad)
		}
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}
