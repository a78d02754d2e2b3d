//! Expiry of the lock row: the cleanup job runs on the primary every `cleanup_every_ms` and
//! deletes rows whose `update_time` is older than `expire_ms`, so a silent holder's row goes
//! between `expire_ms` and `expire_ms + cleanup_every_ms` after its last update, and a waiter
//! takes over within a poll while the old holder still works (known outcome 10, second part). A
//! heartbeat keeps the row; a heartbeat slower than the expiry finds the row gone.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

fn scenario(heartbeat_ms: u64, hold_ms: u64) -> String {
    format!(
        r#"
name = "expiry"
duration_ms = 60000
algorithms = ["db"]
[models.db]
expire_ms = 30000
cleanup_every_ms = 10000
heartbeat_ms = {heartbeat_ms}
[workload]
clients = 2
hold_ms = {hold_ms}
acquisitions_per_client = 1
"#
    )
}

#[test]
fn a_silent_holders_row_goes_between_expire_and_expire_plus_cleanup_period() {
    let toml = scenario(0, 45_000);
    let mut offsets = Vec::new();
    for seed in 0..12 {
        let out = run(&toml, "db", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        let deleted = notes(&out, "server-0", "cleanup: deleted k0");
        assert_eq!(deleted.len(), 1, "seed {seed}: one row expired: {deleted:?}");
        // The row was written at the commit just before the first grant (one network hop).
        let since_grant = deleted[0].0 - g[0].at_ms;
        assert!(
            (30_000.0 - 1.0..=40_000.0).contains(&since_grant),
            "seed {seed}: deleted {since_grant} ms after the grant"
        );
        let idle: f64 = deleted[0].1.split("update_time ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(idle > 30_000.0 && idle <= 40_000.0, "seed {seed}: row idle {idle} ms when deleted");
        // The waiter's next poll finds the name free: at most one poll cycle later.
        let takeover = g[1].at_ms - deleted[0].0;
        assert!((0.0..=215.0).contains(&takeover), "seed {seed}: waiter took over {takeover} ms after the delete");
        assert!(g[1].token > g[0].token);
        // The first holder was still in its 45 s section: overlap, and its late write is stale.
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 1, "seed {seed}");
        offsets.push(since_grant);
    }
    let spread = offsets.iter().cloned().fold(f64::MIN, f64::max) - offsets.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 3_000.0, "the cleanup job's phase varies by seed: spread {spread} ms");
}

#[test]
fn a_heartbeat_every_10_s_keeps_the_row_for_a_45_s_section() {
    let toml = scenario(10_000, 45_000);
    for seed in 0..4 {
        let out = run(&toml, "db", seed);
        assert!(notes(&out, "server-0", "cleanup: deleted").is_empty(), "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        let g = grants(&out);
        let holder = out
            .trace
            .as_ref()
            .unwrap()
            .entries
            .iter()
            .find(|t| t.kind == "history" && t.detail.starts_with("Granted"))
            .unwrap()
            .node
            .clone();
        let touches = trace_lines(&out, &holder, "send", "update_time");
        // 45 s section: heartbeats at 10, 20, 30, 40 s after the grant.
        assert_eq!(touches.len(), 4, "seed {seed}: {touches:?}");
        for (i, (t, _)) in touches.iter().enumerate() {
            let expect = g[0].at_ms + 10_000.0 * (i as f64 + 1.0);
            assert!((t - expect).abs() < 1.0, "seed {seed}: heartbeat {i} at {t}, expected {expect}");
        }
        assert!(g[1].at_ms > g[0].at_ms + 45_000.0, "seed {seed}: the waiter waits for the release");
    }
}

#[test]
fn a_heartbeat_slower_than_the_expiry_finds_the_row_gone_and_reports_the_lock_lost() {
    let toml = scenario(42_000, 50_000);
    for seed in 0..4 {
        let out = run(&toml, "db", seed);
        let g = grants(&out);
        let lost = history_times(&out, |e| matches!(e, HistoryEvent::LostNotice { .. }));
        assert_eq!(lost.len(), 1, "seed {seed}: {lost:?}");
        assert_eq!(lost[0].1, g[0].node, "seed {seed}: the first holder is told");
        let after = lost[0].0 - g[0].at_ms;
        assert!((42_000.0..=42_010.0).contains(&after), "seed {seed}: told at its first heartbeat ({after} ms)");
        // honour = false: the section goes on, so the overlap happens anyway.
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
    }
}

#[test]
fn without_expiry_a_crashed_holders_row_stays_forever() {
    let toml = r#"
name = "no-expiry"
duration_ms = 60000
algorithms = ["db"]
[models.db]
expire_ms = 0
[workload]
clients = 5
hold_ms = 50
[[faults]]
kind = "crash"
target = "holder"
at_ms = 5000
"#;
    for seed in 0..3 {
        let out = run(toml, "db", seed);
        let crash = history_times(&out, |e| matches!(e, HistoryEvent::ClientCrashed));
        assert_eq!(crash.len(), 1);
        let after: Vec<Grant> = grants(&out).into_iter().filter(|g| g.at_ms > crash[0].0).collect();
        assert!(after.is_empty(), "seed {seed}: nobody acquires after the holder's crash: {after:?}");
        let unavailable_ms = out.metrics.unavailable_ns as f64 / MS;
        assert!(unavailable_ms > 60_000.0 - crash[0].0 - 50.0, "seed {seed}: unavailable {unavailable_ms} ms");
        // The waiters keep polling to the end.
        let late = history_times(&out, |e| matches!(e, HistoryEvent::RefusedAttempt { .. }));
        assert!(late.last().unwrap().0 > 59_000.0);
    }
}

#[test]
fn a_primary_clock_stepped_forward_expires_a_fresh_row() {
    // update_time and the cleanup's NOW() are the primary's wall clock: a +35 s step makes a
    // row written 5 s ago look 40 s old.
    let toml = |jump_ms: f64| {
        format!(
            r#"
name = "clock-jump"
duration_ms = 30000
algorithms = ["db"]
[workload]
clients = 2
hold_ms = 20000
acquisitions_per_client = 1
[[faults]]
kind = "clock_jump"
target = "server-0"
by_ms = {jump_ms}
at_ms = 5000
"#
        )
    };
    for seed in 0..4 {
        let out = run(&toml(35_000.0), "db", seed);
        let deleted = notes(&out, "server-0", "cleanup: deleted k0");
        assert_eq!(deleted.len(), 1, "seed {seed}");
        assert!(
            deleted[0].0 > 5_000.0 && deleted[0].0 <= 15_000.0,
            "seed {seed}: first cleanup after the step: {}",
            deleted[0].0
        );
        let g = grants(&out);
        assert!(g[1].at_ms < 20_000.0, "seed {seed}: the waiter got in while the first holder still held");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");

        let out = run(&toml(0.0), "db", seed);
        assert!(notes(&out, "server-0", "cleanup: deleted").is_empty(), "seed {seed}: a 20 s hold never expires");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}
