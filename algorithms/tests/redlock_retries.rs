//! The retry loop of one Redlock acquire call with the default client, redlock-rb: `retries` = 3
//! (its `retry_count`, `tries = retry_count + 1`) means four attempts, each a SET round and an
//! unlock round on all five masters, with one random value for the whole call, separated by
//! random waits of `retry_delay + rand(retry_jitter)` (uniform 200–250 ms), then the call fails
//! as refused. redsync counts attempts (`tries`): `retries` = 4 makes four; node-redlock counts
//! retries like redlock-rb: five.

use crate::redlock_common;
use locksim_simulator::history::{FailReason, HistoryEvent};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::time::Nanos;
use redlock_common::*;

const MS: Nanos = 1_000_000;

/// client-0 reaches only server-0 and server-1: every attempt wins 2 of 5.
const MINORITY: &str = r#"
name = "minority"
duration_ms = 5000
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 1
think_ms = 0
[[faults]]
kind = "partition"
groups = [["client-0"], ["server-2", "server-3", "server-4"]]
at_ms = 0
"#;

#[test]
fn three_retries_are_four_attempts_with_random_waits_then_a_refusal() {
    let mut waits_ms = Vec::new();
    for seed in 0..5 {
        let out = run_config(MINORITY, &RedlockConfig { service_ms: Dist::Const(0.0), ..redlock_rb() }, seed);
        // The first acquire call, up to its failure (the workload then starts another).
        let entries: Vec<_> = out.trace.as_ref().unwrap().entries.iter().filter(|e| e.node == "client-0").collect();
        let end = entries.iter().position(|e| e.detail.starts_with("AcquireFailed")).expect("the call fails");
        let entries = &entries[..=end];
        let notes: Vec<&str> = entries.iter().filter(|e| e.kind == "note").map(|e| e.detail.as_str()).collect();
        assert_eq!(notes.len(), 5, "seed {seed}: {notes:?}");
        for (i, n) in notes[..4].iter().enumerate() {
            assert!(n.starts_with(&format!("redlock attempt {} on lock0 failed: 2/5", i + 1)), "{n}");
        }
        assert_eq!(notes[4], "redlock gives up lock0 after 4 attempts");

        // Requests to the cut-off masters are sent and dropped by the network ("drop" entries).
        let sent = |e: &&&locksim_simulator::trace::TraceEntry| matches!(e.kind, "send" | "drop");
        let sets: Vec<_> = entries.iter().filter(sent).filter(|e| e.detail.contains(" SET ")).collect();
        let unlocks: Vec<_> = entries.iter().filter(sent).filter(|e| e.detail.contains(" UNLOCK ")).collect();
        assert_eq!((sets.len(), unlocks.len()), (20, 20), "seed {seed}: every round visits all 5");
        let value = |d: &str| d.split_whitespace().nth(4).unwrap().to_string();
        assert!(sets.iter().chain(&unlocks).all(|e| value(&e.detail) == value(&sets[0].detail)), "one value per call");

        // Sequential: 2 answers of 1 ms and 3 timeouts of 100 ms per round, 302 ms; the wait
        // between an attempt's last unlock timeout and the next attempt is the retry delay.
        for k in 1..4 {
            let last_unlock_sent = unlocks[5 * k - 1].at_ns;
            let next_attempt = sets[5 * k].at_ns;
            let wait = next_attempt - (last_unlock_sent + 100 * MS);
            assert!((200 * MS..=250 * MS).contains(&wait), "seed {seed}: wait {wait}");
            waits_ms.push(wait / MS);
        }
        let failed = out.history.events.iter().find_map(|e| match e.event {
            HistoryEvent::AcquireFailed { reason, .. } => Some(reason),
            _ => None,
        });
        assert_eq!(failed, Some(FailReason::Refused), "seed {seed}");
        assert_eq!(out.metrics.acquisitions, 0);
    }
    waits_ms.sort();
    waits_ms.dedup();
    assert!(waits_ms.len() > 5, "the waits are drawn, not fixed: {waits_ms:?}");
}

#[test]
fn redsync_counts_attempts_and_node_redlock_counts_retries() {
    let models = locksim_algorithms::registry();
    // retries = 4, set in the file, overrides the library's own default (redsync 32,
    // node-redlock 10); redlock_library.rs checks the same for a value equal to redlock-rb's.
    // (Parsed: what `retries` means depends on the `client` preset read with it.)
    for (client, attempts) in [("redsync", 4), ("node-redlock", 5)] {
        let text = format!(
            "{MINORITY}[models.redlock]\nservice_ms = 0\nclient = \"{client}\"\nretries = 4\nnode_timeout_ms = 50\n"
        );
        let sc = parse_str("minority.toml", &text, &models).unwrap_or_else(|e| panic!("{e}"));
        let out = locksim_algorithms::find("redlock").unwrap().run_seed(
            &sc.setup,
            &sc.runs[0].params,
            1,
            &RunOptions { trace: true },
        );
        let notes: Vec<String> = out
            .trace
            .as_ref()
            .unwrap()
            .entries
            .iter()
            .filter(|e| e.node == "client-0" && e.kind == "note")
            .map(|e| e.detail.clone())
            .collect();
        let all = notes.clone();
        let notes: Vec<String> = notes.into_iter().filter(|d| d.starts_with("redlock gives up")).collect();
        assert!(!notes.is_empty(), "{client}: {all:?}");
        assert_eq!(notes[0], format!("redlock gives up lock0 after {attempts} attempts"), "{client}");
    }
}
