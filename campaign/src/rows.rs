//! A campaign's run: every row over the seed range on a worker pool, each seed folded into its
//! row's totals as soon as it is handed over, strictly in seed order, so the totals do not depend
//! on the thread count. With `verify`, every seed runs twice with its trace and the differences
//! are kept. A raised stop flag cuts the seeds in progress (the engine polls it): they are
//! discarded, and the seeds folded are a prefix of each row's range.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_reports::shard::empty_row;
use locksim_reports::AlgorithmTotals;
use locksim_simulator::batch::run_ordered_until;
use locksim_simulator::outcome::SeedOutcome;
use locksim_simulator::scenario::{RunSpec, Scenario};

use crate::seed::{replay, run_seed_stoppable, verify_seed_stoppable, RunMode, SeedResult, TraceDifference};

/// What to run: a scenario's rows over a seed range.
#[derive(Clone)]
pub struct Campaign<'a> {
    /// The scenario (setup, rows, expectations).
    pub scenario: &'a Scenario,
    /// The rows to run, in the order their totals come back.
    pub rows: Vec<&'a RunSpec>,
    /// The seeds every row runs.
    pub seeds: Range<u64>,
    /// `--verify`: run every seed twice with its trace and compare.
    pub verify: bool,
    /// How the seeds are recorded (folding the events only counted: on unless switched off).
    pub mode: RunMode,
}

/// Told after every seed folded (on the caller's thread): for a progress bar.
pub struct Progress<'a> {
    /// The row the seed belongs to.
    pub label: &'a str,
    /// Seed-runs with a violation so far, over every row.
    pub violating_runs: u64,
}

/// What a campaign's run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The seeds asked for (of every row).
    pub seeds: Range<u64>,
    /// One per row, in the order asked for.
    pub totals: Vec<AlgorithmTotals>,
    /// `--verify` ran (the differences below were looked for).
    pub verified: bool,
    /// `--verify`: every seed whose second run differed, with its row's label.
    pub differences: Vec<(String, TraceDifference)>,
    /// Seed-runs asked for (rows × seeds, saturating).
    pub total: u64,
    /// Seed-runs finished (all of them unless interrupted).
    pub finished: u64,
    /// The stop flag was raised: the totals hold the finished seeds only.
    pub interrupted: bool,
}

impl<'a> Campaign<'a> {
    /// `rows` of `scenario` over `seeds`, without `--verify`.
    pub fn new(scenario: &'a Scenario, rows: Vec<&'a RunSpec>, seeds: Range<u64>) -> Self {
        Campaign { scenario, rows, seeds, verify: false, mode: RunMode::default() }
    }

    /// Every row of `scenario` over its own `seeds` count.
    pub fn whole(scenario: &'a Scenario) -> Self {
        Campaign::new(scenario, scenario.runs.iter().collect(), 0..scenario.seeds)
    }

    /// With `--verify` on or off.
    pub fn verified(mut self, verify: bool) -> Self {
        self.verify = verify;
        self
    }

    /// Recording in `mode` instead of the default.
    pub fn recorded_as(mut self, mode: RunMode) -> Self {
        self.mode = mode;
        self
    }

    /// The same rows over `seeds` instead (a shard's block).
    pub fn over(&self, seeds: Range<u64>) -> Self {
        Campaign { seeds, ..self.clone() }
    }

    /// Seed-runs this campaign asks for; `None` when the count does not fit in 64 bits.
    pub fn seed_runs(&self) -> Option<u64> {
        (self.seeds.end - self.seeds.start).checked_mul(self.rows.len() as u64)
    }

    /// One seed of every row, recorded with its trace (`sim run --trace`): each row with its
    /// outcome, or the message of its panic (or of a stuck seed).
    pub fn traced(&self, seed: u64) -> Vec<(&'a RunSpec, Result<SeedOutcome, String>)> {
        let traced = |run: &RunSpec| replay(self.scenario, run, seed, true, None, self.mode).map_err(|e| e.to_string());
        self.rows.iter().map(|run| (*run, traced(run))).collect()
    }

    /// Runs every row over the seeds on `pool`, each seed folded into its row as soon as it is
    /// handed over; `progress` is told after each. A raised `stop` ends the run early (the
    /// outcome says so and holds the seeds finished).
    pub fn run(&self, pool: &rayon::ThreadPool, stop: &AtomicBool, mut progress: impl FnMut(Progress)) -> Outcome {
        let mut outcome = Outcome {
            seeds: self.seeds.clone(),
            totals: Vec::new(),
            verified: self.verify,
            differences: Vec::new(),
            total: self.seed_runs().unwrap_or(u64::MAX),
            finished: 0,
            interrupted: false,
        };
        let mut violating_runs = 0u64;
        for run in &self.rows {
            let mut totals = empty_row(self.scenario, run);
            let mut fold = |result: SeedResult| {
                let before = totals.failing_runs;
                match result {
                    SeedResult::Done { metrics } => totals.add(&metrics),
                    SeedResult::Panicked { seed, message } => totals.add_panic(seed, message),
                }
                violating_runs += totals.failing_runs - before;
                progress(Progress { label: &run.label, violating_runs });
            };
            let (scenario, seeds, mode) = (self.scenario, self.seeds.clone(), self.mode);
            // A stop cuts the seeds in progress (the engine polls the flag), so a Ctrl-C or
            // SIGTERM takes effect within about a millisecond of each thread's work, not a whole
            // seed's.
            outcome.finished += if self.verify {
                run_ordered_until(
                    pool,
                    seeds,
                    stop,
                    |s| verify_seed_stoppable(scenario, run, s, stop, mode),
                    |v| {
                        if let Some(d) = v.difference {
                            outcome.differences.push((run.label.clone(), d));
                        }
                        fold(v.result);
                    },
                )
            } else {
                run_ordered_until(pool, seeds, stop, |s| run_seed_stoppable(scenario, run, s, stop, mode), &mut fold)
            };
            outcome.totals.push(totals);
        }
        outcome.interrupted = stop.load(Ordering::SeqCst);
        outcome
    }
}

impl Outcome {
    /// Whether any seed of any row panicked or was stopped in a zero-time loop.
    pub fn panicked(&self) -> bool {
        self.totals.iter().any(|t| t.panicked_runs > 0)
    }
}
