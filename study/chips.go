package study

import (
	"fmt"
	"strings"

	"github.com/metalsim/metalsim/chips"
	"github.com/metalsim/metalsim/sim"
	"github.com/metalsim/metalsim/tile"
)

// LoadChips looks up a list of chips: names or aliases (sim.LookupChip), or
// chip files (*.json); it wants at least one.
func LoadChips(label, s string) ([]*chips.Chip, error) {
	items, err := SplitList(label, s)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s %q: want one or more chips (simrun chips lists them)", label, s)
	}
	var out []*chips.Chip
	for _, it := range items {
		c, err := LoadChip(it)
		if err != nil {
			// a list takes chip files among its items
			return nil, fmt.Errorf("%s: %s", label, strings.Replace(err.Error(), "; or load one with --chip-file", "; or give a chip .json file", 1))
		}
		for _, prev := range out {
			// one chip twice (an alias and its name, or a file of the same
			// name) would give duplicate points that no column tells apart
			if prev.Name == c.Name {
				return nil, fmt.Errorf("%s: %q is %s, given already (a what-if chip file needs a name of its own)", label, it, c.Name)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// LoadChip returns the chip s names: a chip .json file, or a chip name or
// alias.
func LoadChip(s string) (*chips.Chip, error) {
	if strings.HasSuffix(strings.ToLower(s), ".json") {
		return chips.LoadFile(s)
	}
	return chips.Lookup(s)
}

// BeyondEveryChip says why no embedded chip could launch kernel k for problem
// p: its threads or threadgroup memory past every chip's limit, a map0 no
// chip launches, registers past metalsim's bound. A front end that runs the
// kernel without a chip (the emulator) notes these; with a chip the limits
// are checked where they apply.
func BeyondEveryChip(p tile.Problem, k tile.Kernel) []string {
	var notes, over []string
	if chipList, err := chips.All(); err == nil {
		maxThreads, maxMem := 0, 0
		for _, c := range chipList {
			maxThreads = max(maxThreads, int(c.MaxThreadsPerTG.Value))
			maxMem = max(maxMem, int(c.TGMemoryPerTG.Value))
		}
		if t := 32 * k.NSG; t > maxThreads {
			over = append(over, fmt.Sprintf("%d threads (max_threads_per_tg is at most %d)", t, maxThreads))
		}
		if b := k.TGMemoryBytes(); b > maxMem {
			over = append(over, fmt.Sprintf("%d bytes of threadgroup memory (tg_memory_per_tg_bytes is at most %d)", b, maxMem))
		}
	}
	if chipList, err := chips.All(); err == nil {
		// map0 builds the routing map first: one threadgroup of n_mats threads
		var why error
		for _, c := range chipList {
			if why = sim.CheckMap0(p, c, "n_mats", "n_used"); why == nil {
				break
			}
		}
		if why != nil {
			notes = append(notes, fmt.Sprintf("map0, which builds the routing map before mul_mm_id, launches on no embedded chip (%v); the values are computed all the same", why))
		}
	}
	if len(over) > 0 {
		notes = append(notes, "the kernel needs "+strings.Join(over, " and ")+
			", more than any embedded chip allows; the values are computed all the same, and a what-if chip file can raise the limits to time it (docs/tutorial.md §6.5)")
	}
	if ks, err := tile.KernelShape(p, k); err == nil && ks.Registers.Total > chips.MaxRegsPerThread {
		notes = append(notes, fmt.Sprintf("the kernel needs %d registers per thread, above metalsim's bound of %d: the timing model runs it on no chip; the values are computed all the same",
			ks.Registers.Total, chips.MaxRegsPerThread))
	}
	return notes
}

// ShowChip loads the chip simrun chips prints: by name, alias or chip file
// (--show), or from a chip file (--chip-file); exactly one is given.
func ShowChip(show, file string) (*chips.Chip, error) {
	switch {
	case show != "" && file != "":
		return nil, fmt.Errorf("--show %q and --chip-file %s: give one", show, file)
	case file != "":
		c, err := chips.LoadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--chip-file: %w", err)
		}
		return c, nil
	}
	c, err := LoadChip(show)
	if err != nil {
		return nil, fmt.Errorf("--show: %w", err)
	}
	return c, nil
}
