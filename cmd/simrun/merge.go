package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/metalsim/metalsim/study"
)

const mergeSummary = `Join the outputs of a sharded sweep (simrun sweep --shard i/N, CSV or JSON) into exactly the bytes
a single unsharded run writes, on stdout. Every shard must come from the same sweep: the same
sweep_id (a hash of every flag but --shard, --workers and --format, and of the chips and variants they load)
and the same points count in every row, and the rows of one shard i/N (i, i+N, i+2N, ...) in each
file. The merge fails, naming the file (and the line, or the JSON row, and the column or field),
on a foreign file, a row not as simrun sweep writes it (an unknown, missing or re-encoded field;
text after the JSON document), a row edited since (every shard row carries a digest of its values),
a duplicated point, a truncated shard, a format mix or a missing point. Shards may be given in any order, and a shard that holds no point may be left out.

usage: simrun merge SHARD...`

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", mergeSummary, stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return fail(stderr, "merge", errors.New("no shard files (usage: simrun merge SHARD...)"))
	}
	rows, err := study.Merge(fs.Args(), stdout)
	if err != nil {
		return fail(stderr, "merge", err)
	}
	// as the unsharded sweep does: points that could not run fail the merge
	if n, first := study.Failures(rows); n > 0 {
		fmt.Fprintf(stderr, "simrun merge: %d of %d points failed (error column); first: %s\n", n, len(rows), first)
		return exitFailed
	}
	return exitOK
}
