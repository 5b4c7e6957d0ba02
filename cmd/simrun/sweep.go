package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/metalsim/metalsim/study"
	"github.com/metalsim/metalsim/trace"
	"github.com/metalsim/metalsim/trace/plots"
)

const sweepUsage = `Run a cartesian design-space sweep: every chip x variant x routing (x skew) x n, one timing
prediction per point, in parallel over the cores (--workers). Output is one row per point, ordered
by the point's cartesian index (chip slowest, n fastest), as CSV or JSON on stdout; the bytes are
the same for any worker count. Each point's routing seed is derived from --seed, the point's routing
and its n only (never from scheduling), so every chip and variant at one workload sees the same
routing draws, and a point gives the same numbers in any sweep that contains it. Every point runs the
kernel llama.cpp dispatches for it (--op, n: mul_mv_id below 32 tokens of a mul_mat_id), or --kernel;
the kernel column says which, and the note column when a variant's knobs do not apply to it.

Routing specs (--routing, comma-separated): uniform; zipf:S (popularity ~ 1/rank^S, S in [0, 8]);
hot:H:F (a fraction F of the picks on the first H experts); file:PATH (an ids file: raw
little-endian int32 n x n_used, or CSV with one token of n_used ids per line; it fixes n). A spec
without its last parameter, zipf or hot:H, takes it from every --skew value in turn.

Sharding (--shard i/N) runs every N-th point starting at i, so a sweep spreads over a batch system;
every row carries the sweep's points count and sweep_id (a hash of every flag but --shard,
--workers and --format, and of the chips and variants they load) and, with N > 1, a last column
digest (of the row's values), and simrun merge checks them as it joins the shard outputs into
exactly the bytes of the unsharded run:
  Slurm array:      #SBATCH --array=0-15
                    simrun sweep ... --shard $SLURM_ARRAY_TASK_ID/16 > shard-$SLURM_ARRAY_TASK_ID.csv
  Kubernetes:       an Indexed Job (completionMode: Indexed, completions: 16) running
                    simrun sweep ... --shard $JOB_COMPLETION_INDEX/16 > /out/shard-$JOB_COMPLETION_INDEX.csv
  GNU parallel:     parallel 'simrun sweep ... --shard {}/8 > shard-{}.csv' ::: $(seq 0 7)
  then:             simrun merge shard-*.csv > sweep.csv
--plot FILE.png|.svg also draws the points: a line of µs per chip and variant over the swept axis (n
or the routing), or a heatmap of µs over n and the routing when both are swept.
A point that fails (e.g. a variant invalid on a chip's path) is a row with the error column set, and
the exit status is 1. A progress bar is drawn on stderr only when stderr is a terminal.
(docs/sweep.md has the details.)

usage: simrun sweep [flags]`

func runSweep(c *call) func() int {
	nFlag := c.fs.String("n", "32,64,128,256,512", "tokens: comma-separated list")
	variantFlag := c.fs.String("variant", "upstream,halftile", "kernel variants: comma-separated built-in names or .toml spec files")
	chipFlag := c.fs.String("chip", "M1 Pro 16-core GPU", "chips: comma-separated names or aliases (simrun chips), or chip .json files")
	pathFlag := c.fs.String("path", "", "kernel path for every point: simdgroup or tensor (default: a spec file's path, else each chip's)")
	routingFlag := c.fs.String("routing", "uniform", "routings: comma-separated uniform, zipf:S, hot:H:F, file:PATH; zipf and hot:H take --skew")
	skewFlag := c.fs.String("skew", "", "values completing the routings given without their last parameter (zipf: S; hot:H: F)")
	format := c.fs.String("format", "csv", "output: csv or json")
	shard := c.fs.String("shard", "0/1", "run shard i of N (0-based): points i, i+N, i+2N, ...")
	workers := c.fs.Int("workers", 0, "parallel workers (0: GOMAXPROCS); the output is the same for any value")
	plotFile := c.fs.String("plot", "", "also draw the points to this .png or .svg file: lines over the swept axis, or a heatmap over n and the routing")
	c.fs.Lookup("seed").Usage = "base seed: each point's routing seed derives from it, the point's routing and n (the seed column)"
	return func() int {
		sh, forced, err := c.shape.kernelShape()
		if err != nil {
			return c.fail(err)
		}
		opt, err := c.sim.options()
		if err != nil {
			return c.fail(err)
		}
		ax := study.SweepAxes{Ns: *nFlag, Variants: *variantFlag, Chips: *chipFlag, Path: *pathFlag, Routings: *routingFlag, Skews: *skewFlag}
		sw, err := study.ParseSweep(ax, sh, forced, opt, flagLabels)
		if err != nil {
			return c.fail(err)
		}
		if err := checkChoice("--format", *format, "csv", "json"); err != nil {
			return c.fail(err)
		}
		si, sn, err := study.ParseShard("--shard", *shard)
		if err != nil {
			return c.fail(err)
		}
		if err := checkPlotFile(*plotFile); err != nil {
			return c.fail(err)
		}
		if *plotFile != "" && sn > 1 {
			return c.fail(fmt.Errorf("--plot with --shard %s: a shard holds part of the sweep; plot the unsharded sweep", *shard))
		}
		if *workers < 0 {
			return c.fail(fmt.Errorf("--workers = %d: must be >= 0", *workers))
		}
		if err := sw.CheckWork(); err != nil {
			return c.fail(err)
		}
		idx := study.ShardPoints(sw.Points(), si, sn)
		id, err := sw.ID()
		if err != nil {
			return c.fail(err)
		}
		out, err := study.NewWriter(c.stdout, *format == "json", sw.Points(), id, sn > 1) // a shard's rows carry their digests for merge
		if err != nil {
			return c.fail(err)
		}
		failed, firstErr := 0, ""
		var drawn []*study.Row
		pb := trace.NewSweepProgress(c.stderr, "sweep", len(idx))
		err = sw.Run(idx, *workers, func(r *study.Row) error {
			if *plotFile != "" {
				drawn = append(drawn, r)
			}
			if r.Error != "" {
				if failed == 0 {
					firstErr = fmt.Sprintf("point %d (%s, %s, %s, n = %d): %s", r.Index, r.Chip, r.Variant, r.Routing, r.N, r.Error)
				}
				failed++
			}
			return out.Write(r)
		}, pb.Update)
		if err == nil {
			err = out.Close()
		}
		if err == nil && *plotFile != "" {
			err = writePlot(*plotFile, func(w io.Writer, format string) error { return plots.WriteSweep(w, format, drawn) })
		}
		if err != nil {
			return c.fail(err)
		}
		if failed > 0 {
			fmt.Fprintf(c.stderr, "simrun sweep: %d of %d points failed (error column); first: %s\n", failed, len(idx), firstErr)
			return exitFailed
		}
		c.sim.writeRates(c.stderr)
		return exitOK
	}
}

const mergeUsage = `Join the outputs of a sharded sweep (simrun sweep --shard i/N, CSV or JSON) into exactly the bytes
a single unsharded run writes, on stdout. Every shard must come from the same sweep: the same
sweep_id (a hash of every flag but --shard, --workers and --format, and of the chips and variants they load)
and the same points count in every row, and the rows of one shard i/N (i, i+N, i+2N, ...) in each
file. The merge fails, naming the file (and the line, or the JSON row, and the column or field),
on a foreign file, a row not as simrun sweep writes it (an unknown, missing or re-encoded field;
text after the JSON document), a row edited since (every shard row carries a digest of its values),
a duplicated point, a truncated shard, a format mix or a missing point. Shards may be given in any order, and a shard that holds no point may be left out.

usage: simrun merge SHARD...`

func runMerge(c *call) func() int {
	return func() int {
		if len(c.args) == 0 {
			return c.fail(errors.New("no shard files (usage: simrun merge SHARD...)"))
		}
		rows, err := study.Merge(c.args, c.stdout)
		if err != nil {
			return c.fail(err)
		}
		// as the unsharded sweep does: points that could not run fail the merge
		if n, first := study.Failures(rows); n > 0 {
			fmt.Fprintf(c.stderr, "simrun merge: %d of %d points failed (error column); first: %s\n", n, len(rows), first)
			return exitFailed
		}
		return exitOK
	}
}
