//! `sim explore FILE`: swarm testing on top of a scenario. Each seed draws an extra random fault
//! schedule within the file's `[explore]` bounds and runs it on every selected row; every
//! violation is written to DIR as a scenario file, each shrunk beside it, and a summary table is printed. The machinery is `locksim_campaign::explore`; this file
//! reads the arguments, checks DIR, reports progress and prints.

use std::path::{Path, PathBuf};

use clap::Args;
use locksim_campaign::explore::output::{summary_table, write_found, WriteOptions};
use locksim_campaign::explore::{explore as explore_scenario, Explored, Scheduler};
use locksim_campaign::shrink::SEEDS_PER_CANDIDATE;

use crate::commands::shrink::narrative;
use crate::exit::{CliError, EXPECTATION_FAILED, OK};
use crate::interrupt::{self, INTERRUPTED};
use crate::runner::{print_out, progress_bar, thread_pool};

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

fn default_out(file: &Path) -> PathBuf {
    let stem = file.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.explore"))
}

pub fn explore(args: ExploreArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let file = args.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&args.file)?;
    if args.budget == 0 {
        return Err(CliError::bad_input("--budget 0: expected at least 1 schedule"));
    }
    if !args.no_shrink && args.shrink_budget < SEEDS_PER_CANDIDATE as u64 {
        return Err(CliError::bad_input(format!(
            "--shrink-budget {}: expected at least {SEEDS_PER_CANDIDATE} seed-runs (or --no-shrink)",
            args.shrink_budget
        )));
    }
    let scheduler = match (args.scheduler.as_str(), args.depth) {
        ("random", None) => Scheduler::Random,
        ("random", Some(_)) => {
            return Err(CliError::bad_input("--depth is PCT's bug depth: give it with --scheduler pct"))
        }
        ("pct", Some(0)) => return Err(CliError::bad_input("--depth 0: expected a bug depth of at least 1")),
        ("pct", depth) => Scheduler::Pct { depth: depth.unwrap_or(3) },
        (other, _) => return Err(CliError::bad_input(format!("--scheduler {other}: expected one of random, pct"))),
    };
    // The scenario first (a bad file is reported as such), then the directory, then the work.
    locksim_simulator::scenario::parse_str(&file, &text, &models)?;
    let dir = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    let _out_lock = crate::out_dir::prepare_locked(&dir, "--out").map_err(CliError::bad_input)?;
    let pool = thread_pool(args.threads)?;
    let stop = interrupt::stop_flag();
    let progress = progress_bar(args.budget);
    let mut failures = 0u64;
    let explored: Explored = explore_scenario(
        &file,
        &text,
        &models,
        &args.algorithms,
        args.budget,
        scheduler,
        &pool,
        stop,
        &mut |_, failed| {
            failures += failed as u64;
            progress.set_message(format!("row-seeds with violations so far: {failures}"));
            progress.inc(1);
        },
    )
    .map_err(CliError::bad_input)?;
    progress.finish_and_clear();
    let opts = WriteOptions {
        file: &file,
        dir: &dir,
        shrink_budget: (!args.no_shrink && scheduler == Scheduler::Random).then_some(args.shrink_budget),
        models: &models,
    };
    let tallies = write_found(&explored, &opts, &pool, stop, &narrative, &mut |line| eprintln!("explore: {line}"))
        .map_err(CliError::bad_input)?;
    let interrupted = interrupt::interrupted();
    let mut out = String::new();
    if interrupted {
        out.push_str(&format!(
            "# interrupted: {} of {} schedules ran; the table covers those\n",
            explored.seeds, args.budget
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
        INTERRUPTED
    } else if explored.found.is_empty() {
        OK
    } else {
        EXPECTATION_FAILED
    })
}
