//go:build countedcopy

// The tests that run the load-counting copy of the decoders: TestCountedCopy
// (counted_test.go) runs them in a child go test with the copy added to the
// package (go test -overlay), built with the countedcopy tag.

package dequant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// loadKey is a load's address space and width in bytes.
type loadKey struct {
	space Space
	width int
}

// loadCounter receives the loads of the counting decoders. Tests using it must
// not run in parallel.
var loadCounter struct {
	counts map[loadKey]int
	bytes  []int          // per device byte offset: how often the chunk read it
	block  int            // bytes of the block being decoded (device loads must stay inside)
	base   unsafe.Pointer // the block's first byte: decoders may pass a slice of it
	bad    []string
	consts []uintptr // the addresses of the chunk's constant loads, in order
	run    byteRun   // the last constant load, if a run of 1-byte reads
}

// byteRun is a constant load made of adjacent 1-byte reads of one table
// (ChunkCost's rule R10, byteRunBytes in load.go).
type byteRun struct {
	start uintptr // the first byte's address; 0: no run
	n     int     // bytes read so far
}

// extends reports whether a 1-byte read at a joins the run: the byte after
// the run's last, in the same table and the same byteRunBytes-aligned group
// of it (the tables' bases are aligned to their element, their elements to
// byteRunBytes).
func (r byteRun) extends(a uintptr) bool {
	if r.start == 0 || a != r.start+uintptr(r.n) {
		return false
	}
	c, off, ok := tableAt(r.start)
	return ok && a < c.base+c.bytes && off/byteRunBytes == (off+r.n)/byteRunBytes
}

func resetLoads(block []byte) {
	loadCounter.counts = map[loadKey]int{}
	loadCounter.bytes = make([]int, len(block))
	loadCounter.block = len(block)
	loadCounter.base = unsafe.Pointer(unsafe.SliceData(block))
	loadCounter.bad = nil
	loadCounter.consts = loadCounter.consts[:0]
	loadCounter.run = byteRun{}
}

// countDev records a device load of width bytes at b[off:], b being the block
// or a slice of it.
func countDev(b []byte, off, width int) {
	off += int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(loadCounter.base))
	loadCounter.counts[loadKey{Device, width}]++
	if off < 0 || off+width > loadCounter.block {
		loadCounter.bad = append(loadCounter.bad, fmt.Sprintf("device load of %d bytes at %d outside the %d-byte block", width, off, loadCounter.block))
		return
	}
	for i := off; i < off+width; i++ {
		loadCounter.bytes[i]++
	}
}

// countConst records a constant load of width bytes at p; a 1-byte read that
// extends the previous load's byte run widens that load instead.
func countConst(p unsafe.Pointer, width int) {
	a, r := uintptr(p), &loadCounter.run
	if width == 1 && r.extends(a) {
		loadCounter.counts[loadKey{Constant, r.n}]--
		if loadCounter.counts[loadKey{Constant, r.n}] == 0 {
			delete(loadCounter.counts, loadKey{Constant, r.n})
		}
		r.n++
		loadCounter.counts[loadKey{Constant, r.n}]++
		return
	}
	loadCounter.counts[loadKey{Constant, width}]++
	loadCounter.consts = append(loadCounter.consts, a)
	*r = byteRun{}
	if width == 1 {
		*r = byteRun{start: a, n: 1}
	}
}

func devU8Counted(b []byte, off int) uint8        { countDev(b, off, 1); return devU8(b, off) }
func devU16Counted(b []byte, off int) uint16      { countDev(b, off, 2); return devU16(b, off) }
func devU32Counted(b []byte, off int) uint32      { countDev(b, off, 4); return devU32(b, off) }
func devU128Counted(b []byte, off int) *[16]byte  { countDev(b, off, 16); return devU128(b, off) }
func devBytes4Counted(b []byte, off int) *[4]byte { countDev(b, off, 4); return devBytes4(b, off) }
func fromConst8Counted(p *uint8) uint8            { countConst(unsafe.Pointer(p), 1); return fromConst8(p) }
func fromConst32Counted(p *uint32) uint32         { countConst(unsafe.Pointer(p), 4); return fromConst32(p) }
func fromConstF32Counted(p *float32) float32 {
	countConst(unsafe.Pointer(p), 4)
	return fromConstF32(p)
}

// costCounts sums a Cost's loads by address space and width.
func costCounts(c Cost) map[loadKey]int {
	m := map[loadKey]int{}
	for _, l := range c.Loads {
		m[loadKey{l.Space, l.Width}] += l.Count
	}
	return m
}

func formatCounts(m map[loadKey]int) string {
	var keys []loadKey
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b loadKey) int {
		if a.space != b.space {
			return int(a.space) - int(b.space)
		}
		return a.width - b.width
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %dx%dB", k.space, m[k], k.width))
	}
	return strings.Join(parts, ", ")
}

// TestChunkCostLoadsCounted runs the load-counting copy of every decoder, for
// every type and strategy, on every chunk of random blocks, and compares what it
// read with ChunkCost: per address space and width, the largest count over the
// chunks must equal ChunkCost's and no chunk may read more; every device load
// stays inside the block, every byte of the block is read by some chunk, and
// the counting copy decodes the same bits as the production decoder.
func TestChunkCostLoadsCounted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range Types() {
		for _, s := range strategies {
			name := typ.String() + "/" + s.String()
			l := typ.Layout()
			want := costCounts(ChunkCost(typ, s))
			maxima := map[loadKey]int{}
			covered := make([]bool, l.BlockBytes)
			block := make([]byte, l.BlockBytes)
			for trial := 0; trial < 8; trial++ {
				for i := range block {
					block[i] = byte(r.Uint32())
				}
				for il := 0; il < typ.Chunks(); il++ {
					resetLoads(block)
					var got, ref [16]float32
					DecoderCounted(typ, s)(block, il, &got)
					Decoder(typ, s)(block, il, &ref)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
							t.Fatalf("%s il=%d weight %d: counting copy %#08x, decoder %#08x", name, il, i, math.Float32bits(got[i]), math.Float32bits(ref[i]))
						}
					}
					for _, msg := range loadCounter.bad {
						t.Errorf("%s il=%d: %s", name, il, msg)
					}
					for k, n := range loadCounter.counts {
						maxima[k] = max(maxima[k], n)
						if n > want[k] {
							t.Errorf("%s il=%d: %d %s loads of %d bytes, ChunkCost has %d", name, il, n, k.space, k.width, want[k])
						}
					}
					for i, n := range loadCounter.bytes {
						covered[i] = covered[i] || n > 0
					}
				}
			}
			if got, w := formatCounts(maxima), formatCounts(want); got != w {
				t.Errorf("%s: decoder reads at most %s per chunk; ChunkCost says %s", name, got, w)
			}
			for i, c := range covered {
				if !c {
					t.Errorf("%s: byte %d of the %d-byte block is read by no chunk", name, i, l.BlockBytes)
				}
			}
		}
	}
}
