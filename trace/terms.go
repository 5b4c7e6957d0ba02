package trace

import (
	"fmt"
	"io"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
)

// term is one entry of simrun help terms and of the README's glossary.
type term struct{ name, meaning string }

// terms are the words the tables, files and pictures use, in the order a
// reader meets them: the problem, the kernel, the time, the hardware, the
// accuracy figures.
func terms() []term {
	return []term{
		{"n_mats", "the experts holding weights in a MUL_MAT_ID (ggml's ne02; --experts; 128 in the headline shape)"},
		{"n_used", "the experts each token is routed to, top-k (ne20; --used; 8 in the headline shape)"},
		{"m, k, n", "weight rows per expert (m, ne01), the reduction length (k, ne00) and the tokens (n, ne21)"},
		{"broadcast b", "b = 1: every expert slot of a token reads the same activation row (ne11 = 1; --b); b = 0: each slot reads its own"},
		{"map0", "the first of MUL_MAT_ID's two dispatches: one threadgroup sorts the tokens' expert ids into one token list per expert; every mul_mm_id prediction includes it"},
		{"mul_mm_id, mul_mv_id", "the Metal kernels llama.cpp runs for MUL_MAT_ID: the matrix-matrix one (after map0) for n >= 32 and k >= 64, else the matrix-vector one"},
		{"µs per MUL_MAT_ID", "the time test-backend-ops reports for one op: map0 + the matmul kernel + dispatch overhead; a model layer's total is the sum of its matmuls' times"},
		{"simdgroup, tensor path", "how a kernel multiplies: 8x8 simdgroup_multiply_accumulate (M1-M4), or Metal 4's matmul2d on cooperative tensors (M5-class GPUs)"},
		{"upstream, halftile", "the kernel as in ggml today; the variant that skips the upper half of the 32-token tile when at most 16 tokens are present (simrun variants)"},
		{"half-tiles skipped", "tiles whose upper token half the variant skipped: the work halftile saves"},
		{"SLC", "system level cache: the last-level cache the GPU shares with the CPU, between the GPU's L2 and DRAM (chip files: slc_bytes, slc_latency_ns)"},
		{"TGs/core", "resident threadgroups per GPU core: how many of the kernel's threadgroups fit at once, with the resource that stops one more in parentheses (" +
			strings.Join([]string{chips.OccRegisters, chips.OccTGMemory, chips.OccThreads, chips.OccTGCap}, ", ") + ")"},
		{"SGs/core", "resident simdgroups (32 threads each) per core: TGs/core times the simdgroups of a threadgroup"},
		{"limiter", "what bounds a run's time: the busiest resource when it is busy at least 75 % of the time, else latency (the names below)"},
		{"TFLOPS", "the op's floating-point operations (2 m n_used n k for MUL_MAT_ID, 2 m n k for MUL_MAT) over its predicted time"},
		{"error %", "(predicted - measured) / measured x 100, per row"},
		{"MAPE", "mean absolute percentage error: the mean of |error %| over the rows with a measured time"},
		{"WMAPE", "weighted MAPE: Σ |predicted - measured| / Σ measured x 100; long rows weigh more, so it is the error of the total time"},
		{"R²(log)", "how closely log(predicted) follows log(measured), the coefficient of determination 1 - Σ (log p - log m)² / Σ (log m - mean log m)²: 1 is perfect; on logs every row's ratio counts alike"},
		{"Δ %", "a variant's time against its baseline's: (variant - baseline) / baseline x 100; negative: the variant is faster"},
		{"relative row", "a measured row that gives a variant's Δ % against a baseline and no time (Δ only in the summaries)"},
		{"error pp, Δ err pp", "predicted Δ % minus measured Δ %, in percentage points; the summaries give the mean and the largest of its size"},
	}
}

// limiterTerms name every limiter with its meaning, for the glossaries.
func limiterTerms() []term {
	var out []term
	for _, l := range sim.Limiters() {
		out = append(out, term{l.String(), l.Meaning()})
	}
	return out
}

// WriteTerms prints the glossary (simrun help terms) for a terminal: each
// term, then its meaning wrapped under it.
func WriteTerms(w io.Writer) {
	fmt.Fprintln(w, "Terms the tables, files and pictures use:")
	fmt.Fprintln(w)
	for _, t := range terms() {
		writeTerm(w, t)
	}
	fmt.Fprintln(w, "\nLimiters (the limiter column of every command):")
	fmt.Fprintln(w)
	for _, t := range limiterTerms() {
		writeTerm(w, t)
	}
}

// termIndent is the column a term's meaning starts at.
const termIndent = 24

func writeTerm(w io.Writer, t term) {
	lines := wrapWords(t.meaning, 100-termIndent)
	name := "  " + t.name
	if len([]rune(name)) >= termIndent-1 {
		fmt.Fprintln(w, name)
		name = ""
	}
	for i, l := range lines {
		if i > 0 {
			name = ""
		}
		fmt.Fprintf(w, "%s%s%s\n", name, strings.Repeat(" ", termIndent-len([]rune(name))), l)
	}
}

// wrapWords breaks s into lines of at most width characters at spaces.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// GlossaryMarkdown is the README's glossary: the terms and the limiters as
// Markdown tables.
func GlossaryMarkdown() string {
	var b strings.Builder
	cell := strings.NewReplacer("|", `\|`).Replace // a | inside a cell would end it
	b.WriteString("| term | meaning |\n|---|---|\n")
	for _, t := range terms() {
		fmt.Fprintf(&b, "| %s | %s |\n", cell(t.name), cell(t.meaning))
	}
	b.WriteString("\n| limiter | what bounds the run |\n|---|---|\n")
	for _, t := range limiterTerms() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", t.name, cell(t.meaning))
	}
	return b.String()
}
