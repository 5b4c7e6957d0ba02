package isa

import "fmt"

// Class is the resource class of a timing instruction: which pipe or port it
// occupies and which latency it has. Chips give a cost for every class; isa never
// knows the numbers.
type Class uint8

// The resource classes. Every timing instruction (Inst) belongs to exactly one.
const (
	ClassInt       Class = iota // integer / logic ALU (and, shift, add, compare, select)
	ClassFP32                   // float32 add / mul / fma
	ClassFP16                   // float16 arithmetic
	ClassConvert                // int<->float and float<->half conversions
	ClassDevLoad                // device-memory load (through L1)
	ClassConstLoad              // constant-address-space load (iq codebooks)
	ClassDevStore               // device-memory store
	ClassTGLoad                 // threadgroup-memory load (incl. simdgroup_load 8x8 and matmul2d fragment reads)
	ClassTGStore                // threadgroup-memory store
	ClassMMA8                   // simdgroup_multiply_accumulate, 8x8x8, half in, float accumulate
	ClassMMA16                  // neural-accelerator 16x16x16 MMA (matmul2d on M5-class chips)
	ClassBarrier                // threadgroup_barrier: wait for every simdgroup of the threadgroup
	NumClasses                  // number of classes (not a class)
)

// Result is where a class's result lands, which decides how the timing engine
// tracks it: on the simdgroup's ALU chain, in its threadgroup-load or
// threadgroup-store scoreboard slot, or through the memory hierarchy.
type Result uint8

// The result kinds.
const (
	ResultChain       Result = iota // an ALU, MMA or barrier result: the group's chain, ready after the class latency
	ResultTGLoad                    // a threadgroup load: ready after the port time and the class latency
	ResultTGStore                   // a threadgroup store: done after the port time
	ResultDeviceLoad                // a device or constant load: served by the memory hierarchy
	ResultDeviceStore               // a device store: written through to DRAM
)

// Device reports whether the result goes through device memory (a load or a store).
func (r Result) Device() bool { return r == ResultDeviceLoad || r == ResultDeviceStore }

// classInfo is one row of the class table.
type classInfo struct {
	name   string
	result Result
	count  func(in *Inst, c *Counts) // the group's work counters (nil: instructions only)
}

// classes is the class table: each class's name (as in chip files) and result kind.
var classes = [NumClasses]classInfo{
	ClassInt:       {"int", ResultChain, nil},
	ClassFP32:      {"fp32", ResultChain, nil},
	ClassFP16:      {"fp16", ResultChain, nil},
	ClassConvert:   {"convert", ResultChain, nil},
	ClassDevLoad:   {"dev_load", ResultDeviceLoad, countDeviceBytes},
	ClassConstLoad: {"const_load", ResultDeviceLoad, countCodebookLoads},
	ClassDevStore:  {"dev_store", ResultDeviceStore, countDeviceBytes},
	ClassTGLoad:    {"tg_load", ResultTGLoad, countTGBytes},
	ClassTGStore:   {"tg_store", ResultTGStore, countTGBytes},
	ClassMMA8:      {"mma8", ResultChain, nil},
	ClassMMA16:     {"mma16", ResultChain, countMMA16},
	ClassBarrier:   {"barrier", ResultChain, nil},
}

// String returns the class name used in chip files and reports.
func (c Class) String() string {
	if c >= NumClasses {
		return fmt.Sprintf("Class(%d)", uint8(c))
	}
	return classes[c].name
}

// Result returns where the class's result lands.
func (c Class) Result() Result { return classes[c].result }

func countDeviceBytes(in *Inst, c *Counts) { c.DeviceBytes[in.Stream] += int64(in.Unique) }
func countTGBytes(in *Inst, c *Counts)     { c.TGBytes += int64(in.Count) * int64(in.Bytes) }
func countMMA16(in *Inst, c *Counts)       { c.MMA16 += int64(in.Count) }

// countCodebookLoads counts lane-level constant loads by their width in bytes.
func countCodebookLoads(in *Inst, c *Counts) {
	if c.CodebookLoads == nil {
		c.CodebookLoads = map[int]int64{}
	}
	c.CodebookLoads[int(in.Bytes)/lanes] += lanes * int64(in.Count)
}

// ParseClass maps a class name (as in chip files) to a Class.
func ParseClass(s string) (Class, error) {
	names := make([]string, NumClasses)
	for i, ci := range classes {
		if ci.name == s {
			return Class(i), nil
		}
		names[i] = ci.name
	}
	return 0, fmt.Errorf("unknown instruction class %q (allowed: %v)", s, names)
}

// Stream names the data a device access touches, so the timing engine can decide
// which memory level serves it without knowing addresses.
type Stream uint8

// The device data streams of the mat-mat kernels.
const (
	StreamNone        Stream = iota
	StreamMeta               // routing words (tpe, ids): tiny and hot
	StreamWeights            // src0 blocks: each row read once per tile, sequentially along K
	StreamActivations        // src1 rows: gathered; re-read by every row tile of the same expert
	StreamCodebook           // iq grids and sign tables in constant memory
	StreamOutput             // dst rows written by the scatter
	NumStreams               // number of streams (not a stream)
)

var streamNames = [NumStreams]string{"none", "meta", "weights", "activations", "codebook", "output"}

// String returns the stream name.
func (s Stream) String() string {
	if s >= NumStreams {
		return fmt.Sprintf("Stream(%d)", uint8(s))
	}
	return streamNames[s]
}

// Wait is a scoreboard wait mask: before its first instruction issues, a timing
// instruction group waits until the simdgroup's outstanding asynchronous results
// of these kinds have arrived (Apple GPUs issue loads asynchronously and wait on
// them explicitly).
type Wait uint8

// Wait bits.
const (
	WaitDevice Wait = 1 << iota // outstanding device and constant loads
	WaitTG                      // outstanding threadgroup loads
	WaitALU                     // the previous group's ALU results (a dependent chain)
)

// Inst is a group of Count identical simdgroup instructions of one class, the unit
// the timing engine consumes. Inside a group the instructions form ILP independent
// dependency chains (ILP = 1: each waits for the previous one's result).
type Inst struct {
	Class  Class
	Count  uint16 // simdgroup instructions in the group (>= 1)
	ILP    uint8  // independent chains inside the group (>= 1)
	Wait   Wait   // what must have arrived before the first instruction issues
	Stream Stream // device classes: which data stream
	// Bytes is the number of bytes each instruction moves for the whole simdgroup
	// (32 lanes x access width; for MMA classes 0).
	Bytes uint32
	// Unique is the number of distinct bytes the whole group touches after
	// coalescing (lanes reading the same address count once). For weight loads it
	// is the tile's share of new weight bytes per k-step.
	Unique uint32
	// Sectors is, for a per-lane gather through the L1 (a codebook lookup,
	// a tensor fragment from device memory, a read all lanes share), the
	// distinct 32-byte sectors one instruction touches (a mean over real
	// data: dequant.TableGather); 0 for an access whose port time is its
	// bytes alone.
	Sectors float32
	// BankWords is, for a per-lane gather from threadgroup memory, the
	// distinct words in the busiest bank per instruction (dequant.Gather);
	// 0 for an access whose port time is its bytes alone.
	BankWords float32
	// CallStart marks the MMA that starts a matmul2d call which pays the
	// call's fixed cost on the tensor slot (chip matmul2d_call_clk).
	CallStart bool
	// Regather marks the operand gathers of a matmul2d call that an
	// earlier call of the same k-step made of the same operand (chip
	// matmul2d_regather decides whether they are made again).
	Regather bool
	// Accumulate marks the fp32 adds of a multiply_accumulate matmul2d call
	// (chip matmul2d_accumulate_adds decides whether they are made).
	Accumulate bool
	// Phase is the phase of the op the group was expanded from (for timelines).
	Phase Phase
}

// Phase labels what a stretch of a program is doing, for traces and counters.
type Phase uint8

// The program phases shown on timelines.
const (
	PhaseSetup   Phase = iota // prologue: routing reads, address arithmetic, zeroing
	PhaseStage                // A dequantization and B staging into threadgroup memory
	PhaseCompute              // fragment loads and matrix multiply-accumulate
	PhaseStore                // epilogue: accumulators to staging, scatter to dst
	NumPhases                 // number of phases (not a phase)
)

var phaseNames = [NumPhases]string{"setup", "stage", "compute", "store"}

// String returns the phase name.
func (p Phase) String() string {
	if p >= NumPhases {
		return fmt.Sprintf("Phase(%d)", uint8(p))
	}
	return phaseNames[p]
}
