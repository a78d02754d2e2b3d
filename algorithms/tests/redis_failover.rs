//! The redis model with a replica and Sentinel, checked on times and counts:
//! - Sentinel promotes the replica `down_after_ms` (plus at most a few ping and ask periods) after
//!   the primary stops answering, and clients move to it;
//! - a lock granted inside the replication lag is lost by the failover (overlap), one granted
//!   after the lag survives it;
//! - `replica_ack`: with the replica cut off, WAIT times out after 1 000 ms, the acquisition fails
//!   and the lock is unlocked;
//! - the old primary, back from its crash, is converted to a replica and drops its data.
//!
//! The rows pin `client = "locksim-1"` (the model before presets): these tests pin the mechanisms,
//! which the presets only configure; `redis_library.rs` tests the presets and the default.

use crate::redis_common;

use locksim_simulator::history::{FailReason, HistoryEvent};
use locksim_simulator::process::CrashKind;
use locksim_simulator::scenario::FaultKind;
use redis_common::*;

const PROMOTION: &str = r#"
name = "promotion"
duration_ms = 60000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
replicas = 1
down_after_ms = 5000
[[variants]]
name = "redis-30s"
model = "redis"
client = "locksim-1"
replicas = 1
[network]
latency_ms = 0.25
[workload]
clients = 3
[[faults]]
kind = "crash"
target = "server-0"
at_ms = 1000
"#;

fn switch_time(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, String)> {
    notes(out, "+switch-master").into_iter().map(|(t, n, _)| (t, n)).collect()
}

#[test]
fn sentinel_promotes_the_replica_down_after_ms_after_the_primary_stops_answering() {
    for (label, down_after) in [("redis", 5_000.0), ("redis-30s", 30_000.0)] {
        for seed in 0..10 {
            let out = run(PROMOTION, label, seed);
            let switches = switch_time(&out);
            assert!(!switches.is_empty(), "{label} seed {seed}: no failover");
            let first = switches[0].0;
            // SDOWN: the oldest unanswered ping is older than down_after (pings every second,
            // so it was sent within 1 s after the crash); ODOWN: a peer's answer within the next
            // ask period; then one vote round and the promoted replica's next ping reply.
            let earliest = 1_000.0 + down_after;
            assert!(first > earliest && first < earliest + 4_000.0, "{label} seed {seed}: switch at {first} ms");
            // Every Sentinel ends up with the new primary, and exactly one promoted it.
            assert_eq!(switches.len(), 3, "{label} seed {seed}: {switches:?}");
            assert_eq!(notes(&out, "promoted to primary").len(), 1);
            assert!(notes(&out, "+switch-master server-0 -> server-1").len() == 3);
            // Clients move over: grants resume on server-1 after the switch.
            let after = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }))
                .iter()
                .filter(|e| e.at_ns as f64 / 1e6 > first)
                .count();
            assert!(after > 100, "{label} seed {seed}: {after} grants after the failover");
        }
    }
}

/// A watchdog holder (120 s section) granted at 0.6 ms (the primary serves the replica's PSYNC
/// first); the primary crashes at `crash_ms` and stays down; Sentinel promotes the replica after
/// `down_after`.
fn failover(crash_ms: f64, down_after_ms: f64, replica_ack: bool, seed: u64) -> locksim_simulator::run::SeedOutcome {
    let text = format!(
        r#"
name = "lag"
duration_ms = 60000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
replicas = 1
watchdog = true
down_after_ms = {down_after_ms}
replica_ack = {replica_ack}
[network]
latency_ms = 0.25
[workload]
clients = 3
think_ms = 0
hold_ms = 120000
[[faults]]
kind = "crash"
target = "leader"
at_ms = {crash_ms}
"#
    );
    run(&text, "redis", seed)
}

#[test]
fn a_lock_granted_inside_the_replication_lag_is_lost_by_the_failover() {
    for seed in 0..5 {
        // Granted at 0.6 ms, the lock left the primary's buffer at 5.25 ms: a crash at 2.55 ms
        // takes it along. The promoted replica has no lock; a waiter takes it at once.
        let out = failover(2.55, 10_000.0, false, seed);
        let switch = switch_time(&out)[0].0;
        let granted = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert_eq!(granted.len(), 2, "seed {seed}");
        let second = granted[1].at_ns as f64 / 1e6;
        assert!(second > switch, "seed {seed}: second grant at {second}, switch at {switch}");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
        // The token counter went back with the lost tail: token 1 again.
        assert_eq!(out.metrics.token_regressions, 1, "seed {seed}");
        // After the lag: the replica has the lock, the watchdog's next renewal reaches the new
        // primary in time, no overlap.
        let out = failover(10.0, 10_000.0, false, seed);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}: crash after the lag");
        assert_eq!(events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).len(), 1);
    }
}

#[test]
fn with_down_after_30_s_the_30_s_lease_runs_out_before_the_promotion_even_after_the_lag() {
    // The replica had the lock (crash after the lag), but the lease set at the grant ends at
    // ~30 s, before Sentinel can promote (down-after 30 s + detection): the promoted replica's
    // key is already expired, and a waiter takes the lock from the 120 s holder.
    for seed in 0..3 {
        let out = failover(10.0, 30_000.0, false, seed);
        let switch = switch_time(&out)[0].0;
        assert!(switch > 30_000.0, "switch at {switch}");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
        let second = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }))[1].at_ns as f64 / 1e6;
        assert!(second > switch);
    }
}

#[test]
fn replica_ack_fails_the_acquisition_when_no_replica_acknowledges() {
    use Step::*;
    let cut = FaultKind::Partition {
        groups: vec![
            vec![locksim_simulator::scenario::Selector::Named("server-0".into())],
            vec![locksim_simulator::scenario::Selector::Named("server-1".into())],
        ],
        one_way: false,
    };
    let (mut spec, at, dur) = fault(cut, "server-0", 0.0, None);
    spec.targets.clear();
    let cfg = RedisConfig { replicas: 1, replica_ack: true, ..locksim_1() };
    let trace =
        scripted_config(&cfg, vec![vec![(10.0, Acquire(0)), (2000.0, Acquire(0))]], vec![(spec, at, dur)], 5000.0, 1);
    let failed = find(&trace, "client-0", "note", "lib Failed");
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(find(&trace, "client-0", "note", "lib Granted").is_empty());
    // Sent at 10 ms; the script ran at 10.25 ms and WAIT gave up 1 000 ms later.
    assert!(failed[0].0 > 1010.25 && failed[0].0 < 1011.0, "failed at {}", failed[0].0);
    assert!(failed[0].1.contains(&format!("{:?}", FailReason::Refused)));
    // The lock just taken was unlocked: the second attempt finds the key free again (the server
    // answers Acquired, and WAIT fails it again).
    let acquired = find(&trace, "server-0", "send", "Acquired");
    assert_eq!(acquired.len(), 2);
    assert!(find(&trace, "client-0", "note", "lib Refused").is_empty());
    // Without the cut, the replica acknowledges within the lag and the grant goes through.
    let trace = scripted_config(&cfg, vec![vec![(10.0, Acquire(0))]], vec![], 2000.0, 1);
    let granted = find(&trace, "client-0", "note", "lib Granted");
    assert_eq!(granted.len(), 1);
    // SET at 10.25 ms, on the replica at 10.30 + 5 + 0.25 ms, acknowledged back at ~15.85 ms.
    assert!(granted[0].0 > 15.0 && granted[0].0 < 17.0, "granted at {}", granted[0].0);
}

#[test]
fn the_old_primary_comes_back_as_a_replica_and_drops_its_data() {
    use Step::*;
    // client-0 takes the lock at ~0.5 ms; the primary crashes at 2 ms (inside the lag) and comes
    // back at 20 s with its AOF (persistence always: it still has the lock); by then server-1
    // has been promoted (down-after 5 s) and client-1 holds the lock there. No WAIT
    // (replica_ack = false), so that client-0 is granted before the crash.
    let trace = scripted_config(
        &RedisConfig {
            replicas: 1,
            down_after_ms: 5000.0,
            persistence: Persistence::Always,
            replica_ack: false,
            ..locksim_1()
        },
        vec![vec![(0.0, Acquire(0))], vec![(9000.0, Acquire(0))]],
        vec![fault(FaultKind::Crash { mode: CrashKind::Process }, "server-0", 2.0, Some(20_000.0))],
        40_000.0,
        3,
    );
    let granted = find(&trace, "client-1", "note", "lib Granted");
    assert_eq!(granted.len(), 1, "the promoted replica never had client-0's lock");
    let loaded = find(&trace, "server-0", "note", "restart: loaded");
    assert!(loaded[0].1.contains("loaded 2 keys"), "{loaded:?}");
    // Back at 20 s as a primary (its config says so); the Sentinels convert it 8 s after it
    // first reports that role, and its full resync replaces its keys with server-1's.
    let demoted = find(&trace, "server-0", "note", "now a replica of server-1 (demoted)");
    assert!(!demoted.is_empty());
    assert!(demoted[0].0 > 28_000.0 && demoted[0].0 < 30_500.0, "demoted at {}", demoted[0].0);
    let resync = find(&trace, "server-0", "note", "full resync");
    assert!(resync[0].1.contains("dropped 2 keys"), "{resync:?}");
    assert!(resync[0].0 > demoted[0].0);
}

const ACK_THROUGH_FAILOVER: &str = r#"
name = "ack-through-failover"
duration_ms = 45000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
replicas = 1
replica_ack = true
down_after_ms = 5000
[network]
latency_ms = 0.25
[workload]
clients = 3
[[faults]]
kind = "crash"
target = "server-0"
at_ms = 1000
duration_ms = 20000
"#;

#[test]
fn replica_ack_counts_only_replicas_that_replicate_the_current_primary() {
    for seed in 0..3 {
        let out = run(ACK_THROUGH_FAILOVER, "redis", seed);
        let switch = switch_time(&out)[0].0;
        let set_nx = requests_sent(&out, |c| matches!(c, Command::SetNxPx { .. }));
        let attempts = |from: f64, to: f64, waits: bool| {
            set_nx
                .iter()
                .filter(|a| a.at_ms() > from && a.at_ms() < to && a.node.starts_with("client"))
                .filter(|a| a.msg.wait.is_some() == waits)
                .count()
        };
        // After the switch the new primary has no replica: Redisson sees none available and
        // skips the WAIT; grants go on. (A command built before the switch and waiting out its
        // 1.5 s retryInterval is re-sent as it was, WAIT included.)
        assert!(attempts(switch + 10.0, 21_000.0, false) > 100, "seed {seed}");
        assert_eq!(attempts(switch + 1_510.0, 21_000.0, true), 0, "seed {seed}");
        // The old primary is back at 21 s as a primary, converted ~8 s later, resynchronised, and
        // announced up: from then on every attempt WAITs for it again, and none is refused.
        let up: Vec<_> = sent::<RedisMsg>(&out)
            .into_iter()
            .filter(|l| matches!(l.msg, RedisMsg::SentinelEvent(SentinelEvent::ReplicaUp { .. })))
            .collect();
        assert!(!up.is_empty(), "seed {seed}");
        let up_at = up[0].at_ms();
        assert!(up_at > 29_000.0 && up_at < 31_500.0, "seed {seed}: replica up at {up_at}");
        assert!(attempts(up_at + 10.0, 45_000.0, true) > 100, "seed {seed}");
        assert_eq!(attempts(up_at + 10.0, 45_000.0, false), 0, "seed {seed}");
        let refused = events(&out, |e| matches!(e, HistoryEvent::AcquireFailed { reason: FailReason::Refused, .. }));
        assert!(refused.is_empty(), "seed {seed}: {} acquisitions failed the WAIT check", refused.len());
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}
