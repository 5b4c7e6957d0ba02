package golden

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/dequant"
)

// MulMatIDManifest is mulmatid/manifest.json: MoE mul_mat_id problems (configs:
// weights, routings, activations) and the cases run on them with ggml's CPU
// output and two float64 references (golden README §4).
type MulMatIDManifest struct {
	Header
	Operation  string           `json:"operation"`
	IndexOrder string           `json:"index_order"`
	Configs    []MulMatIDConfig `json:"configs"`
	Cases      []MulMatIDCase   `json:"cases"`
	Files      []Descriptor     `json:"files"`

	// Dir is the directory the manifest was read from ("" after
	// ParseMulMatIDManifest); descriptors are relative to it.
	Dir string `json:"-"`
}

// MulMatIDConfig is one problem family: E experts of m x k weights, U experts
// used per token.
type MulMatIDConfig struct {
	Name        string            `json:"name"`
	NExpert     int               `json:"n_expert"`      // E
	NExpertUsed int               `json:"n_expert_used"` // U
	K           int               `json:"k"`
	M           int               `json:"m"`
	WeightsSeed string            `json:"weights_seed"`
	WeightsRule string            `json:"weights_rule"`
	Imatrix     *Descriptor       `json:"imatrix,omitempty"` // k float32, used for the iq types (optional)
	Weights     []MulMatIDWeights `json:"weights"`
	Routes      []MulMatIDRoute   `json:"routes"`
}

// MulMatIDWeights is the config's weight tensor quantized to one type.
type MulMatIDWeights struct {
	Type        string     `json:"type"`
	GGMLTypeID  int        `json:"ggml_type_id"`
	Data        Descriptor `json:"data"`
	NE          []int64    `json:"ne"` // [k, m, E]
	NB          []int64    `json:"nb"` // [block bytes, row bytes, expert bytes]
	RowBytes    int64      `json:"row_bytes"`
	ExpertBytes int64      `json:"expert_bytes"`
	Quantizer   string     `json:"quantizer"`

	// DType is Type parsed by dequant.ParseType.
	DType dequant.Type `json:"-"`
}

// MulMatIDRoute is one routing of n tokens (the ids tensor) with its
// activations.
type MulMatIDRoute struct {
	NTokens         int                  `json:"n_tokens"`
	Routing         string               `json:"routing"` // "pattern" or "random"
	IDs             Descriptor           `json:"ids"`     // int32 [U, n]
	TokensPerExpert []int                `json:"tokens_per_expert"`
	Activations     []MulMatIDActivation `json:"activations"`
}

// MulMatIDActivation is the src1 tensor of a route for one src1_ne1.
type MulMatIDActivation struct {
	Src1NE1 int        `json:"src1_ne1"`
	NE      []int64    `json:"ne"` // [k, src1_ne1, n, 1]
	Data    Descriptor `json:"data"`
}

// Tensor is one operand or result of a case.
type Tensor struct {
	Role string     `json:"role"`
	Type string     `json:"type"`         // ggml type name: the weight type, "f32" or "i32"
	NE   []int64    `json:"ne"`           // ggml order, 4 dims
	NB   []int64    `json:"nb,omitempty"` // byte strides (src0 only)
	Data Descriptor `json:"data"`
}

// MulMatIDStats are the statistics the generator recorded for a case.
type MulMatIDStats struct {
	MaxAbsRefF64              float64 `json:"max_abs_ref_f64"`
	RMSRefF64                 float64 `json:"rms_ref_f64"`
	MaxAbsDstMinusRefF64      float64 `json:"max_abs_dst_minus_ref_f64"`
	MaxAbsRefF16InMinusRefF64 float64 `json:"max_abs_ref_f16in_minus_ref_f64"`
	DstBitwiseEqualToRefF16In int     `json:"dst_bitwise_equal_to_ref_f16in"` // count of elements
	Threads1And2Identical     bool    `json:"threads_1_and_2_identical"`

	// bf16 cases of golden-types only
	MaxAbsRefBF16InMinusRefF64 float64 `json:"max_abs_ref_bf16in_minus_ref_f64,omitempty"`
	DstBitwiseEqualToRefBF16In int     `json:"dst_bitwise_equal_to_ref_bf16in,omitempty"`
}

// MulMatIDCase is one (config, type, n_tokens, src1_ne1) problem with its
// inputs and outputs. After validation Src0..Dst are complete, Stats is non-nil
// and RefF64/RefF16In are nil only when absent from the manifest.
type MulMatIDCase struct {
	Name                string         `json:"name"`
	Config              string         `json:"config"`
	TypeA               string         `json:"type_a"`
	NExpert             int            `json:"n_expert"`
	NExpertUsed         int            `json:"n_expert_used"`
	NTokens             int            `json:"n_tokens"`
	K                   int            `json:"k"`
	M                   int            `json:"m"`
	Src1NE1             int            `json:"src1_ne1"`
	Src0                Tensor         `json:"src0"`                 // weights [k, m, E, 1]
	Src1                Tensor         `json:"src1"`                 // activations f32 [k, src1_ne1, n, 1]
	IDs                 Tensor         `json:"ids"`                  // i32 [U, n, 1, 1]
	Dst                 Tensor         `json:"dst"`                  // ggml CPU output f32 [m, U, n, 1]
	RefF64              *Tensor        `json:"ref_f64,omitempty"`    // float64 reference (optional)
	RefF16In            *Tensor        `json:"ref_f16in,omitempty"`  // float64 reference of half-rounded factors (optional)
	RefBF16In           *Tensor        `json:"ref_bf16in,omitempty"` // bf16 cases of golden-types: of bfloat-rounded factors (optional)
	TokensPerExpert     []int          `json:"tokens_per_expert"`
	Routing             string         `json:"routing"`
	MetalKernelExpected string         `json:"metal_kernel_expected"`
	CPUVecDot           string         `json:"cpu_vec_dot"`
	Stats               *MulMatIDStats `json:"stats"`
	Description         string         `json:"description"`

	// TypeAType is TypeA parsed by dequant.ParseType.
	TypeAType dequant.Type `json:"-"`
}

// Metal kernels named by metal_kernel_expected.
const (
	KernelMulMMID = "mul_mm_id"
	KernelMulMVID = "mul_mv_id"
)

// MetalKernel returns the kernel named by MetalKernelExpected: KernelMulMMID or
// KernelMulMVID (validation guarantees one of them).
func (c *MulMatIDCase) MetalKernel() string {
	k, _, _ := strings.Cut(c.MetalKernelExpected, " ")
	return k
}

// Config returns the config named name, or nil.
func (m *MulMatIDManifest) Config(name string) *MulMatIDConfig {
	return named(m.Configs, func(c *MulMatIDConfig) bool { return c.Name == name })
}

// Case returns the case named name, or nil.
func (m *MulMatIDManifest) Case(name string) *MulMatIDCase {
	return named(m.Cases, func(c *MulMatIDCase) bool { return c.Name == name })
}

// ParseMulMatIDManifest parses and validates the bytes of a
// mulmatid/manifest.json. It does not look at the files.
func ParseMulMatIDManifest(data []byte) (*MulMatIDManifest, error) {
	return parseDoc[MulMatIDManifest](data)
}

// ReadMulMatIDManifest reads dir/manifest.json (dir is the mulmatid/ folder),
// validates it and checks that every file of its files[] list exists in dir
// with the stated size. Errors start with the manifest's path.
func ReadMulMatIDManifest(dir string) (*MulMatIDManifest, error) {
	return readDoc(dir, "manifest.json", ParseMulMatIDManifest, func(m *MulMatIDManifest) error {
		m.Dir = dir
		return checkFiles(dir, m.Files)
	})
}

// Size limits that keep every byte count far inside int64.
const (
	maxDim     = 1 << 20 // k, m, n_tokens
	maxExperts = 1 << 12
)

func (m *MulMatIDManifest) validate() error {
	if err := m.Header.validate(); err != nil {
		return err
	}
	files, err := fileList(m.Files)
	if err != nil {
		return err
	}
	if len(m.Configs) == 0 {
		return fmt.Errorf("configs: empty")
	}
	if err := validateEach("configs", "name", m.Configs, map[string]bool{}, func(c *MulMatIDConfig) string { return strconv.Quote(c.Name) },
		func(c *MulMatIDConfig) error { return c.validate(files) }); err != nil {
		return err
	}
	return validateEach("cases", "name", m.Cases, map[string]bool{}, func(c *MulMatIDCase) string { return strconv.Quote(c.Name) },
		func(c *MulMatIDCase) error { return c.validate(m, files) })
}

func inRange(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: %d, want %d..%d", field, v, lo, hi)
	}
	return nil
}

func checkNE(field string, got []int64, want ...int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %v, want %v", field, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: %v, want %v", field, got, want)
		}
	}
	return nil
}

// ggmlBlock returns ggml's block size in bytes of t: the quantization block, or
// the element size for f16/f32 (which dequant treats as 16-element blocks).
func ggmlBlock(t dequant.Type) int64 {
	l := t.Layout()
	if t.Quantized() {
		return int64(l.BlockBytes)
	}
	return int64(l.BlockBytes / l.BlockWeights)
}

func (c *MulMatIDConfig) validate(files map[string]Descriptor) error {
	if c.Name == "" {
		return fmt.Errorf("name: missing")
	}
	for _, err := range []error{
		inRange("n_expert", c.NExpert, 1, maxExperts),
		inRange("n_expert_used", c.NExpertUsed, 1, c.NExpert),
		inRange("k", c.K, 1, maxDim),
		inRange("m", c.M, 1, maxDim),
		checkDesc("imatrix", c.Imatrix, false, 4*int64(c.K)),
		listed("imatrix", c.Imatrix, files),
	} {
		if err != nil {
			return err
		}
	}
	if len(c.Weights) == 0 {
		return fmt.Errorf("weights: empty")
	}
	if err := validateEach("weights", "type", c.Weights, map[string]bool{}, func(w *MulMatIDWeights) string { return strconv.Quote(w.Type) },
		func(w *MulMatIDWeights) error { return w.validate(c, files) }); err != nil {
		return err
	}
	return validateEach("routes", "n_tokens", c.Routes, map[string]bool{}, func(r *MulMatIDRoute) string { return fmt.Sprintf("(n_tokens %d)", r.NTokens) },
		func(r *MulMatIDRoute) error { return r.validate(c, files) })
}

func (c *MulMatIDConfig) weights(typ string) *MulMatIDWeights {
	return named(c.Weights, func(w *MulMatIDWeights) bool { return w.Type == typ })
}

func (c *MulMatIDConfig) route(n int) *MulMatIDRoute {
	return named(c.Routes, func(r *MulMatIDRoute) bool { return r.NTokens == n })
}

func (w *MulMatIDWeights) validate(c *MulMatIDConfig, files map[string]Descriptor) error {
	t, err := dequant.ParseType(w.Type)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	w.DType = t
	if w.GGMLTypeID != t.Layout().GGMLTypeID {
		return fmt.Errorf("ggml_type_id: %d, but %s is %d", w.GGMLTypeID, t, t.Layout().GGMLTypeID)
	}
	rb, err := t.RowBytes(c.K)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	row, m, e := int64(rb), int64(c.M), int64(c.NExpert)
	for _, err := range []error{
		checkNE("ne", w.NE, int64(c.K), m, e),
		checkNE("nb", w.NB, ggmlBlock(t), row, row*m),
		checkNE("row_bytes", []int64{w.RowBytes}, row),
		checkNE("expert_bytes", []int64{w.ExpertBytes}, row*m),
		checkDesc("data", &w.Data, true, row*m*e),
		listed("data", &w.Data, files),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *MulMatIDRoute) validate(c *MulMatIDConfig, files map[string]Descriptor) error {
	if err := inRange("n_tokens", r.NTokens, 1, maxDim); err != nil {
		return err
	}
	n, u, k := int64(r.NTokens), int64(c.NExpertUsed), int64(c.K)
	if err := checkDesc("ids", &r.IDs, true, 4*u*n); err != nil {
		return err
	}
	if err := listed("ids", &r.IDs, files); err != nil {
		return err
	}
	if err := checkTokensPerExpert(r.TokensPerExpert, c.NExpert, c.NExpertUsed, r.NTokens); err != nil {
		return err
	}
	if len(r.Activations) == 0 {
		return fmt.Errorf("activations: empty")
	}
	for i := range r.Activations {
		a := &r.Activations[i]
		if a.Src1NE1 != 1 && a.Src1NE1 != c.NExpertUsed {
			return fmt.Errorf("activations[%d]: src1_ne1: %d, want 1 or n_expert_used = %d", i, a.Src1NE1, c.NExpertUsed)
		}
		if r.activation(a.Src1NE1) != a {
			return fmt.Errorf("activations[%d]: src1_ne1: duplicate %d", i, a.Src1NE1)
		}
		s := int64(a.Src1NE1)
		if err := checkNE(fmt.Sprintf("activations[%d]: ne", i), a.NE, k, s, n, 1); err != nil {
			return err
		}
		if err := checkDesc(fmt.Sprintf("activations[%d]: data", i), &a.Data, true, 4*k*s*n); err != nil {
			return err
		}
		if err := listed(fmt.Sprintf("activations[%d]: data", i), &a.Data, files); err != nil {
			return err
		}
	}
	return nil
}

func (r *MulMatIDRoute) activation(src1NE1 int) *MulMatIDActivation {
	for i := range r.Activations {
		if r.Activations[i].Src1NE1 == src1NE1 {
			return &r.Activations[i]
		}
	}
	return nil
}

// checkTokensPerExpert checks length E, non-negative counts at most n, sum n*U.
func checkTokensPerExpert(tpe []int, e, u, n int) error {
	if len(tpe) != e {
		return fmt.Errorf("tokens_per_expert: %d values, want n_expert = %d", len(tpe), e)
	}
	sum := 0
	for i, v := range tpe {
		if v < 0 || v > n {
			return fmt.Errorf("tokens_per_expert[%d]: %d, want 0..n_tokens = %d", i, v, n)
		}
		sum += v
	}
	if sum != n*u {
		return fmt.Errorf("tokens_per_expert: sum %d, want n_tokens*n_expert_used = %d", sum, n*u)
	}
	return nil
}

func (c *MulMatIDCase) validate(m *MulMatIDManifest, files map[string]Descriptor) error {
	if c.Name == "" {
		return fmt.Errorf("name: missing")
	}
	cfg := m.Config(c.Config)
	if cfg == nil {
		return fmt.Errorf("config: %q is not in configs", c.Config)
	}
	t, err := dequant.ParseType(c.TypeA)
	if err != nil {
		return fmt.Errorf("type_a: %w", err)
	}
	c.TypeAType = t
	w := cfg.weights(c.TypeA)
	if w == nil {
		return fmt.Errorf("type_a: config %q has no %s weights", c.Config, c.TypeA)
	}
	for _, f := range []struct {
		name      string
		got, want int
	}{
		{"n_expert", c.NExpert, cfg.NExpert},
		{"n_expert_used", c.NExpertUsed, cfg.NExpertUsed},
		{"k", c.K, cfg.K},
		{"m", c.M, cfg.M},
	} {
		if f.got != f.want {
			return fmt.Errorf("%s: %d, but config %q has %d", f.name, f.got, c.Config, f.want)
		}
	}
	r := cfg.route(c.NTokens)
	if r == nil {
		return fmt.Errorf("n_tokens: config %q has no route with %d tokens", c.Config, c.NTokens)
	}
	a := r.activation(c.Src1NE1)
	if a == nil {
		return fmt.Errorf("src1_ne1: config %q, n_tokens %d has no activations with src1_ne1 = %d", c.Config, c.NTokens, c.Src1NE1)
	}
	k, mm, e, u, n, s := int64(c.K), int64(c.M), int64(c.NExpert), int64(c.NExpertUsed), int64(c.NTokens), int64(c.Src1NE1)
	if err := c.Src0.check("src0", c.TypeA, files, k, mm, e, 1); err != nil {
		return err
	}
	if err := checkNE("src0: nb", c.Src0.NB, w.NB[0], w.RowBytes, w.ExpertBytes, w.ExpertBytes*e); err != nil {
		return err
	}
	if err := c.Src1.check("src1", "f32", files, k, s, n, 1); err != nil {
		return err
	}
	if err := c.IDs.check("ids", "i32", files, u, n, 1, 1); err != nil {
		return err
	}
	for _, x := range []struct {
		field string
		t     *Tensor
	}{{"dst", &c.Dst}, {"ref_f64", c.RefF64}, {"ref_f16in", c.RefF16In}, {"ref_bf16in", c.RefBF16In}} {
		if x.t == nil {
			continue
		}
		if err := x.t.check(x.field, "f32", files, mm, u, n, 1); err != nil {
			return err
		}
	}
	// The operands must be the config's files.
	for _, x := range []struct {
		field     string
		got, want Descriptor
	}{{"src0", c.Src0.Data, w.Data}, {"src1", c.Src1.Data, a.Data}, {"ids", c.IDs.Data, r.IDs}} {
		if x.got != x.want {
			return fmt.Errorf("%s: data: file %q, but config %q lists %q for it", x.field, x.got.File, c.Config, x.want.File)
		}
	}
	if err := checkTokensPerExpert(c.TokensPerExpert, c.NExpert, c.NExpertUsed, c.NTokens); err != nil {
		return err
	}
	for i, v := range c.TokensPerExpert {
		if v != r.TokensPerExpert[i] {
			return fmt.Errorf("tokens_per_expert[%d]: %d, but the route of config %q has %d", i, v, c.Config, r.TokensPerExpert[i])
		}
	}
	if k := c.MetalKernel(); k != KernelMulMMID && k != KernelMulMVID {
		return fmt.Errorf("metal_kernel_expected: %q names neither %s nor %s", c.MetalKernelExpected, KernelMulMMID, KernelMulMVID)
	}
	if c.Stats == nil {
		return fmt.Errorf("stats: missing")
	}
	st := c.Stats
	if st.MaxAbsRefF64 < 0 || st.RMSRefF64 < 0 || st.MaxAbsDstMinusRefF64 < 0 || st.MaxAbsRefF16InMinusRefF64 < 0 || st.MaxAbsRefBF16InMinusRefF64 < 0 {
		return fmt.Errorf("stats: negative magnitude in %+v", *st)
	}
	outs := mm * u * n
	if st.DstBitwiseEqualToRefF16In < 0 || int64(st.DstBitwiseEqualToRefF16In) > outs {
		return fmt.Errorf("stats: dst_bitwise_equal_to_ref_f16in: %d, want 0..%d", st.DstBitwiseEqualToRefF16In, outs)
	}
	if st.DstBitwiseEqualToRefBF16In < 0 || int64(st.DstBitwiseEqualToRefBF16In) > outs {
		return fmt.Errorf("stats: dst_bitwise_equal_to_ref_bf16in: %d, want 0..%d", st.DstBitwiseEqualToRefBF16In, outs)
	}
	return nil
}

// check validates a tensor's type, shape and data size (elements of typ laid
// out densely) and that its file is listed.
func (t *Tensor) check(field, typ string, files map[string]Descriptor, ne ...int64) error {
	if t.Type != typ {
		return fmt.Errorf("%s: type: %q, want %q", field, t.Type, typ)
	}
	if err := checkNE(field+": ne", t.NE, ne...); err != nil {
		return err
	}
	var size int64
	switch typ {
	case "f32", "i32":
		size = 4 * ne[0]
	default:
		dt, err := dequant.ParseType(typ)
		if err != nil {
			return fmt.Errorf("%s: type: %w", field, err)
		}
		rb, err := dt.RowBytes(int(ne[0]))
		if err != nil {
			return fmt.Errorf("%s: ne[0]: %w", field, err)
		}
		size = int64(rb)
	}
	for _, d := range ne[1:] {
		size *= d
	}
	if err := checkDesc(field+": data", &t.Data, true, size); err != nil {
		return err
	}
	return listed(field+": data", &t.Data, files)
}
