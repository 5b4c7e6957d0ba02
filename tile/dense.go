package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
	"github.com/metalsim/metalsim/isa"
)

// The dense MUL_MAT kernels (kernel-facts §2.1, §3, §5.1). The host picks one of
// three kernels by the problem's shape; kernel_mul_mm is built here on both
// paths, the mat-vec kernels in mulmv.go and mulmvext.go.
//
// kernel_mul_mm, simdgroup path (§3): the 64x32 tile, 4 simdgroups, the same
// A/B staging, fragment loads and 8x8 MMAs as mul_mm_id (tile/build.go) with
// B rows read contiguously (token r1 + j) and upstream clamping of padding rows;
// no routing reads and no early exits. Epilogue: when bc_out is off or the tile
// is full, each simdgroup stores its eight 8x8 accumulators straight to dst
// (store_acc_dev); otherwise barrier, accumulators to the float staging buffer,
// barrier, and simdgroup 0 copies it out, one lane per token row (copy_out,
// §3.6). Threadgroup memory 6144 bytes, or 8192 when bc_out (§2.1 table).
//
// kernel_mul_mm, tensor path (§5.1): the 64x128 tile, 4 simdgroups; per k-step
// each thread decodes one 16-weight chunk of the A tile (row-major half, 4096
// bytes) and stores it; barrier; one matmul2d run (M = 128 tokens, N = 64 rows,
// K = 32, transpose_right, relaxed_precision) whose left operand is a view
// straight on src1 in device memory (matmul2d_dev: the activations are not
// staged; with relaxed precision a float operand is truncated to 10 mantissa
// bits); barrier. The cooperative destination is stored straight to dst,
// bounded by the tensor extents (store_coop_dev).
//
// Assumptions (not in the documents):
//   - denseSetupInts: the dense kernels' prologue arithmetic (thread, row and
//     token indices, batch offsets from function constants, 64-bit pointers),
//     mul_mm_id's setup without the routing id's division.
//   - Rows past M in the tensor path's last row tile are zero-filled by the
//     kernel; the model decodes the clamped last row instead. The outputs are
//     the same (those rows are never stored) and so is the instruction count
//     unless a whole simdgroup's rows lie past M.
//   - The bounds-checked K tail (bc_inp, K % 32 != 0) is not modelled: such
//     problems are rejected with an error naming k.
const denseSetupInts = 16

// DenseProblem is one MUL_MAT of Batch weight matrices, each multiplying
// Broadcast batches of activation rows (test-backend-ops bs=[Batch,1],
// nr=[Broadcast,1], per=[0,1,2,3], v=0): dst[z][j][i] = Σ_k W[z/Broadcast][i][k]
// · src1[z][j][k] for z < Batch·Broadcast. Zero Batch or Broadcast mean 1, the
// plain matmul; attention's KQ and KQV products are batched over heads, with a
// KV head's matrix broadcast to its query heads.
type DenseProblem struct {
	M     int          // ne01 [m]: weight rows (dst rows)
	N     int          // ne11 [n]: activation rows (tokens)
	K     int          // ne00 [k]: reduction length
	TypeA dequant.Type // [type_a]: weight type
	HalfB bool         // [type_b=f16]: activations are f16 instead of f32
	// Batch is ne02 [bs]: weight matrices (0 or 1: one).
	Batch int
	// Broadcast is ne12/ne02 [nr]: activation batches per weight matrix (0 or
	// 1: one).
	Broadcast int
}

// MaxBatch bounds a dense problem's Batch and Broadcast.
const MaxBatch = 1 << 16

// Matrices returns the weight matrices (Batch, at least 1).
func (p DenseProblem) Matrices() int { return max(1, p.Batch) }

// PerMatrix returns the activation batches per weight matrix (Broadcast, at
// least 1).
func (p DenseProblem) PerMatrix() int { return max(1, p.Broadcast) }

// Batches returns the matmuls of the problem, the dispatch grid's z extent
// (ne12·ne13).
func (p DenseProblem) Batches() int { return p.Matrices() * p.PerMatrix() }

// Validate reports the first field outside its allowed range.
func (p DenseProblem) Validate() error {
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{{"m", p.M, 1, MaxDim}, {"n", p.N, 1, MaxTokens}, {"k", p.K, 1, MaxDim},
		{"bs (batch)", p.Batch, 0, MaxBatch}, {"nr (broadcast)", p.Broadcast, 0, MaxBatch}} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("problem: %s = %d: must be in [%d, %d]", c.name, c.v, c.lo, c.hi)
		}
	}
	return checkWeights(p.TypeA, p.K)
}

// String renders the problem in test-backend-ops' vars syntax (the plain-case
// keys, and bs and nr when the problem is batched).
func (p DenseProblem) String() string {
	s := fmt.Sprintf("type_a=%s,type_b=%s,m=%d,n=%d,k=%d", p.TypeA, ActivationName(p.HalfB), p.M, p.N, p.K)
	if p.Batches() > 1 {
		s += fmt.Sprintf(",bs=[%d,1],nr=[%d,1]", p.Matrices(), p.PerMatrix())
	}
	return s
}

// FLOPs returns the floating-point operations test-backend-ops credits the case
// with: 2·m·n·k per matmul.
func (p DenseProblem) FLOPs() float64 {
	return 2 * float64(p.M) * float64(p.N) * float64(p.K) * float64(p.Batches())
}

// MMBuilder makes the programs of the dense kernel_mul_mm for one problem
// and one kernel variant on one path, and caches them by tile context. It is
// safe for concurrent use; returned programs are immutable.
//
// The variant's knobs apply as they do to mul_mm_id: the tile (nr0, nr1, nk,
// simdgroups and their grid), the half-skip of token parts past the tile's
// tokens (an edge tile's; dense tiles have no routing), zeroed B padding and
// the codebook reads on the simdgroup path; the tile, simdgroups, half-skip
// (one matmul2d per used part) and codebook reads on the tensor path, which
// stages no B tile (the knob table's Applies column says which kernels and
// paths take each knob). A variant with mul_mm_id's upstream tile takes
// kernel_mul_mm's own (DenseGeometry): 64x128 on the tensor path.
type MMBuilder struct {
	Problem DenseProblem
	Kernel  Kernel   // the variant and path, with the dense tile (DenseKernelFor)
	Path    Path     // Kernel.Path
	geom    Geometry // Kernel.Geometry
	// BCOut is the bc_out function constant: M or N is not a multiple of the
	// tile. On the simdgroup path partial tiles then store through the staging
	// buffer, and the threadgroup memory is 8192 bytes instead of 6144; the
	// tensor path's stores are bounded by the tensor extents.
	BCOut  bool
	inner  *Builder // the mul_mm_id staging and compute the simdgroup path shares
	rowBPS float64

	progs programCache
}

// NewMMBuilder validates the problem for kernel_mul_mm with the upstream tile
// on a path.
func NewMMBuilder(p DenseProblem, path Path) (*MMBuilder, error) {
	return NewMMVariantBuilder(p, Kernel{Variant: Upstream(), Path: path})
}

// DenseKernelFor returns kernel k as kernel_mul_mm runs it: mul_mm_id's
// upstream tile becomes kernel_mul_mm's own on the tensor path (64 rows x 128
// tokens, DenseGeometry); any other tile stays as the variant says.
func DenseKernelFor(k Kernel) Kernel {
	if k.Path == Tensor && k.Geometry == DefaultGeometry() {
		k.Geometry = DenseGeometry(Tensor)
	}
	return k
}

// NewMMVariantBuilder validates the problem and the kernel variant for
// kernel_mul_mm.
func NewMMVariantBuilder(p DenseProblem, k Kernel) (*MMBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if k.Path != Simdgroup && k.Path != Tensor {
		return nil, fmt.Errorf("path = %d: must be simdgroup or tensor", k.Path)
	}
	k = DenseKernelFor(k)
	if err := k.Validate(k.Path); err != nil {
		return nil, err
	}
	if err := checkMMActivations("mul_mm", p.TypeA, p.HalfB); err != nil {
		return nil, err
	}
	g := k.Geometry
	if p.K%g.NK != 0 {
		return nil, fmt.Errorf("problem: k = %d: must be a multiple of %d for mul_mm (the bounds-checked K tail, bc_inp, is not modelled)", p.K, g.NK)
	}
	rb, _ := p.TypeA.RowBytes(p.K)
	b := &MMBuilder{Problem: p, Kernel: k, Path: k.Path, geom: g, rowBPS: float64(rb) * float64(g.NK) / float64(p.K)}
	b.BCOut = p.M%g.NR0 != 0 || p.N%g.NR1 != 0
	b.inner = &Builder{Kernel: Kernel{Variant: k.Variant, Path: Simdgroup}, typeA: p.TypeA, halfB: p.HalfB, rowBPS: b.rowBPS, steps: p.K / g.NK}
	return b, nil
}

// DenseGeometry is kernel_mul_mm's upstream tile on a path: the mm_id
// kernel's upstream geometry (64 weight rows x 32 tokens, nk = 32, 4
// simdgroups in a 2x2 grid) on the simdgroup path; 128 tokens per tile on the
// tensor path (kernel-facts §3).
func DenseGeometry(path Path) Geometry {
	g := DefaultGeometry()
	if path == Tensor {
		g.NR1 = 128
	}
	return g
}

// TileShape returns the weight rows and tokens of one tile (64x32 on the
// simdgroup path, 64x128 on the tensor path upstream).
func (b *MMBuilder) TileShape() (nr0, nr1 int) { return b.geom.NR0, b.geom.NR1 }

// Steps returns the k-steps of a tile.
func (b *MMBuilder) Steps() int { return b.Problem.K / b.geom.NK }

// Grid returns the dispatch grid (x = token tiles, y = row tiles, z = the
// problem's matmuls).
func (b *MMBuilder) Grid() [3]int {
	nr0, nr1 := b.TileShape()
	return [3]int{ceilDiv(b.Problem.N, nr1), ceilDiv(b.Problem.M, nr0), b.Problem.Batches()}
}

// Context returns the tile context of threadgroup (x, y): Repeat when an earlier
// token tile of the same row tile (the threadgroup just before it in dispatch
// order) read the same weights.
func (b *MMBuilder) Context(x, y int) Context {
	nr0, nr1 := b.TileShape()
	p := b.Problem
	return Context{Rows: min(nr0, p.M-y*nr0), Tokens: min(nr1, p.N-x*nr1), Steps: b.Steps(), Repeat: x > 0}
}

// ShapePrograms returns the programs whose registers and threadgroup memory
// set the kernel's occupancy: the full tile, and with bc_out also an edge
// tile (which stores through the staging buffer).
func (b *MMBuilder) ShapePrograms() []*isa.Program {
	nr0, nr1 := b.TileShape()
	shape := []*isa.Program{b.Program(Context{Rows: nr0, Tokens: nr1, Steps: b.Steps()})}
	if b.BCOut {
		shape = append(shape, b.Program(Context{Rows: nr0, Tokens: 1, Steps: b.Steps()}))
	}
	return shape
}

// Threadgroups returns threadgroup i of one matmul (z plane) of the grid:
// its program (by dispatch order, x fastest) and whether an earlier token tile
// of its row tile read the same weights.
func (b *MMBuilder) Threadgroups() func(i int) (*isa.Program, bool) {
	g := b.Grid()
	return func(i int) (*isa.Program, bool) {
		c := b.Context(i%g[0], i/g[0])
		return b.Program(c), c.Repeat
	}
}

// Program returns the (cached) program of a tile context.
func (b *MMBuilder) Program(c Context) *isa.Program {
	build := b.buildSimdgroup
	if b.Path == Tensor {
		build = b.buildTensor
	}
	return b.progs.get(c, "mul_mm", build)
}

func (b *MMBuilder) buildSimdgroup(c Context) *isa.Program {
	g := b.geom
	tgMem := 2 * (g.NR0 + g.NR1) * g.NK // the A and B tiles in half: 6144 bytes upstream
	if b.BCOut {
		tgMem = max(tgMem, 4*g.NR0*g.NR1) // and the float staging of an edge tile over them: 8192
	}
	direct := !b.BCOut || (c.Rows == g.NR0 && c.Tokens == g.NR1)
	p := newProgram(fmt.Sprintf("mul_mm %s/%s rows=%d tokens=%d steps=%d", b.Problem.TypeA, b.Kernel, c.Rows, c.Tokens, c.Steps), g.NSG, c.Steps, tgMem)
	p.Tiling = isa.Tiling{
		NR0: g.NR0, NR1: g.NR1, NK: g.NK, Rows: c.Rows, Tokens: c.Tokens, Threads: 32 * g.NSG,
		Layout: isa.Blocked8, AOff: 0, BOff: g.NR0 * g.NK, TGHalves: g.NR0*g.NK + g.NR1*g.NK,
		StageStride: g.NR0, StageFloats: g.NR0 * g.NR1,
		TypeA: b.Problem.TypeA, Strategy: b.Kernel.Codebook, HalfB: b.Problem.HalfB,
		RowBytesPerStep: b.rowBPS,
	}
	for sg := 0; sg < g.NSG; sg++ {
		pro := []isa.Op{alu(isa.ClassInt, denseSetupInts, 4)}
		pro, body := b.inner.staging(p, sg, c, pro)
		var epi []isa.Op
		if !direct {
			epi = append(epi, isa.Op{Code: isa.OpBarrier})
		}
		pro, body, epi = b.inner.simdgroupCompute(p, sg, c, pro, body, epi)
		if direct {
			for i, op := range epi {
				epi[i] = isa.Op{Code: isa.OpStoreAccDev, A: op.A, Arg: op.Arg}
			}
		} else {
			epi = append(epi, isa.Op{Code: isa.OpBarrier})
			if sg == 0 {
				epi = append(epi, isa.Op{Code: isa.OpCopyOut})
			}
		}
		p.Prologue[sg], p.Body[sg], p.Epilogue[sg] = pro, body, epi
	}
	p.Skipped.HalfTiles = int64(b.inner.skippedParts(g.NR1/g.NR1H, b.usedParts(c), c.Tokens))
	return p
}

// usedParts returns the token parts of NR1H a tile computes: every part, or
// with the half-skip those holding the tile's tokens.
func (b *MMBuilder) usedParts(c Context) int {
	g := b.geom
	if b.Kernel.HalfSkip {
		return ceilDiv(c.Tokens, g.NR1H)
	}
	return g.NR1 / g.NR1H
}

func (b *MMBuilder) buildTensor(c Context) *isa.Program {
	g := b.geom
	nr0, nr1, nk, nsg := g.NR0, g.NR1, g.NK, g.NSG
	p := newProgram(fmt.Sprintf("mul_mm %s/%s rows=%d tokens=%d steps=%d", b.Problem.TypeA, b.Kernel, c.Rows, c.Tokens, c.Steps), nsg, c.Steps, nr0*nk*2)
	p.Tiling = isa.Tiling{
		NR0: nr0, NR1: nr1, NK: nk, Rows: c.Rows, Tokens: c.Tokens, Threads: 32 * nsg,
		Layout: isa.RowMajor, AOff: 0, BOff: nr0 * nk, TGHalves: nr0 * nk,
		StageStride: nr0, TypeA: b.Problem.TypeA, Strategy: b.Kernel.Codebook, HalfB: b.Problem.HalfB,
		RowBytesPerStep: b.rowBPS,
	}
	// left = the tokens x k view on src1 (dextents(kExt, N - rb)), right = the
	// A tile (dextents(32, 64), strides {1, 32}), transpose_right; with the
	// half-skip one descriptor per token part of NR1H, the unused ones skipped
	right := isa.PackedView(0, nk, nr0)
	if b.Kernel.HalfSkip {
		parts, used := nr1/g.NR1H, b.usedParts(c)
		for part := 0; part < parts; part++ {
			toks := max(0, min(g.NR1H, c.Tokens-part*g.NR1H))
			mm := isa.Matmul{M: g.NR1H, N: nr0, K: nk, Left: isa.PackedView(0, nk, toks), Right: right,
				DestRow: part * g.NR1H, Used: part < used, Relaxed: true}
			if !mm.Used {
				tiles, kc := mm.Tiles16()
				p.Skipped.MMA16 += int64(tiles * kc * c.Steps)
				p.Skipped.Matmul2D += int64(c.Steps)
			}
			p.Matmuls = append(p.Matmuls, mm)
		}
		p.Skipped.HalfTiles = int64(parts - used)
	} else {
		p.Matmuls = []isa.Matmul{{M: nr1, N: nr0, K: nk, Left: isa.PackedView(0, nk, c.Tokens),
			Right: right, Used: true, Relaxed: true}}
	}
	threads := 32 * nsg
	aPasses := ceilDiv(p.Tiling.AItems(), threads)
	for sg := 0; sg < nsg; sg++ {
		p.Prologue[sg] = []isa.Op{alu(isa.ClassInt, denseSetupInts, 4)}
		var body, epi []isa.Op
		// upstream: 128 A work items for 128 threads, one dequantize call
		// per thread and step
		for t := 0; t < aPasses; t++ {
			if _, _, ok := p.Tiling.AItem(sg, 0, t); ok {
				body = append(body, isa.Op{Code: isa.OpDequantA, N: uint16(t)}, isa.Op{Code: isa.OpStoreA, N: uint16(t)})
			}
		}
		body = append(body, alu(isa.ClassInt, stepInts, 2), isa.Op{Code: isa.OpBarrier})
		for i := range p.Matmuls {
			if p.Matmuls[i].Used {
				body = append(body, isa.Op{Code: isa.OpMatmul2DDev, A: uint8(i)})
				epi = append(epi, isa.Op{Code: isa.OpStoreCoopDev, A: uint8(i)})
			}
		}
		p.Body[sg], p.Epilogue[sg] = append(body, isa.Op{Code: isa.OpBarrier}), epi
	}
	return p
}

// DenseVecKernel returns the geometry of the mat-vec kernel kern (mul_mv or
// mul_mv_ext) for a dense problem.
func DenseVecKernel(p DenseProblem, kern MetalKernel) (VecKernel, error) {
	if kern != KernelMulMVExt {
		v := MulMV(p.TypeA, p.K, false)
		return v, checkVecActivations(v, p.TypeA, p.HalfB)
	}
	v, err := MulMVExt(p.TypeA, p.K, p.N)
	if err == nil {
		err = checkVecActivations(v, p.TypeA, p.HalfB)
	}
	return v, err
}

// NewDenseVecBuilder returns the builder of the mat-vec kernel kern (mul_mv
// or mul_mv_ext) for a dense problem: DenseVecKernel's geometry, validated
// for the operand types and K by NewVecBuilder.
func NewDenseVecBuilder(p DenseProblem, kern MetalKernel) (*VecBuilder, error) {
	v, err := DenseVecKernel(p, kern)
	if err != nil {
		return nil, err
	}
	return NewVecBuilder(v, p.TypeA, p.HalfB, p.K)
}

// DenseTile is one threadgroup of a dense or mat-vec dispatch with the weight
// rows and tokens it works on.
type DenseTile struct {
	Row0, Token0 int // first weight row and first token (activation row)
	Context
}

// Tiles returns the threadgroups of one matmul (z plane) in dispatch order
// (token tiles fastest, then row tiles).
func (b *MMBuilder) Tiles() []DenseTile {
	g := b.Grid()
	nr0, nr1 := b.TileShape()
	out := make([]DenseTile, 0, g[0]*g[1])
	for y := 0; y < g[1]; y++ {
		for x := 0; x < g[0]; x++ {
			out = append(out, DenseTile{Row0: y * nr0, Token0: x * nr1, Context: b.Context(x, y)})
		}
	}
	return out
}

// Tiles returns the threadgroups of the mat-vec kernel over m weight rows and
// n tokens in dispatch order: row blocks fastest, then token blocks.
func (b *VecBuilder) Tiles(m, n int) []DenseTile {
	R, T := b.Kernel.RowsPerTG(), b.Kernel.Tokens
	var out []DenseTile
	for y := 0; y*T < n; y++ {
		for x := 0; x*R < m; x++ {
			out = append(out, DenseTile{Row0: x * R, Token0: y * T, Context: b.Context(min(R, m-x*R), min(T, n-y*T))})
		}
	}
	return out
}
