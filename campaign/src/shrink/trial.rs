//! Running one candidate scenario: parse it with the real parser (a candidate it refuses, or one
//! whose row no longer runs the original's library preset, is skipped), run the one row over a
//! few seeds, and say on which seed, if any, it still shows the failure kept (a violation kind,
//! or a failing `[expect]` line: [`Target`]). The seeds are tried in a fixed order and the first
//! failing one in that order wins, so the answer does not depend on the thread count.

use std::sync::atomic::{AtomicBool, Ordering};

use locksim_reports::expect::{evaluate_one, Actual};
use locksim_reports::shard::empty_row;
use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::metric::{Metric, MetricKind};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::expect::parse_expected;
use locksim_simulator::scenario::{parse_str, ExpectOp, Expectation, RunSpec, Scenario};
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
        let hint = if Metric::parse(text).is_some() {
            format!("; `{text}` is an [expect] metric: keep a failing line of it with --expect '{text} EXPECTED'")
        } else {
            String::new()
        };
        format!("--kind {text}: {why}; valid kinds: {}{hint}", VIOLATION_KINDS.join(", "))
    })
}

/// What a shrink keeps: a checker violation, or an `[expect]` line of the row failing. The
/// second reaches what no violation shows: an outage, a lock never granted again, a starved
/// waiter (`outage_ms`, `acquisitions`, `wait_ms_max`, …).
#[derive(Clone, Debug)]
pub enum Target {
    /// A violation kind ([`VIOLATION_KINDS`]).
    Violation(&'static str),
    /// An expectation, judged on each seed alone (as `sim run FILE --seed S` would judge it):
    /// a seed shows the failure when the expectation fails on it with a measured value (never
    /// for want of data: a run with no waiter has no outage to judge, and that is no failure).
    Expect(Expectation),
}

/// The prefix of [`Request::kind`](crate::shrink::Request::kind) that names an `[expect]` line
/// instead of a violation kind (`expect:outage_ms` or `expect:outage_ms < 1_000`).
pub const EXPECT_PREFIX: &str = "expect:";

impl Target {
    /// The failure in a few words: `overlap`, `outage_ms "< 1_000" failing`.
    pub fn name(&self) -> String {
        match self {
            Target::Violation(k) => k.to_string(),
            Target::Expect(e) => format!("{} \"{}\" failing", e.metric.name(), e.expected),
        }
    }

    /// The sentence of the comment block: `overlap still shows`, `[expect] outage_ms "< 1_000"
    /// still fails`.
    pub fn still(&self) -> String {
        match self {
            Target::Violation(k) => format!("{k} still shows"),
            Target::Expect(e) => format!("[expect] {} \"{}\" still fails", e.metric.name(), e.expected),
        }
    }

    /// Whether one seed's metrics show the failure; its time (ms, if known) and its words.
    pub fn judge(&self, scenario: &Scenario, run: &RunSpec, m: &SeedMetrics) -> Option<(Option<f64>, String)> {
        match self {
            Target::Violation(kind) => shows(m, kind).then(|| {
                let first = m.violations.iter().find(|v| v.kind == *kind);
                (first.map(|v| v.at_ns as f64 / 1e6), first.map(|v| v.detail.clone()).unwrap_or_default())
            }),
            Target::Expect(e) => {
                let mut totals = empty_row(scenario, run);
                totals.add(m);
                let mut e = e.clone();
                e.label = run.label.clone();
                let r = evaluate_one(&e, Some(&totals));
                let measured = matches!(r.actual, Actual::Count(_) | Actual::Number(_));
                (!r.ok && measured).then_some((None, r.message))
            }
        }
    }
}

/// The expectation named by `spec` for row `label` of `scenario`: `METRIC` (the row's own
/// `[expect.LABEL]` line) or `METRIC EXPECTED` written out as `[expect]` writes it
/// (`outage_ms < 1_000`, `acquisitions > 0`, `overlap none`). The error says what is wrong and
/// the valid forms.
pub fn parse_expect(spec: &str, scenario: &Scenario, label: &str) -> Result<Expectation, String> {
    let spec = spec.trim();
    let (name, written) = match spec.split_once(char::is_whitespace) {
        Some((n, rest)) => (n, Some(rest.trim())),
        None => (spec, None),
    };
    let metric = Metric::parse(name).ok_or_else(|| {
        format!("--expect {spec}: unknown metric `{name}`; valid metrics: {}", Metric::NAMES.join(", "))
    })?;
    let Some(written) = written else {
        return scenario.expect.iter().find(|e| e.label == label && e.metric == metric).cloned().ok_or_else(|| {
            format!(
                "--expect {spec}: row {label} has no `{name}` line in [expect.{label}]; write the line out: \
                 --expect '{name} EXPECTED' (EXPECTED as in [expect]: none, some, all, < 0.05, > 50_000)"
            )
        });
    };
    let written = written.trim_matches('"');
    let op = parse_expected(written).ok_or_else(|| {
        format!(
            "--expect {spec}: `{written}` is no expectation; expected none, some, all, a comparison such as \
             < 0.05 or >= 100 (operators <, <=, >, >=, ==), or two joined by `and`"
        )
    })?;
    if matches!(op, ExpectOp::All) && metric.kind() != MetricKind::Runs {
        return Err(format!("--expect {spec}: \"all\" applies only to run-counting metrics, and {name} is a value"));
    }
    Ok(Expectation { label: label.to_string(), metric, expected: written.to_string(), op })
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

/// Runs one seed of `label` in `scenario`; the witness if it shows `target`. A panic is no
/// witness, and neither is a seed cut by `stop` (the engine polls it, so a Ctrl-C ends the seed
/// within its bound instead of after the whole seed): an unfinished run proves nothing.
pub fn run_one(scenario: &Scenario, label: &str, seed: u64, target: &Target, stop: &AtomicBool) -> Option<Witness> {
    let run = scenario.runs.iter().find(|r| r.label == label)?;
    let Some(SeedResult::Done { metrics: m }) = run_seed_stoppable(scenario, run, seed, stop, RunMode::default())
    else {
        return None;
    };
    target.judge(scenario, run, &m).map(|(at_ms, detail)| Witness { seed, at_ms, detail })
}

/// The library preset `label`'s row runs (`sim run`'s library column; `None` for a model
/// without presets). A shrink keeps it: resetting `client` to the model's default swaps the
/// library, and a failure the other library shows is another incident.
pub fn library(scenario: &Scenario, label: &str) -> Option<String> {
    scenario.runs.iter().find(|r| r.label == label).and_then(|r| r.model.library(&r.params))
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

/// What every candidate must keep besides showing the failure.
pub struct Bounds<'a> {
    /// The row's node count may not grow past this.
    pub max_nodes: usize,
    /// The row's library preset ([`library`]) must stay this.
    pub library: &'a Option<String>,
}

/// Parses `text` and runs `label` on `seeds` (in this order of preference) in `pool`. A text
/// the parser refuses, or whose row breaks `bounds` (more nodes, another library preset), is
/// refused without a run. A raised `stop` cuts the seeds in progress, and the candidate is
/// [`Trial::Stopped`].
#[allow(clippy::too_many_arguments)]
pub fn try_text(
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    file: &str,
    text: &str,
    models: &[&'static dyn DynModel],
    label: &str,
    target: &Target,
    seeds: &[u64],
    bounds: &Bounds,
) -> Trial {
    let Ok(scenario) = parse_str(file, text, models) else {
        return Trial::Refused;
    };
    if !scenario.runs.iter().any(|r| r.label == label)
        || nodes(&scenario, label) > bounds.max_nodes
        || library(&scenario, label) != *bounds.library
    {
        return Trial::Refused;
    }
    let found = pool.install(|| {
        seeds
            .par_iter()
            .enumerate()
            .find_map_first(|(i, s)| run_one(&scenario, label, *s, target, stop).map(|w| (i, w)))
    });
    if stop.load(Ordering::SeqCst) {
        return Trial::Stopped;
    }
    match found {
        Some((i, w)) => Trial::Ran { runs: i as u64 + 1, witness: Some(w) },
        None => Trial::Ran { runs: seeds.len() as u64, witness: None },
    }
}
