//! `sim run FILE`: every algorithm of a scenario over its seeds; the results table, the results
//! JSON, a trace of one seed, and the `[expect]` verdict as the exit code. With `--shard K/N`,
//! one block of the seeds and a partial results file for `sim merge`. The work is
//! `locksim_campaign::command::run`; this file is its arguments.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::run::{run as campaign_run, RunOptions};

use crate::exit::{code, CliError};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Run exactly this seed.
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Seeds to run: N (seeds 0..N) or A..B (A to B-1). Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Judge every expectation on the seeds run, as if they were the file's. Without it, a run of
    /// fewer seeds than the file's judges only what those seeds decide (a "none" broken, a
    /// "some" met, a share settled whatever the other seeds show) and lists the rest as not judged.
    #[arg(long)]
    pub judge_all: bool,
    /// Write the results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Record the event trace of the (single) seed: to stderr, apart from the table on stdout;
    /// with FILE, into FILE (JSON lines when FILE ends in .jsonl; `-`: stdout).
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub trace: Option<Option<PathBuf>>,
    /// Worker threads (default: all cores; at most 1024). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Run every seed twice with its full trace and compare the trace hashes; a difference
    /// (nondeterminism) names the seed and the first differing trace entry, and exits 3. Slow:
    /// every event is rendered as a trace line (about 20 times a plain run on failover.toml).
    #[arg(long)]
    pub verify: bool,
    /// Also write a report into DIR: results.json, charts (SVG and PNG) and index.html.
    /// The directory is created if missing; only the report's own files are replaced; another
    /// sim writing it meanwhile is refused with exit 2.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// The seed the report's timeline shows (default: the first failing seed, else the first).
    #[arg(long, value_name = "S", requires = "report")]
    pub timeline_seed: Option<u64>,
    /// Run only shard K of N (0-based): the K-th of N contiguous blocks of the seeds, and write a
    /// partial results file to --json for `sim merge`, which judges the expectations.
    #[arg(long, value_name = "K/N", requires = "json", conflicts_with_all = ["trace", "verify", "report"])]
    pub shard: Option<String>,
}

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let opts = RunOptions {
        file: args.file,
        seed: args.seed,
        seeds: args.seeds,
        algorithms: args.algorithms,
        judge_all: args.judge_all,
        json: args.json,
        trace: args.trace,
        threads: args.threads,
        verify: args.verify,
        report: args.report,
        timeline_seed: args.timeline_seed,
        shard: args.shard,
    };
    Ok(code(campaign_run(&opts, &locksim_algorithms::registry(), crate::interrupt::stop_flag())?))
}
