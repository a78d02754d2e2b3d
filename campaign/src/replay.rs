//! Replaying one seed for the reports: the reports run no seed, so the campaign records and
//! checks the seeds they tell or draw (`sim explain`, a report's explanations and timeline, the
//! narrative under `sim shrink` and beside each `sim explore` failure) and hands them over as a
//! [`Replay`]. A replay is exact: the same scenario, row and seed give the very run the results
//! counted.

use std::path::Path;

use locksim_reports::explain::{ExplainError, Explanation, Replay};
use locksim_simulator::model::DynModel;
use locksim_simulator::outcome::SeedOutcome;
use locksim_simulator::scenario::{RunSpec, Scenario};

use crate::seed::{replay, RunMode};

/// The replay the reports are given for `scenario`: one seed of a row, recorded (with its
/// trace when asked) and checked in `mode`, or the message of its panic.
pub fn replayer(
    scenario: &Scenario,
    mode: RunMode,
) -> impl Fn(&RunSpec, u64, bool) -> Result<SeedOutcome, String> + '_ {
    move |run, seed, trace| replay(scenario, run, seed, trace, None, mode).map_err(|e| e.to_string())
}

/// Violation `index` (0: the first) of `seed` of row `label`, replayed and explained.
pub fn explain(scenario: &Scenario, label: &str, seed: u64, index: usize) -> Result<Explanation, ExplainError> {
    let replay = replayer(scenario, RunMode::default());
    let replay: Replay = &replay;
    locksim_reports::explain::explain(scenario, label, seed, index, replay)
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
