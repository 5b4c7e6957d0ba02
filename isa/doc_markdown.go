package isa

import (
	"fmt"
	"strings"
)

// TableMarkdown renders the op table as a Markdown table (docs/isa.md is made
// from it by `simrun isa`): each op's operands, semantics, phase and, in
// words, its timing expansion.
func TableMarkdown() string {
	var b strings.Builder
	b.WriteString("| op | operands | semantics | phase | timing expansion |\n|---|---|---|---|---|\n")
	for _, in := range table {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", in.Name, in.Operands, in.Doc, in.Phase, in.Timing)
	}
	return b.String()
}

// ExpansionMarkdown renders, for every op, the timing instructions its row's
// expand function makes for the op's first occurrence in progs (the first
// simdgroup and section that have it), as Markdown: the expansion as the
// timing engine sees it, rendered from the code, not restated. Ops that occur
// in no program are listed as such.
func ExpansionMarkdown(progs []*Program) string {
	var b strings.Builder
	for c := Code(0); c < NumCodes; c++ {
		p, sg, op, ok := firstUse(progs, c)
		fmt.Fprintf(&b, "### `%s`\n\n", table[c].Name)
		if !ok {
			b.WriteString("(in no example program)\n\n")
			continue
		}
		fmt.Fprintf(&b, "In `%s`, simdgroup %d: `%s`\n\n", p.Name, sg, op)
		insts := table[c].expand(p, sg, op, nil)
		if len(insts) == 0 {
			b.WriteString("no timing instructions (no lane of this simdgroup has work)\n\n")
			continue
		}
		b.WriteString("| class | count | chains | waits for | stream | bytes per instruction | distinct bytes |\n|---|---|---|---|---|---|---|\n")
		for _, in := range insts {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %d | %d |\n", in.Class, in.Count, in.ILP, in.Wait, in.Stream, in.Bytes, in.Unique)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// firstUse finds the first occurrence of op code c in progs.
func firstUse(progs []*Program, c Code) (*Program, int, Op, bool) {
	for _, p := range progs {
		for s := SecPrologue; s < NumSections; s++ {
			for sg := 0; sg < p.NSG; sg++ {
				for _, op := range p.Ops(s, sg) {
					if op.Code == c {
						return p, sg, op, true
					}
				}
			}
		}
	}
	return nil, 0, Op{}, false
}

// String renders a wait mask as the kinds it waits for ("-" for none).
func (w Wait) String() string {
	var parts []string
	for _, f := range []struct {
		bit  Wait
		name string
	}{{WaitDevice, "device"}, {WaitTG, "tg"}, {WaitALU, "alu"}} {
		if w&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "+")
}
