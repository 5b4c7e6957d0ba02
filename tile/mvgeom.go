package tile

import (
	"fmt"

	"github.com/metalsim/metalsim/dequant"
)

// The mat-vec kernels' geometry per weight type, as ggml d99724f's host code
// builds the pipeline (ggml-metal-device.cpp L801-995, L1042-1225, with
// N_R0_*/N_SG_* of ggml-metal-impl.h L24-91) and the kernel splits its lanes
// (ggml-metal.metal, the lines in each row). docs/kernel-geometry.md §3 and
// §3.1 state the same table in words; what each lane computes per k-step is
// dequant.MatVecCosts.

// TableWhere is where a mat-vec kernel reads its lookup table from.
type TableWhere uint8

// Lookup-table placements.
const (
	TableNone        TableWhere = iota // no table
	TableThreadgroup                   // copied into threadgroup memory before the k-loop, then a barrier
	TableConstant                      // read from constant memory in the k-loop
)

// TableCopy is a mat-vec kernel's lookup table: where it lives and, for a
// threadgroup copy, what each thread copies before the barrier (every thread
// copies a fixed slice; the slices assume the type's simdgroup count).
type TableCopy struct {
	Where          TableWhere
	EntriesPerLane int    // table entries each thread copies
	EntryBytes     int    // bytes per entry
	SignsPerLane   int    // ksigns_iq2xs bytes each thread copies (iq2_xxs, iq2_xs, iq3_xxs)
	What           string // the table
}

// MVGeometry is how one weight type's kernel_mul_mv splits its work (the same
// body serves kernel_mul_mv_id).
type MVGeometry struct {
	Kernel string             // the kernel's name, "%s" for the activation type
	Form   dequant.MatVecForm // the f32/f16/bf16 variant; MatVecMain for the quantized types
	// NR0 is the rows each simdgroup computes (N_R0_*); _short: 32, one per
	// lane.
	NR0 int
	// NSG is the simdgroups per threadgroup (N_SG_*); 0 for the float types,
	// whose pipeline takes min(4, ⌈k/128⌉).
	NSG int
	// SMem is the threadgroup memory the pipeline declares.
	SMem int
	// LanesPerBlock is the lanes that share one block in a k-step (for the iq
	// types one lane per 32-weight sub-block: 8 per 256-weight block; for the
	// float types per 32-element chunk; _short: 0, a lane reads its whole row).
	LanesPerBlock int
	// WeightsPerLane is the weights of a row one lane takes per k-step.
	WeightsPerLane int
	// KSplit: the simdgroups share the threadgroup's NR0 rows and split K,
	// adding their partial sums through threadgroup memory (the grid then
	// has ⌈M/NR0⌉ threadgroups); otherwise each simdgroup owns NR0 rows.
	KSplit bool
	Table  TableCopy
	Source string // the lines the row comes from
}

// Simdgroups returns the simdgroups of the pipeline for reduction length k.
func (g MVGeometry) Simdgroups(k int) int {
	if g.NSG > 0 {
		return g.NSG
	}
	return min(4, max(1, ceilDiv(k, 128)))
}

var (
	kvaluesTG = TableCopy{Where: TableThreadgroup, EntriesPerLane: 1, EntryBytes: 4, What: "kvalues (16 floats, each simdgroup writes entry lane%16 of 32)"}
	gridConst = TableCopy{Where: TableConstant, What: "grid"}
)

// q4Family is the geometry the q4_0, q4_1, q5_0 and q5_1 kernels share
// (mul_vec_q_n_f32_impl: two lanes per block, each half a block).
func q4Family(name, impl, dot string) MVGeometry {
	return MVGeometry{Kernel: "kernel_mul_mv_" + name + "_%s", NR0: 4, NSG: 2, LanesPerBlock: 2, WeightsPerLane: 16,
		Source: "IMPL " + impl + "; MTL L3600-3686 (mul_vec_q_n_f32_impl), " + dot + " (block_q_n_dot_y)"}
}

// iqGeom is the one-lane-per-32-weight-sub-block geometry of the iq1, iq2 and
// iq3 kernels.
func iqGeom(name, impl string, smem int, tab TableCopy, lines string) MVGeometry {
	return MVGeometry{Kernel: "kernel_mul_mv_" + name + "_%s", NR0: 4, NSG: 2, SMem: smem, LanesPerBlock: 8, WeightsPerLane: 32,
		Table: tab, Source: "IMPL " + impl + "; DEV L905-943; MTL " + lines}
}

// mvGeometry is the table of the types' main kernels.
var mvGeometry = [...]MVGeometry{
	dequant.F32:  floatGeom("f32", dequant.MatVecMain),
	dequant.F16:  floatGeom("f16", dequant.MatVecMain),
	dequant.BF16: floatGeom("bf16", dequant.MatVecMain),
	dequant.Q4_0: q4Family("q4_0", "L30-31", "L3468-3484"),
	dequant.Q4_1: q4Family("q4_1", "L33-34", "L3489-3506"),
	dequant.Q5_0: q4Family("q5_0", "L36-37", "L3511-3528"),
	dequant.Q5_1: q4Family("q5_1", "L39-40", "L3533-3550"),
	dequant.Q8_0: {Kernel: "kernel_mul_mv_q8_0_%s", NR0: 2, NSG: 4, SMem: 256, LanesPerBlock: 4, WeightsPerLane: 8, KSplit: true,
		Source: "IMPL L42-43; DEV L868-873; MTL L3895-3980, L3552-3592 (the reduction)"},
	dequant.Q1_0: {Kernel: "kernel_mul_mv_q1_0_%s", NR0: 8, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 16,
		Source: "IMPL L24-25; MTL L3688-3765, L3386-3413"},
	dequant.Q2_0: {Kernel: "kernel_mul_mv_q2_0_%s", NR0: 8, NSG: 2, LanesPerBlock: 4, WeightsPerLane: 16,
		Source: "IMPL L27-28; MTL L3767-3845, L3415-3462"},
	dequant.MXFP4: {Kernel: "kernel_mul_mv_mxfp4_%s", NR0: 2, NSG: 2, SMem: 128, LanesPerBlock: 2, WeightsPerLane: 16, Table: kvaluesTG,
		Source: "IMPL L45-46; DEV L874-879; MTL L9851-9943 (table copy L9886-9887)"},
	dequant.IQ4_NL: {Kernel: "kernel_mul_mv_iq4_nl_%s", NR0: 2, NSG: 2, SMem: 128, LanesPerBlock: 2, WeightsPerLane: 16, Table: kvaluesTG,
		Source: "IMPL L84-85; DEV L944-949; MTL L9631-9739 (table copy L9666-9667)"},
	dequant.IQ4_XS: {Kernel: "kernel_mul_mv_iq4_xs_%s", NR0: 2, NSG: 2, SMem: 128, LanesPerBlock: 16, WeightsPerLane: 16, Table: kvaluesTG,
		Source: "IMPL L87-88; DEV L950-955; MTL L9741-9849 (table copy L9777-9778)"},
	dequant.Q2_K: {Kernel: "kernel_mul_mv_q2_K_%s", NR0: 4, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 32,
		Source: "IMPL L48-49; MTL L8227-8330"},
	dequant.Q3_K: {Kernel: "kernel_mul_mv_q3_K_%s", NR0: 2, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 32,
		Source: "IMPL L51-52; MTL L8332-8495"},
	dequant.Q4_K: {Kernel: "kernel_mul_mv_q4_K_%s", NR0: 2, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 32,
		Source: "IMPL L54-55; MTL L8497-8616"},
	dequant.Q5_K: {Kernel: "kernel_mul_mv_q5_K_%s", NR0: 1, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 32,
		Source: "IMPL L57-58; MTL L8618-8747"},
	dequant.Q6_K: {Kernel: "kernel_mul_mv_q6_K_%s", NR0: 2, NSG: 2, LanesPerBlock: 16, WeightsPerLane: 16,
		Source: "IMPL L60-61; MTL L8749-8855"},
	dequant.TQ2_0: {Kernel: "kernel_mul_mv_tq2_0_%s", NR0: 4, NSG: 2, LanesPerBlock: 8, WeightsPerLane: 32,
		Source: "IMPL L90-91; MTL L9945-10058"},
	dequant.IQ2_XXS: iqGeom("iq2_xxs", "L69-70", 256*8+128, TableCopy{Where: TableThreadgroup, EntriesPerLane: 4, EntryBytes: 8, SignsPerLane: 2, What: "iq2xxs_grid (256 x 8 B) and ksigns_iq2xs"}, "L8859-8965 (table copy L8893-8903)"),
	dequant.IQ2_XS:  iqGeom("iq2_xs", "L72-73", 512*8+128, TableCopy{Where: TableThreadgroup, EntriesPerLane: 8, EntryBytes: 8, SignsPerLane: 2, What: "iq2xs_grid (512 x 8 B) and ksigns_iq2xs"}, "L8967-9084 (table copy L9001-9011)"),
	dequant.IQ3_XXS: iqGeom("iq3_xxs", "L78-79", 256*4+128, TableCopy{Where: TableThreadgroup, EntriesPerLane: 4, EntryBytes: 4, SignsPerLane: 2, What: "iq3xxs_grid (256 x 4 B) and ksigns_iq2xs"}, "L9086-9196 (table copy L9120-9130)"),
	dequant.IQ3_S:   iqGeom("iq3_s", "L81-82", 512*4, TableCopy{Where: TableThreadgroup, EntriesPerLane: 8, EntryBytes: 4, What: "iq3s_grid (512 x 4 B)"}, "L9198-9308 (table copy L9232-9238)"),
	dequant.IQ2_S:   iqGeom("iq2_s", "L75-76", 0, gridConst, "L9310-9421 (the threadgroup copy commented out, L9344-9349)"),
	dequant.IQ1_S:   iqGeom("iq1_s", "L63-64", 0, gridConst, "L9423-9520"),
	dequant.IQ1_M:   iqGeom("iq1_m", "L66-67", 0, gridConst, "L9522-9629"),
}

// floatGeom is the geometry of the f32, f16 and bf16 kernels in a form:
// nr0 2 rows per threadgroup split over min(4, ⌈k/128⌉) simdgroups (_4: 16
// weights per lane, plain: 8) or _short's one row per lane (DEV L821-837;
// only nr0 = 2 is instantiated, MTL L4399-4404, L4523-4528).
func floatGeom(name string, f dequant.MatVecForm) MVGeometry {
	switch f {
	case dequant.MatVecPlain:
		return MVGeometry{Kernel: "kernel_mul_mv_" + name + "_%s", Form: f, NR0: 2, SMem: 256, LanesPerBlock: 4, WeightsPerLane: 8, KSplit: true,
			Source: "DEV L821-837; MTL L4309-4428 (kernel_mul_mv_t_t)"}
	case dequant.MatVecShort:
		return MVGeometry{Kernel: "kernel_mul_mv_" + name + "_%s_short", Form: f, NR0: 32, NSG: 1, WeightsPerLane: 16,
			Source: "DEV L821-837; MTL L4554-4617 (kernel_mul_mv_t_t_short)"}
	}
	return MVGeometry{Kernel: "kernel_mul_mv_" + name + "_%s_4", Form: f, NR0: 2, SMem: 256, LanesPerBlock: 2, WeightsPerLane: 16, KSplit: true,
		Source: "DEV L821-837; MTL L4430-4552 (kernel_mul_mv_t_t_4)"}
}

// MatVecGeometry returns the geometry of the mat-vec kernel the host builds
// for weight type t and reduction length k; id selects kernel_mul_mv_id's,
// which never takes _short (DEV L1062-1071). The float types take _short for
// k < 32, else _4 (k % 4 == 0, which every k metalsim takes satisfies: a
// float row is a whole number of 16-element units).
func MatVecGeometry(t dequant.Type, k int, id bool) MVGeometry {
	if !t.Quantized() {
		f := dequant.MatVecMain
		switch {
		case k < 32 && !id:
			f = dequant.MatVecShort
		case k%4 != 0:
			f = dequant.MatVecPlain
		}
		return floatGeom(t.String(), f)
	}
	return mvGeometry[t]
}

// MetalName returns the Metal kernel of the geometry for activations of type
// tb ("f32", "f16").
func (g MVGeometry) MetalName(tb string) string { return fmt.Sprintf(g.Kernel, tb) }
