package dequant

// How the lanes of one simdgroup read a constant table together. A table
// lookup whose index is the lane's own weight data is a per-lane gather: the
// L1 serves it by the distinct 32-byte sectors the 32 lanes touch, and a
// threadgroup copy of the table by its busiest bank (docs/model.md §2,
// "Gathers"). What the lanes touch depends on the index pattern of real
// quantized weights and on how the kernel maps lanes to weights, so it is
// data: gather_gen.go holds it, recomputed from the decoders on ggml's own
// quantizer output by TestGatherTableCurrent (gather_test.go says how).

// Pattern is how a kernel's 32 lanes map to the chunks they decode.
type Pattern uint8

const (
	// TilePattern is the mm kernels' map (kernel_mul_mm_id, kernel_mul_mm):
	// lane l decodes half l%2 of one 32-weight sub-block of row l/2, so one
	// load instruction reads 16 consecutive rows at the same sub-block.
	TilePattern Pattern = iota
	// RowPattern is the mat-vec kernels' map (kernel_mul_mv_iq*): lane l
	// decodes sub-block l of one row, so one load instruction reads 32
	// consecutive sub-blocks of the row at the same half.
	RowPattern
	numPatterns
)

// String returns "tile" or "row".
func (p Pattern) String() string {
	switch p {
	case TilePattern:
		return "tile"
	case RowPattern:
		return "row"
	}
	return "Pattern(?)"
}

// Gather is what one simdgroup load instruction of a constant table touches,
// averaged over the load instructions of real quantized rows.
type Gather struct {
	// Sectors is the number of distinct 32-byte sectors of the table the 32
	// lanes read (the table 128-byte aligned): 1 for a read all lanes share,
	// up to 32.
	Sectors float64
	// BankWords is the number of distinct 4-byte words in the busiest of 32
	// banks of 4 bytes when the table is read from a copy in threadgroup
	// memory (the copy at a bank-aligned base): the cycles the read takes if
	// a bank serves one word per cycle. The bank structure is a what-if:
	// none is public (docs/physics-evidence.md §1.5).
	BankWords float64
}

// BankCount and BankBytes are the threadgroup-memory bank what-if that
// Gather.BankWords is computed for.
const (
	BankCount = 32
	BankBytes = 4
)

// SectorBytes is the unit a gather is served in (docs/physics-evidence.md §1.3).
const SectorBytes = 32

// gatherRow is one row of the table in gather_gen.go.
type gatherRow struct {
	Type     Type
	Strategy Strategy
	Pattern  Pattern
	What     string // the Load.What of the table read: "grid", "ksigns", "kvalues"
	Gather
}

// TableGather returns what one simdgroup load instruction of the constant
// table what (a Load.What of ChunkCost(t, s)) touches under pattern p, and
// false if the table has no row (a type without table loads).
func TableGather(t Type, s Strategy, p Pattern, what string) (Gather, bool) {
	if !t.Codebook() {
		s = ByteReads // the strategy changes only the codebook types' reads
	}
	for _, r := range gatherTable {
		if r.Type == t && r.Strategy == s && r.Pattern == p && r.What == what {
			return r.Gather, true
		}
	}
	return Gather{}, false
}
