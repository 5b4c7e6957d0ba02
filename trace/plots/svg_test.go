package plots

import (
	"fmt"
	"html"
	"image/color"
	"regexp"
	"strings"
	"testing"
)

// picture is an SVG the tests read for what it shows.
type picture struct {
	svg   string
	texts []string
}

var (
	textRE = regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`)
	pathRE = regexp.MustCompile(`<path d="([^"]*)"(?: style="([^"]*)")?`)
)

func readPicture(t *testing.T, svg string) picture {
	t.Helper()
	if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "</svg>") {
		t.Fatalf("not an SVG document: %.80q", svg)
	}
	p := picture{svg: svg}
	for _, m := range textRE.FindAllStringSubmatch(svg, -1) {
		p.texts = append(p.texts, html.UnescapeString(m[1]))
	}
	return p
}

// hasText reports whether some text element reads s.
func (p picture) hasText(s string) bool {
	for _, t := range p.texts {
		if t == s {
			return true
		}
	}
	return false
}

// requireTexts fails for every s no text element reads.
func (p picture) requireTexts(t *testing.T, what string, ss ...string) {
	t.Helper()
	for _, s := range ss {
		if !p.hasText(s) {
			t.Errorf("%s: no text %q among %q", what, s, p.texts)
		}
	}
}

// hex is a colour as the SVG writes it: "#0072B2".
func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// filled counts the filled glyphs (paths filled with c and not stroked):
// points and legend icons. The SVG writes black, its default, as no style.
func (p picture) filled(c color.Color) int {
	want := "fill:" + hex(c)
	if want == "fill:#000000" {
		want = ""
	}
	n := 0
	for _, m := range pathRE.FindAllStringSubmatch(p.svg, -1) {
		if m[2] == want {
			n++
		}
	}
	return n
}

// rings counts the outlined circles of colour c (arcs stroked, not filled).
func (p picture) rings(c color.Color) int {
	n := 0
	for _, m := range pathRE.FindAllStringSubmatch(p.svg, -1) {
		if strings.Contains(m[1], "A") && strings.HasPrefix(m[2], "fill:none;stroke:"+hex(c)) {
			n++
		}
	}
	return n
}
