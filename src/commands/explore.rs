//! `sim explore FILE`: swarm testing on top of a scenario. Each seed draws an extra random fault
//! schedule within the file's `[explore]` bounds and runs it on every selected row; every
//! violation is written to DIR as a scenario file, each shrunk beside it, and a summary table is
//! printed. The work is `locksim_campaign::command::explore`; this file is its arguments.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::explore::{explore as run, ExploreOptions};

use crate::exit::{code, CliError};

const AFTER_HELP: &str = "\
For each seed 0..N, a schedule of extra faults is drawn from the seed (never from the run's own
streams) within the [explore] table's bounds: the seed enables a random non-empty subset of the
allowed kinds, then draws 1 to max_faults faults, each with a kind among those enabled, a target
among the selectors, a start within the run, a length up to max_duration_ms and the kind's own
value. The faults are appended to the file's own, as constants, and every selected row runs that
seed. Without an [explore] table every kind but partition may be drawn, at most 3 faults, each
up to a quarter of the run (docs/scenario-format.md lists the keys and defaults).

Files in DIR (created if absent; another sim writing DIR meanwhile is refused with exit 2):
LABEL-KIND-seedN.toml for every (row, seed) that showed a
violation (KIND is its first violation's kind, or `panic`), which `sim run FILE --algorithm LABEL
--seed N` replays; each shrunk as LABEL-KIND-seedN.shrunk.toml within --shrink-budget seed-runs
(unless --no-shrink). The summary table gives, per row, the schedules run, how many failed, and each
failure kind with its count and smallest example (fewest faults, then clients, then duration).

--scheduler pct --depth D runs each seed under PCT (probabilistic concurrency testing,
Burckhardt et al., ASPLOS 2010) instead of the queue's order: every node gets a random priority,
D-1 change points are drawn uniformly over the row's step count (seed 0's run of the file as
written), the highest-priority node's event due at the earliest instant runs first, a node that
runs a change point's step drops below every other, and a node's priority sets its messages'
latency (highest: the network's smallest, lowest: its largest). Priorities come from the seed, so
a seed gives one schedule; a failure's file keeps only its row and adds the path as [replay],
which `sim run FILE --seed N` follows exactly. PCT failures are not shrunk (a shrink would change
the path the [replay] names). The line after the table gives each row's first failing schedule
(docs/exhaustive.md compares the schedulers).

Exit codes: 0 no violation found; 1 violations found; 2 bad command line, scenario or [explore]
table, or DIR cannot be written; 130 interrupted (what ran is written and summarised).

Example:
  sim explore scenarios/clock-drift.toml --algorithm redlock --budget 300 --out out/explore";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ExploreArgs {
    /// The scenario file (TOML); its [explore] table bounds the drawn faults.
    pub file: PathBuf,
    /// Explore only this algorithm or variant label (repeatable; default: every row).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Schedules to draw and run (seeds 0..N), each on every selected row.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub budget: u64,
    /// Where the failing scenarios go (default: FILE's name with `.explore`, in the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Keep the failing scenarios as found: do not shrink them.
    #[arg(long)]
    pub no_shrink: bool,
    /// Seed-runs each shrink may spend.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub shrink_budget: u64,
    /// How each seed's run is scheduled: `random` (the queue's order, latencies drawn, as `sim
    /// run`) or `pct` (random node priorities with --depth - 1 change points; see below).
    #[arg(long, value_name = "S", default_value = "random")]
    pub scheduler: String,
    /// PCT's bug depth d (d - 1 priority change points per run); only with --scheduler pct.
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// Worker threads (default: all cores; at most 1024). The results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

pub fn explore(args: ExploreArgs) -> Result<i32, CliError> {
    let opts = ExploreOptions {
        file: args.file,
        algorithms: args.algorithms,
        budget: args.budget,
        out: args.out,
        no_shrink: args.no_shrink,
        shrink_budget: args.shrink_budget,
        scheduler: args.scheduler,
        depth: args.depth,
        threads: args.threads,
    };
    Ok(code(run(&opts, &locksim_algorithms::registry(), crate::interrupt::stop_flag())?))
}
