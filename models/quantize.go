package models

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Quantize gives every tensor of a converted model the type llama-quantize
// would for a file type: docs/quantize-rules.md §3-§5 (llama.cpp
// src/llama-quant.cpp @007dbbf3, L289-720), without user overrides (--pure,
// --tensor-type, ...). The input types are the converted file's (Tensors): a
// tensor that is not quantizable keeps its type. File types whose low-bit
// tensors need an importance matrix are quantized as with one (real files of
// them always had one); the others as without. The tensors come back in the
// loader's order (by block, then by name), the order the rules' counters
// advance in. An error names the tensor whose row length no type fits.
func (c *Config) Quantize(tensors []Tensor, ft FileType) ([]Tensor, error) {
	out := make([]Tensor, len(tensors))
	copy(out, tensors)
	slices.SortStableFunc(out, func(a, b Tensor) int {
		if d := cmp.Compare(blockOf(a.Name), blockOf(b.Name)); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	q := quantizer{ft: ft, arch: c.Arch, nLayer: c.Layers.Value, nExpert: c.Experts.Value, imatrix: ft.Imatrix, counters: map[category]int{}}
	if c.HeadsKV.Value > 0 {
		q.nGQA = c.Heads.Value / c.HeadsKV.Value
	}
	q.is70b = c.Arch == "llama" && c.Layers.Value == 80 && q.nGQA > 1
	q.tied = true
	for _, t := range out {
		if t.Name == "output.weight" {
			q.tied = false
		}
		if categoryOf(t.Name).attnVLike() {
			q.nAttnV++
		}
	}
	for i := range out {
		if !quantizable(out[i]) {
			continue
		}
		typ, err := q.typeOf(out[i])
		if err != nil {
			return nil, err
		}
		out[i].Type = typ
	}
	return out, nil
}

// blockOf returns the N of "blk.N." (-1 for tensors outside a block).
func blockOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	num, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil {
		return -1
	}
	return n
}

// notQuantized are the name parts that keep a tensor's type (QUANT
// L289-367): norms, routers and the other small or special tensors.
var notQuantized = []string{"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
	"attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd",
	".patch_merger", "a.rvq.codebook", "mm.a.code_embd", "attn_sinks"}

// quantizable reports whether llama-quantize changes a tensor's type: at
// least two dimensions, a name ending in "weight" and none of notQuantized.
// (attn_sinks is one-dimensional in every file; it is listed so that a
// malformed two-dimensional one stays as it is too.)
func quantizable(t Tensor) bool {
	if len(t.Dims) < 2 || !strings.HasSuffix(t.Name, "weight") {
		return false
	}
	for _, s := range notQuantized {
		if strings.Contains(t.Name, s) {
			return false
		}
	}
	return true
}

// category is a tensor's role for the rules (QUANT L116-152).
type category uint8

const (
	catOther category = iota
	catOutput
	catTokenEmbd
	catAttnQKV
	catAttnKVB
	catAttnV
	catAttnK
	catAttnQ
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
)

// categoryParts place a tensor by a part of its name, tried in order after
// the whole-name categories (output, token embeddings).
var categoryParts = []struct {
	part string
	cat  category
}{
	{"attn_qkv.weight", catAttnQKV}, {"attn_kv_b.weight", catAttnKVB}, {"attn_v.weight", catAttnV},
	{"attn_k.weight", catAttnK}, {"attn_q.weight", catAttnQ}, {"attn_output.weight", catAttnOutput},
	{"ffn_up", catFFNUp}, {"ffn_gate", catFFNGate}, {"ffn_down", catFFNDown},
}

func categoryOf(name string) category {
	switch name {
	case "output.weight":
		return catOutput
	case "token_embd.weight", "per_layer_token_embd.weight":
		return catTokenEmbd
	}
	for _, p := range categoryParts {
		if strings.Contains(name, p.part) {
			return p.cat
		}
	}
	return catOther
}

func (c category) attnVLike() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// quantizer holds the model facts and counters the rules read.
type quantizer struct {
	ft       FileType
	arch     string
	nLayer   int
	nExpert  int
	nGQA     int
	is70b    bool
	imatrix  bool
	tied     bool
	nAttnV   int
	iAttnV   int
	counters map[category]int // ffn_down, ffn_gate, ffn_up tensors typed so far
}

// useMoreBits is QUANT L430-432.
func useMoreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// layer returns the layer index of an FFN tensor (QUANT L434-448): the
// block number for MoE models, else how many tensors of the category came
// before.
func (q *quantizer) layer(t Tensor, cat category) (int, error) {
	if q.nExpert > 1 {
		b := blockOf(t.Name)
		if b < 0 || b >= q.nLayer {
			return 0, fmt.Errorf("%s: no block number below %d in the name (a MoE FFN tensor needs one)", t.Name, q.nLayer)
		}
		return b, nil
	}
	return q.counters[cat], nil
}

func (q *quantizer) is(names ...string) bool { return slices.Contains(names, q.ft.Name) }

// typeOf applies the mixture (QUANT L424-676) and the row-length fallback.
func (q *quantizer) typeOf(t Tensor) (string, error) {
	if !q.ft.quantized() {
		return q.ft.Default, nil
	}
	typ, err := q.mixture(t)
	if err != nil {
		return "", err
	}
	return fallback(t, typ)
}

func (q *quantizer) mixture(t Tensor) (string, error) {
	cat := categoryOf(t.Name)
	def := q.ft.Default
	e8, n := q.nExpert == 8, q.nLayer
	lowest := q.is("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M")
	switch {
	case cat == catOutput || cat == catTokenEmbd && q.tied:
		defBlock := 1
		if ti, err := LookupType(def); err == nil {
			defBlock = ti.BlockWeights
		}
		switch {
		case q.is("MXFP4_MOE"), q.arch == "falcon" || t.Dims[0]%defBlock != 0:
			return "q8_0", nil
		case q.is("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
			return "q5_K", nil
		case def != "q8_0":
			return "q6_K", nil
		}
		return "q8_0", nil
	case q.is("MXFP4_MOE"):
		if len(t.Dims) >= 3 && t.Dims[2] > 1 {
			return "mxfp4", nil
		}
		return "q8_0", nil
	case cat == catTokenEmbd:
		switch {
		case q.is("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
			return "q2_K", nil
		case q.is("IQ2_S", "IQ2_M", "IQ3_XXS"):
			return "iq3_s", nil
		case q.is("TQ1_0", "TQ2_0", "Q2_0"):
			return "q4_K", nil
		}
		return def, nil
	case lowest:
		return q.lowestBits(t, cat), nil
	}
	switch cat {
	case catAttnV, catAttnQKV, catAttnKVB:
		return q.attnV(), nil
	case catAttnK:
		switch {
		case e8:
			return "q8_0", nil
		case q.is("IQ3_XS"):
			return "iq3_xxs", nil
		case q.is("IQ3_XXS"):
			return "iq2_s", nil
		}
	case catAttnQ:
		switch {
		case q.is("IQ3_XS"):
			return "iq3_xxs", nil
		case q.is("IQ3_XXS"):
			return "iq2_s", nil
		}
	case catFFNDown:
		i, err := q.layer(t, cat)
		if err != nil {
			return "", err
		}
		q.counters[cat]++
		return q.ffnDown(i, n, e8), nil
	case catAttnOutput:
		return q.attnOutput(e8), nil
	case catFFNGate, catFFNUp:
		i, err := q.layer(t, cat)
		if err != nil {
			return "", err
		}
		q.counters[cat]++
		if q.is("IQ3_XS") && i >= n/8 && i < 7*n/8 {
			return "iq3_xxs", nil
		}
	}
	return def, nil
}

// lowestBits is the branch for IQ2_XXS, IQ2_XS, IQ1_S, IQ2_S, IQ2_M, IQ1_M
// (QUANT L505-528).
func (q *quantizer) lowestBits(t Tensor, cat category) string {
	def, e8 := q.ft.Default, q.nExpert == 8
	iq2sm := q.is("IQ2_S", "IQ2_M")
	switch {
	case cat.attnVLike():
		q.iAttnV++
		switch {
		case q.nGQA >= 4 || q.nExpert >= 4:
			return "q4_K"
		case iq2sm:
			return "iq3_s"
		}
		return "q2_K"
	case cat == catAttnK && e8:
		return "q4_K"
	case cat == catFFNDown:
		i := q.counters[cat] // the raw counter, even for MoE models
		q.counters[cat]++
		if i < q.nLayer/8 {
			if iq2sm {
				return "iq3_s"
			}
			return "q2_K"
		}
	case cat == catAttnOutput:
		switch {
		case e8:
			return "q5_K"
		case q.is("IQ1_S", "IQ1_M"):
			return "iq2_xxs"
		case iq2sm:
			return "iq3_s"
		}
	}
	return def
}

// attnV is the attn_v-like rule (QUANT L529-566).
func (q *quantizer) attnV() string {
	def, gqa4 := q.ft.Default, q.nGQA >= 4
	i := q.iAttnV
	q.iAttnV++
	typ := def
	switch {
	case q.is("Q2_K"):
		typ = "q3_K"
		if gqa4 {
			typ = "q4_K"
		}
	case q.is("Q2_K_S"):
		if gqa4 {
			typ = "q4_K"
		}
	case q.is("IQ3_XXS"):
		switch {
		case gqa4:
			typ = "q4_K"
		case !q.imatrix:
			typ = "iq3_s"
		}
	case q.is("IQ3_XS", "IQ3_S"):
		if gqa4 {
			typ = "q4_K"
		}
	case q.is("IQ3_M"):
		typ = "q4_K"
	case q.is("Q3_K_M"):
		typ = "q4_K"
		if i < 2 {
			typ = "q5_K"
		}
	case q.is("Q3_K_L"):
		typ = "q5_K"
	case q.is("IQ4_NL", "IQ4_XS"):
		if gqa4 {
			typ = "q5_K"
		}
	case q.is("Q4_K_M", "Q5_K_M"):
		if useMoreBits(i, q.nAttnV) {
			typ = "q6_K"
		}
	case q.is("Q4_K_S"):
		if i < 4 {
			typ = "q5_K"
		}
	}
	if q.is70b && (typ == "q3_K" || typ == "q4_K") {
		typ = "q5_K"
	}
	if q.nExpert == 8 {
		typ = "q8_0"
	}
	return typ
}

// ffnDown is the FFN_DOWN rule for layer i of n (QUANT L586-630).
func (q *quantizer) ffnDown(i, n int, e8 bool) string {
	def, falcon := q.ft.Default, q.arch == "falcon"
	switch {
	case q.is("Q2_K"):
		return "q3_K"
	case q.is("Q2_K_S") && i < n/8:
		return "q4_K"
	case q.is("IQ3_XXS") && !q.imatrix:
		if i < n/8 {
			return "q4_K"
		}
		return "q3_K"
	case q.is("Q3_K_M"):
		switch {
		case i < n/16:
			return "q5_K"
		case falcon && !useMoreBits(i, n):
			return "q3_K"
		}
		return "q4_K"
	case q.is("IQ3_M") && (i < n/8 || e8 && useMoreBits(i, n)):
		return "q4_K"
	case q.is("Q3_K_L"):
		if falcon {
			return "q4_K"
		}
		return "q5_K"
	case q.is("Q4_K_M"):
		if falcon {
			switch {
			case i < n/16:
				return "q6_K"
			case useMoreBits(i, n):
				return "q5_K"
			}
			return "q4_K"
		}
		if useMoreBits(i, n) {
			return "q6_K"
		}
	case q.is("IQ4_NL", "IQ4_XS") && i < n/8 && !q.imatrix:
		return "q5_K"
	case q.is("Q5_K_M") && useMoreBits(i, n):
		return "q6_K"
	case q.is("Q4_K_S") && i < n/8 && !falcon:
		return "q5_K"
	case q.is("Q4_0") && q.imatrix && i < n/8:
		return "q4_1"
	case q.is("Q5_0") && q.imatrix && i < n/8:
		return "q5_1"
	}
	return def
}

// attnOutput is the ATTN_OUTPUT rule (QUANT L631-650).
func (q *quantizer) attnOutput(e8 bool) string {
	def := q.ft.Default
	if q.arch == "falcon" {
		if q.is("Q3_K_L") {
			return "q4_K"
		}
		return def
	}
	if e8 {
		if q.is("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS") {
			return "q5_K"
		}
		return def
	}
	switch {
	case q.is("Q2_K"):
		return "q3_K"
	case q.is("IQ3_XXS"):
		return "iq3_s"
	case q.is("Q3_K_M"), q.is("IQ3_M"):
		return "q4_K"
	case q.is("Q3_K_L"):
		return "q5_K"
	}
	return def
}

// fallbacks are the row-length fallbacks (QUANT L374-420).
var fallbacks = map[string]string{
	"iq1_s": "iq4_nl", "iq1_m": "iq4_nl", "iq2_xxs": "iq4_nl", "iq2_xs": "iq4_nl", "iq2_s": "iq4_nl",
	"iq3_xxs": "iq4_nl", "iq3_s": "iq4_nl", "iq4_xs": "iq4_nl",
	"q2_0": "q4_0", "q2_K": "q4_0", "q3_K": "q4_0", "tq1_0": "q4_0", "tq2_0": "q4_0",
	"q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0",
}

// fallback replaces a type whose block does not divide the row length.
func fallback(t Tensor, typ string) (string, error) {
	ti, err := LookupType(typ)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.Name, err)
	}
	if t.Dims[0]%ti.BlockWeights == 0 {
		return typ, nil
	}
	fb, ok := fallbacks[typ]
	if !ok {
		return "", fmt.Errorf("%s: row length %d is not a multiple of %s's block of %d and no tensor type fallback is defined for %s", t.Name, t.Dims[0], typ, ti.BlockWeights, typ)
	}
	if t.Dims[0]%32 != 0 {
		return "f16", nil
	}
	return fb, nil
}
