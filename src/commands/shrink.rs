//! `sim shrink FILE --algorithm LABEL --seed S`: the smallest scenario found that still shows
//! the seed's violation (of its first violation's kind, or `--kind`) or still fails an `[expect]`
//! line (`--expect`: outages, a lock never granted again) on some seed, on the row's library
//! preset, written with a comment block saying what went. The work is
//! `locksim_campaign::command::shrink`; this file is its arguments and their help.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::shrink::{shrink as campaign_shrink, ShrinkOptions};
use locksim_campaign::shrink::DEFAULT_BUDGET;

use crate::exit::{code, CliError};

const AFTER_HELP: &str = "\
What it tries, greedily and repeatedly until nothing more can go: fewer faults, fewer clients, a
shorter duration_ms, faults moved earlier or made shorter (no recurrence, no probability, fewer
targets), distributions replaced by constants, fewer servers (servers, masters, replicas,
sentinels), the row's parameters back to their defaults (never `client`: the row keeps its library
preset, and a candidate that would run another preset is skipped), workload keys back to theirs,
[network] and [clocks] entries removed, then rounder constants. The other rows, [expect] and
[explore] go first. A key whose line has a comment containing `shrink: keep` is never removed or
changed (nor the link, table or fault holding it): mark the setting the failure is about. Every candidate goes through the scenario parser (one it refuses is skipped) and runs on
the current witness seed, then seeds 0, 1, ... (8 seeds in all); the first that still shows the
violation becomes the witness. The result is the same whatever --threads is.

A failure that is no violation (an outage, a lock never granted again, a starved waiter) is kept
with --expect: an [expect] line that fails on the seed, judged on each seed alone as `sim run
FILE --seed S` judges it. `--expect METRIC` takes the row's own [expect.LABEL] line;
`--expect 'METRIC EXPECTED'` writes one out ('outage_ms < 1_000', 'acquisitions > 0',
'wait_ms_max < 5_000'). A seed fails it only with a measured value, never for want of data. Write
the promise the failure breaks, with a bound the run must exceed: 'acquisitions > 0' would also
be failed by a run cut too short to grant anything, 'outage_ms < 31_000' only by a lock that
stays away longer than its TTL.

The output file starts with a comment block: where it came from, the reduction (clients 10 → 2,
faults 3 → 1, duration 60 s → 6 s), the replay command and every edit kept. `sim check` accepts
it. Ctrl-C or SIGTERM stops the search within a second (the seed-runs in progress are cut, and a
candidate cut so counts as showing nothing) and writes the smallest scenario found so far; before
the seed's own run has shown the violation there is none, and nothing is written.

Exit codes: 0 written; 2 bad command line or scenario, an unknown label or kind, or a seed that
shows no such violation (nothing written); 130 interrupted (the smallest so far is written, if
the search had started).

Examples:
  sim shrink scenarios/known/02-redis-paused-holder.toml --algorithm redis --seed 0 --out small.toml
  sim shrink scenarios/incidents/openshift-leader-election-apiserver-downtime.toml --algorithm broken \
    --seed 0 --expect 'outage_ms < 1_000'";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ShrinkArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The row to shrink (an algorithm or variant label).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithm: String,
    /// A seed on which that row shows a violation.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// The violation kind to keep: overlap, stale_unfenced, stale_fenced, lost_update,
    /// token_regression (default: the kind of the seed's first violation).
    #[arg(long, value_name = "KIND", conflicts_with = "expect")]
    pub kind: Option<String>,
    /// Keep a failing [expect] line instead of a violation: METRIC (the row's own line) or
    /// 'METRIC EXPECTED' ('outage_ms < 1_000'); any [expect] metric.
    #[arg(long, value_name = "LINE")]
    pub expect: Option<String>,
    /// Where to write the smallest scenario (default: FILE's name with `.shrunk.toml`, in the
    /// current directory).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seed-runs the whole search may spend.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUDGET)]
    pub budget: u64,
    /// Worker threads (default: all cores; at most 1024). The result does not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

pub fn shrink(args: ShrinkArgs) -> Result<i32, CliError> {
    let opts = ShrinkOptions {
        file: args.file,
        algorithm: args.algorithm,
        seed: args.seed,
        kind: args.kind,
        expect: args.expect,
        out: args.out,
        budget: args.budget,
        threads: args.threads,
    };
    Ok(code(campaign_shrink(&opts, &locksim_algorithms::registry(), crate::interrupt::stop_flag())?))
}
