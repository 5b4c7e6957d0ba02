package bench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/models"
)

// Model is what a bench run needs of a model: its configuration, every weight
// tensor with its type, and how llama-bench names and sizes it.
type Model struct {
	Config   *models.Config
	Tensors  []models.Tensor
	byName   map[string]models.Tensor
	Filename string // llama-bench's model_filename: the GGUF path, or the preset name
	FileType string // llama.cpp's file-type description (Q4_0, Q4_K - Medium, ...)
	Notes    []string
}

// FromPreset builds a preset's model with llama-quantize's per-tensor types
// for a file type (any case; docs/quantize-rules.md).
func FromPreset(name, fileType string) (*Model, error) {
	c, err := models.LookupConfig(name)
	if err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	ft, err := models.ParseFileType(fileType)
	if err != nil {
		return nil, err
	}
	ts, err := c.Tensors()
	if err != nil {
		return nil, err
	}
	if ts, err = c.Quantize(ts, ft); err != nil {
		return nil, fmt.Errorf("%s as %s: %w", c.Name, ft.Name, err)
	}
	m := newModel(c, ts, c.Name, ft.Describe)
	for _, f := range c.Fields() {
		if f.Unverified {
			m.Notes = append(m.Notes, fmt.Sprintf("unverified: %s = %d (%s)", f.Key, f.Value, f.Note))
		}
	}
	if c.Context.Value == 0 {
		m.Notes = append(m.Notes, "the model's context is not sourced: tests are not checked against it")
	}
	return m, nil
}

// FromGGUF reads a model from a GGUF file's header, with the file's own
// tensor types.
func FromGGUF(path string) (*Model, error) {
	mf, err := models.ReadGGUFModel(path)
	if err != nil {
		return nil, err
	}
	m := newModel(mf.Config, mf.Tensors, path, mf.FileType)
	m.Notes = append(m.Notes, mf.Notes...)
	if m.FileType == "" {
		m.FileType = "?"
	}
	return m, nil
}

func newModel(c *models.Config, ts []models.Tensor, filename, fileType string) *Model {
	m := &Model{Config: c, Tensors: ts, byName: map[string]models.Tensor{}, Filename: filename, FileType: fileType}
	for _, t := range ts {
		m.byName[t.Name] = t
	}
	return m
}

// Size returns llama_model_size: the bytes of every tensor (a tied embedding
// counted once, as the file holds it).
func (m *Model) Size() int64 {
	var n int64
	for _, t := range m.Tensors {
		n += t.Bytes()
	}
	return n
}

// Params returns llama_model_n_params: the elements of every tensor.
func (m *Model) Params() int64 {
	var n int64
	for _, t := range m.Tensors {
		n += t.Elements()
	}
	return n
}

// Type returns llama-bench's model_type (llama_model_desc): architecture,
// size name and file type, e.g. "llama 7B Q4_0".
func (m *Model) Type() string {
	parts := []string{m.Config.Arch}
	if m.Config.SizeName != "" {
		parts = append(parts, m.Config.SizeName)
	}
	return strings.Join(append(parts, m.FileType), " ")
}

// ErrUntimed is what an UntimedError is (errors.Is).
var ErrUntimed = errors.New("weight type not timed")

// UntimedError is matmul weights of a type metalsim cannot time: ggml's
// Metal backend has no matmul kernel for it (tq1_0; nvfp4, which supports_op
// refuses), so dequant.Types does not list it and dequant.ParseType refuses
// it.
type UntimedError struct {
	Type    string
	Tensors []string // the weights of the type, in graph order
}

// Error names the type, the tensors of it and the types that are timed.
func (e *UntimedError) Error() string {
	var names []string
	for _, d := range dequant.Types() {
		names = append(names, d.String())
	}
	which := e.Tensors[0]
	if n := len(e.Tensors); n > 1 {
		which = fmt.Sprintf("%d tensors: %s, ...", n, strings.Join(e.Tensors[:min(n, 2)], ", "))
	}
	return fmt.Sprintf("type %s (%s): %v: ggml's Metal backend has no matmul kernel for %s (metalsim times %s)",
		e.Type, which, ErrUntimed, e.Type, strings.Join(names, ", "))
}

// Is makes errors.Is(err, ErrUntimed) true.
func (e *UntimedError) Is(target error) bool { return target == ErrUntimed }

// weight returns a matmul's weight tensor and its type as metalsim decodes it,
// checking the shape the graph expects (ne0, ne1[, ne2]).
func (m *Model) weight(name string, dims ...int) (models.Tensor, dequant.Type, error) {
	t, ok := m.byName[name]
	if !ok {
		return t, 0, fmt.Errorf("%s: no such tensor in the model (the %s graph needs it)", name, m.Config.Arch)
	}
	if len(t.Dims) < len(dims) {
		return t, 0, fmt.Errorf("%s: shape %v, want %v", name, t.Dims, dims)
	}
	for i, d := range dims {
		if t.Dims[i] != d {
			return t, 0, fmt.Errorf("%s: shape %v, want %v", name, t.Dims, dims)
		}
	}
	for i := len(dims); i < len(t.Dims); i++ {
		if t.Dims[i] != 1 {
			return t, 0, fmt.Errorf("%s: shape %v, want %v", name, t.Dims, dims)
		}
	}
	typ, err := dequant.ParseType(t.Type)
	if err != nil {
		return t, 0, &UntimedError{Type: t.Type, Tensors: []string{name}}
	}
	return t, typ, nil
}
