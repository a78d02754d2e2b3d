//! Redisson's `lock()` with the watchdog, checked on times and counts:
//! - the lease (30 s) is renewed every lease/3 after the previous renewal completed;
//! - a renewal that finds the key gone stops silently: no more renewals, the holder is not told,
//!   and a waiter gets the lock while the holder still holds it; the holder's unlock then throws;
//! - reentrancy: a holder that locks 3 times and unlocks twice still holds (count 1), others are
//!   refused; the third unlock frees the key and publishes, and the waiter is woken at once.
//!
//! The rows pin `client = "locksim-1"` (the model before presets): these tests pin the mechanisms,
//! which the presets only configure; `redis_library.rs` tests the presets and the default.

use crate::redis_common;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::process::CrashKind;
use locksim_simulator::scenario::FaultKind;
use redis_common::*;

const RENEWALS: &str = r#"
name = "renewals"
duration_ms = 50000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
watchdog = true
[network]
latency_ms = 0.25
[workload]
clients = 2
think_ms = 0
hold_ms = 45000
acquisitions_per_client = 1
"#;

#[test]
fn the_watchdog_renews_a_30_s_lease_every_10_s_and_the_waiter_is_woken_by_the_unlock() {
    for seed in 0..3 {
        let out = run(RENEWALS, "redis", seed);
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert_eq!(granted.len(), 2);
        let holder = ["client-0", "client-1"][out.history.clients.iter().position(|c| *c == granted[0].node).unwrap()];
        let grant_ms = granted[0].at_ns as f64 / 1e6;
        let renewals: Vec<f64> = requests_sent(&out, |c| matches!(c, Command::HRenew { .. }))
            .into_iter()
            .filter(|l| l.node == holder)
            .map(|l| l.at_ms())
            .collect();
        // Held for 45 s: renewals at ~10, 20, 30, 40 s.
        assert_eq!(renewals.len(), 4, "seed {seed}: {renewals:?}");
        // The first is lease/3 after the grant; each next one lease/3 after the previous reply
        // (one round trip of 0.25 + 0.05 + 0.25 ms later).
        assert!((renewals[0] - grant_ms - 10_000.0).abs() < 1e-6, "seed {seed}: first renewal at {}", renewals[0]);
        for w in renewals.windows(2) {
            assert!((w[1] - w[0] - 10_000.55).abs() < 1e-6, "seed {seed}: renewal gap {}", w[1] - w[0]);
        }
        // The waiter holds off (waiting on its TTL timer or the unlock message) and takes the
        // lock right after the release, woken by the pub/sub message.
        let released =
            events(&out, |e| matches!(e, HistoryEvent::Released { nested: false, .. }))[0].at_ns as f64 / 1e6;
        let second = granted[1].at_ns as f64 / 1e6;
        assert!(second > released && second < released + 2.0, "seed {seed}: released {released}, next grant {second}");
        assert_eq!(out.metrics.overlap_events, 0);
        assert!(!events(&out, |e| matches!(e, HistoryEvent::Notification { .. })).is_empty());
    }
}

const SILENT_STOP: &str = r#"
name = "silent-stop"
duration_ms = 70000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
watchdog = true
[network]
latency_ms = 0.25
[workload]
clients = 2
think_ms = 0
hold_ms = 60000
acquisitions_per_client = 1
[[faults]]
kind = "clock_jump"
target = "server-0"
at_ms = 15000
by_ms = 40000
"#;

#[test]
fn a_renewal_that_finds_the_key_gone_stops_silently_and_the_holder_is_not_told() {
    for seed in 0..3 {
        let out = run(SILENT_STOP, "redis", seed);
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert_eq!(granted.len(), 2, "seed {seed}");
        let holder = ["client-0", "client-1"][out.history.clients.iter().position(|c| *c == granted[0].node).unwrap()];
        // Renewed at ~10 s (lease now ends at wall ~40 s). At 15 s the server's wall clock jumps
        // 40 s ahead: the key is expired and the cron deletes it. The renewal at ~20 s finds
        // nothing and the watchdog stops: no renewal at 30, 40 or 50 s.
        let renewals: Vec<f64> = requests_sent(&out, |c| matches!(c, Command::HRenew { .. }))
            .into_iter()
            .filter(|l| l.node == holder)
            .map(|l| l.at_ms())
            .collect();
        assert_eq!(renewals.len(), 2, "seed {seed}: {renewals:?}");
        let stopped = notes(&out, "renewal found the lock gone");
        assert_eq!(stopped.len(), 1);
        assert!((stopped[0].0 - renewals[1]).abs() < 1.0);
        assert!(notes(&out, "active expiry").iter().any(|(t, _, _)| *t >= 15_000.0 && *t < 15_101.0));
        // Nobody told the holder: no lost notice, it goes on to the end of its 60 s section.
        assert!(events(&out, |e| matches!(e, HistoryEvent::LostNotice { .. })).is_empty());
        // The waiter wakes when the 30 s TTL it was told at its first attempt runs out, and takes
        // the (deleted) lock: both hold it from ~30 s to 60 s.
        let second = granted[1].at_ns as f64 / 1e6;
        assert!(second > 29_990.0 && second < 30_010.0, "seed {seed}: second grant at {second}");
        assert_eq!(out.metrics.overlap_events, 1);
        // At ~60 s the first holder unlocks a hash whose only field is the second holder's: the
        // script answers nil and Redisson's unlock() throws (IllegalMonitorStateException).
        let failed = events(&out, |e| {
            matches!(e, HistoryEvent::ReleaseFailed { reason: locksim_simulator::history::FailReason::Refused, .. })
        });
        assert_eq!(failed.len(), 1, "seed {seed}");
        assert_eq!(failed[0].node, granted[0].node);
        assert!(failed[0].at_ns as f64 / 1e6 > 60_000.0);
        assert_eq!(out.metrics.failed_releases, 1);
    }
}

#[test]
fn a_holder_that_locks_three_times_and_unlocks_twice_still_holds_and_others_are_refused() {
    use Step::*;
    let trace = scripted_config(
        &RedisConfig { watchdog: true, ..locksim_1() },
        vec![
            vec![
                (0.0, Acquire(0)),
                (1.0, Acquire(0)),
                (2.0, Acquire(0)),
                (10.0, Release(0)),
                (11.0, Release(0)),
                (1000.0, Release(0)),
            ],
            vec![(20.0, Acquire(0))],
        ],
        vec![],
        2000.0,
        1,
    );
    let holder_grants = find(&trace, "client-0", "note", "lib Granted");
    assert_eq!(holder_grants.len(), 3, "count 1 → 2 → 3");
    // Fencing tokens: RedissonFencedLock INCRs on every acquisition, re-entry included.
    for (i, (_, d)) in holder_grants.iter().enumerate() {
        assert!(d.contains(&format!("token: Some({})", i + 1)), "{d}");
    }
    // The unlock script answers 0 (still held, count 2 then 1), then 1 (deleted, published).
    let answers: Vec<String> = find(&trace, "server-0", "send", "→ client-0 Response")
        .into_iter()
        .filter(|(t, _)| *t > 5.0)
        .map(|(_, d)| d)
        .collect();
    assert!(
        answers[0].contains("Int(0)") && answers[1].contains("Int(0)") && answers[2].contains("Int(1)"),
        "{answers:#?}"
    );
    // Between the second and third unlock the other client is refused, and is not granted.
    let refused = find(&trace, "client-1", "note", "lib Refused");
    assert!(!refused.is_empty() && refused[0].0 > 20.0 && refused[0].0 < 21.0);
    let granted = find(&trace, "client-1", "note", "lib Granted");
    assert_eq!(granted.len(), 1);
    // The third unlock (at 1 000 ms) deletes the key and publishes: the waiter is notified and
    // takes the lock one round trip later.
    let notified = find(&trace, "client-1", "note", "lib Notified");
    assert_eq!(notified.len(), 1);
    assert!(notified[0].0 > 1000.0 && notified[0].0 < 1001.0, "notified at {}", notified[0].0);
    assert!(granted[0].0 > notified[0].0 && granted[0].0 < notified[0].0 + 1.0, "granted at {}", granted[0].0);
    assert!(granted[0].1.contains("token: Some(4)"));
}

#[test]
fn a_crashed_holders_lock_expires_after_its_lease_and_the_waiter_gets_it() {
    // The watchdog dies with its client: nothing renews, the 30 s lease runs out.
    use Step::*;
    let trace = scripted_config(
        &RedisConfig { watchdog: true, ..locksim_1() },
        vec![vec![(0.0, Acquire(0))], vec![(5.0, Acquire(0))]],
        vec![fault(FaultKind::Crash { mode: CrashKind::Process }, "client-0", 100.0, None)],
        40_000.0,
        2,
    );
    let granted = find(&trace, "client-1", "note", "lib Granted");
    assert_eq!(granted.len(), 1);
    // Set at ~0.25 ms with a 30 s lease; the waiter was told the PTTL (~29 995 ms) at ~5 ms.
    assert!(granted[0].0 > 30_000.0 && granted[0].0 < 30_002.0, "granted at {}", granted[0].0);
}
