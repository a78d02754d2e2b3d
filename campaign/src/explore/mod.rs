//! `sim explore`'s machinery: swarm testing on top of a scenario. For each seed, an extra random
//! fault schedule is drawn within the scenario's `[explore]` bounds and appended to the file; the
//! result goes through the real parser and every selected row runs that seed. Every violation
//! found is kept with the exact scenario text that showed it.
//!
//! - [`draw`]: one seed's extra schedule (the swarm: a random subset of kinds per seed)
//! - [`output`]: the files a run of `sim explore` writes (each failure's scenario, its shrunk
//!   form, its narrative) and the summary table
//!
//! Seeds run in parallel and are handed over in seed order, so what is found, and in which
//! order, does not depend on the thread count.

pub mod draw;
pub mod output;

use std::sync::atomic::AtomicBool;

use locksim_simulator::batch::run_ordered_until;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, ExploreSpec, Scenario};
use toml_edit::DocumentMut;

use crate::seed::{run_seed_stoppable, RunMode, SeedResult};
use crate::shrink::trial::VIOLATION_KINDS;

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
    let mut rows: Vec<RowTally> = selected.iter().map(|l| RowTally { label: l.clone(), ran: 0, failed: 0 }).collect();
    let mut found = Vec::new();
    let mut error = None;
    type SeedRun = (u64, String, usize, Vec<Option<(&'static str, String)>>);
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
        let results = selected.iter().map(|l| first_violation(&scenario, l, seed, stop)).collect::<Option<_>>()?;
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
                if let Some((kind, detail)) = result {
                    row.failed += 1;
                    failures += 1;
                    found.push(Found {
                        label: row.label.clone(),
                        seed,
                        kind,
                        detail,
                        text: seed_text.clone(),
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
        SeedResult::Done { metrics } => metrics
            .violations
            .iter()
            .find_map(|v| VIOLATION_KINDS.iter().find(|k| **k == v.kind).map(|k| (*k, v.detail.clone()))),
    })
}
