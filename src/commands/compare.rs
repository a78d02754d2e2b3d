//! `sim compare FILE`: each row simulated over many seeds and run live a few times, side by side.
//! It first measures this machine (the loopback round trip, a real server's service time) and
//! simulates with those figures, so that what differs is the mechanism, not the network.
//! With `--reference` a third column runs the real library (a reference client) live, and the
//! simulation runs with that library's `client` preset. The work is [`locksim_live::compare`]'s.

use std::path::PathBuf;

use clap::Args;
use locksim_live::compare::CompareOptions;

use crate::exit::{code, CliError};
use crate::interrupt;

#[derive(Args, Debug)]
#[command(
    after_help = "Agreement, per metric: a rate (overlap, stale_unfenced, token_regressions, and double_executions for a scheduled \
workload: the verdicts) agrees when \
the live share's Wilson 95% interval meets the simulated one; a value (throughput, outage, waits, latencies, messages) \
agrees when every live run falls in the middle 95% of the simulated runs.\n\n\
Exit codes: 0 every verdict agrees (values outside the simulated range are printed as NO but do not fail: a live run's \
timings are this machine's); 1 a verdict differs in some live column; 2 bad input, a missing toolchain for \
--reference, or no row of the file has a reference client; 3 a server, client or the simulation failed; \
130 interrupted (no agreement claimed)."
)]
pub struct CompareArgs {
    /// The scenario file (TOML); it must be one `sim live` can run.
    pub file: PathBuf,
    /// Live runs per row: N (seeds 0..N) or A..B. Each lasts the scenario's duration in real time.
    #[arg(long, value_name = "N|A..B", default_value = "2")]
    pub seeds: String,
    /// Simulated seeds per row: N or A..B (default: the file's `seeds`).
    #[arg(long, value_name = "N|A..B")]
    pub sim_seeds: Option<String>,
    /// Compare only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Also write DIR/index.html: each row's table and a chart of the live runs against the
    /// simulated range (compare-LABEL.svg and .png).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Worker threads for the simulated seeds (default: all cores; at most 1024).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Add a third column: the real lock library live (a reference client, as `sim live
    /// --reference`), and simulate each row with that library's `client` preset (unless the
    /// scenario sets `client` itself): redis-py 5.2.1 -> "redis-py-5", node-redlock ->
    /// "node-redlock", Curator 5.4.0 -> "curator-5.4", kazoo 2.10.0 -> "kazoo-2.10", clientv3
    /// 3.4.23 -> "clientv3-3.4". The recipe live column runs the row as written. LIBS: `default`
    /// or a comma-separated list of library names (`--reference kazoo`). Rows with no reference
    /// client are named and not compared.
    #[arg(long, value_name = "LIBS", num_args = 0..=1, default_missing_value = "default")]
    pub reference: Option<String>,
}

pub fn compare_cmd(args: CompareArgs) -> Result<i32, CliError> {
    let CompareArgs { file, seeds, sim_seeds, algorithms, report, threads, reference } = args;
    let opts = CompareOptions { file, seeds, sim_seeds, algorithms, report, threads, reference };
    Ok(code(locksim_live::compare::compare(&opts, &locksim_algorithms::registry(), interrupt::stop_flag)?))
}
