//! Running a scenario's rows over a seed range, shared by `sim run` and `sim sweep`: the thread
//! pool, the progress bar, folding each seed into its row's totals in seed order, and (with
//! `--verify`) running every seed twice and collecting trace differences.

use std::io::IsTerminal;
use std::ops::Range;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use locksim_reports::{params_json, AlgorithmTotals};
use locksim_simulator::batch::{
    run_ordered_until, run_seed_stoppable, verify_seed_stoppable, SeedResult, TraceDifference,
};
use locksim_simulator::scenario::{RunSpec, Scenario};

use crate::exit::CliError;
use crate::interrupt;

/// The most worker threads `--threads` accepts. Each thread holds a seed's world and history at
/// once, and starting a hundred thousand threads aborted the process (one stack each); 1024 is
/// far beyond the cores of any machine this runs on, where more threads than cores only add
/// memory.
pub const MAX_THREADS: usize = 1024;

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`MAX_THREADS`] are refused.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    match threads {
        Some(0) => {
            return Err(CliError::bad_input("--threads 0: expected at least 1 thread (default: all cores)"));
        }
        Some(n) if n > MAX_THREADS => {
            return Err(CliError::bad_input(format!(
                "--threads {n}: expected at most {MAX_THREADS} threads (default: all cores)"
            )));
        }
        _ => {}
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::bad_input(format!("cannot start {threads} threads: {e}")))
}

/// A progress bar on stderr when it is a terminal; hidden (and silent) when piped.
pub fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} seed-runs  {rate}  eta {eta}  {msg}")
            .expect("valid template")
            // indicatif's own {per_sec} prints four decimals; a whole number reads better.
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            })
            .progress_chars("=> "),
    );
    bar
}

/// What running the rows produced.
pub struct RowsOutcome {
    /// One per row, in the order asked for.
    pub totals: Vec<AlgorithmTotals>,
    /// `--verify`: every seed whose second run differed, with its row's label.
    pub differences: Vec<(String, TraceDifference)>,
    /// Seed-runs finished (all of them unless interrupted).
    pub finished: u64,
    /// Ctrl-C stopped the run early; the totals hold the finished seeds.
    pub interrupted: bool,
}

/// Runs every row over `seeds`, each seed folded into its row as soon as it finishes.
pub fn run_rows(
    scenario: &Scenario,
    runs: &[&RunSpec],
    seeds: Range<u64>,
    pool: &rayon::ThreadPool,
    progress: &ProgressBar,
    verify: bool,
) -> RowsOutcome {
    let stop = interrupt::stop_flag();
    let mut outcome = RowsOutcome { totals: Vec::new(), differences: Vec::new(), finished: 0, interrupted: false };
    let mut violating_runs = 0u64;
    for run in runs {
        let model = run.model;
        let mut totals =
            AlgorithmTotals::new(&run.label, model.name(), params_json(&run.params.values), model.fenced(&run.params))
                .with_limitations(model.limitations(&run.params, &scenario.setup.workload));
        let mut fold = |result: SeedResult| {
            let before = totals.failing_runs;
            match result {
                SeedResult::Done { metrics } => totals.add(&metrics),
                SeedResult::Panicked { seed, message } => totals.add_panic(seed, message),
            }
            violating_runs += totals.failing_runs - before;
            progress.set_message(format!("running {}; seed-runs with violations so far: {violating_runs}", run.label));
            progress.inc(1);
        };
        // A stop cuts the seeds in progress (the engine polls the flag), so a Ctrl-C or SIGTERM
        // takes effect within about a millisecond of each thread's work, not a whole seed's.
        outcome.finished += if verify {
            run_ordered_until(
                pool,
                seeds.clone(),
                stop,
                |s| verify_seed_stoppable(scenario, run, s, stop),
                |v| {
                    if let Some(d) = v.difference {
                        outcome.differences.push((run.label.clone(), d));
                    }
                    fold(v.result);
                },
            )
        } else {
            run_ordered_until(pool, seeds.clone(), stop, |s| run_seed_stoppable(scenario, run, s, stop), &mut fold)
        };
        outcome.totals.push(totals);
    }
    outcome.interrupted = interrupt::interrupted();
    outcome
}

/// Writes to stdout (the one path there; see [`crate::print`]).
pub use crate::print::print_out;
