package models

import "fmt"

// Field is one published number of a model and where it comes from.
type Field struct {
	Value int
	Key   string // the config.json field that holds it (or how it is derived)
	// Source is the key of the document it was read from (Sources).
	Source string
	Note   string // how it was derived, or what else agrees
	// Unverified marks a number that could not be checked against a source
	// for the model itself (a class default, say); commands print it as
	// "unverified".
	Unverified bool
}

// Preset is a MoE model's expert shape as published.
type Preset struct {
	Name    string
	Aliases []string
	Experts Field  // routed experts per MoE layer (n_mats)
	Used    Field  // routed experts per token (n_used)
	Hidden  Field  // model width: k of gate/up, m of down
	FFN     Field  // expert FFN width: m of gate/up, k of down
	Source  string // the config.json the numbers come from
	Notes   string
	// Config is the whole model the shape belongs to.
	Config *Config
}

// Presets returns the MoE presets in a fixed order: the expert shape of every
// model configuration with routed experts (Configs), each number with its
// config field and source document.
func Presets() []Preset {
	var out []Preset
	for _, c := range Configs() {
		if !c.MoE() {
			continue
		}
		out = append(out, Preset{Name: c.Name, Aliases: c.Aliases, Experts: c.Experts, Used: c.ExpertsUsed, Hidden: c.Embd,
			FFN: c.ExpertFFN, Source: c.ConfigURL, Notes: c.MoENote, Config: c})
	}
	return out
}

// Fields returns the preset's four numbers with their roles, in a fixed order.
func (p Preset) Fields() []NamedField {
	return []NamedField{{"experts", p.Experts}, {"experts used", p.Used}, {"hidden", p.Hidden}, {"expert FFN", p.FFN}}
}

// LookupPreset finds a preset by name or alias, case-insensitively.
func LookupPreset(name string) (Preset, error) {
	return lookupByName(name, Presets(), func(p Preset) (string, []string) { return p.Name, p.Aliases })
}

// Model returns the preset as a Model (no tensor types: the caller picks
// one). Its unverified numbers are the whole model's.
func (p Preset) Model() *Model {
	m := &Model{Name: p.Name, Source: p.Source, Experts: p.Experts.Value, Used: p.Used.Value,
		Hidden: p.Hidden.Value, FFN: p.FFN.Value}
	fields := p.Fields()
	if p.Config != nil {
		fields = p.Config.Fields()
	}
	for _, f := range fields {
		if f.Unverified {
			m.Unverified = append(m.Unverified, fmt.Sprintf("%s = %d", f.Key, f.Value))
		}
	}
	if p.Notes != "" {
		m.Notes = append(m.Notes, p.Notes)
	}
	return m
}
