package models

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"

	"github.com/metalsim/metalsim/fileio"
	"github.com/metalsim/metalsim/tile"
)

// expertTensorRE matches the expert weight tensors of one layer.
var expertTensorRE = regexp.MustCompile(`^blk\.(\d+)\.ffn_(gate|up|down)_exps\.weight$`)

// ggufMinHeader is the smallest GGUF v2+ header: magic, version, two uint64 counts.
const ggufMinHeader = 24

// ReadGGUF reads a MoE model's expert shape and expert tensor types from a GGUF
// file's header (the tensor data is not read, but the file must be whole: the
// parser checks that the tensor data fits). It reads the metadata keys
// ARCH.expert_count, ARCH.expert_used_count, ARCH.embedding_length and
// ARCH.expert_feed_forward_length (ARCH = general.architecture) and the tensor
// infos of the first layer that has blk.N.ffn_gate_exps, ffn_up_exps and
// ffn_down_exps. A missing expert_feed_forward_length (older llama-style MoE
// files such as Mixtral's) or embedding_length is taken from the tensor
// shapes, with a note. Malformed or truncated files give errors, never panics.
func ReadGGUF(path string) (*Model, error) {
	return parseGGUF(path, modelFromGGUF)
}

// parseGGUF parses a GGUF file's header (openGGUF) and builds a value of it
// with from; the parser's panics on some malformed values (it documents
// them) come back as errors.
func parseGGUF[T any](path string, from func(path string, f *gguf.GGUFFile) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var none T
			v, err = none, fmt.Errorf("gguf %s: malformed file: %v", path, r)
		}
	}()
	f, err := openGGUF(path)
	if err != nil {
		return v, err
	}
	return from(path, f)
}

// openGGUF parses a GGUF file's header; the caller recovers the parser's
// panics (parseGGUF).
func openGGUF(path string) (*gguf.GGUFFile, error) {
	if path == fileio.Stdin {
		return nil, errors.New("gguf -: a GGUF file is read in place (memory-mapped), so it cannot come from standard input; give its name")
	}
	if err := checkGGUFHeader(path); err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	// memory-mapped: the parser reads value by value, and tokenizer arrays
	// hold 100k+ strings
	f, err := gguf.ParseGGUFFile(path, gguf.UseMMap())
	if err != nil {
		if strings.Contains(err.Error(), "tensor data needs") {
			return nil, fmt.Errorf("gguf %s: %w (or the file is truncated: a partial download?)", path, err)
		}
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	return f, nil
}

// checkGGUFHeader checks, before the parser reads it, that path is a regular
// file long enough for a GGUF header and, for GGUF v2 and later, that its
// metadata keys are possible (checkGGUFMetadata), so that a corrupt length
// is reported as what it is.
func checkGGUFHeader(path string) error {
	f, err := fileio.Open(path, fileio.GGUFMetadata)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			return inner // fileio names the kind and the file; the caller names the file
		}
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < ggufMinHeader {
		return fmt.Errorf("%d bytes: too short for a GGUF header (%d bytes: magic, version, tensor and key counts)", st.Size(), ggufMinHeader)
	}
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return err
	}
	if string(head[:4]) != "GGUF" || binary.LittleEndian.Uint32(head[4:]) < 2 {
		return nil // not GGUF, or v1 (32-bit lengths): the parser says what it is
	}
	return checkGGUFMetadata(f, st.Size())
}

func modelFromGGUF(path string, f *gguf.GGUFFile) (*Model, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("gguf %s: "+format, append([]any{path}, a...)...)
	}
	kvs := f.Header.MetadataKV
	archKV, ok := kvs.Get("general.architecture")
	if !ok {
		return nil, bad("no general.architecture key")
	}
	if archKV.ValueType != gguf.GGUFMetadataValueTypeString {
		return nil, bad("general.architecture: a %v, want a string", archKV.ValueType)
	}
	arch := archKV.ValueString()
	m := &Model{Name: arch, Source: path}
	if kv, ok := kvs.Get("general.name"); ok && kv.ValueType == gguf.GGUFMetadataValueTypeString && kv.ValueString() != "" {
		m.Name = kv.ValueString()
	}

	layer, tensors, err := expertTensors(f)
	if err != nil {
		return nil, bad("%v", err)
	}
	m.Tensors = tensors
	gate := tensors[0].Dims

	// key reads ARCH.name as a positive integer (an array holds one value per
	// layer: take the MoE layer's); ok = false when the key is absent.
	key := func(name string, hi int) (int, bool, error) {
		k := arch + "." + name
		kv, ok := kvs.Get(k)
		if !ok {
			return 0, false, nil
		}
		var v int64
		var err error
		if kv.ValueType == gguf.GGUFMetadataValueTypeArray {
			v, err = arrayInt(kv.ValueArray(), layer)
		} else {
			v, err = intValue(kv.ValueType, kv.Value)
		}
		if err != nil {
			return 0, true, bad("%s: %v", k, err)
		}
		if v < 1 || v > int64(hi) {
			return 0, true, bad("%s = %d: must be in [1, %d]", k, v, hi)
		}
		return int(v), true, nil
	}
	fromTensor := func(name string, dim uint64, what string) (int, error) {
		v, ok, err := key(name, tile.MaxDim)
		if err != nil {
			return 0, err
		}
		if !ok {
			m.Notes = append(m.Notes, fmt.Sprintf("%s.%s absent: %s = %d taken from %s", arch, name, what, dim, tensors[0].Name))
			return int(dim), nil
		}
		return v, nil
	}
	var found bool
	if m.Experts, found, err = key("expert_count", tile.MaxExperts); err != nil {
		return nil, err
	} else if !found {
		return nil, bad("no %s.expert_count key (not a MoE model?)", arch)
	}
	if m.Used, found, err = key("expert_used_count", m.Experts); err != nil {
		return nil, err
	} else if !found {
		return nil, bad("no %s.expert_used_count key", arch)
	}
	if m.Hidden, err = fromTensor("embedding_length", gate[0], "hidden"); err != nil {
		return nil, err
	}
	if m.FFN, err = fromTensor("expert_feed_forward_length", gate[1], "expert FFN"); err != nil {
		return nil, err
	}

	// the tensors must agree with the metadata
	want := [3][3]uint64{
		{uint64(m.Hidden), uint64(m.FFN), uint64(m.Experts)},
		{uint64(m.Hidden), uint64(m.FFN), uint64(m.Experts)},
		{uint64(m.FFN), uint64(m.Hidden), uint64(m.Experts)},
	}
	for i, t := range tensors {
		if t.Dims != want[i] {
			return nil, bad("%s: shape %v, want [%d %d %d] from the metadata (expert_count %d, embedding_length %d, expert FFN %d)",
				t.Name, t.Dims, want[i][0], want[i][1], want[i][2], m.Experts, m.Hidden, m.FFN)
		}
	}
	m.Notes = append(m.Notes, fmt.Sprintf("expert tensor types of layer %d (other layers may differ)", layer))
	return m, nil
}

// expertTensors finds the lowest layer with all three expert tensors.
func expertTensors(f *gguf.GGUFFile) (int, []ExpertTensor, error) {
	layers := map[int]*[3]*gguf.GGUFTensorInfo{}
	roles := map[string]int{"gate": 0, "up": 1, "down": 2}
	for i := range f.TensorInfos {
		ti := &f.TensorInfos[i]
		sm := expertTensorRE.FindStringSubmatch(ti.Name)
		if sm == nil {
			continue
		}
		l, err := strconv.Atoi(sm[1])
		if err != nil {
			continue
		}
		if layers[l] == nil {
			layers[l] = &[3]*gguf.GGUFTensorInfo{}
		}
		layers[l][roles[sm[2]]] = ti
	}
	for _, l := range slices.Sorted(maps.Keys(layers)) {
		ts := layers[l]
		if ts[0] == nil || ts[1] == nil || ts[2] == nil {
			continue
		}
		out := make([]ExpertTensor, 3)
		for i, role := range []string{"gate", "up", "down"} {
			ti := ts[i]
			if ti.NDimensions != 3 || len(ti.Dimensions) != 3 {
				return 0, nil, fmt.Errorf("%s: %d dimensions, want 3 (k, m, experts)", ti.Name, len(ti.Dimensions))
			}
			out[i] = ExpertTensor{Role: role, Name: ti.Name, Type: ggmlTypeName(ti.Type),
				Dims: [3]uint64{ti.Dimensions[0], ti.Dimensions[1], ti.Dimensions[2]}}
		}
		return l, out, nil
	}
	return 0, nil, fmt.Errorf("no layer has all of blk.N.ffn_gate_exps.weight, blk.N.ffn_up_exps.weight and blk.N.ffn_down_exps.weight (not a MoE model, or fused expert tensors)")
}

// intValue converts an integer metadata value (any of the fixed-size Go
// integer types, a uint64 up to 2^62).
func intValue(vt gguf.GGUFMetadataValueType, v any) (int64, error) {
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if x := rv.Uint(); x > 1<<62 {
			return 0, fmt.Errorf("%d: too large", x)
		}
		return int64(rv.Uint()), nil
	}
	return 0, fmt.Errorf("a %v value, want an integer", vt)
}

// arrayInt returns a per-layer array's value for one layer.
func arrayInt(av gguf.GGUFMetadataKVArrayValue, layer int) (int64, error) {
	if uint64(layer) >= av.Len || layer >= len(av.Array) {
		return 0, fmt.Errorf("per-layer array of %d values has none for layer %d", av.Len, layer)
	}
	return intValue(av.Type, av.Array[layer])
}
