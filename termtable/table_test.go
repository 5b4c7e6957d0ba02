package termtable

import (
	"bytes"
	"strings"
	"testing"
)

func sample() *Table {
	t := New(
		Column{Name: "kernel"},
		Column{Name: "n", Right: true},
		Column{Name: "measured", Group: "upstream µs", Right: true},
		Column{Name: "predicted", Group: "upstream µs", Right: true},
		Column{Name: "TGs/core", Right: true, Drop: 2},
		Column{Name: "limiter", Drop: 1},
	)
	t.Section("M1 Pro 16-core GPU, simdgroup path")
	t.Row("mul_mv_id", "8", "301.4", "302.1", "14", "dram")
	t.Row("mul_mm_id", "32", "2703.9", "2812.0", "6", "matrix")
	return t
}

// render writes tb with no width limit, failing the test on an error or a
// column left out.
func render(t *testing.T, tb *Table) string {
	t.Helper()
	var b bytes.Buffer
	omitted, err := tb.Write(&b, 0)
	if err != nil || omitted != nil {
		t.Fatalf("omitted %v, %v", omitted, err)
	}
	return b.String()
}

// checkText fails the test unless got is want.
func checkText(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteAligns(t *testing.T) {
	want := "" +
		"               ─── upstream µs ───\n" +
		"kernel      n  measured  predicted  TGs/core  limiter\n" +
		"M1 Pro 16-core GPU, simdgroup path\n" +
		"mul_mv_id   8     301.4      302.1        14  dram\n" +
		"mul_mm_id  32    2703.9     2812.0         6  matrix\n"
	checkText(t, render(t, sample()), want)
}

// TestWriteNarrows: a width limit leaves out the highest Drop first, and
// never a Drop-0 column.
func TestWriteNarrows(t *testing.T) {
	for _, tc := range []struct {
		width   int
		omitted []string
	}{
		{53, nil},
		{52, []string{"TGs/core"}},
		{43, []string{"TGs/core"}},
		{42, []string{"TGs/core", "limiter"}},
		{10, []string{"TGs/core", "limiter"}},
	} {
		var b bytes.Buffer
		omitted, err := sample().Write(&b, tc.width)
		if err != nil || strings.Join(omitted, ",") != strings.Join(tc.omitted, ",") {
			t.Errorf("width %d: omitted %v, %v; want %v", tc.width, omitted, err, tc.omitted)
		}
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if len(tc.omitted) < 2 && Width(l) > tc.width {
				t.Errorf("width %d: line %q is %d wide", tc.width, l, Width(l))
			}
		}
		for _, name := range tc.omitted {
			if strings.Contains(b.String(), name) {
				t.Errorf("width %d: %s left out but printed:\n%s", tc.width, name, b.String())
			}
		}
	}
}

// TestGroupWidens: a heading wider than its columns widens the last one.
func TestGroupWidens(t *testing.T) {
	tb := New(Column{Name: "a", Group: "a long heading", Right: true}, Column{Name: "b", Group: "a long heading"}, Column{Name: "c"})
	tb.Row("1", "x", "y")
	out := render(t, tb)
	lines := strings.Split(out, "\n")
	if lines[0] != "─ a long heading ─" || Width(lines[1]) != Width(lines[0])+len(Gap)+1 {
		t.Fatalf("got\n%s", out)
	}
}

// TestGroupOfOne: a heading over one column is aligned as the column.
func TestGroupOfOne(t *testing.T) {
	tb := New(Column{Name: "n", Right: true}, Column{Name: "skipped", Group: "half-tiles", Right: true}, Column{Name: "x", Group: "left"})
	tb.Row("8", "0", "a")
	want := "" +
		"   half-tiles  left\n" +
		"n     skipped  x\n" +
		"8           0  a\n"
	checkText(t, render(t, tb), want)
}

func TestTooManyCells(t *testing.T) {
	tb := New(Column{Name: "a"})
	tb.Row("1", "2")
	if _, err := tb.Write(&bytes.Buffer{}, 0); err == nil || !strings.Contains(err.Error(), "2 cells in a table of 1 columns") {
		t.Fatalf("err %v", err)
	}
}

func TestOmittedNote(t *testing.T) {
	if OmittedNote(nil, 120, "--wide") != "" {
		t.Error("a note without omitted columns")
	}
	if got := OmittedNote([]string{"a", "b"}, 120, "--wide"); got != "(left out to fit 120 columns: a, b; --wide shows every column)" {
		t.Errorf("note %q", got)
	}
}
