//! The seeds the reports draw or tell, recorded and checked for them: the reports run no seed
//! and call no checker, so they say which seeds they need (`locksim_reports::report::wanted`,
//! [`Wanted`]) and the campaign records exactly those through [`crate::seed`] and hands each over
//! finished ([`Recording`]): a report's explanations and timelines, `sim explain`, the narrative
//! under `sim shrink` and beside each `sim explore` failure. A replay is exact: the same
//! scenario, row and seed give the very run the results counted.

use std::path::Path;

use locksim_reports::explain::{ExplainError, Explanation};
use locksim_reports::recording::{Recording, Wanted, VIOLATIONS_KEPT};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{RunSpec, Scenario};

use crate::seed::{replay, replay_untraced, RunMode};

/// `wanted` of `run` recorded in `mode` and checked: with its trace and every violation when
/// it asks for the trace, else the first [`VIOLATIONS_KEPT`] violations with their text; or the
/// message of its panic.
pub fn record(scenario: &Scenario, run: &RunSpec, wanted: &Wanted, mode: RunMode) -> Recording {
    let outcome = if wanted.trace {
        replay(scenario, run, wanted.seed, true, None, mode)
    } else {
        replay_untraced(scenario, run, wanted.seed, VIOLATIONS_KEPT, mode)
    };
    Recording { label: wanted.label.clone(), seed: wanted.seed, outcome: outcome.map_err(|e| e.to_string()) }
}

/// Every seed `wanted` names, recorded in that order as the report reads them (one at a time,
/// so one trace at a time is held); a row the scenario does not have is not recorded (the
/// report says so).
pub fn recordings(scenario: &Scenario, wanted: Vec<Wanted>, mode: RunMode) -> Box<dyn Iterator<Item = Recording> + '_> {
    Box::new(wanted.into_iter().filter_map(move |w| {
        let run = scenario.runs.iter().find(|r| r.label == w.label)?;
        Some(record(scenario, run, &w, mode))
    }))
}

/// Violation `index` (0: the first) of `seed` of row `label`, recorded with its trace and
/// explained.
pub fn explain(scenario: &Scenario, label: &str, seed: u64, index: usize) -> Result<Explanation, ExplainError> {
    let run = scenario.row_labelled(label)?;
    let wanted = Wanted { label: label.to_string(), seed, trace: true };
    locksim_reports::explain::explain(scenario, &record(scenario, run, &wanted, RunMode::default()), index)
}

/// The story of `label`'s `seed` in the scenario `file`: what `sim explain` prints for its first
/// violation, shown under a shrink's summary and written beside each scenario `sim explore`
/// finds. `None` when the file does not load or the seed cannot be explained (the shrink's own
/// output says what it found either way).
pub fn narrative(file: &Path, models: &[&'static dyn DynModel], label: &str, seed: u64) -> Option<String> {
    let scenario = locksim_simulator::scenario::load_file(file, models).ok()?;
    let explained = explain(&scenario, label, seed, 0).ok()?;
    Some(explained.narrative.join("\n"))
}
