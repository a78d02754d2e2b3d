//! `sim explore`'s machinery: swarm testing on top of a scenario. For each seed, an extra random
//! fault schedule is drawn within the scenario's `[explore]` bounds and appended to the file; the
//! result goes through the real parser and every selected row runs that seed. Every violation
//! found is kept with the exact scenario text that showed it.
//!
//! - [`draw`]: one seed's extra schedule (the swarm: a random subset of kinds per seed)
//! - [`output`]: the files a run of `sim explore` writes (each failure's scenario, its shrunk
//!   form, its narrative) and the summary table
//! - [`pct`]: the PCT scheduler (`--scheduler pct --depth d`), which orders each run's events by
//!   random node priorities instead of the queue's order and drawn latencies
//!
//! Seeds run in parallel and are handed over in seed order, so what is found, and in which
//! order, does not depend on the thread count.

pub mod draw;
pub mod output;
pub mod pct;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;

use locksim_simulator::batch::run_ordered_until;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, ExploreSpec, RunSpec, Scenario};
use toml_edit::{DocumentMut, Item};

use crate::exhaust::replay_file::{keep_only_row, replay_table};

use crate::seed::{run_seed_stoppable, RunMode, SeedResult};
use crate::shrink::trial::VIOLATION_KINDS;

/// How each seed's run is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// As `sim run` does: the queue's order, every latency drawn from the network (the default).
    Random,
    /// PCT with bug depth `depth` (d ≥ 1): see [`pct`].
    Pct {
        /// d: d − 1 priority change points per run.
        depth: u32,
    },
}

/// The kind recorded for a seed whose model panicked (a bug in the model, worth a file too).
pub const PANIC: &str = "panic";

/// One failing (row, seed): the scenario text that showed it and its first violation.
#[derive(Clone, Debug)]
pub struct Found {
    /// The row's label.
    pub label: String,
    /// The seed.
    pub seed: u64,
    /// The first violation's kind (or [`PANIC`]).
    pub kind: &'static str,
    /// The first violation (or the panic), in words.
    pub detail: String,
    /// The scenario as run: the file with the seed's drawn faults appended.
    pub text: String,
    /// How many faults the seed drew.
    pub drawn_faults: usize,
}

/// One row's tally.
#[derive(Clone, Debug, PartialEq)]
pub struct RowTally {
    /// The row's label.
    pub label: String,
    /// Schedules run.
    pub ran: u64,
    /// Schedules that showed a violation (or panicked).
    pub failed: u64,
    /// The first failing schedule's seed (schedules to the first failure: this + 1).
    pub first_failure: Option<u64>,
}

/// What a run of `sim explore` found.
pub struct Explored {
    /// One tally per selected row, in file order.
    pub rows: Vec<RowTally>,
    /// Every failure, in seed order, rows in file order within a seed.
    pub found: Vec<Found>,
    /// Seeds handed over (all asked for unless stopped).
    pub seeds: u64,
}

/// The bounds in force: the file's `[explore]`, or the defaults.
pub fn bounds(scenario: &Scenario) -> ExploreSpec {
    scenario.explore.clone().unwrap_or_else(|| ExploreSpec::defaults(scenario.setup.duration_ms))
}

/// The scenario text of `seed`: `text` without `[expect]` and `[explore]` (they are about the
/// file, not this schedule), with the seed's drawn faults appended; and how many were drawn.
pub fn seed_text(doc: &DocumentMut, spec: &ExploreSpec, duration_ms: f64, seed: u64) -> (String, usize) {
    let mut d = doc.clone();
    d.remove("expect");
    d.remove("explore");
    let faults = draw::schedule(seed, spec, duration_ms);
    draw::append(&mut d, &faults, seed);
    (d.to_string(), faults.len())
}

/// Runs `seeds` schedules of `labels` (every row when empty). `each_seed` is called after every
/// seed (for progress). Errors: the scenario or a drawn schedule refused by the parser.
#[allow(clippy::too_many_arguments)]
pub fn explore(
    file: &str,
    text: &str,
    models: &[&'static dyn DynModel],
    labels: &[String],
    seeds: u64,
    scheduler: Scheduler,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    each_seed: &mut dyn FnMut(u64, usize),
) -> Result<Explored, String> {
    let base = parse_str(file, text, models).map_err(|e| e.to_string())?;
    let selected: Vec<String> =
        base.rows_labelled(labels).map_err(|e| e.to_string())?.iter().map(|r| r.label.clone()).collect();
    let spec = bounds(&base);
    let doc: DocumentMut = text.parse().map_err(|e| format!("{file}: {e}"))?;
    let duration_ms = base.setup.duration_ms;
    let mut rows: Vec<RowTally> =
        selected.iter().map(|l| RowTally { label: l.clone(), ran: 0, failed: 0, first_failure: None }).collect();
    let mut found = Vec::new();
    let mut error = None;
    type SeedRun = (u64, String, usize, Vec<Option<Failure>>);
    // PCT's change points are drawn over a bound of the run's steps: each row's own count, from
    // one run of the file as written (no drawn fault) on seed 0 without change points.
    let steps_bound: Vec<u64> = match scheduler {
        Scheduler::Random => vec![0; selected.len()],
        Scheduler::Pct { .. } => selected
            .iter()
            .map(|l| base.runs.iter().find(|r| &r.label == l).map_or(1, |row| pct_steps(&base, row, stop)))
            .collect(),
    };
    // `None` when the stop cut one of the seed's rows: the seed counts as not run, so a Ctrl-C
    // ends the exploration within the engine's stop bound, not after the seeds in progress.
    let work = |seed: u64| -> Option<Result<SeedRun, String>> {
        let (seed_text, drawn) = seed_text(&doc, &spec, duration_ms, seed);
        let scenario = match parse_str(file, &seed_text, models) {
            Ok(scenario) => scenario,
            Err(e) => {
                return Some(Err(format!(
                    "the schedule drawn for seed {seed} is refused by the parser ({e}); check [explore]"
                )))
            }
        };
        let results = selected
            .iter()
            .zip(&steps_bound)
            .map(|(l, &k)| match scheduler {
                Scheduler::Random => first_violation(&scenario, l, seed, stop).map(|r| r.map(|(k, d)| (k, d, None))),
                Scheduler::Pct { depth } => pct_violation(&scenario, &seed_text, l, seed, depth, k, stop),
            })
            .collect::<Option<_>>()?;
        Some(Ok((seed, seed_text, drawn, results)))
    };
    let handed = run_ordered_until(pool, 0..seeds, stop, work, |r| match r {
        Err(e) => {
            error.get_or_insert(e);
        }
        Ok((seed, seed_text, drawn, results)) => {
            let mut failures = 0;
            for (row, result) in rows.iter_mut().zip(results) {
                row.ran += 1;
                if let Some((kind, detail, text)) = result {
                    row.failed += 1;
                    row.first_failure.get_or_insert(seed);
                    failures += 1;
                    found.push(Found {
                        label: row.label.clone(),
                        seed,
                        kind,
                        detail,
                        text: text.unwrap_or_else(|| seed_text.clone()),
                        drawn_faults: drawn,
                    });
                }
            }
            each_seed(seed, failures);
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    Ok(Explored { rows, found, seeds: handed })
}

/// A failing row-seed: its kind, in words, and, under PCT, the file that replays it (the seed's
/// text with its path as `[replay]`).
type Failure = (&'static str, String, Option<String>);

/// The step count bound of PCT's change points for `row`: the steps of seed 0 of the file as
/// written, every node at its initial priority.
fn pct_steps(scenario: &Scenario, row: &RunSpec, stop: &AtomicBool) -> u64 {
    let world = row.model.search_world(&scenario.setup, &row.params, 0);
    let priorities = pct::Priorities::draw(0, world.nodes().len(), 1, 1);
    let range = pct::LatencyRange::of(&scenario.setup.network);
    catch_unwind(AssertUnwindSafe(|| pct::run(world, priorities, range, stop, false)))
        .ok()
        .flatten()
        .map_or(1, |r| r.steps.max(1))
}

/// `label` run on `seed` under PCT: its first violation (with the file that replays it: `text`
/// with only this row and the path as `[replay]`), a panic, or nothing; `None`: `stop` cut it.
fn pct_violation(
    scenario: &Scenario,
    text: &str,
    label: &str,
    seed: u64,
    depth: u32,
    steps_bound: u64,
    stop: &AtomicBool,
) -> Option<Option<Failure>> {
    let Some(row) = scenario.runs.iter().find(|r| r.label == label) else {
        return Some(None);
    };
    let range = pct::LatencyRange::of(&scenario.setup.network);
    let once = |record: bool| {
        catch_unwind(AssertUnwindSafe(|| {
            let world = row.model.search_world(&scenario.setup, &row.params, seed);
            let priorities = pct::Priorities::draw(seed, world.nodes().len(), depth, steps_bound);
            pct::run(world, priorities, range, stop, record)
        }))
    };
    let run = match once(false) {
        Err(panic) => return Some(Some((PANIC, panic_words(panic.as_ref()), None))),
        Ok(run) => run?,
    };
    let Some((kind, detail)) = first_listed(&run.metrics) else { return Some(None) };
    // Again, recording the path (the run is deterministic: only failures pay for the keys).
    let path = once(true).ok()??.path?;
    let mut doc: DocumentMut = text.parse().ok()?;
    keep_only_row(&mut doc, label);
    doc.insert("replay", Item::Table(replay_table(&path.events, &path.delays_ns)));
    Some(Some((kind, detail, Some(doc.to_string()))))
}

fn panic_words(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the model panicked".to_string())
}

/// The first violation of a kind `sim explore` reports, in words.
fn first_listed(metrics: &locksim_simulator::checker::SeedMetrics) -> Option<(&'static str, String)> {
    metrics
        .violations
        .iter()
        .find_map(|v| VIOLATION_KINDS.iter().find(|k| **k == v.kind).map(|k| (*k, v.detail.clone())))
}

/// The first violation of `label` on `seed` (kind and words), a panic, or nothing; `None` when
/// `stop` cut the seed (an unfinished seed shows nothing either way).
fn first_violation(
    scenario: &Scenario,
    label: &str,
    seed: u64,
    stop: &AtomicBool,
) -> Option<Option<(&'static str, String)>> {
    let Some(run) = scenario.runs.iter().find(|r| r.label == label) else {
        return Some(None);
    };
    Some(match run_seed_stoppable(scenario, run, seed, stop, RunMode::default())? {
        SeedResult::Panicked { message, .. } => Some((PANIC, message)),
        SeedResult::Done { metrics } => first_listed(&metrics),
    })
}
