package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

const mergeSummary = `Join the outputs of a sharded sweep (simrun sweep --shard i/N, CSV or JSON) into exactly the bytes
a single unsharded run writes, on stdout. Every shard must come from the same sweep; the merge
fails, naming the file, on a duplicated point, a foreign file, a format mix or a missing point.
Shards may be given in any order, and a shard that holds no point may be left out.

usage: simrun merge SHARD...`

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", mergeSummary, stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return fail(stderr, "merge", errors.New("no shard files (usage: simrun merge SHARD...)"))
	}
	if err := mergeSweeps(fs.Args(), stdout); err != nil {
		return fail(stderr, "merge", err)
	}
	return exitOK
}

// mergeSweeps reads shard files and writes the merged sweep.
func mergeSweeps(files []string, w io.Writer) error {
	var all []*sweepFile
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sf, err := readSweepFile(f, data)
		if err != nil {
			return err
		}
		all = append(all, sf)
	}
	first, points := all[0], -1
	for _, sf := range all {
		if sf.json != first.json {
			return fmt.Errorf("%s is %s but %s is %s: merge shards of one format", sf.name, formatName(sf.json), first.name, formatName(first.json))
		}
		if sf.points < 0 {
			continue
		}
		if points >= 0 && sf.points != points {
			return fmt.Errorf("%s: a sweep of %d points, but the other shards have %d (outputs of different sweeps?)", sf.name, sf.points, points)
		}
		points = sf.points
	}
	if points < 0 {
		points = 0
	}
	// work over the rows the files hold, never over the points count a file
	// claims: a corrupt count must not allocate or loop
	owner := map[int]*sweepFile{}
	for _, sf := range all {
		for _, i := range sf.indices() {
			if o := owner[i]; o != nil {
				return fmt.Errorf("point %d is in both %s and %s (the same shard twice?)", i, o.name, sf.name)
			}
			owner[i] = sf
		}
	}
	if len(owner) < points {
		var missing []string
		for i := 0; i < points && len(missing) < 10; i++ {
			if owner[i] == nil {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		more := ""
		if n := points - len(owner); n > len(missing) {
			more = fmt.Sprintf(" and %d more", n-len(missing))
		}
		return fmt.Errorf("points %s%s of %d are in no file (a shard missing?)", strings.Join(missing, ", "), more, points)
	}
	id := ""
	for _, sf := range all {
		if id == "" {
			id = sf.id
		}
	}
	sw, err := newSweepWriter(w, first.json, points, id)
	if err != nil {
		return err
	}
	for i := range points {
		o := owner[i]
		if o.json {
			err = sw.writeJSONRow(o.rows[i])
		} else {
			err = sw.csv.Write(o.recs[i])
		}
		if err != nil {
			return err
		}
	}
	return sw.close()
}

// indices returns the point indices the file holds.
func (sf *sweepFile) indices() []int {
	out := make([]int, 0, len(sf.rows)+len(sf.recs))
	for i := range sf.rows {
		out = append(out, i)
	}
	for i := range sf.recs {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func formatName(isJSON bool) string {
	if isJSON {
		return "JSON"
	}
	return "CSV"
}
