package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGlossaryInREADME: the README's glossary holds the terms of simrun help
// terms.
func TestGlossaryInREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := GlossaryMarkdown(); !strings.Contains(string(readme), want) {
		t.Errorf("README.md's glossary is not the terms of simrun help terms; its tables should read:\n%s", want)
	}
}
