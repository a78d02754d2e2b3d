//! Running one candidate scenario: parse it with the real parser (a candidate it refuses is
//! skipped), run the one row over a few seeds, and say on which seed, if any, it still shows the
//! violation. The seeds are tried in a fixed order and the first failing one in that order wins,
//! so the answer does not depend on the thread count.

use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, Scenario};
use rayon::prelude::*;

use crate::seed::{run_seed_stoppable, RunMode, SeedResult};

/// The checker's violation kinds (`leaked_regrant` is not a violation).
pub const VIOLATION_KINDS: &[&str] = &["overlap", "stale_unfenced", "stale_fenced", "lost_update", "token_regression"];

/// The kind named by `text`: a checker kind, or the `[expect]` metric of the same class
/// (`lost_updates`, `token_regressions`). The error lists the valid kinds.
pub fn parse_kind(text: &str) -> Result<&'static str, String> {
    let t = match text {
        "lost_updates" => "lost_update",
        "token_regressions" => "token_regression",
        other => other,
    };
    VIOLATION_KINDS.iter().copied().find(|k| *k == t).ok_or_else(|| {
        let why = if text == "leaked_regrant" || text == "leaked_regrants" {
            "a leaked re-grant is not a violation (the lock never left its holder)".to_string()
        } else {
            format!("unknown violation kind `{text}`")
        };
        format!("--kind {text}: {why}; valid kinds: {}", VIOLATION_KINDS.join(", "))
    })
}

/// Whether a seed's metrics show a violation of `kind` (from the exact counts, not the few
/// violations kept with their text).
pub fn shows(m: &SeedMetrics, kind: &str) -> bool {
    match kind {
        "overlap" => m.overlap_events > 0,
        "stale_unfenced" => m.stale_unfenced_events > 0,
        "stale_fenced" => m.stale_fenced_events.is_some_and(|n| n > 0),
        "lost_update" => m.lost_updates > 0,
        "token_regression" => m.token_regressions > 0,
        _ => false,
    }
}

/// A seed on which a scenario shows the violation.
#[derive(Clone, Debug, PartialEq)]
pub struct Witness {
    /// The seed.
    pub seed: u64,
    /// When its first violation of the kind happened (true time, ms), if its text was kept.
    pub at_ms: Option<f64>,
    /// That violation, in words.
    pub detail: String,
}

/// Runs one seed of `label` in `scenario`; the witness if it shows `kind`. A panic is no
/// witness, and neither is a seed cut by `stop` (the engine polls it, so a Ctrl-C ends the seed
/// within its bound instead of after the whole seed): an unfinished run proves nothing.
pub fn run_one(scenario: &Scenario, label: &str, seed: u64, kind: &str, stop: &AtomicBool) -> Option<Witness> {
    let run = scenario.runs.iter().find(|r| r.label == label)?;
    let Some(SeedResult::Done { metrics: m }) = run_seed_stoppable(scenario, run, seed, stop, RunMode::default())
    else {
        return None;
    };
    shows(&m, kind).then(|| {
        let first = m.violations.iter().find(|v| v.kind == kind);
        Witness {
            seed,
            at_ms: first.map(|v| v.at_ns as f64 / 1e6),
            detail: first.map(|v| v.detail.clone()).unwrap_or_default(),
        }
    })
}

/// The outcome of trying one candidate text.
pub enum Trial {
    /// The parser refused it: nothing ran.
    Refused,
    /// The stop flag was raised while it ran: no witness, whatever the seeds that finished
    /// showed (so an interrupted shrink keeps exactly the edits an uninterrupted one kept first).
    Stopped,
    /// It ran on `runs` seeds; the first witness in seed-list order, if any.
    Ran {
        /// Seed-runs charged (up to and including the witness, so the count does not depend on
        /// how many threads ran ahead).
        runs: u64,
        /// The witness.
        witness: Option<Witness>,
    },
}

/// The nodes `label`'s row runs: its model's services and the clients.
pub fn nodes(scenario: &Scenario, label: &str) -> usize {
    scenario
        .runs
        .iter()
        .find(|r| r.label == label)
        .map_or(0, |r| r.model.services(&r.params).len() + scenario.setup.workload.clients)
}

/// Parses `text` and runs `label` on `seeds` (in this order of preference) in `pool`. A text
/// the parser refuses, or whose row has more than `max_nodes` nodes, is refused without a run.
/// A raised `stop` cuts the seeds in progress, and the candidate is [`Trial::Stopped`].
#[allow(clippy::too_many_arguments)]
pub fn try_text(
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    file: &str,
    text: &str,
    models: &[&'static dyn DynModel],
    label: &str,
    kind: &str,
    seeds: &[u64],
    max_nodes: usize,
) -> Trial {
    let Ok(scenario) = parse_str(file, text, models) else {
        return Trial::Refused;
    };
    if !scenario.runs.iter().any(|r| r.label == label) || nodes(&scenario, label) > max_nodes {
        return Trial::Refused;
    }
    let found = pool.install(|| {
        seeds.par_iter().enumerate().find_map_first(|(i, s)| run_one(&scenario, label, *s, kind, stop).map(|w| (i, w)))
    });
    if stop.load(Ordering::SeqCst) {
        return Trial::Stopped;
    }
    match found {
        Some((i, w)) => Trial::Ran { runs: i as u64 + 1, witness: Some(w) },
        None => Trial::Ran { runs: seeds.len() as u64, witness: None },
    }
}
