package accuracy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/hw"
	"github.com/metalsim/metalsim/routing"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// Metal kernels the host runs for the measured ops (kernel-facts §2).
const (
	KernelMulMMID  = "mul_mm_id"
	KernelMulMVID  = "mul_mv_id"
	KernelMulMM    = "mul_mm"
	KernelMulMV    = "mul_mv"
	KernelMulMVExt = "mul_mv_ext"
)

// Case is a measured row mapped to a simulator problem.
type Case struct {
	Row      hw.Row
	Chip     *chips.Chip
	Path     tile.Path
	Kernel   string            // the Metal kernel the host dispatches for this row
	Problem  tile.Problem      // MUL_MAT_ID problem (valid when Kernel is mul_mm_id or mul_mv_id)
	Dense    tile.DenseProblem // MUL_MAT problem (valid when Kernel is mul_mm, mul_mv or mul_mv_ext)
	Variant  tile.Variant
	Baseline tile.Variant // relative rows: the variant the delta is against
	// BaselineKernel is the kernel a relative row's baseline ran: Kernel,
	// unless the row's baseline_kernel column names another (hw.Row).
	BaselineKernel string
	// Routing is the distribution of a MUL_MAT_ID row's expert ids: nil for
	// the built-in cases' (n_used distinct uniform experts per token),
	// routing.Shared for a model-graph row.
	Routing  routing.Routing
	Modelled bool
	Reason   string // why the row is not modelled
	Note     string // what a modelled row's prediction assumes beyond what llama.cpp does
}

// MatchOptions fill in what a row does not say.
type MatchOptions struct {
	// Chip is used for rows without a chip (logs without a device description).
	Chip *chips.Chip
	// Variant names the kernel variant of rows that do not name one (logs); ""
	// means "upstream".
	Variant string
}

// MatchAll maps rows as the measurement commands do: opt.Chip, when set, is
// every row's chip (the rows' own are dropped; rows is changed), and
// opt.Variant, when set, must be a built-in variant and some row must name
// none. Its errors name the flag (--variant).
func MatchAll(rows []hw.Row, opt MatchOptions) ([]Case, error) {
	if opt.Variant != "" {
		if _, err := tile.LookupVariant(opt.Variant); err != nil {
			return nil, fmt.Errorf("--variant: %w", err)
		}
		if !slices.ContainsFunc(rows, func(r hw.Row) bool { return r.Variant == "" }) {
			return nil, fmt.Errorf("--variant %s: every row names its variant; --variant sets the variant of rows that name none (test-backend-ops logs)", opt.Variant)
		}
	}
	if opt.Chip != nil {
		for i := range rows {
			rows[i].Chip = ""
		}
	}
	return Match(rows, opt)
}

// Match maps measured rows to simulator cases. A row that names an unknown chip,
// variant or path is an error (naming the source line); a row the simulator
// does not model is kept with Modelled false and the reason.
func Match(rows []hw.Row, opt MatchOptions) ([]Case, error) {
	var out []Case
	var errs []string
	chipList := map[string]*chips.Chip{} // one Chip per name, so cases share simulator state
	for _, r := range rows {
		c, err := matchRow(r, opt, chipList)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: line %d: %v", r.Source, r.Line, err))
			continue
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

func matchRow(r hw.Row, opt MatchOptions, chipList map[string]*chips.Chip) (Case, error) {
	c := Case{Row: r}
	switch {
	case r.Chip != "":
		chip, err := chips.Lookup(r.Chip)
		if err != nil {
			return c, err
		}
		if prev, ok := chipList[chip.Name]; ok {
			chip = prev
		}
		chipList[chip.Name] = chip
		c.Chip = chip
	case opt.Chip != nil:
		c.Chip = opt.Chip
	default:
		return c, fmt.Errorf("no chip: the row names none and no --chip was given")
	}
	c.Path = tile.Simdgroup
	if c.Chip.TensorPath {
		c.Path = tile.Tensor
	}
	if r.GPUPath != "" {
		p, err := tile.ParsePath(r.GPUPath)
		if err != nil {
			return c, fmt.Errorf("gpu_path: %w", err)
		}
		c.Path = p
	}
	vname := r.Variant
	if vname == "" {
		vname = opt.Variant
	}
	if vname == "" {
		vname = "upstream"
	}
	v, err := tile.LookupVariant(vname)
	if err != nil {
		return c, fmt.Errorf("variant: %w", err)
	}
	c.Variant = v
	if r.Baseline != "" {
		b, err := tile.LookupVariant(r.Baseline)
		if err != nil {
			return c, fmt.Errorf("baseline: %w", err)
		}
		c.Baseline = b
	}
	switch {
	case r.Params.IsGraph():
		c, err = matchGraph(c)
	case r.Op == hw.OpMulMatID || r.Op == hw.OpMulMatIDFusion:
		c, err = matchMulMatID(c, r.Params)
	case r.Op == hw.OpMulMat:
		c, err = matchMulMat(c, r.Params)
	default:
		return c, fmt.Errorf("op %q: not a matmul op", r.Op)
	}
	if err != nil {
		return c, err
	}
	return forceKernels(c)
}

// forceKernels applies a row's kernel and baseline_kernel columns, the
// kernels a patched build ran instead of llama.cpp's choice (hw.Row.Kernel),
// to a matched case. Each must compute the row's op and accept its shape (an
// error naming the column and the rule, as --kernel's); a case whose forced
// kernel meets a bound the model does not time (mul_mm's and mul_mm_id's K
// tail, map0's limits) is kept unmodelled with the reason.
func forceKernels(c Case) (Case, error) {
	c.BaselineKernel = c.Kernel
	dispatched := c.Kernel
	for _, f := range []struct {
		col, name string
		kernel    *string
		v         tile.Variant
	}{{"kernel", c.Row.Kernel, &c.Kernel, c.Variant}, {"baseline_kernel", c.Row.BaselineKernel, &c.BaselineKernel, c.Baseline}} {
		if f.name == "" {
			continue
		}
		k, err := tile.ParseMetalKernel(f.name)
		if err != nil {
			return c, fmt.Errorf("%s: %w", f.col, err)
		}
		if k == tile.KernelAuto || !c.Modelled {
			continue
		}
		w := workloadOf(c)
		if err := w.CheckKernel(k); err != nil {
			return c, fmt.Errorf("%s: %w", f.col, err)
		}
		if c.Reason = untimedReason(c, k, f.v); c.Reason != "" {
			c.Modelled = false
			return c, nil
		}
		*f.kernel = k.String()
	}
	if c.Kernel != dispatched {
		k, _ := tile.ParseMetalKernel(c.Kernel)
		notes := []string{workloadOf(c).ForcedNote(k), c.Variant.KnobNote(k)}
		if k == tile.KernelMulMMID {
			notes = append(notes, tile.Map0Missing(c.Problem.Used))
		}
		c.Note = strings.Join(slices.DeleteFunc(notes, func(n string) bool { return n == "" }), "; ")
	}
	return c, nil
}

// workloadOf returns a matched case's workload.
func workloadOf(c Case) tile.Workload {
	if c.Kernel == KernelMulMMID || c.Kernel == KernelMulMVID {
		return tile.MoEWorkload(c.Problem)
	}
	return tile.DenseWorkload(c.Dense)
}

// untimedReason says why a case run as kernel k with variant v is not
// modelled ("" when it is): a bound of the mat-mat kernels the model does not
// time, checked for the kernel llama.cpp dispatches (matchMulMat,
// matchMulMatID) and for one a row forces (forceKernels).
func untimedReason(c Case, k tile.MetalKernel, v tile.Variant) string {
	switch k {
	case tile.KernelMulMM:
		if nk := tile.DenseGeometry(tile.Simdgroup).NK; c.Dense.K%nk != 0 { // nk is the same on both paths
			return fmt.Sprintf("k = %d is not a multiple of %d: mul_mm's bounds-checked K tail (bc_inp) is not modelled", c.Dense.K, nk)
		}
	case tile.KernelMulMMID:
		if err := sim.CheckMap0(c.Problem, c.Chip, "n_mats", "n_used"); err != nil {
			return fmt.Sprintf("%v: llama.cpp's map0 cannot launch it either", err)
		}
		if c.Problem.K%v.NK != 0 {
			return fmt.Sprintf("k = %d is not a multiple of nk = %d: the bounds-checked K tail is not modelled", c.Problem.K, v.NK)
		}
	}
	return ""
}

// supportedTypes are the weight types ggml's Metal matmul kernels take, which
// metalsim decodes and times.
func supportedTypes() string {
	var names []string
	for _, t := range dequant.Types() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// matchMulMatID maps a MUL_MAT_ID row with the built-in cases' parameters p
// to a problem and the kernel the host picks for it.
func matchMulMatID(c Case, p hw.Params) (Case, error) {
	get := func(key string) int {
		v, err := p.Int(key)
		if err != nil {
			panic(err) // unreachable: requireParams and the Int checks below come first
		}
		return v
	}
	if err := requireParams(p, "type_a", "type_b", "n_mats", "n_used", "m", "n", "k"); err != nil {
		return c, err
	}
	for _, key := range []string{"n_mats", "n_used", "m", "n", "k"} {
		if _, err := p.Int(key); err != nil {
			return c, err
		}
	}
	ta, _ := p.String("type_a")
	tb, _ := p.String("type_b")
	bcast := false
	if p.Has("b") {
		b, err := p.Bool("b")
		if err != nil {
			return c, err
		}
		bcast = b
	}
	prob := tile.Problem{Experts: get("n_mats"), Used: get("n_used"), M: get("m"), K: get("k"), Tokens: get("n"), Broadcast: bcast}
	c.Kernel = KernelMulMMID
	if prob.UsesMulMV() {
		c.Kernel = KernelMulMVID
	}
	if c.Row.Op == hw.OpMulMatIDFusion {
		o, mul := 1, false
		if p.Has("o") {
			o, _ = p.Int("o")
		}
		if p.Has("mul") {
			mul, _ = p.Bool("mul")
		}
		if o != 1 || mul {
			c.Reason = fmt.Sprintf("MUL_MAT_ID_FUSION with o=%d, mul=%v adds ops beyond one mul_mat_id", o, mul)
			return c, nil
		}
	}
	typ, halfB, reason := operandTypes(ta, tb)
	if reason != "" {
		c.Reason = reason
		return c, nil
	}
	prob.TypeA, prob.HalfB = typ, halfB
	c.Problem = prob
	if c.Reason = kTailReason(typ, prob.K); c.Reason != "" {
		return c, nil
	}
	if err := prob.Validate(); err != nil {
		return c, err
	}
	if c.Kernel != KernelMulMMID {
		if err := tile.MoEWorkload(prob).CheckKernel(tile.KernelMulMVID); err != nil {
			c.Reason = fmt.Sprintf("%v: llama.cpp has no kernel for it either", err)
			return c, nil
		}
		// kernel_mul_mv_id: the mm_id variant does not apply
		c.Modelled = true
		return c, nil
	}
	if c.Reason = untimedReason(c, tile.KernelMulMMID, c.Variant); c.Reason != "" {
		return c, nil
	}
	c.Note = tile.Map0Missing(prob.Used)
	c.Modelled = true
	return c, nil
}

// plainMulMat are the parameters of a MUL_MAT log case besides type_a, type_b,
// m, n, k, with the values of the plain case metalsim models: no batch or
// broadcast (bs, nr), no permutation (per), contiguous operands (v = 0), one
// output (o). Calibration files give none of them.
var plainMulMat = []struct{ key, want string }{
	{"bs", "[1,1]"}, {"nr", "[1,1]"}, {"per", "[0,1,2,3]"}, {"v", "0"}, {"o", "1"},
}

// matchMulMat maps a MUL_MAT row with the built-in cases' parameters p to a
// dense problem and the kernel the host picks for it.
func matchMulMat(c Case, p hw.Params) (Case, error) {
	if err := requireParams(p, "type_a", "type_b", "m", "n", "k"); err != nil {
		return c, err
	}
	var dims [3]int
	for i, key := range []string{"m", "n", "k"} {
		v, err := p.Int(key)
		if err != nil {
			return c, err
		}
		dims[i] = v
	}
	ta, _ := p.String("type_a")
	tb, _ := p.String("type_b")
	c.Kernel = denseKernel(p)
	for _, key := range p.Keys() {
		switch key {
		case "type_a", "type_b", "m", "n", "k":
			continue
		}
		i := slices.IndexFunc(plainMulMat, func(pc struct{ key, want string }) bool { return pc.key == key })
		v, _ := p.Get(key)
		if i < 0 {
			c.Reason = fmt.Sprintf("parameter %s=%s is not modelled (only type_a, type_b, m, n, k and the plain bs, nr, per, v, o)", key, v)
			return c, nil
		}
		if want := plainMulMat[i].want; strings.ReplaceAll(v, " ", "") != want {
			c.Reason = fmt.Sprintf("%s=%s is not modelled (only the plain case %s=%s)", key, v, key, want)
			return c, nil
		}
	}
	typ, halfB, reason := operandTypes(ta, tb)
	if reason != "" {
		c.Reason = reason
		return c, nil
	}
	prob := tile.DenseProblem{M: dims[0], N: dims[1], K: dims[2], TypeA: typ, HalfB: halfB}
	c.Dense = prob
	if c.Reason = kTailReason(typ, prob.K); c.Reason != "" {
		return c, nil
	}
	if err := prob.Validate(); err != nil {
		return c, err
	}
	kern := tile.DenseWorkload(prob).Dispatch()
	c.Kernel = kern.String()
	if c.Reason = untimedReason(c, kern, c.Variant); c.Reason != "" {
		return c, nil
	}
	if err := tile.DenseWorkload(prob).CheckKernel(kern); err != nil {
		c.Reason = fmt.Sprintf("%v: llama.cpp has no kernel for it either", err)
		return c, nil
	}
	c.Note = c.Variant.KnobNote(kern) // a relative row's delta is then the knobs the kernel takes
	c.Modelled = true
	return c, nil
}

// denseKernel applies the host's MUL_MAT kernel choice (tile.DenseDispatch,
// kernel-facts 2.1) to a dense case's parameters, as far as they say (also
// for weight types metalsim does not decode: the rule takes the type's name).
func denseKernel(p hw.Params) string {
	n, _ := p.Int("n")
	k, _ := p.Int("k")
	ta, _ := p.String("type_a")
	tb, _ := p.String("type_b")
	return tile.DenseDispatch(ta, n, k, tb == "f32").String()
}

// requireParams checks that a row's parameters hold every key, naming the
// first missing one and the keys the row has.
func requireParams(p hw.Params, keys ...string) error {
	for _, key := range keys {
		if !p.Has(key) {
			return fmt.Errorf("parameter %s missing (have %s)", key, strings.Join(p.Keys(), ", "))
		}
	}
	return nil
}

// kTailReason is why a row whose k is not a whole number of the weight type's
// blocks is not modelled, or "" when it is (a k of 0 or less is left to the
// problem's own check).
func kTailReason(typ dequant.Type, k int) string {
	if _, err := typ.RowBytes(k); err != nil && k > 0 {
		return fmt.Sprintf("%v: the kernel's K tail is not modelled", err)
	}
	return ""
}

// operandTypes maps a row's type_a and type_b to the weight type and whether
// activations are half, or gives the reason the row is not modelled: a weight
// type without a Metal matmul kernel (tq1_0, nvfp4), or an activation type
// other than f32/f16.
func operandTypes(ta, tb string) (typ dequant.Type, halfB bool, reason string) {
	typ, err := dequant.ParseType(ta)
	if err != nil {
		return typ, false, fmt.Sprintf("weight type %s: ggml's Metal backend has no matmul kernel for it (metalsim times %s)", ta, supportedTypes())
	}
	switch tb {
	case "f32":
	case "f16":
		halfB = true
	default:
		return typ, false, fmt.Sprintf("activation type %s is not modelled (f32, f16)", tb)
	}
	return typ, halfB, ""
}
