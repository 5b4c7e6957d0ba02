package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestParseLists(t *testing.T) {
	if v, err := ParseInts("-p", "512, 1024,0", 0, MaxTokens); err != nil || !slices.Equal(v, []int{512, 1024, 0}) {
		t.Errorf("list: %v %v", v, err)
	}
	for _, c := range []struct{ s, want string }{
		{"", `-p "": want a number`},
		{"512,", `-p "512,": item "" is not an integer`},
		{"5x", `item "5x" is not an integer`},
		{"-1", `-p "-1": -1: must be in [0, 1048576]`},
	} {
		if _, err := ParseInts("-p", c.s, 0, MaxTokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.s, err, c.want)
		}
	}
	if pg, err := ParsePair("-pg", "512,128"); err != nil || pg != (Test{512, 128}) {
		t.Errorf("pair: %v %v", pg, err)
	}
	for _, s := range []string{"512", "512,128,1", "a,1"} {
		if _, err := ParsePair("-pg", s); err == nil || !strings.Contains(err.Error(), "-pg") {
			t.Errorf("pair %q: %v", s, err)
		}
	}
	got := Tests([]int{512, 0}, []int{0, 128}, []Test{{512, 128}, {0, 0}})
	if !slices.Equal(got, []Test{{512, 0}, {0, 128}, {512, 128}}) {
		t.Errorf("tests %v", got)
	}
}

// FuzzParseInts: any flag value gives numbers in range or an error naming
// the flag; never a panic.
func FuzzParseInts(f *testing.F) {
	for _, s := range []string{"512", "128,256,512", "", ",", "0", "-1", "99999999999999999999", " 7 , 8 ", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseInts("-n", s, 0, MaxTokens)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "-n ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if len(v) == 0 || len(v) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %v", s, v)
		}
		for _, x := range v {
			if x < 0 || x > MaxTokens {
				t.Fatalf("%q: %d out of range", s, x)
			}
		}
		if pg, err := ParsePair("-pg", s); err == nil && (pg.Prompt < 0 || pg.Gen < 0) {
			t.Fatalf("pair %q: %+v", s, pg)
		}
	})
}
