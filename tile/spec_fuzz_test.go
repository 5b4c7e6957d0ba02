package tile

import "testing"

// FuzzParseVariantSpec: any input either fails with an error or gives a
// variant that is valid on its path (or on one of the two), that --show
// renders and reads back unchanged, and whose programs build.
func FuzzParseVariantSpec(f *testing.F) {
	f.Add([]byte("name = \"halftile-bytes\"\nbase = \"halftile\"\ncodebook = \"bytes\"\n"))
	f.Add([]byte("path = \"tensor\"\nnr1 = 16\nnr1h = 8\n"))
	f.Add([]byte("simdgroups = 8\nsg_rows = 4\nsg_cols = 2\nhalf_skip = true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, path, err := ParseVariantSpec(data, "fuzz.toml")
		if err != nil {
			return
		}
		if err := validateAnyPath(v, path); err != nil {
			t.Fatalf("accepted an invalid variant %+v: %v", v, err)
		}
		out := FormatVariantSpec(v, path)
		w, wp, err := ParseVariantSpec(out, "show.toml")
		if err != nil {
			t.Fatalf("--show output does not parse: %v\n%s", err, out)
		}
		if w != v || (wp == nil) != (path == nil) || path != nil && *wp != *path {
			t.Fatalf("round trip: %+v %v -> %+v %v", v, path, w, wp)
		}
		buildSpec(t, v, path)
	})
}
