package engine

import (
	"reflect"
	"sync"
	"testing"

	"github.com/metalsim/metalsim/isa"
	"github.com/metalsim/metalsim/tile"
)

// halfTilePrograms are the half-tile kernel's two k-loop programs of the
// headline shape on a calibrated path (the full tile, and the tile that skips
// its upper token half, whose weights a neighbour just read), with the core
// model they are measured on.
type halfTilePrograms struct {
	m     *model
	progs [2]*isa.Program
	mems  [2]*progMem
}

func newHalfTilePrograms(t *testing.T, chipName string, path tile.Path) halfTilePrograms {
	chip, b, steps := headlineBuilder(t, chipName, tile.HalfTile(), path)
	k := b.Kernel
	hp := halfTilePrograms{m: newModel(chip, true)}
	for i, tokens := range []int{k.NR1, k.NR1H} {
		hp.progs[i] = b.Program(tile.Context{Rows: k.NR0, Tokens: tokens, Steps: steps})
		hp.mems[i] = newProgMem(hp.progs[i], 4)
	}
	return hp
}

// class returns the class of program i (0 full, 1 half) in cc.
func (hp halfTilePrograms) class(cc *coreCache, i int) (int, int64) {
	return cc.class(hp.progs[i], i == 1, hp.mems[i], hp.progs[i], hp.mems[i])
}

// TestFineGoesOnFromCoarse checks that a fine measurement that goes on from
// a coarse measurement's core model gives what a fresh one gives, for a mix
// of two classes on each path, and that it simulates fewer instructions.
func TestFineGoesOnFromCoarse(t *testing.T) {
	for _, tc := range calibratedPaths {
		hp := newHalfTilePrograms(t, tc.chip, tc.path)
		measured := func(continued bool) (*mixResult, *mixResult) {
			cc := newCoreCache(hp.m, 6)
			a, _ := hp.class(cc, 0)
			h, _ := hp.class(cc, 1)
			ids := []int{a, a, a, h, h}
			key := appendMixKey(nil, ids)
			var c *mixResult
			if continued {
				c, _ = cc.mix(key, ids, coarse)
			}
			f, _ := cc.mix(key, ids, fine)
			return c, f
		}
		_, fresh := measured(false)
		coarseRes, cont := measured(true)
		if cont.instr >= fresh.instr {
			t.Errorf("%s: the fine measurement after the coarse one simulated %d instructions, a fresh one %d: it did not go on", tc.chip, cont.instr, fresh.instr)
		}
		if cont.instr+coarseRes.instr != fresh.instr {
			t.Errorf("%s: coarse %d + continued fine %d instructions, want the fresh fine's %d", tc.chip, coarseRes.instr, cont.instr, fresh.instr)
		}
		fresh.instr, cont.instr = 0, 0
		if !reflect.DeepEqual(fresh, cont) {
			t.Errorf("%s: continued fine measurement differs from a fresh one:\nfresh     %+v\ncontinued %+v", tc.chip, *fresh, *cont)
		}
	}
}

// TestConcurrentFinePatterns: a fine measurement's start patterns may be run
// by any run waiting for the mix; the result must be the one a run measuring
// alone gets, whether a helper ran every pattern but the first before the
// measuring run started or several runs asked for the mix at once.
func TestConcurrentFinePatterns(t *testing.T) {
	for _, tc := range calibratedPaths {
		hp := newHalfTilePrograms(t, tc.chip, tc.path)
		setup := func() (*coreCache, []int) {
			cc := newCoreCache(hp.m, 6)
			a, _ := hp.class(cc, 0)
			h, _ := hp.class(cc, 1)
			return cc, []int{a, a, h, h}
		}
		cc, ids := setup()
		alone, _ := cc.measureFine(newPatternWork(ids, cc.info), nil)

		cc, ids = setup()
		w := newPatternWork(ids, cc.info)
		w.help(cc) // patterns 1.. before the measuring run takes any
		helped, _ := cc.measureFine(w, nil)
		if !reflect.DeepEqual(alone, helped) {
			t.Errorf("%s: helped fine measurement differs from one measured alone:\nalone  %+v\nhelped %+v", tc.chip, *alone, *helped)
		}

		cc, ids = setup()
		key := appendMixKey(nil, ids)
		res := make([]*mixResult, 4)
		instr := make([]int64, len(res))
		var wg sync.WaitGroup
		for i := range res {
			wg.Go(func() { res[i], instr[i] = cc.mix(key, ids, fine) })
		}
		wg.Wait()
		total := int64(0)
		for i, r := range res {
			total += instr[i]
			if !reflect.DeepEqual(alone, r) {
				t.Errorf("%s: run %d of concurrent ones got %+v, one measuring alone %+v", tc.chip, i, *r, *alone)
			}
		}
		if total != alone.instr {
			t.Errorf("%s: concurrent runs report %d instructions simulated, the measurement %d", tc.chip, total, alone.instr)
		}
	}
}

// TestConcurrentClasses: runs that meet classes at once measure their
// overheads in parallel, and a run meeting a class another is measuring
// waits for it; each class must get one id, the overhead a run creating it
// alone measures, and its instructions counted once.
func TestConcurrentClasses(t *testing.T) {
	for _, tc := range calibratedPaths {
		hp := newHalfTilePrograms(t, tc.chip, tc.path)
		progs, class := hp.progs, hp.class
		alone := newCoreCache(hp.m, 6)
		var want [2]float64
		var wantInstr int64
		for i := range progs {
			id, n := class(alone, i)
			want[i], wantInstr = alone.info[id].overhead, wantInstr+n
		}

		cc := newCoreCache(hp.m, 6)
		const runs = 4
		var ids [runs][2]int
		var instr [runs]int64
		var wg sync.WaitGroup
		for r := range runs {
			wg.Go(func() {
				for j := range progs {
					i := (r + j) % len(progs) // half the runs meet the classes in the other order
					var n int64
					ids[r][i], n = class(cc, i)
					instr[r] += n
				}
			})
		}
		wg.Wait()
		total := int64(0)
		for r := range runs {
			total += instr[r]
			for i := range progs {
				if ids[r][i] != ids[0][i] {
					t.Errorf("%s: run %d got class %d for program %d, run 0 class %d", tc.chip, r, ids[r][i], i, ids[0][i])
				}
			}
		}
		for i := range progs {
			if got := cc.info[ids[0][i]].overhead; got != want[i] {
				t.Errorf("%s: program %d's overhead %v with concurrent runs, %v measured alone", tc.chip, i, got, want[i])
			}
		}
		if total != wantInstr {
			t.Errorf("%s: concurrent runs report %d instructions simulated, the classes alone %d", tc.chip, total, wantInstr)
		}
	}
}

// TestOneTGPatternsShifted: a one-threadgroup mix's start pattern p is
// pattern 0 started later on an idle core, so measureFine shifts pattern 0
// (after a coarse measurement, as runs make it) instead of simulating it; the
// shifted measurement must be exactly the simulated one, but for the
// instructions it did not simulate.
func TestOneTGPatternsShifted(t *testing.T) {
	for _, tc := range calibratedPaths {
		hp := newHalfTilePrograms(t, tc.chip, tc.path)
		for i := range hp.progs {
			cc := newCoreCache(hp.m, 6)
			id, _ := hp.class(cc, i)
			ids, info := []int{cc.info[id].mixID}, cc.snapshot()
			_, cs := cc.measure(ids, info, coarseCover, nil, 0)
			r0, cs0 := cc.measure(ids, info, mixCover/startPatterns, cs, 0)
			for p := 1; p < startPatterns; p++ {
				sim, _ := cc.measure(ids, info, mixCover/startPatterns, nil, p)
				if sim.instr == 0 || sim.last == 0 {
					t.Fatalf("%s program %d pattern %d: simulated nothing (%d instructions, last mark %d)", tc.chip, i, p, sim.instr, sim.last)
				}
				sim.instr = 0
				if got := shifted(r0, cs0, p); !reflect.DeepEqual(got, sim) {
					t.Errorf("%s program %d pattern %d: shifted\n%+v\nsimulated\n%+v", tc.chip, i, p, *got, *sim)
				}
			}
		}
	}
}

// countTrace counts what a core issues, instruction by instruction: the
// instructions (barriers aside) and the issue-pipe cycles they occupy.
type countTrace struct {
	m        *model
	issues   int64
	pipeBusy [pipeRows]float64
	released int64 // barrier arrivals released
}

func (n *countTrace) issue(_ *coreSim, _ *sgRun, in *isa.Inst, _ int64) {
	n.issues++
	if cc := n.m.cls[in.Class]; cc.pipe < pipeMem {
		n.pipeBusy[cc.pipe] += float64(cc.issue)
	}
}

func (n *countTrace) barrier(*coreSim, *sgRun, int64, int64) { n.released++ }

// TestSettledCountsEveryIssue: the issue step counts a group's instructions
// and pipe cycles when the group ends; settled must add the groups in
// progress, so that, stopped anywhere, a core's statistics count what it
// issued one by one.
func TestSettledCountsEveryIssue(t *testing.T) {
	for _, tc := range calibratedPaths {
		chip, b, steps := headlineBuilder(t, tc.chip, tile.Upstream(), tc.path)
		k := b.Kernel
		prog := b.Program(tile.Context{Rows: k.NR0, Tokens: k.NR1, Steps: steps})
		m := newModel(chip, true)
		mem := newProgMem(prog, 4)
		cs := newCoreSim(m)
		sink := &countTrace{m: m}
		cs.trace = sink
		for j := range 3 {
			cs.addTG(prog, mem, 0, true, false, j, j*steps/3)
		}
		midGroup := false
		for stop := int64(997); stop < 20000; stop += 997 { // stops at odd times, inside groups
			cs.run(stop)
			waiting := int64(0)
			for i := range cs.sgs {
				if cs.sgs[i].state == sgBarrier {
					waiting++
				}
				midGroup = midGroup || cs.sgs[i].ii > 0
			}
			s := cs.settled()
			if want := sink.issues + sink.released + waiting; s.issued != want {
				t.Fatalf("%s at %d: settled counts %d instructions, the core issued %d", tc.chip, stop, s.issued, want)
			}
			for p := range pipeMem {
				if s.pipeBusy[p] != sink.pipeBusy[p] {
					t.Fatalf("%s at %d: settled pipe %d busy %v cycles, the issues occupy %v", tc.chip, stop, p, s.pipeBusy[p], sink.pipeBusy[p])
				}
			}
		}
		if !midGroup {
			t.Errorf("%s: no stop fell inside a group; the test checks nothing of settled's own count", tc.chip)
		}
	}
}
