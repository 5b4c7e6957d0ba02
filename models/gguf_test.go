package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gguf "github.com/gpustack/gguf-parser-go"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/fileio"
)

var update = flag.Bool("update", false, "rewrite models/testdata/tiny-moe.gguf from the generator")

// GGUF v3 writer for fixtures (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
// magic, version, tensor count, kv count, kvs, tensor infos, padding to the
// alignment, tensor data (each tensor aligned).

// GGUF metadata value types.
const (
	gU32    = 4
	gI32    = 5
	gF32    = 6
	gString = 8
	gArray  = 9
)

// ggml tensor types used by the fixtures, with their block sizes.
var ggmlBlocks = map[uint32][2]int{ // type: weights per block, bytes per block
	0:  {1, 4},     // f32
	1:  {1, 2},     // f16
	2:  {32, 18},   // q4_0
	8:  {32, 34},   // q8_0
	12: {256, 144}, // q4_K
	34: {256, 54},  // tq1_0 (no Metal matmul kernel)
}

type ggufKV struct {
	key string
	typ uint32
	val any // uint32, int32, float32, string, or []uint32 (array of u32)
}

type ggufTensor struct {
	name string
	dims []uint64
	typ  uint32
}

func (t ggufTensor) bytes() int {
	n := 1
	for _, d := range t.dims {
		n *= int(d)
	}
	b := ggmlBlocks[t.typ]
	return n / b[0] * b[1]
}

func ggufFile(kvs []ggufKV, tensors []ggufTensor) []byte {
	var buf bytes.Buffer
	le := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); buf.WriteString(s) }
	buf.WriteString("GGUF")
	le(uint32(3))
	le(uint64(len(tensors)))
	le(uint64(len(kvs)))
	for _, kv := range kvs {
		str(kv.key)
		le(kv.typ)
		switch v := kv.val.(type) {
		case string:
			str(v)
		case []uint32:
			le(uint32(gU32))
			le(uint64(len(v)))
			for _, x := range v {
				le(x)
			}
		default:
			le(v)
		}
	}
	const align = 32
	off := 0
	for _, t := range tensors {
		str(t.name)
		le(uint32(len(t.dims)))
		for _, d := range t.dims {
			le(d)
		}
		le(t.typ)
		le(uint64(off))
		off += (t.bytes() + align - 1) / align * align
	}
	for buf.Len()%align != 0 {
		buf.WriteByte(0)
	}
	buf.Write(make([]byte, off))
	return buf.Bytes()
}

// tinyMoE is the committed fixture: a qwen3moe-style header, 4 experts, top-2,
// hidden 64, expert FFN 32; layer 0 has no experts, layer 1's gate/up are
// q4_0 and down is q8_0.
func tinyMoE() []byte {
	return ggufFile([]ggufKV{
		{"general.architecture", gString, "qwen3moe"},
		{"general.name", gString, "tiny-moe"},
		{"general.alignment", gU32, uint32(32)},
		{"qwen3moe.block_count", gU32, uint32(2)},
		{"qwen3moe.expert_count", gU32, uint32(4)},
		{"qwen3moe.expert_used_count", gU32, uint32(2)},
		{"qwen3moe.embedding_length", gU32, uint32(64)},
		{"qwen3moe.expert_feed_forward_length", gU32, uint32(32)},
	}, []ggufTensor{
		{"blk.0.attn_norm.weight", []uint64{64}, 0},
		{"blk.1.ffn_gate_exps.weight", []uint64{64, 32, 4}, 2},
		{"blk.1.ffn_up_exps.weight", []uint64{64, 32, 4}, 2},
		{"blk.1.ffn_down_exps.weight", []uint64{32, 64, 4}, 8},
	})
}

// tinyMoEK is a small header with K-quant experts (q4_K gate/up, q4_0 down);
// simrun's tests use it.
func tinyMoEK() []byte { return tinyOneLayerMoE("tiny-moe-k", 12) }

// tinyMoETQ1 is tinyMoEK with tq1_0 gate and up experts, a type ggml's Metal
// backend has no matmul kernel for; simrun's tests use it.
func tinyMoETQ1() []byte { return tinyOneLayerMoE("tiny-moe-tq1", 34) }

// tinyOneLayerMoE is a one-layer qwen3moe header named name: 2 experts, top-1,
// hidden 256, expert FFN 32, gate and up experts of the ggml type id gateUp,
// down experts q4_0.
func tinyOneLayerMoE(name string, gateUp uint32) []byte {
	return ggufFile([]ggufKV{
		{"general.architecture", gString, "qwen3moe"},
		{"general.name", gString, name},
		{"qwen3moe.expert_count", gU32, uint32(2)},
		{"qwen3moe.expert_used_count", gU32, uint32(1)},
		{"qwen3moe.embedding_length", gU32, uint32(256)},
		{"qwen3moe.expert_feed_forward_length", gU32, uint32(32)},
	}, []ggufTensor{
		{"blk.0.ffn_gate_exps.weight", []uint64{256, 32, 2}, gateUp},
		{"blk.0.ffn_up_exps.weight", []uint64{256, 32, 2}, gateUp},
		{"blk.0.ffn_down_exps.weight", []uint64{32, 256, 2}, 2},
	})
}

const fixture = "testdata/tiny-moe.gguf"

// TestFixture keeps the committed fixtures equal to the generator's bytes
// (go test ./models -run TestFixture -update rewrites them); the whole-model
// fixture (a two-layer qwen3moe with q4_0 experts and q8_0 attention) is what
// simrun bench -m's tests read.
func TestFixture(t *testing.T) {
	for file, want := range map[string][]byte{fixture: tinyMoE(), "testdata/tiny-moe-q4k.gguf": tinyMoEK(), "testdata/tiny-moe-tq1.gguf": tinyMoETQ1(),
		"testdata/tiny-qwen3moe-model.gguf": tinyModelTyped("qwen3moe", 2, 4, 2, nil)} {
		if ok, err := fileio.Current(file, want, *update); err != nil {
			t.Fatal(err)
		} else if !ok {
			t.Fatalf("%s differs from the generator (run with -update)", file)
		}
	}
}

func TestReadGGUF(t *testing.T) {
	m, err := ReadGGUF(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "tiny-moe" || m.Experts != 4 || m.Used != 2 || m.Hidden != 64 || m.FFN != 32 {
		t.Fatalf("model %+v", m)
	}
	want := []ExpertTensor{
		{"gate", "blk.1.ffn_gate_exps.weight", "q4_0", [3]uint64{64, 32, 4}},
		{"up", "blk.1.ffn_up_exps.weight", "q4_0", [3]uint64{64, 32, 4}},
		{"down", "blk.1.ffn_down_exps.weight", "q8_0", [3]uint64{32, 64, 4}},
	}
	for i, w := range want {
		if m.Tensors[i] != w {
			t.Errorf("tensor %d: %+v, want %+v", i, m.Tensors[i], w)
		}
	}
	mm, err := m.Layer(LayerOptions{Tokens: 64, Type: dequant.F16})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, x := range mm {
		got += x.Name + ":" + x.Problem.String() + "\n"
	}
	wantLayer := "gate:type_a=q4_0,type_b=f32,n_mats=4,n_used=2,b=1,m=32,n=64,k=64\n" +
		"up:type_a=q4_0,type_b=f32,n_mats=4,n_used=2,b=1,m=32,n=64,k=64\n" +
		"down:type_a=q8_0,type_b=f32,n_mats=4,n_used=2,b=0,m=64,n=64,k=32\n"
	if got != wantLayer {
		t.Fatalf("layer:\n%s\nwant:\n%s", got, wantLayer)
	}
	mm, err = m.Layer(LayerOptions{Tokens: 64, Type: dequant.F16, ForceType: true})
	if err != nil || mm[2].Problem.TypeA != dequant.F16 {
		t.Fatalf("forced type: %v %v", mm, err)
	}
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func moeKVs(arch string, extra ...ggufKV) []ggufKV {
	return append([]ggufKV{
		{"general.architecture", gString, arch},
		{arch + ".expert_count", gU32, uint32(8)},
		{arch + ".expert_used_count", gU32, uint32(2)},
	}, extra...)
}

func moeTensors(gateType uint32) []ggufTensor {
	return []ggufTensor{
		{"blk.0.ffn_gate_exps.weight", []uint64{256, 64, 8}, gateType},
		{"blk.0.ffn_up_exps.weight", []uint64{256, 64, 8}, 2},
		{"blk.0.ffn_down_exps.weight", []uint64{64, 256, 8}, 2},
	}
}

// Mixtral-style files have no expert_feed_forward_length (nor, here,
// embedding_length): both come from the tensor shapes, with a note.
func TestReadGGUFFallbacks(t *testing.T) {
	m, err := ReadGGUF(writeTemp(t, "llama.gguf", ggufFile(moeKVs("llama"), moeTensors(2))))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "llama" || m.Hidden != 256 || m.FFN != 64 || m.Experts != 8 || m.Used != 2 {
		t.Fatalf("model %+v", m)
	}
	if len(m.Notes) != 3 || !strings.Contains(m.Notes[1], "llama.expert_feed_forward_length absent: expert FFN = 64 taken from blk.0.ffn_gate_exps.weight") {
		t.Fatalf("notes %q", m.Notes)
	}
	// a per-layer array
	m, err = ReadGGUF(writeTemp(t, "arr.gguf", ggufFile(moeKVs("x", ggufKV{"x.expert_feed_forward_length", gArray, []uint32{64, 64}}), moeTensors(2))))
	if err != nil || m.FFN != 64 {
		t.Fatalf("array value: %+v %v", m, err)
	}
	// a K-quant: its name keeps ggml's case and it is simulated as that type
	m, err = ReadGGUF(writeTemp(t, "k.gguf", ggufFile(moeKVs("x"), moeTensors(12))))
	if err != nil {
		t.Fatal(err)
	}
	if m.Tensors[0].Type != "q4_K" {
		t.Fatalf("type name %q, want q4_K", m.Tensors[0].Type)
	}
	mm, err := m.Layer(LayerOptions{Tokens: 32})
	if err != nil || mm[0].Problem.TypeA != dequant.Q4_K {
		t.Fatalf("q4_K layer: %+v, %v", mm, err)
	}
	// a type without a Metal matmul kernel (tq1_0): the error names the
	// tensor and the type
	m, err = ReadGGUF(writeTemp(t, "t.gguf", ggufFile(moeKVs("x"), moeTensors(34))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Layer(LayerOptions{Tokens: 32})
	if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "blk.0.ffn_gate_exps.weight: type tq1_0") || !strings.Contains(err.Error(), "no matmul kernel") {
		t.Fatalf("unsupported type: %v", err)
	}
}

func TestReadGGUFErrors(t *testing.T) {
	good := tinyMoE()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "0 bytes: too short for a GGUF header"},
		{"not gguf", []byte("this is not a gguf file at all"), "invalid GGUF format"},
		{"truncated header", good[:20], "20 bytes: too short"},
		{"truncated counts", good[:30], "tiny"},
		{"truncated kvs", good[:200], "tiny"},
		{"truncated data", good[:len(good)-100], "tensor data needs"},
		{"no arch", ggufFile(moeKVs("x")[1:], moeTensors(2)), "no general.architecture key"},
		{"arch not string", ggufFile([]ggufKV{{"general.architecture", gU32, uint32(1)}}, moeTensors(2)), "general.architecture: a "},
		{"no experts", ggufFile(moeKVs("x"), nil), "no layer has all of blk.N.ffn_gate_exps.weight"},
		{"no expert_count", ggufFile([]ggufKV{{"general.architecture", gString, "x"}}, moeTensors(2)), "no x.expert_count key"},
		{"expert_count type", ggufFile([]ggufKV{{"general.architecture", gString, "x"}, {"x.expert_count", gF32, float32(8)}}, moeTensors(2)), "x.expert_count: a "},
		{"expert_count zero", ggufFile([]ggufKV{{"general.architecture", gString, "x"}, {"x.expert_count", gI32, int32(0)}}, moeTensors(2)), "x.expert_count = 0: must be in [1, 4096]"},
		{"used > experts", ggufFile(moeKVs("x", ggufKV{"x.expert_used_count", gU32, uint32(9)})[0:2], moeTensors(2)), "no x.expert_used_count key"},
		{"shape mismatch", ggufFile(moeKVs("x", ggufKV{"x.embedding_length", gU32, uint32(128)}), moeTensors(2)), "blk.0.ffn_gate_exps.weight: shape [256 64 8], want [128 64 8]"},
		{"2-d experts", ggufFile(moeKVs("x"), []ggufTensor{
			{"blk.0.ffn_gate_exps.weight", []uint64{256, 512}, 2},
			{"blk.0.ffn_up_exps.weight", []uint64{256, 64, 8}, 2},
			{"blk.0.ffn_down_exps.weight", []uint64{64, 256, 8}, 2}}), "blk.0.ffn_gate_exps.weight: 2 dimensions, want 3"},
		// a key of impossible length is reported as that, before the key
		// count (which a corrupt first key also makes impossible)
		{"key too long", keyLength(good, 70000), "metadata key 0 (byte 24): length 70000: impossible, a GGUF key is at most 65535 bytes"},
		{"key past the end", keyLength(good, 60000), "metadata key 0 (byte 24): length 60000, but the file has"},
		{"key huge, count huge", keyCount(keyLength(good, 1<<62), 1<<40), "metadata key 0 (byte 24): length 4611686018427387904: impossible"},
		{"count past the end", keyCount(ggufFile(moeKVs("x"), nil), 1000), "metadata key count 1000: the file ends after"},
		{"zero alignment", ggufFile(append(moeKVs("x"), ggufKV{"general.alignment", gU32, uint32(0)}), moeTensors(2)), "gguf"},
	} {
		name := "tiny.gguf"
		m, err := ReadGGUF(writeTemp(t, name, tc.data))
		if err == nil || m != nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming %s and containing %q", tc.name, err, name, tc.want)
		}
	}
	if _, err := ReadGGUF(filepath.Join(t.TempDir(), "missing.gguf")); err == nil || !strings.Contains(err.Error(), "missing.gguf") {
		t.Errorf("missing file: %v", err)
	}
}

// keyLength returns a copy of a GGUF v3 file whose first metadata key
// claims n bytes.
func keyLength(file []byte, n uint64) []byte {
	out := bytes.Clone(file)
	binary.LittleEndian.PutUint64(out[24:], n)
	return out
}

// keyCount returns a copy of a GGUF v3 file that claims n metadata keys.
func keyCount(file []byte, n uint64) []byte {
	out := bytes.Clone(file)
	binary.LittleEndian.PutUint64(out[16:], n)
	return out
}

// FuzzReadGGUF: any bytes give a model or an error, never a panic or a hang.
func FuzzReadGGUF(f *testing.F) {
	good := tinyMoE()
	f.Add(good)
	f.Add(good[:24])
	f.Add(good[:len(good)/2])
	f.Add(ggufFile(moeKVs("llama"), moeTensors(2)))
	f.Add(ggufFile(moeKVs("x", ggufKV{"x.expert_feed_forward_length", gArray, []uint32{64}}), moeTensors(12)))
	flipped := bytes.Clone(good)
	flipped[40] ^= 0xff
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadGGUF(writeTemp(t, "f.gguf", data))
		if err != nil {
			return
		}
		if m.Experts < 1 || m.Used < 1 || m.Used > m.Experts || m.Hidden < 1 || m.FFN < 1 || len(m.Tensors) != 3 {
			t.Fatalf("accepted an inconsistent model %+v", m)
		}
		_, _ = m.Layer(LayerOptions{Tokens: 32, Type: dequant.Q4_0})
	})
}

// TestIntValue: every fixed-size integer type converts, a uint64 above 2^62
// and a non-integer value are errors naming what was wrong.
func TestIntValue(t *testing.T) {
	for _, v := range []any{uint8(7), int8(7), uint16(7), int16(7), uint32(7), int32(7), uint64(7), int64(7)} {
		if got, err := intValue(gguf.GGUFMetadataValueTypeUint32, v); got != 7 || err != nil {
			t.Errorf("%T 7: %d, %v", v, got, err)
		}
	}
	if got, err := intValue(gguf.GGUFMetadataValueTypeInt8, int8(-3)); got != -3 || err != nil {
		t.Errorf("int8 -3: %d, %v", got, err)
	}
	if _, err := intValue(gguf.GGUFMetadataValueTypeUint64, uint64(1<<62+1)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("uint64 2^62+1: err %v, want too large", err)
	}
	for _, v := range []any{"7", 7.0, 7, nil} {
		if _, err := intValue(gguf.GGUFMetadataValueTypeString, v); err == nil || !strings.Contains(err.Error(), "want an integer") {
			t.Errorf("%T %v: err %v, want an integer", v, v, err)
		}
	}
}
