//! Mechanism tests of the clientv3/concurrency Mutex on the etcd model: grants in queue order
//! with one wake-up per release, issue #11456 (`recheck_after_wait = false`), and a leader crash
//! that costs availability and nothing else.

use crate::etcd_common;

use etcd_common::*;
use locksim_simulator::history::{FailReason, HistoryEvent};

const QUEUE: &str = r#"
name = "etcd-queue"
duration_ms = 20_000
algorithms = ["etcd"]

[workload]
clients = 50
think_ms = 0
acquisitions_per_client = 1
"#;

/// 50 clients queue at once and each locks once. The lowest create revision holds and each
/// waiter watches only the key just below its own, so: grants come in create-revision order
/// (the fencing tokens rise by grant), each waiter is granted the revision its own transaction
/// created, every release but the last wakes exactly one waiter (49 wake-ups), nobody overlaps.
#[test]
fn grants_follow_the_queue_with_one_wake_up_per_release() {
    for seed in 0..20 {
        let out = run(QUEUE, "etcd", seed);
        let grants = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
        assert_eq!(grants.len(), 50, "seed {seed}");
        let tokens: Vec<u64> = grants
            .iter()
            .map(|g| match g.event {
                HistoryEvent::Granted { token, .. } => token.unwrap(),
                _ => unreachable!(),
            })
            .collect();
        assert!(tokens.windows(2).all(|w| w[0] < w[1]), "seed {seed}: tokens out of order {tokens:?}");
        // Each grant's token is the create revision of that client's own key (its Txn answer).
        for g in &grants {
            let HistoryEvent::Granted { token: Some(t), .. } = g.event else { unreachable!() };
            let name = format!("client-{}", client_index(&out, g.node));
            let created =
                replies_delivered(&out, |r| matches!(r, Reply::Txn { my_create_rev, .. } if *my_create_rev == t));
            assert!(created.iter().any(|c| c.node == name), "seed {seed}: {name} granted {t} without creating it");
        }
        let notes = events(&out, |e| matches!(e, HistoryEvent::Notification { .. }));
        assert_eq!(notes.len(), 49, "seed {seed}: wake-ups");
        assert_eq!(out.metrics.notifications, 49);
        // Each wake-up follows a release and precedes the woken client's grant.
        for n in &notes {
            let granted = grants.iter().find(|g| g.node == n.node).unwrap();
            assert!(granted.at_ns > n.at_ns);
        }
        assert_eq!(out.metrics.overlap_events, 0);
        assert_eq!(out.metrics.token_regressions, 0);
    }
}

const WAITER_PAUSED: &str = r#"
name = "etcd-issue-11456"
duration_ms = 40_000

[[variants]]
name = "recheck"
model = "etcd"
lease_ttl_ms = 5_000

[[variants]]
name = "etcd-3.4.3"
model = "etcd"
lease_ttl_ms = 5_000
recheck_after_wait = false

[workload]
clients = 3
hold_ms = 8_000
think_ms = { uniform = [0, 20] }

[[faults]]
kind = "pause"
target = "waiter"
at_ms = 1_000
duration_ms = 10_000
"#;

/// A waiter is paused for 10 s, longer than its 5 s TTL: the leader revokes its lease and deletes
/// its key while it waits. When it resumes, the delete event it was waiting for comes in and
/// waitDeletes finds no older key. etcd 3.4.3 (`recheck_after_wait = false`) returns success
/// without looking at its own key: it holds while another client holds (overlap, in every seed).
/// The fixed Mutex re-reads its own key, finds it gone and fails with ErrSessionExpired.
#[test]
fn issue_11456_a_waiter_whose_lease_expired_is_told_it_holds() {
    for seed in 0..10 {
        let buggy = run(WAITER_PAUSED, "etcd-3.4.3", seed);
        assert!(buggy.metrics.overlap_events >= 1, "seed {seed}: no overlap with recheck_after_wait = false");
        let waiter = &fault_start(&buggy, "pause").1.targets[0];
        let node = buggy.history.clients[waiter.trim_start_matches("client-").parse::<usize>().unwrap()];
        // The waiter's own key was revoked during the pause, and it was still granted afterwards.
        let lease_gone = notes(&buggy, "revoked: 1 keys deleted");
        assert!(lease_gone.iter().any(|(t, _, _)| (5_000.0..11_000.0).contains(t)), "seed {seed}");
        let late_grant = events(&buggy, |e| matches!(e, HistoryEvent::Granted { .. }))
            .into_iter()
            .any(|g| g.node == node && g.at_ns >= 11_000_000_000);
        assert!(late_grant, "seed {seed}: the paused waiter was not granted after resuming");

        let fixed = run_with(WAITER_PAUSED, "recheck", seed, false);
        assert_eq!(fixed.metrics.overlap_events, 0, "seed {seed}: overlap with the recheck");
        let session_lost =
            events(&fixed, |e| matches!(e, HistoryEvent::AcquireFailed { reason: FailReason::SessionLost, .. }));
        assert!(
            session_lost.iter().any(|e| e.node == node),
            "seed {seed}: the waiter did not fail with session expired"
        );
    }
}

const LEADER_CRASH: &str = r#"
name = "etcd-leader-crash"
duration_ms = 30_000
algorithms = ["etcd"]

[workload]
clients = 50

[[faults]]
kind = "crash"
target = "leader"
at_ms = 8_000
duration_ms = 10_000
"#;

/// The leader crashes while the lock is held: another member leads within a few seconds, the
/// leases are extended (none expires: the TTL is 60 s), grants resume with rising tokens, and the
/// only cost is a gap without grants.
#[test]
fn a_leader_crash_costs_only_availability() {
    for seed in 0..10 {
        let out = run(LEADER_CRASH, "etcd", seed);
        let promoted = notes(&out, "lessor promoted");
        let (at, who, detail) = promoted.into_iter().find(|(t, _, _)| *t > 8_000.0).expect("new leader");
        assert_ne!(who, "server-0");
        assert!(detail.contains("50 leases extended"), "{detail}");
        assert!(at - 8_000.0 < 3_000.0, "seed {seed}: new leader after {} ms", at - 8_000.0);
        assert!(notes(&out, "expired: proposing revoke").is_empty(), "seed {seed}: a lease expired");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
        // An Unlock in flight on the killed leader fails (clientv3 does not resend a Delete):
        // that client's next Lock finds its key still first and holds again under the same
        // revision, which the token metric counts; no other kind of regression.
        assert_eq!(regressions_other_than_regrants(&out), 0, "seed {seed}");
        let grants: Vec<f64> =
            events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).iter().map(|g| g.at_ns as f64 / 1e6).collect();
        assert!(grants.iter().any(|t| *t > 20_000.0), "seed {seed}: grants did not resume");
        let gap = grants.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
        assert!(gap > 500.0, "seed {seed}: no availability gap ({gap} ms)");
    }
}

const LOSSY: &str = r#"
name = "etcd-lossy"
duration_ms = 40_000
algorithms = ["etcd"]

[network]
loss = 0.01
duplicate = 0.01

[workload]
clients = 20
acquire_timeout_ms = { uniform = [50, 3_000] }
"#;

/// 1 % loss and duplication, and clients that give up waiting after 50 ms to 3 s (the Mutex's
/// context is cancelled: a waiter deletes its key, a transaction in flight is left to the next
/// Lock). Lost messages cost time (a lost Delete fails its Unlock: `ReleaseFailed`) (a lost call costs the 7 s request timeout, so two unlucky
/// losses in a row can stall the lock for 14 s; keep-alives are resent every 500 ms; watch events
/// are retransmitted), never safety, and nothing hangs for good.
#[test]
fn loss_duplication_and_cancelled_waits_cost_time_not_safety() {
    for seed in 0..10 {
        let out = run_with(LOSSY, "etcd", seed, false);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        assert_eq!(regressions_other_than_regrants(&out), 0, "seed {seed}");
        assert!(out.metrics.failed_acquisitions > 0, "seed {seed}: no acquisition timed out");
        let last_grant = events(&out, |e| matches!(e, HistoryEvent::Granted { .. })).last().map(|g| g.at_ns).unwrap();
        assert!(last_grant > 25_000_000_000, "seed {seed}: grants stopped at {} ms", last_grant / 1_000_000);
        // A lost Delete fails its Unlock after the 7 s timeout (clientv3 does not resend it):
        // the key stays until its client locks again, so a few seeds grant a little less.
        assert!(out.metrics.acquisitions > 20, "seed {seed}: {}", out.metrics.acquisitions);
    }
}

/// The same seed twice gives the same trace (the model draws only from its nodes' streams and
/// iterates only ordered collections).
#[test]
fn runs_are_deterministic() {
    for (toml, label) in [(LEADER_CRASH, "etcd"), (LOSSY, "etcd"), (WAITER_PAUSED, "etcd-3.4.3")] {
        let a = run(toml, label, 5);
        let b = run(toml, label, 5);
        assert_eq!(a.trace_hash, b.trace_hash);
        assert_ne!(a.trace_hash, run(toml, label, 6).trace_hash);
    }
}
