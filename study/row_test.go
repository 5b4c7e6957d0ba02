package study

import (
	"reflect"
	"testing"
)

// The CSV columns are the JSON fields, in the same order (the embedded
// Detail's in its place), and so are Detail's own.
func TestSweepColumnsAreTheJSONFields(t *testing.T) {
	for _, tc := range []struct {
		typ     reflect.Type
		columns []string
		record  int
	}{{reflect.TypeFor[Row](), columns, len((&Row{}).Record())}, {reflect.TypeFor[Detail](), detailColumns, len((&Detail{}).record())}} {
		var tags []string
		for _, f := range reflect.VisibleFields(tc.typ) {
			if !f.Anonymous {
				tags = append(tags, f.Tag.Get("json"))
			}
		}
		if len(tags) != len(tc.columns) || tc.record != len(tc.columns) {
			t.Fatalf("%s: %d fields, %d record values, %d columns", tc.typ, len(tags), tc.record, len(tc.columns))
		}
		for i, c := range tc.columns {
			if tags[i] != c {
				t.Errorf("%s: column %d: %q, JSON field %q", tc.typ, i, c, tags[i])
			}
		}
	}
}
