//! What a Redlock holder's validity means, checked on the engine: the library reports the lock
//! lost exactly when the validity it computed runs out; with `respect_validity` the application
//! stops there and nobody overlaps it (the keys outlive the validity by the drift allowance);
//! without it, a holder that outlives its TTL overlaps the next holder. A wall-clock jump on the
//! masters expires the keys early and breaks even a holder that respects its validity (the
//! Kleppmann 2016 argument): the violation comes from the masters' clocks, not from the client.

use crate::redlock_common;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::time::Nanos;
use redlock_common::*;

const MS: Nanos = 1_000_000;

/// Two clients race for the lock from t = 0 for critical sections of 3 s.
const LONG_HOLD: &str = r#"
name = "long-hold"
duration_ms = 6000
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 2
hold_ms = 3000
think_ms = 0
acquisitions_per_client = 1
"#;

/// TTL 1 s, masters that take no time per command; the application respects its validity or not.
fn one_second_ttl(respect_validity: bool) -> RedlockConfig {
    RedlockConfig { ttl_ms: 1000, respect_validity, service_ms: Dist::Const(0.0), ..redlock_rb() }
}

fn first_grant(out: &SeedOutcome) -> (usize, Nanos) {
    let e = out.history.events.iter().find(|e| matches!(e.event, HistoryEvent::Granted { .. })).unwrap();
    (e.node, e.at_ns)
}

fn validity_note_ns(out: &SeedOutcome) -> Nanos {
    let note = out.trace.as_ref().unwrap().entries.iter().find(|e| e.detail.starts_with("redlock granted")).unwrap();
    let ms: f64 = note.detail.split("validity_ms=").nth(1).unwrap().parse().unwrap();
    (ms * 1e6).round() as Nanos
}

#[test]
fn the_lost_notice_comes_exactly_when_the_validity_runs_out() {
    for (label, respect) in [("ignore", false), ("respect", true)] {
        for seed in 0..3 {
            let out = run_config(LONG_HOLD, &one_second_ttl(respect), seed);
            let (holder, granted_at) = first_grant(&out);
            let validity = validity_note_ns(&out);
            // 1000 − 5 − (0.01 × 1000 + 2) = 983 ms.
            assert_eq!(validity, 983 * MS, "{label} seed {seed}");
            let lost_at = out
                .history
                .events
                .iter()
                .find(|e| e.node == holder && matches!(e.event, HistoryEvent::LostNotice { .. }))
                .expect("a lost notice")
                .at_ns;
            assert_eq!(lost_at - granted_at, validity, "{label} seed {seed}");
            let abandoned =
                out.history.events.iter().any(|e| {
                    e.node == holder && e.at_ns == lost_at && matches!(e.event, HistoryEvent::Abandoned { .. })
                });
            assert_eq!(abandoned, respect, "{label} seed {seed}");
        }
    }
}

#[test]
fn a_holder_that_outlives_its_ttl_overlaps_unless_it_respects_its_validity() {
    for seed in 0..5 {
        let ignore = run_config(LONG_HOLD, &one_second_ttl(false), seed);
        let (first, granted_at) = first_grant(&ignore);
        // The second grant needs the keys to have expired on a majority: one TTL after the SETs.
        let second = ignore
            .history
            .events
            .iter()
            .find(|e| e.node != first && matches!(e.event, HistoryEvent::Granted { .. }))
            .expect("the other client gets in");
        assert!(second.at_ns >= 1000 * MS, "seed {seed}: granted at {} before the keys expired", second.at_ns);
        assert!(second.at_ns < granted_at + 3000 * MS, "seed {seed}: while the first still holds");
        assert_eq!(ignore.metrics.overlap_events, 1, "seed {seed}");

        let respect = run_config(LONG_HOLD, &one_second_ttl(true), seed);
        assert_eq!(respect.metrics.overlap_events, 0, "seed {seed}");
        assert_eq!(respect.metrics.stale_unfenced_events, 0, "seed {seed}: the abandoned section does not write");
    }
}

/// TTL 10 s, holds of 5 s with respect_validity; at 1 s every master's wall clock jumps 6 s ahead.
const JUMP: &str = r#"
name = "jump"
duration_ms = 8000
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 2
hold_ms = 5000
think_ms = 0
acquisitions_per_client = 1
[[faults]]
kind = "clock_jump"
target = "server-*"
by_ms = 6000
at_ms = 1000
"#;

#[test]
fn a_wall_clock_jump_on_the_masters_expires_the_keys_under_a_valid_holder() {
    for seed in 0..5 {
        let cfg = RedlockConfig { respect_validity: true, service_ms: Dist::Const(0.0), ..redlock_rb() };
        let out = run_config(JUMP, &cfg, seed);
        let (first, granted_at) = first_grant(&out);
        let second = out
            .history
            .events
            .iter()
            .find(|e| e.node != first && matches!(e.event, HistoryEvent::Granted { .. }))
            .expect("the other client gets in");
        // The keys set near t = 0 with PX 10000 expire at wall 10 s = true 4 s after the jump.
        assert!(second.at_ns >= 4000 * MS, "seed {seed}: granted at {}", second.at_ns);
        assert!(second.at_ns < granted_at + validity_note_ns(&out), "seed {seed}: inside the holder's validity");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
        assert!(!out
            .history
            .events
            .iter()
            .any(|e| e.node == first && e.at_ns < second.at_ns && matches!(e.event, HistoryEvent::LostNotice { .. })));
    }
}
