//! The redis model's `client` presets (issue 32, rows 1-6), each checked on the mechanism the
//! library's source has at that version, against the model's settings before presets
//! (`client = "locksim-1"`, the default until issue 32's flip; redis_replica_ack_default.rs tests
//! the default now):
//! - row 1: a renewal that fails (a primary refusing connections for longer than the renewal's
//!   retries; no replica acknowledging the renewal's `WAIT`) stops Redisson's watchdog for good
//!   up to 3.43 (`redisson-3.37`): the key expires one lease later and a waiter overlaps the
//!   holder's long section; from 3.44 (`redisson-3.44`) and before presets it is rescheduled;
//! - row 6: the redis-py presets never `WAIT`, and set no TTL unless the scenario gives one;
//! - row 3: Redisson 3.48+ retries 4 times with an equal-jitter delay drawn per client, where
//!   the model before presets retries 3 times every 1500 ms;
//! - row 2: from 3.37 a lock script already written is not sent again on a single server
//!   (no "hold count 2"), while the script + `WAIT` batch with a replica still is;
//! - row 5: from 3.27.1 a `READONLY` reply is retried after the retry delay.

use crate::redis_common;

use locksim_simulator::history::{FailReason, HistoryEvent};
use locksim_simulator::process::CrashKind;
use locksim_simulator::scenario::{FaultKind, Selector};
use redis_common::*;

/// Two clients, each one 60 s section with the watchdog's 30 s lease; `models` is the
/// `[models.redis]` body and `faults` the `[[faults]]` tables.
fn long_sections(models: &str, faults: &str) -> String {
    format!(
        r#"
name = "long-sections"
duration_ms = 75000
algorithms = ["redis"]
[models.redis]
{models}
[network]
latency_ms = 0.25
[workload]
clients = 2
think_ms = 0
hold_ms = 60000
acquisitions_per_client = 1
{faults}
"#
    )
}

/// The primary's process is killed at 9.5 s and restarts at 15 s with its AOF (nothing lost):
/// the renewal due at ~10 s is refused at once, again after each retry (1.5, 3.0, 4.5 s later),
/// and fails at ~14.5 s, before the primary is back.
const PRIMARY_REFUSES_5_5_S: &str = r#"
[[faults]]
kind = "crash"
mode = "process"
target = "server-0"
at_ms = 9500
duration_ms = 5500
"#;

#[test]
fn row_1_a_refused_renewal_stops_the_watchdog_before_3_44_and_the_lease_runs_out_under_the_holder() {
    for seed in 0..3 {
        for (client, stops) in [("locksim-1", false), ("redisson-3.37", true), ("redisson-3.44", false)] {
            let text = long_sections(
                &format!("client = \"{client}\"\nwatchdog = true\npersistence = \"always\""),
                PRIMARY_REFUSES_5_5_S,
            );
            let out = run(&text, "redis", seed);
            let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
            let holder = out.history.clients.iter().position(|c| *c == granted[0].node).unwrap();
            let holder = ["client-0", "client-1"][holder];
            // The renewal at ~10 s: its first attempt and three retries all refused.
            let renewals: Vec<f64> = requests_sent(&out, |c| matches!(c, Command::HRenew { .. }))
                .into_iter()
                .filter(|l| l.node == holder)
                .map(|l| l.at_ms())
                .collect();
            assert!(renewals.len() >= 4, "{client} seed {seed}: {renewals:?}");
            assert!((renewals[3] - renewals[0] - 4_501.5).abs() < 1.0, "{client} seed {seed}: {renewals:?}");
            let stopped = notes(&out, "the watchdog stops for good");
            if stops {
                // Redisson up to 3.43: the entry leaves EXPIRATION_RENEWAL_MAP; nothing renews
                // again, the key set at the grant expires 30 s later, the waiter takes it and
                // both hold until the first section ends at ~60 s.
                assert_eq!(renewals.len(), 4, "{client} seed {seed}: {renewals:?}");
                assert_eq!(stopped.len(), 1, "{client} seed {seed}");
                assert!((stopped[0].0 - renewals[3]).abs() < 1.0);
                assert_eq!(granted.len(), 2, "{client} seed {seed}");
                let second = granted[1].at_ns as f64 / 1e6;
                assert!(second > 30_000.0 && second < 30_100.0, "{client} seed {seed}: second grant at {second}");
                assert_eq!(out.metrics.overlap_events, 1, "{client} seed {seed}");
            } else {
                // Rescheduled: the next renewal, 10 s after the failure, reaches the restarted
                // primary and the lease never runs out under the holder.
                assert!(stopped.is_empty(), "{client} seed {seed}");
                assert!(renewals.len() > 4 && (renewals[4] - renewals[3] - 10_000.5).abs() < 1.0, "{renewals:?}");
                assert_eq!(out.metrics.overlap_events, 0, "{client} seed {seed}");
                assert!(granted.len() == 1 || granted[1].at_ns as f64 / 1e6 > 60_000.0);
            }
        }
    }
}

/// The replica is cut off from the primary from 9 s to 12 s (Sentinel still sees both: no
/// failover): the renewal at ~10 s, with `WAIT 1 1000`, gets no acknowledgement.
const REPLICA_CUT_3_S: &str = r#"
[[faults]]
kind = "partition"
groups = [["server-0"], ["server-1"]]
at_ms = 9000
duration_ms = 3000
"#;

#[test]
fn row_1_a_renewal_no_replica_acknowledged_is_an_error_that_stops_the_watchdog_before_3_44() {
    for seed in 0..3 {
        for client in ["locksim-1", "redisson-3.37", "redisson-3.44"] {
            let text = long_sections(
                &format!("client = \"{client}\"\nwatchdog = true\nreplicas = 1\ndown_after_ms = 60000"),
                REPLICA_CUT_3_S,
            );
            let out = run(&text, "redis", seed);
            let renewals = requests_sent(&out, |c| matches!(c, Command::HRenew { .. }));
            let first = renewals[0].msg;
            let stopped = notes(&out, "no replica acknowledged the renewal (WAIT): the watchdog stops");
            match client {
                // Before presets the renewal carries no WAIT: nothing to fail.
                "locksim-1" => {
                    assert_eq!(first.wait, None, "{first:?}");
                    assert!(stopped.is_empty());
                    assert_eq!(out.metrics.overlap_events, 0, "{client} seed {seed}");
                }
                // Redisson renews through the synced eval: WAIT 1 1000 on every renewal.
                _ => {
                    assert_eq!(first.wait, Some(WaitSpec { replicas: 1, timeout_ms: 1000 }), "{first:?}");
                    if client == "redisson-3.37" {
                        assert_eq!(stopped.len(), 1, "{client} seed {seed}");
                        assert_eq!(out.metrics.overlap_events, 1, "{client} seed {seed}");
                    } else {
                        assert!(stopped.is_empty());
                        assert_eq!(out.metrics.overlap_events, 0, "{client} seed {seed}");
                    }
                }
            }
        }
    }
}

#[test]
fn row_6_the_redis_py_presets_never_wait_and_set_no_ttl_unless_given() {
    use Step::*;
    let script = || vec![vec![(10.0, Acquire(0))]];
    for client in ["redis-py-5", "redis-py-6", "redis-py-8"] {
        // redis-py's Lock: SET NX (PX only with a timeout), never WAIT: granted at the SET's
        // answer (10.55 ms), not after the replica's acknowledgement (~15.85 ms).
        let trace = scripted(&format!("replicas = 1\nclient = \"{client}\""), script(), vec![], 2000.0, 1);
        let sent = find(&trace, "client-0", "send", "Request");
        assert_eq!(sent.len(), 1, "{client}");
        assert!(sent[0].1.contains("cmd: SetNx {") && sent[0].1.contains("wait: None"), "{client}: {}", sent[0].1);
        let granted = find(&trace, "client-0", "note", "lib Granted");
        assert!((granted[0].0 - 10.55).abs() < 1e-9, "{client}: granted at {}", granted[0].0);
        assert!(granted[0].1.contains("token: None"), "{client}: RLock and redis-py have no token");
        // The application's timeout= is a PX, still without WAIT.
        let trace =
            scripted(&format!("replicas = 1\nclient = \"{client}\"\nttl_ms = 10000"), script(), vec![], 2000.0, 1);
        let sent = find(&trace, "client-0", "send", "Request");
        assert!(
            sent[0].1.contains("SetNxPx") && sent[0].1.contains("px_ms: 10000") && sent[0].1.contains("wait: None")
        );
    }
    // Before presets the plain pattern WAITs (Redisson's checkLockSyncedSlaves).
    let trace = scripted("replicas = 1\nclient = \"locksim-1\"", script(), vec![], 2000.0, 1);
    assert!(find(&trace, "client-0", "send", "cmd: SetNxPx")[0].1.contains("wait: Some(WaitSpec { replicas: 1"));
}

/// A holder granted at 0.6 ms with a 20 s section (inside the 30 s TTL); the primary is killed
/// at 2.55 ms, before the lock left its replication buffer (5 ms lag); Sentinel promotes the
/// replica 10 s later.
fn failover_inside_the_lag(client: &str, seed: u64) -> locksim_simulator::run::SeedOutcome {
    let text = format!(
        r#"
name = "lag"
duration_ms = 60000
algorithms = ["redis"]
[models.redis]
client = "{client}"
replicas = 1
down_after_ms = 10000
ttl_ms = 30000
[network]
latency_ms = 0.25
[workload]
clients = 3
think_ms = 0
hold_ms = 20000
[[faults]]
kind = "crash"
target = "leader"
at_ms = 2.55
"#
    );
    run(&text, "redis", seed)
}

#[test]
fn row_6_the_plain_pattern_under_redis_py_loses_a_lock_granted_inside_the_lag() {
    for seed in 0..3 {
        // redis-py grants at the SET's answer: the failover loses the lock, a waiter takes it on
        // the promoted replica while the first holder is still in its section.
        let out = failover_inside_the_lag("redis-py-8", seed);
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert!(granted[0].at_ns < 1_000_000, "seed {seed}: first grant at {} ns", granted[0].at_ns);
        assert!(out.metrics.overlap_events >= 1, "seed {seed}");
        // Before presets the same pattern WAITs: no grant before the crash, no overlap.
        let out = failover_inside_the_lag("locksim-1", seed);
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert!(granted[0].at_ns > 10_000_000_000, "seed {seed}: first grant at {} ns", granted[0].at_ns);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}

#[test]
fn row_6_a_crashed_holders_key_never_expires_under_redis_py_without_a_timeout() {
    use Step::*;
    for (client, freed) in [("redis-py-5", false), ("redis-py-8", false), ("locksim-1", true)] {
        let trace = scripted(
            &format!("client = \"{client}\""),
            vec![vec![(0.0, Acquire(0))], vec![(5.0, Acquire(0))]],
            vec![fault(FaultKind::Crash { mode: CrashKind::Process }, "client-0", 100.0, None)],
            45_000.0,
            2,
        );
        let granted = find(&trace, "client-1", "note", "lib Granted");
        if freed {
            // ttl_ms 30 000: the key expires and the waiter (retrying every retry_ms) takes it.
            assert!(granted.len() == 1 && granted[0].0 > 30_000.0 && granted[0].0 < 30_300.0, "{granted:?}");
        } else {
            // timeout=None: SET NX without PX; the waiter retries every 100 ms for ever.
            assert!(granted.is_empty(), "{client}: {granted:?}");
            let refused = find(&trace, "client-1", "note", "lib Refused");
            assert!(refused.len() > 400, "{client}: {} refusals", refused.len());
        }
    }
}

/// One client: takes and frees the lock (so it has a connection), then, while the primary's
/// process is down from 50 ms to 5 050 ms, asks again at 100 ms.
fn refused_primary(client: &str, seed: u64) -> Vec<locksim_simulator::trace::TraceEntry> {
    use Step::*;
    scripted(
        &format!("client = \"{client}\"\nwatchdog = true"),
        vec![vec![(0.0, Acquire(0)), (10.0, Release(0)), (100.0, Acquire(0))]],
        vec![fault(FaultKind::Crash { mode: CrashKind::Process }, "server-0", 50.0, Some(5_000.0))],
        12_000.0,
        seed,
    )
}

fn lock_sends_after(trace: &[locksim_simulator::trace::TraceEntry], from_ms: f64) -> Vec<f64> {
    find(trace, "client-0", "send", "HLock").into_iter().map(|(t, _)| t).filter(|t| *t >= from_ms).collect()
}

#[test]
fn row_3_redisson_3_48_retries_four_times_with_an_equal_jitter_delay_drawn_per_client() {
    let mut granted_seeds = 0;
    let mut first_gaps = Vec::new();
    for seed in 0..10 {
        // Before presets (and Redisson up to 3.47): 3 retries, 1 500 ms apart (each refused
        // 0.5 ms after it left); the call fails at ~4.6 s, before the primary is back.
        let trace = refused_primary("locksim-1", seed);
        let sends = lock_sends_after(&trace, 100.0);
        assert_eq!(sends.len(), 4, "seed {seed}: {sends:?}");
        for w in sends.windows(2) {
            assert!((w[1] - w[0] - 1_500.5).abs() < 1e-6, "seed {seed}: {sends:?}");
        }
        assert_eq!(find(&trace, "client-0", "note", "lib Granted").len(), 1, "seed {seed}: only the first");
        assert_eq!(find(&trace, "client-0", "note", "lib Failed").len(), 1);

        // 3.48+: 4 retries; before the first d = 1000: 500-1000 ms, then d = 2000: 1000-2000 ms.
        let trace = refused_primary("redisson-3.52", seed);
        let sends = lock_sends_after(&trace, 100.0);
        assert!(sends.len() >= 2 && sends.len() <= 5, "seed {seed}: {sends:?}");
        let gaps: Vec<f64> = sends.windows(2).map(|w| w[1] - w[0] - 0.5).collect();
        assert!(gaps[0] >= 500.0 && gaps[0] <= 1_000.0, "seed {seed}: {gaps:?}");
        assert!(gaps[1..].iter().all(|g| *g >= 1_000.0 && *g <= 2_000.0), "seed {seed}: {gaps:?}");
        first_gaps.push(gaps[0]);
        let granted = find(&trace, "client-0", "note", "lib Granted").len();
        let failed = find(&trace, "client-0", "note", "lib Failed").len();
        if granted == 2 {
            // The attempt that reached the restarted primary (back at 5 050 ms).
            assert!(*sends.last().unwrap() > 5_050.0, "seed {seed}: {sends:?}");
            granted_seeds += 1;
        } else {
            assert_eq!((sends.len(), failed), (5, 1), "seed {seed}: {sends:?}");
        }
    }
    // The delays are drawn (not all the same), and with 4 retries spread over 3.5-7 s the
    // acquisition outlives the 5 s outage in some seeds, never with 3 × 1 500 ms.
    assert!(first_gaps.iter().any(|g| (g - first_gaps[0]).abs() > 1.0), "{first_gaps:?}");
    assert!(granted_seeds > 0 && granted_seeds < 10, "granted in {granted_seeds} of 10 seeds");
}

/// The primary's replies to client-0 are lost from 100 ms to 4 000 ms (a one-way cut): the lock
/// script sent at 200 ms runs, its answer never arrives, the attempt times out at ~3.2 s (plus
/// the WAIT timeout with a replica). Before that client-0 took and freed the lock once (its
/// connection is up); it releases at 6 s.
fn lost_lock_reply(models: &str) -> Vec<locksim_simulator::trace::TraceEntry> {
    use Step::*;
    let cut = FaultKind::Partition {
        groups: vec![vec![Selector::Named("server-0".into())], vec![Selector::Named("client-0".into())]],
        one_way: true,
    };
    let (mut spec, at, dur) = fault(cut, "server-0", 100.0, Some(3_900.0));
    spec.targets.clear();
    scripted(
        &format!("watchdog = true\n{models}"),
        vec![vec![(0.0, Acquire(0)), (10.0, Release(0)), (200.0, Acquire(0)), (6_000.0, Release(0))]],
        vec![(spec, at, dur)],
        8_000.0,
        1,
    )
}

#[test]
fn row_2_from_3_37_a_written_lock_script_is_not_sent_again_on_a_single_server() {
    // Before presets (and up to 3.36): sent again 1 500 ms after the timeout; it re-enters the
    // hash (hold count 2 on the server, 1 in the library), so the release at 6 s leaves the
    // lock held (the unlock script answers 0: still locked) until the lease runs out.
    for models in ["client = \"locksim-1\"", "client = \"redisson-3.27\""] {
        let trace = lost_lock_reply(models);
        let executed = find(&trace, "server-0", "deliver", "HLock");
        assert_eq!(executed.len(), 3, "{models}: {executed:?}");
        assert!(executed[2].0 > 4_700.0 && executed[2].0 < 4_701.0, "{models}: {executed:?}");
        assert_eq!(find(&trace, "client-0", "note", "lib Granted").len(), 2, "{models}");
        let unlock_answers = find(&trace, "server-0", "send", "→ client-0 Response");
        let last = &unlock_answers.last().unwrap().1;
        assert!(last.contains("Int(0)"), "{models}: the release left a hold: {last}");
    }
    // 3.37+: evalWriteSyncedNoRetryAsync; one server: the script already written is not sent
    // again; the call fails at its timeout (3 000 ms after 200 ms) and nothing re-enters.
    for client in ["redisson-3.37", "redisson-3.52"] {
        let trace = lost_lock_reply(&format!("client = \"{client}\""));
        let executed = find(&trace, "server-0", "deliver", "HLock");
        assert_eq!(executed.len(), 2, "{client}: {executed:?}");
        let failed = find(&trace, "client-0", "note", "lib Failed");
        assert_eq!(failed.len(), 1, "{client}");
        assert!((failed[0].0 - 3_200.0).abs() < 0.01, "{client}: failed at {}", failed[0].0);
        assert!(failed[0].1.contains(&format!("{:?}", FailReason::Unavailable)));
        assert!(!find(&trace, "client-0", "note", "not sent again").is_empty());
        assert!(find(&trace, "client-0", "send", "HUnlock").iter().all(|(t, _)| *t < 100.0), "no second release");
    }
    // With a replica the script and WAIT go as one batch, which takes retryAttempts: resent,
    // and the hold count 2 path stays.
    let trace = lost_lock_reply("client = \"redisson-3.37\"\nreplicas = 1\ndown_after_ms = 60000");
    let executed = find(&trace, "server-0", "deliver", "HLock");
    assert_eq!(executed.len(), 3, "batch: {executed:?}");
    assert_eq!(find(&trace, "client-0", "note", "lib Granted").len(), 2);
}

#[test]
fn row_5_from_3_27_1_a_readonly_reply_is_retried_after_the_retry_delay() {
    use Step::*;
    // client-0 and server-0 are cut off from server-1 and the Sentinels from 1 s to 20 s:
    // Sentinel promotes server-1, the +switch-master never reaches client-0, and once the cut
    // heals Sentinel converts server-0 into a replica (~8 s after it reports the primary role).
    // At 40 s client-0 still sends to server-0 and gets READONLY.
    let cut = FaultKind::Partition {
        groups: vec![
            vec![Selector::Named("server-0".into()), Selector::Named("client-0".into())],
            vec![
                Selector::Named("server-1".into()),
                Selector::Named("sentinel-0".into()),
                Selector::Named("sentinel-1".into()),
                Selector::Named("sentinel-2".into()),
            ],
        ],
        one_way: false,
    };
    let run = |client: &str| {
        let (mut spec, at, dur) = fault(cut.clone(), "server-0", 0.0, Some(20_000.0));
        spec.targets.clear();
        scripted(
            &format!("client = \"{client}\"\nwatchdog = true\nreplicas = 1\ndown_after_ms = 5000"),
            vec![vec![(40_000.0, Acquire(0))]],
            vec![(spec, at, dur)],
            50_000.0,
            4,
        )
    };
    // Before presets (and up to 3.27.0): the error reaches the caller at once.
    let trace = run("locksim-1");
    assert!(!find(&trace, "server-0", "note", "now a replica of server-1").is_empty());
    let sends = lock_sends_after(&trace, 40_000.0);
    assert_eq!(sends.len(), 1, "{sends:?}");
    let failed = find(&trace, "client-0", "note", "lib Failed");
    assert!(failed.len() == 1 && failed[0].0 < 40_001.0, "{failed:?}");
    // 3.27.1+: RedisReadonlyException is retried after retryInterval, up to retryAttempts.
    let trace = run("redisson-3.27");
    let readonly = find(&trace, "server-0", "send", "ReadOnly");
    let sends = lock_sends_after(&trace, 40_000.0);
    assert_eq!(sends.len(), 4, "{sends:?}");
    assert_eq!(readonly.len(), 4);
    // Each READONLY comes back one round trip and the server's 0.05 ms later.
    for w in sends.windows(2) {
        assert!((w[1] - w[0] - 1_500.55).abs() < 1e-6, "{sends:?}");
    }
    let failed = find(&trace, "client-0", "note", "lib Failed");
    assert!(failed.len() == 1 && (failed[0].0 - sends[3] - 0.55).abs() < 1e-6, "{failed:?}");
}

/// Two failovers: server-0 (the primary) is killed at 1 s and restarts at 15 s (converted into
/// server-1's replica ~8 s later); server-1 is killed at 40 002 ms, 2 ms after client-0's lock
/// request at 40 s, before the lock left its 5 ms replication buffer. client-0 also locks at
/// 0.1 s, 12 s and 14 s (each released 0.1 s later); client-1 locks at 50 s, after the second
/// failover.
/// Every preset runs with `no_sync = "unlock_fail"` here: the acquisition at 12 s finds no replica
/// synced (server-0 is down); a version that unlocks and retries it (3.47.0+) would take the lock
/// after the script's release at 12.1 s and keep it, which is not what this test is about.
fn two_failovers(client: &str) -> Vec<locksim_simulator::trace::TraceEntry> {
    use Step::*;
    scripted(
        &format!("client = \"{client}\"\nwatchdog = true\nreplicas = 1\ndown_after_ms = 5000\npersistence = \"none\"\nno_sync = \"unlock_fail\""),
        vec![
            vec![
                (100.0, Acquire(0)),
                (200.0, Release(0)),
                (12_000.0, Acquire(0)),
                (12_100.0, Release(0)),
                (14_000.0, Acquire(0)),
                (14_100.0, Release(0)),
                (40_000.0, Acquire(0)),
            ],
            vec![(50_000.0, Acquire(0))],
        ],
        vec![
            fault(FaultKind::Crash { mode: CrashKind::Process }, "server-0", 1_000.0, Some(14_000.0)),
            fault(FaultKind::Crash { mode: CrashKind::Process }, "server-1", 40_002.0, None),
        ],
        60_000.0,
        5,
    )
}

#[test]
fn row_4_from_3_27_the_cached_replica_count_stays_0_after_a_failover_and_the_second_loses_the_lock() {
    // server-0 is a replica of server-1 again well before 40 s.
    let trace = two_failovers("locksim-1");
    let demoted = find(&trace, "server-0", "note", "now a replica of server-1");
    assert!(!demoted.is_empty() && demoted[0].0 < 35_000.0, "{demoted:?}");
    for (client, waits_at_40_s) in [
        ("locksim-1", true),
        ("redisson-3.17", true),
        ("redisson-3.21", true),
        ("redisson-3.27", false),
        ("redisson-3.52", false),
    ] {
        let trace = two_failovers(client);
        let at_40_s: Vec<(f64, String)> =
            find(&trace, "client-0", "send", "HLock").into_iter().filter(|(t, _)| *t >= 40_000.0).collect();
        let granted_0: Vec<f64> = find(&trace, "client-0", "note", "lib Granted")
            .into_iter()
            .map(|(t, _)| t)
            .filter(|t| *t >= 40_000.0)
            .collect();
        let granted_1 = find(&trace, "client-1", "note", "lib Granted");
        assert_eq!(granted_1.len(), 1, "{client}: client-1 gets the lock after the second failover");
        if waits_at_40_s {
            // The Sentinel view (server-0 announced up after its conversion) and a fresh INFO
            // both count server-0: WAIT 1; the crash takes the primary before the ack, the
            // request fails, client-0 never holds: no two holders.
            assert!(at_40_s[0].1.contains("wait: Some(WaitSpec { replicas: 1"), "{client}: {}", at_40_s[0].1);
            assert!(granted_0.is_empty(), "{client}: {granted_0:?}");
        } else {
            // 3.27+: the count was read as 0 from the new primary at 14 s (after the WAIT at
            // 12 s answered 0 of the cached 1), and 0 is never corrected: no WAIT at 40 s, the
            // grant is lost with server-1, and client-1 takes the lock on server-0 at 50 s while
            // client-0 still holds it.
            assert!(at_40_s[0].1.contains("wait: None"), "{client}: {}", at_40_s[0].1);
            assert_eq!(granted_0.len(), 1, "{client}");
            assert!(granted_0[0] < 40_001.0 && granted_1[0].0 > 50_000.0, "{client}: {granted_0:?} {granted_1:?}");
            let infos = find(&trace, "client-0", "send", "InfoReplication");
            assert_eq!(infos.len(), 2, "{client}: INFO at 0.1 s and 14 s only: {infos:?}");
        }
        if client == "redisson-3.21" {
            // INFO before every lock call.
            assert_eq!(find(&trace, "client-0", "send", "InfoReplication").len(), 4, "{client}");
        }
    }
}

#[test]
fn a_preset_value_the_model_cannot_take_is_refused_naming_the_preset() {
    let models = locksim_algorithms::registry();
    let text =
        |body: &str| format!("name = \"v\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n[models.redis]\n{body}\n");
    // redis-py sets ttl_ms = 0 (no expiry); with Redisson's watchdog that is no lease.
    let err = refused("v.toml", &text("client = \"redis-py-5\"\nwatchdog = true"), &models);
    assert!(err.contains("ttl_ms") && err.contains("client = \"redis-py-5\" sets ttl_ms"), "{err}");
    // The same with the application's timeout given is fine; an unknown preset names the choices.
    let ok = text("client = \"redis-py-5\"\nwatchdog = true\nttl_ms = 30000");
    assert!(locksim_simulator::scenario::parse_str("v.toml", &ok, &models).is_ok());
    let err = refused("v.toml", &text("client = \"redisson-9\""), &models);
    assert!(err.contains("redisson-4.7") && err.contains("locksim-1"), "{err}");
    // ttl_ms = 0 only means "no expiry" for SET NX PX.
    let err = refused("v.toml", &text("ttl_ms = 0\nacquire = \"setnx_then_expire\""), &models);
    assert!(err.contains("set_nx_px"), "{err}");
}

/// The message a scenario text is refused with (the test fails if it is accepted).
fn refused(file: &str, text: &str, models: &[&'static dyn locksim_simulator::model::DynModel]) -> String {
    match locksim_simulator::scenario::parse_str(file, text, models) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

/// redis-py's `Lock.release()` runs the compare-and-delete script and raises `LockNotOwnedError`
/// when it answers 0 (`lock.py:258-265@v5.2.1`, `:278-285@v6.0.0` and `@v8.0.0`): a holder whose
/// 100 ms TTL ran out releases at 500 ms. Under every redis-py preset the release fails
/// (refused); the model before presets counts it as released. A release of a lock still ours is
/// a release under every preset.
#[test]
fn redis_py_release_of_a_lock_no_longer_ours_raises_lock_not_owned() {
    use Step::*;
    for (client, raises) in [("redis-py-5", true), ("redis-py-6", true), ("redis-py-8", true), ("locksim-1", false)] {
        for (release_ms, expired) in [(500.0, true), (50.0, false)] {
            let trace = scripted(
                &format!("client = \"{client}\"\nttl_ms = 100"),
                vec![vec![(0.0, Acquire(0)), (release_ms, Release(0))]],
                vec![],
                1000.0,
                0,
            );
            let failed = find(&trace, "client-0", "note", "lib ReleaseFailed");
            let released = find(&trace, "client-0", "note", "lib Released");
            if raises && expired {
                assert_eq!(failed.len(), 1, "{client}: {failed:?} {released:?}");
                assert!(failed[0].1.contains("reason: Refused"), "{client}: {}", failed[0].1);
                assert!(released.is_empty(), "{client}: {released:?}");
                assert_eq!(find(&trace, "client-0", "note", "LockNotOwnedError").len(), 1, "{client}");
            } else {
                assert!(failed.is_empty(), "{client} release at {release_ms} ms: {failed:?}");
                assert_eq!(released.len(), 1, "{client} release at {release_ms} ms: {released:?}");
            }
        }
    }
}

/// The same in whole runs: one client holding 300 ms against a 100 ms TTL. Each section's
/// release finds the key gone: `failed_releases` counts every one under `redis-py-8` (and the
/// scenario's own `release_missing = "ignore"` overrides the preset), none before presets.
#[test]
fn redis_py_counts_the_release_of_an_expired_lock_in_failed_releases() {
    let text = |models: &str| {
        format!(
            r#"
name = "expired-release"
duration_ms = 3000
algorithms = ["redis"]
[models.redis]
ttl_ms = 100
{models}
[network]
latency_ms = 0.25
[workload]
clients = 1
think_ms = 10
hold_ms = 300
"#
        )
    };
    for seed in 0..2 {
        let out = run(&text("client = \"redis-py-8\""), "redis", seed);
        let sections = events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).len() as u64;
        assert!(sections >= 5, "seed {seed}: {sections} sections");
        assert!(
            out.metrics.failed_releases + 1 >= sections,
            "seed {seed}: {} of {sections}",
            out.metrics.failed_releases
        );
        let failed = events(&out, |e| matches!(e, HistoryEvent::ReleaseFailed { reason: FailReason::Refused, .. }));
        assert_eq!(failed.len() as u64, out.metrics.failed_releases, "seed {seed}");
        for models in ["client = \"locksim-1\"", "client = \"redis-py-8\"\nrelease_missing = \"ignore\""] {
            let out = run(&text(models), "redis", seed);
            assert_eq!(out.metrics.failed_releases, 0, "{models} seed {seed}");
        }
    }
}

/// "None of slaves were synced" per version (`no_sync`): the replica, connected, is paused
/// from 50 ms, so the lock script's `WAIT` (at 100 ms) answers 0 after its 1000 ms. Redisson 3.25.0–3.46.0 (`redisson-3.37`) fails
/// the call and leaves the key (no unlock); 3.47.0 and later (`redisson-4.7`) unlock and run the
/// acquisition again after the retry delay, `retry_attempts` (4) times, then fail; the model
/// before presets unlocks and fails at once.
#[test]
fn no_sync_per_version_fail_keep_unlock_retry_or_unlock_fail() {
    use Step::*;
    for (client, locks, unlocks) in [("redisson-3.37", 1, 0), ("redisson-4.7", 5, 5), ("locksim-1", 1, 1)] {
        let trace = scripted(
            &format!("client = \"{client}\"\nwatchdog = true\nreplicas = 1"),
            vec![vec![(100.0, Acquire(0))]],
            vec![fault(FaultKind::Pause, "server-1", 50.0, Some(25_000.0))],
            30_000.0,
            0,
        );
        let sent_locks = find(&trace, "client-0", "send", "HLock");
        let sent_unlocks = find(&trace, "client-0", "send", "HUnlock");
        assert_eq!((sent_locks.len(), sent_unlocks.len()), (locks, unlocks), "{client}: {sent_locks:?}");
        let failed = find(&trace, "client-0", "note", "lib Failed");
        assert_eq!(failed.len(), 1, "{client}: {failed:?}");
        assert!(failed[0].1.contains("Refused"), "{client}: {}", failed[0].1);
        assert!(find(&trace, "client-0", "note", "lib Granted").is_empty(), "{client}");
        if client == "redisson-4.7" {
            // Each retry waits the equal-jitter delay after the unlock: 500-1000 ms, then 1000-2000.
            let gap = sent_locks[1].0 - sent_locks[0].0;
            assert!(gap > 1_000.0 + 500.0 && gap < 1_002.0 + 1_000.0, "{client}: {sent_locks:?}");
        }
    }
}
