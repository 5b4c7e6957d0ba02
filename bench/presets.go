package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/metalsim/metalsim/models"
)

// WritePresets lists the model presets for `simrun bench --list`: each
// model's architecture, whether the graph covers it, and every number with its
// config key and source document; then the documents.
func WritePresets(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range models.Configs() {
		status := "modelled"
		if err := c.Check(); err != nil {
			status = "refused: " + err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s\n", c.Name, c.Arch, c.SizeName, status)
		if len(c.Aliases) > 0 {
			fmt.Fprintf(tw, "  aliases\t%s\t\n", strings.Join(c.Aliases, ", "))
		}
		fmt.Fprintf(tw, "  config\t%s\t\n", c.ConfigURL)
		for _, f := range c.Fields() {
			src := f.Source
			if f.Unverified {
				src += ", unverified"
			}
			if f.Note != "" {
				src += "; " + f.Note
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s (%s)\n", f.Role, f.Value, f.Key, src)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nsources (docs/model-configs.md):")
	for _, s := range models.Sources() {
		fmt.Fprintf(w, "  %s: %s %s\n", s.Key, s.What, s.URL)
	}
	var fts []string
	for _, ft := range models.FileTypes() {
		fts = append(fts, ft.Name)
	}
	_, err := fmt.Fprintf(w, "\nfile types (--type, llama-quantize's; docs/quantize-rules.md): %s\n", strings.Join(fts, ", "))
	return err
}
