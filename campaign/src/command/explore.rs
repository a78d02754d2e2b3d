//! `sim explore`'s work, from its options: the options checked, the scenario parsed, DIR checked
//! and locked, the schedules run ([`crate::explore`]) with a progress bar, every failure written
//! (and shrunk), and the summary printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::model::DynModel;

use crate::error::CommandError;
use crate::explore::output::{summary_table, write_found, WriteOptions};
use crate::explore::{explore as explore_scenario, Explored, Scheduler};
use crate::progress::progress_bar;
use crate::shrink::SEEDS_PER_CANDIDATE;
use crate::stdout::print_out;
use crate::verdict::Class;

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

/// `sim explore`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExploreOptions {
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

fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.explore"))
}

/// Explores, writes the failures and prints the summary; ends [`Class::Interrupted`] when `stop`
/// cut it, [`Class::ExpectationFailed`] when a violation was found, else [`Class::Passed`].
pub fn explore(
    opts: &ExploreOptions,
    models: &[&'static dyn DynModel],
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    let file = opts.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&opts.file)?;
    if opts.budget == 0 {
        return Err(CommandError::bad_input("--budget 0: expected at least 1 schedule"));
    }
    if !opts.no_shrink && opts.shrink_budget < SEEDS_PER_CANDIDATE as u64 {
        return Err(CommandError::bad_input(format!(
            "--shrink-budget {}: expected at least {SEEDS_PER_CANDIDATE} seed-runs (or --no-shrink)",
            opts.shrink_budget
        )));
    }
    let scheduler = scheduler(&opts.scheduler, opts.depth)?;
    // The scenario first (a bad file is reported as such), then the directory, then the work.
    locksim_simulator::scenario::parse_str(&file, &text, models)?;
    let dir = opts.out.clone().unwrap_or_else(|| default_out(&opts.file));
    let _out_lock = crate::out_dir::prepare_locked(&dir, "--out").map_err(CommandError::bad_input)?;
    let pool = crate::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let progress = progress_bar(opts.budget);
    let mut failures = 0u64;
    let explored: Explored = explore_scenario(
        &file,
        &text,
        models,
        &opts.algorithms,
        opts.budget,
        scheduler,
        &pool,
        stop,
        &mut |_, failed| {
            failures += failed as u64;
            progress.set_message(format!("row-seeds with violations so far: {failures}"));
            progress.inc(1);
        },
    )
    .map_err(CommandError::bad_input)?;
    progress.finish_and_clear();
    let write = WriteOptions {
        file: &file,
        dir: &dir,
        shrink_budget: (!opts.no_shrink && scheduler == Scheduler::Random).then_some(opts.shrink_budget),
        models,
    };
    let narrative = |file: &Path, label: &str, seed: u64| crate::replay::narrative(file, models, label, seed);
    let tallies = write_found(&explored, &write, &pool, stop, &narrative, &mut |line| eprintln!("explore: {line}"))
        .map_err(CommandError::bad_input)?;
    let interrupted = stop.load(Ordering::SeqCst);
    let mut out = String::new();
    if interrupted {
        out.push_str(&format!(
            "# interrupted: {} of {} schedules ran; the table covers those\n",
            explored.seeds, opts.budget
        ));
    }
    out.push_str(&summary_table(&explored, &tallies));
    for row in &explored.rows {
        if let Some(seed) = row.first_failure {
            out.push_str(&format!("first failure: {} at schedule {} (seed {seed})\n", row.label, seed + 1));
        }
    }
    if !explored.found.is_empty() {
        out.push_str(&format!("{} failing scenario(s) written to {}\n", explored.found.len(), dir.display()));
    }
    print_out(&out);
    Ok(if interrupted {
        Class::Interrupted
    } else if explored.found.is_empty() {
        Class::Passed
    } else {
        Class::ExpectationFailed
    })
}

/// `--scheduler` and `--depth` as a [`Scheduler`].
fn scheduler(name: &str, depth: Option<u32>) -> Result<Scheduler, CommandError> {
    match (name, depth) {
        ("random", None) => Ok(Scheduler::Random),
        ("random", Some(_)) => Err(CommandError::bad_input("--depth is PCT's bug depth: give it with --scheduler pct")),
        ("pct", Some(0)) => Err(CommandError::bad_input("--depth 0: expected a bug depth of at least 1")),
        ("pct", depth) => Ok(Scheduler::Pct { depth: depth.unwrap_or(3) }),
        (other, _) => Err(CommandError::bad_input(format!("--scheduler {other}: expected one of random, pct"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_options_are_checked_together() {
        assert_eq!(scheduler("random", None), Ok(Scheduler::Random));
        assert_eq!(scheduler("pct", None), Ok(Scheduler::Pct { depth: 3 }));
        assert_eq!(scheduler("pct", Some(5)), Ok(Scheduler::Pct { depth: 5 }));
        assert!(scheduler("random", Some(2)).unwrap_err().message().contains("give it with --scheduler pct"));
        assert!(scheduler("pct", Some(0)).unwrap_err().message().contains("at least 1"));
        assert!(scheduler("dfs", None).unwrap_err().message().contains("expected one of random, pct"));
    }
}
