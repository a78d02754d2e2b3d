//! The application's own check of its lock, made where the application makes it: just before
//! the critical section writes (issue 17). Checked on the engine for the models whose application
//! checks: Redlock with `respect_validity` (is the validity `lock()` returned still running on my
//! monotonic clock?) and ZooKeeper under Curator's connection states (did my listener see a state
//! my policy honours?). A pause during the hold is caught by the check; a pause between the check
//! and the write (Kleppmann's case, `check_to_write_ms`) is not.

use crate::common;
use common::*;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

/// Whether the resource recorded a write by client `node` after `after_ms` (true time).
fn wrote_after(out: &SeedOutcome, node: usize, after_ms: f64) -> bool {
    out.history.events.iter().any(|e| {
        matches!(e.event, HistoryEvent::ResourceWrite { client, .. } if client == node)
            && e.at_ns as f64 / 1e6 > after_ms
    })
}

/// The node of the first client granted the lock.
fn first_holder(out: &SeedOutcome) -> usize {
    out.history.events.iter().find(|e| matches!(e.event, HistoryEvent::Granted { .. })).expect("a grant").node
}

/// Whether `node` abandoned a section (its check failed or an honoured notice stopped it).
fn abandoned(out: &SeedOutcome, node: usize) -> bool {
    out.history.events.iter().any(|e| e.node == node && matches!(e.event, HistoryEvent::Abandoned { .. }))
}

/// Two clients, TTL 1 s (validity 983 ms), holds of 50 ms; whoever holds at 20 ms is paused for
/// 3 s: its keys expire, the other client takes the lock and writes, and the paused holder
/// resumes at 3.02 s with its hold long overdue.
const PAUSE_IN_HOLD: &str = r#"
name = "pause-in-hold"
duration_ms = 5000
[[variants]]
name = "ignore"
model = "redlock"
ttl_ms = 1000
respect_validity = false
service_ms = 0
[[variants]]
name = "respect"
model = "redlock"
ttl_ms = 1000
respect_validity = true
service_ms = 0
[network]
latency_ms = 0.5
[workload]
clients = 2
hold_ms = 50
think_ms = 0
acquisitions_per_client = 1
[[faults]]
kind = "pause"
target = "holder"
at_ms = 20
duration_ms = 3000
"#;

#[test]
fn redlock_respecting_validity_skips_the_write_after_a_pause_in_its_hold() {
    for seed in 0..5 {
        let ignore = run(PAUSE_IN_HOLD, "ignore", seed);
        let paused = first_holder(&ignore);
        assert!(wrote_after(&ignore, paused, 3000.0), "seed {seed}: without the check the paused holder writes");
        assert!(ignore.metrics.stale_unfenced_events >= 1, "seed {seed}: its write is stale");
        assert!(!abandoned(&ignore, paused), "seed {seed}");

        let respect = run(PAUSE_IN_HOLD, "respect", seed);
        let paused = first_holder(&respect);
        assert!(!wrote_after(&respect, paused, 3000.0), "seed {seed}: the check skips the write");
        assert_eq!(respect.metrics.stale_unfenced_events, 0, "seed {seed}: no stale write");
        assert!(abandoned(&respect, paused), "seed {seed}: the section is abandoned");
        // The decision came from the check on resuming, not from the validity timer.
        let checks = notes(&respect, "check of lock0 before the write");
        let failed: Vec<_> = checks.iter().filter(|(_, _, d)| d.contains("ran out")).collect();
        assert_eq!(failed.len(), 1, "seed {seed}: one failed check: {checks:?}");
        assert!(failed[0].0 >= 3020.0, "seed {seed}: made on resuming: {:?}", failed[0]);
        // The other client's section went through its check and wrote.
        let other = respect.history.clients.iter().copied().find(|&c| c != paused).unwrap();
        assert!(wrote_after(&respect, other, 0.0), "seed {seed}: the other client writes");
        assert!(checks.iter().any(|(_, _, d)| d.contains(": write")), "seed {seed}: {checks:?}");
    }
}

/// Kleppmann's case: the same two clients with `respect_validity`, and 100 ms between the check
/// and the write. The first holder's hold ends at ~55 ms, its check passes (~930 ms of validity
/// left), and the pause at 100 ms lands before its write (due at ~155 ms).
const PAUSE_AFTER_CHECK: &str = r#"
name = "pause-after-check"
duration_ms = 5000
algorithms = ["redlock"]
[models.redlock]
ttl_ms = 1000
respect_validity = true
service_ms = 0
[network]
latency_ms = 0.5
[workload]
clients = 2
hold_ms = 50
think_ms = 0
acquisitions_per_client = 1
check_to_write_ms = 100
[[faults]]
kind = "pause"
target = "holder"
at_ms = 100
duration_ms = 3000
"#;

#[test]
fn a_pause_between_the_check_and_the_write_defeats_the_check() {
    for seed in 0..5 {
        let out = run(PAUSE_AFTER_CHECK, "redlock", seed);
        let paused = first_holder(&out);
        let checks = notes(&out, "check of lock0 before the write");
        let first = checks.first().expect("a check");
        assert!(
            first.2.contains(": write") && first.0 < 100.0,
            "seed {seed}: the check passed before the pause: {first:?}"
        );
        assert!(wrote_after(&out, paused, 3000.0), "seed {seed}: the write goes out on resuming");
        assert!(!abandoned(&out, paused), "seed {seed}: nothing stops a checked write");
        assert!(out.metrics.stale_unfenced_events >= 1, "seed {seed}: stale");
        assert!(out.metrics.overlap_events >= 1, "seed {seed}: overlap");
    }
    // Without the window the same pause lands after the write: nothing goes wrong.
    let no_window = PAUSE_AFTER_CHECK.replace("check_to_write_ms = 100", "");
    for seed in 0..3 {
        let out = run(&no_window, "redlock", seed);
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}

/// A long hold with no pause: the validity runs out while the section still works. The
/// deadline stops it (an honoured `Lost`); the check is never reached.
#[test]
fn a_section_still_working_at_the_validity_end_stops_there() {
    let toml = PAUSE_IN_HOLD.replace("hold_ms = 50", "hold_ms = 2000").replace("[[faults]]", "[[unused]]");
    let toml = toml.split("[[unused]]").next().unwrap().to_string();
    for seed in 0..3 {
        let out = run(&toml, "respect", seed);
        let holder = first_holder(&out);
        assert!(abandoned(&out, holder), "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        // Both clients hold 2 s: each section is stopped by its deadline, none reaches a check.
        let grants = events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).len();
        assert_eq!(grants, 2, "seed {seed}");
        assert_eq!(notes(&out, "ran out before release (honour=true)").len(), grants, "seed {seed}");
        assert!(notes(&out, "before the write").is_empty(), "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
    }
}

/// ZooKeeper, session 4 s (tick 1 s): two clients, whoever holds at 20 ms is paused for 10 s.
/// Its session expires, the other client takes the lock, and the paused holder resumes with its
/// 50 ms hold long overdue. Pinned to `client = "locksim-1"`, the model before presets, whose
/// check runs the connection's clock first; under the default `curator-5.4` the resumed thread
/// checks before SUSPENDED reaches its listener and writes (zookeeper_library.rs).
const ZK_PAUSE: &str = r#"
name = "zk-pause"
duration_ms = 20000
[[variants]]
name = "suspended"
model = "zookeeper"
client = "locksim-1"
on_connection_loss = "suspended"
session_timeout_ms = 4000
tick_ms = 1000
[[variants]]
name = "lost"
model = "zookeeper"
client = "locksim-1"
on_connection_loss = "lost"
session_timeout_ms = 4000
tick_ms = 1000
[network]
latency_ms = 0.5
[workload]
clients = 2
hold_ms = 50
think_ms = 0
acquisitions_per_client = 1
[[faults]]
kind = "pause"
target = "holder"
at_ms = 20
duration_ms = 10000
"#;

#[test]
fn zookeeper_honouring_suspended_does_not_write_after_a_pause_beyond_its_session() {
    for seed in 0..5 {
        let out = run(ZK_PAUSE, "suspended", seed);
        let paused = first_holder(&out);
        assert!(!wrote_after(&out, paused, 10_000.0), "seed {seed}: no write after resuming");
        assert!(abandoned(&out, paused), "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
        let checks = notes(&out, "check before the write: saw the connection lost");
        assert_eq!(checks.len(), 1, "seed {seed}");
        assert!(checks[0].0 >= 10_020.0, "seed {seed}: on resuming: {checks:?}");

        // Honouring only LOST: the check sees SUSPENDED, which this policy does not honour, and
        // the client learns of the expiry only when it reconnects: the stale write goes out.
        let lost = run(ZK_PAUSE, "lost", seed);
        let paused = first_holder(&lost);
        assert!(wrote_after(&lost, paused, 10_000.0), "seed {seed}: lost policy writes");
        assert!(lost.metrics.stale_unfenced_events >= 1, "seed {seed}");
    }
}

#[test]
fn the_checks_replay_the_same() {
    for (toml, label) in [(PAUSE_IN_HOLD, "respect"), (PAUSE_AFTER_CHECK, "redlock"), (ZK_PAUSE, "suspended")] {
        let a = run(toml, label, 7);
        let b = run(toml, label, 7);
        assert_eq!(format!("{:?}", a.history.events), format!("{:?}", b.history.events), "{label}");
        let notes = |o: &SeedOutcome| notes(o, "before the write");
        assert_eq!(notes(&a), notes(&b), "{label}");
    }
}
