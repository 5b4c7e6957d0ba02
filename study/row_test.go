package study

import (
	"reflect"
	"testing"
)

// The CSV columns are the JSON fields, in the same order.
func TestSweepColumnsAreTheJSONFields(t *testing.T) {
	typ := reflect.TypeFor[Row]()
	if typ.NumField() != len(columns) || len((&Row{}).Record()) != len(columns) {
		t.Fatalf("%d fields, %d record values, %d columns", typ.NumField(), len((&Row{}).Record()), len(columns))
	}
	for i, c := range columns {
		if tag := typ.Field(i).Tag.Get("json"); tag != c {
			t.Errorf("column %d: %q, JSON field %q", i, c, tag)
		}
	}
}
