//! One seed of one row, as a campaign runs it: recorded by the engine inside the panic boundary
//! (`batch::record_seed`), then checked here, where the campaign calls the checkers: a plain
//! seed keeps its metrics, a `--verify` seed runs twice with its trace and the traces are
//! compared, a replay keeps the whole checked recording (history and trace) for the reports.
//! Every seed is recorded with the campaign's folding choice ([`RunMode::fold_counted`]).

use std::sync::atomic::AtomicBool;

use locksim_simulator::batch::{record_seed, SeedError};
use locksim_simulator::checker::{self, SeedMetrics};
use locksim_simulator::history::folding_counted;
use locksim_simulator::outcome::{Halt, Recorded, RunOptions, SeedOutcome};
use locksim_simulator::run::recycle;
use locksim_simulator::scenario::{RunSpec, Scenario};

/// How a campaign records its seeds, beyond the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMode {
    /// Count the events the checkers only count (notifications, refused attempts) instead of
    /// keeping each in the history: the same results in a third of the memory for a polling or
    /// herd row (`history::Folded`). On by default; off keeps every event for a caller that
    /// reads them one by one.
    pub fold_counted: bool,
}

impl Default for RunMode {
    fn default() -> Self {
        RunMode { fold_counted: true }
    }
}

/// One seed's result: its metrics, or why it failed.
pub enum SeedResult {
    /// The seed ran to its end.
    Done {
        /// Everything the checkers measured.
        metrics: Box<SeedMetrics>,
    },
    /// The seed failed: the model panicked, or the engine stopped it in a zero-time loop
    /// ([`Halt::Stuck`]). Reported as a panicked seed is (exit 3, `panicked_seeds`).
    Panicked {
        /// The seed that failed.
        seed: u64,
        /// The panic's message, or the stuck seed's.
        message: String,
    },
}

/// Records one seed in `mode` and hands the recording to `then`, inside the panic boundary.
fn record<T>(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    opts: &RunOptions,
    stop: Option<&AtomicBool>,
    mode: RunMode,
    then: impl FnOnce(Recorded) -> T,
) -> Result<T, SeedError> {
    folding_counted(mode.fold_counted, || record_seed(scenario, run, seed, opts, stop, then))
}

/// Runs one seed without a trace and checks it, keeping only its metrics (and the first few
/// violations with their text); `None` when `stop` became true before the seed ended: an
/// unfinished seed has no result (its partial counts would read as a whole run's).
pub fn run_seed_stoppable(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    stop: &AtomicBool,
    mode: RunMode,
) -> Option<SeedResult> {
    let checked = |r: Recorded| {
        let metrics = checker::check_keeping(r.seed, &r.history, checker::MAX_STORED_VIOLATIONS);
        recycle(r.history);
        metrics
    };
    match record(scenario, run, seed, &RunOptions::default(), Some(stop), mode, checked) {
        Ok(metrics) => Some(SeedResult::Done { metrics: Box::new(metrics) }),
        Err(SeedError::Halted(Halt::Stopped)) => None,
        Err(e) => Some(SeedResult::Panicked { seed, message: e.to_string() }),
    }
}

/// One seed recorded and checked whole: its metrics (every violation kept when traced), its
/// history and, with `trace`, its trace with the violations merged in. What the reports are
/// given to draw or tell (`sim run --trace`, `sim explain`, a report's timeline). `stop` cuts
/// it short ([`SeedError::Halted`]).
pub fn replay(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    trace: bool,
    stop: Option<&AtomicBool>,
    mode: RunMode,
) -> Result<SeedOutcome, SeedError> {
    record(scenario, run, seed, &RunOptions { trace }, stop, mode, SeedOutcome::checked)
}

/// One seed recorded without its trace and checked, keeping the first `kept` violations with
/// their text (the counts stay exact): a history the reports draw, with the violations they mark.
pub fn replay_untraced(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    kept: usize,
    mode: RunMode,
) -> Result<SeedOutcome, SeedError> {
    let checked = |r: Recorded| SeedOutcome {
        metrics: checker::check_keeping(r.seed, &r.history, kept),
        history: r.history,
        trace: None,
        trace_hash: 0,
        events: r.events,
    };
    record(scenario, run, seed, &RunOptions::default(), None, mode, checked)
}

/// What `--verify` found for one seed: its result from the first run, and where a second run of
/// the same seed differed (if it did).
pub struct VerifiedSeed {
    /// The first run's metrics, or the panic if either run panicked.
    pub result: SeedResult,
    /// Where the two traces first differ; `None`: their hashes matched (or a run panicked).
    pub difference: Option<TraceDifference>,
}

/// The first trace entry at which two runs of one seed disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceDifference {
    /// The seed run twice.
    pub seed: u64,
    /// Index of the first differing entry (0-based).
    pub index: usize,
    /// That entry in each run, as a trace line; `None` where that run's trace had already ended.
    pub first: Option<String>,
    /// As `first`, for the second run.
    pub second: Option<String>,
    /// The first run's trace hash.
    pub first_hash: u64,
    /// The second run's trace hash.
    pub second_hash: u64,
}

/// Runs one seed twice with its trace and compares the trace hashes; on a mismatch, finds the
/// first differing entry. A panic in either run is the seed's result.
pub fn verify_seed(scenario: &Scenario, run: &RunSpec, seed: u64) -> VerifiedSeed {
    let never = AtomicBool::new(false);
    verify_seed_stoppable(scenario, run, seed, &never, RunMode::default()).expect("a stop flag never raised")
}

/// As [`verify_seed`], but `None` when `stop` became true before both runs ended.
pub fn verify_seed_stoppable(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    stop: &AtomicBool,
    mode: RunMode,
) -> Option<VerifiedSeed> {
    let once = || replay(scenario, run, seed, true, Some(stop), mode);
    let (a, b) = match once().and_then(|a| Ok((a, once()?))) {
        Ok(pair) => pair,
        Err(SeedError::Halted(Halt::Stopped)) => return None,
        Err(e) => {
            let result = SeedResult::Panicked { seed, message: e.to_string() };
            return Some(VerifiedSeed { result, difference: None });
        }
    };
    let difference = (a.trace_hash != b.trace_hash).then(|| {
        let ta = &a.trace.as_ref().expect("traced").entries;
        let tb = &b.trace.as_ref().expect("traced").entries;
        let index = ta.iter().zip(tb).position(|(x, y)| x.line() != y.line()).unwrap_or(ta.len().min(tb.len()));
        TraceDifference {
            seed,
            index,
            first: ta.get(index).map(|e| e.line()),
            second: tb.get(index).map(|e| e.line()),
            first_hash: a.trace_hash,
            second_hash: b.trace_hash,
        }
    });
    Some(VerifiedSeed { result: SeedResult::Done { metrics: Box::new(a.metrics) }, difference })
}
