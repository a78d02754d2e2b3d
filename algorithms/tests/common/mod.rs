//! Helpers every model's engine-driven tests share: run one labelled configuration of a scenario
//! text for one seed, and read the history (its grants) and the trace. The consul, hazelcast and
//! dynamodb tests use this module directly; the other models' `*_common` modules re-export it
//! next to their own helpers (their own `grants`, where a grant needs more, shadows this one).

#![allow(dead_code)]

use locksim_simulator::history::{HistoryEvent, Stamped};
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;

/// Runs `label` of the scenario `toml` for `seed`, with a trace when `trace`.
pub fn run_with(toml: &str, label: &str, seed: u64, trace: bool) -> SeedOutcome {
    let models = locksim_algorithms::registry();
    let sc = parse_str("test.toml", toml, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = sc.runs.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no run labelled {label}"));
    run.model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace })
}

/// Runs `label` of the scenario `toml` for `seed`, with a trace.
pub fn run(toml: &str, label: &str, seed: u64) -> SeedOutcome {
    run_with(toml, label, seed, true)
}

/// The node id of `client-i`.
pub fn client(out: &SeedOutcome, i: usize) -> usize {
    out.history.clients[i]
}

/// Every grant: (true time ms, client node id, token).
pub fn grants(out: &SeedOutcome) -> Vec<(f64, usize, Option<u64>)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { .. }))
        .into_iter()
        .map(|s| match &s.event {
            HistoryEvent::Granted { token, .. } => (s.at_ns as f64 / 1e6, s.node, *token),
            _ => unreachable!(),
        })
        .collect()
}

/// History events matching a predicate.
pub fn events<'a>(out: &'a SeedOutcome, f: impl Fn(&HistoryEvent) -> bool + 'a) -> Vec<&'a Stamped> {
    out.history.events.iter().filter(|e| f(&e.event)).collect()
}

/// Trace entries (true time in ms, node, detail) of a kind whose detail contains `needle`.
pub fn trace(out: &SeedOutcome, kind: &str, needle: &str) -> Vec<(f64, String, String)> {
    out.trace
        .as_ref()
        .expect("trace")
        .entries
        .iter()
        .filter(|t| t.kind == kind && t.detail.contains(needle))
        .map(|t| (t.at_ns as f64 / 1e6, t.node.clone(), t.detail.clone()))
        .collect()
}

/// Prints the trace between two true times (for debugging a failing test with `--nocapture`).
pub fn dump(out: &SeedOutcome, from_ms: f64, to_ms: f64) {
    for t in &out.trace.as_ref().expect("trace").entries {
        let ms = t.at_ns as f64 / 1e6;
        if ms >= from_ms && ms <= to_ms {
            println!("{ms:>12.3} {:<12} {:<8} {}", t.node, t.kind, t.detail);
        }
    }
}
