package models

import (
	"errors"
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/tile"
)

// Model is what one MoE layer's expert matmuls need.
type Model struct {
	Name    string
	Source  string // preset source URL, or the GGUF file
	Experts int    // routed experts (n_mats)
	Used    int    // routed experts per token (n_used)
	Hidden  int    // model width
	FFN     int    // expert FFN width
	// Tensors are the expert tensors of the first MoE layer (GGUF only; nil
	// for presets), gate, up, down in that order.
	Tensors []ExpertTensor
	// Unverified lists the numbers that could not be checked against their
	// source ("field = value").
	Unverified []string
	// Notes say where numbers come from when that is not obvious, and what
	// the layer leaves out (shared experts, dense layers).
	Notes []string
}

// ExpertTensor is one expert weight tensor as a GGUF header declares it.
type ExpertTensor struct {
	Role string    `json:"role"` // gate, up or down
	Name string    `json:"name"` // e.g. blk.0.ffn_gate_exps.weight
	Type string    `json:"type"` // ggml type name (q4_0, q4_K, mxfp4, ...)
	Dims [3]uint64 `json:"dims"` // ne0 (k), ne1 (m), ne2 (experts)
}

// ErrUnsupportedType is wrapped by Layer when an expert tensor's type is not
// one of the weight types ggml's Metal matmul kernels take (dequant.Types;
// tq1_0 and nvfp4 have none).
var ErrUnsupportedType = errors.New("weight type not simulated")

// LayerOptions choose how the layer's matmuls are built.
type LayerOptions struct {
	Tokens int          // n
	Type   dequant.Type // weight type when the model declares none (presets)
	// ForceType uses Type for every expert tensor even when the model
	// declares types (a GGUF whose types metalsim does not decode).
	ForceType bool
	HalfB     bool // f16 activations
}

// Matmul is one expert matmul of a MoE layer.
type Matmul struct {
	Name    string // gate, up or down
	Tensor  string // ffn_gate_exps, ... (the GGUF tensor name when known)
	Problem tile.Problem
}

// Layer returns the expert matmuls of one MoE layer for n tokens, in the order
// llama.cpp runs them: gate and up (m = expert FFN, k = hidden; every slot of a
// token reads the token's one activation row, b = 1) and down (m = hidden,
// k = expert FFN; each slot reads its own row of the gated FFN output, b = 0).
func (m *Model) Layer(o LayerOptions) ([]Matmul, error) {
	roles := []struct {
		name, tensor string
		rows, k      int
		bcast        bool
	}{
		{"gate", "ffn_gate_exps", m.FFN, m.Hidden, true},
		{"up", "ffn_up_exps", m.FFN, m.Hidden, true},
		{"down", "ffn_down_exps", m.Hidden, m.FFN, false},
	}
	out := make([]Matmul, 0, len(roles))
	for i, r := range roles {
		typ, tensor := o.Type, r.tensor
		if len(m.Tensors) == len(roles) {
			t := m.Tensors[i]
			tensor = t.Name
			if !o.ForceType {
				var err error
				// GGUF type names are ggml's, in ggml's case (q4_K)
				if typ, err = dequant.ParseType(t.Type); err != nil {
					return nil, fmt.Errorf("%s: %s: type %s: %w: ggml's Metal backend has no matmul kernel for it (metalsim times %s)", m.Source, t.Name, t.Type, ErrUnsupportedType, typeNames())
				}
			}
		}
		p := tile.Problem{Experts: m.Experts, Used: m.Used, M: r.rows, K: r.k, Tokens: o.Tokens,
			Broadcast: r.bcast, TypeA: typ, HalfB: o.HalfB}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s %s: %w", m.Name, r.name, err)
		}
		out = append(out, Matmul{Name: r.name, Tensor: tensor, Problem: p})
	}
	return out, nil
}

func typeNames() string {
	var names []string
	for _, t := range dequant.Types() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}
