//! `sim merge PARTS…`: the partial results of `sim run --shard K/N` (into `--json`/`--report`) or
//! `sim sweep --shard K/N` (into `--out DIR`) folded into the results one machine would have
//! written, byte for byte. The work is `locksim_campaign::command::merge`; this file is its
//! arguments and their help.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::merge::{merge as campaign_merge, MergeOptions};

use crate::exit::{code, CliError};

const AFTER_HELP: &str = "\
Each part is the file one `--shard K/N` wrote: `sim run FILE --shard K/N --json PART` or
`sim sweep FILE … --shard K/N --out DIR` (DIR/shard-K-of-N.json). Shard K runs the K-th of N
contiguous blocks of the seeds (of every point, for a sweep). The parts must come from the same
scenario text, sim version, seeds, --algorithm and --param, and hold every shard 0..N-1 exactly
once; otherwise nothing is written and the exit code is 2, naming the file (a duplicate names
both, a missing shard its K and seeds). Any shard can be re-run alone to replace a lost part.

The outputs are byte-identical to the single-machine run's: `sim run --json/--report` for run
parts, `sim sweep --out DIR` for sweep parts.

A run part cut by Ctrl-C or SIGTERM (`interrupted: true` in the file) holds the first seeds of
its block that each row finished; merged, the results are marked interrupted as a stopped
`sim run`'s are (each row's seeds_finished), the output names the cut shard, the seeds missing
and the command that runs that shard again, and the exit code is 130. Sweep parts are never
cut: a stopped sweep shard writes no part; its finished points stay recorded in DIR and
`--resume` runs the rest.

Exit codes: as `sim run` for run parts (0, 1 an [expect] failed, 3 a seed panicked, 130 a part
was interrupted), as `sim sweep` for sweep parts (0, 3); 2 for parts that do not belong together
or cannot be read.

Examples:
  sim run scenarios/failover.toml --shard 0/2 --json part-0.json      # on machine A
  sim run scenarios/failover.toml --shard 1/2 --json part-1.json      # on machine B
  sim merge part-0.json part-1.json --json results.json --report out/failover";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct MergeArgs {
    /// The partial results files, one per shard, in any order.
    #[arg(required = true, value_name = "PARTS")]
    pub parts: Vec<PathBuf>,
    /// Run parts: write the results JSON here (as `sim run --json`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run parts: also write a report directory (as `sim run --report`).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Run parts: the seed the report's timeline shows (default: the first failing seed).
    #[arg(long, value_name = "S", requires = "report")]
    pub timeline_seed: Option<u64>,
    /// Sweep parts: the directory for sweep.csv, sweep.json and the charts (as `sim sweep --out`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sweep parts: keep every point's whole results rows in sweep.json (as `sim sweep --full`).
    #[arg(long, requires = "out")]
    pub full: bool,
}

pub fn merge(args: MergeArgs) -> Result<i32, CliError> {
    let opts = MergeOptions {
        parts: args.parts,
        json: args.json,
        report: args.report,
        timeline_seed: args.timeline_seed,
        out: args.out,
        full: args.full,
    };
    Ok(code(campaign_merge(&opts, &locksim_algorithms::registry())?))
}
