//! Mechanism tests of etcd's sessions and leases, read from the trace and the history: when a
//! lease expires on the leader, how a new leader extends leases, the client's keep-alive cadence,
//! and when the client gives its session up.

use crate::etcd_common;

use etcd_common::*;
use locksim_simulator::history::HistoryEvent;

/// The node the first fault of `kind` starts on.
fn fault_target(out: &locksim_simulator::run::SeedOutcome, kind: &str) -> String {
    fault_start(out, kind).1.targets[0].clone()
}

/// The lease a client's session got (from its "session: lease N" note), the last one before `before_ms`.
fn lease_of(out: &locksim_simulator::run::SeedOutcome, client: &str, before_ms: f64) -> u64 {
    notes(out, "session: lease ")
        .into_iter()
        .rfind(|(t, n, _)| n == client && *t < before_ms)
        .map(|(_, _, d)| d.rsplit(' ').next().unwrap().parse().unwrap())
        .expect("the client had a session")
}

/// Times (ms) at which the leader `server` received a renewal of `lease`, from a client directly
/// or forwarded by a follower.
fn renewals_at(out: &locksim_simulator::run::SeedOutcome, server: &str, lease: u64) -> Vec<f64> {
    delivered::<EtcdMsg>(out)
        .into_iter()
        .filter(|l| l.node == server)
        .filter(|l| match l.msg {
            EtcdMsg::Request(Request { op: Op::KeepAlive { lease: l }, .. }) => *l == lease,
            EtcdMsg::Peer(Peer::Renew { lease: l, .. }) => *l == lease,
            _ => false,
        })
        .map(|l| l.at_ms())
        .collect()
}

/// Every keep-alive sent on a lease's stream, in order.
fn keep_alives_sent(
    out: &locksim_simulator::run::SeedOutcome,
) -> Vec<locksim_simulator::trace::MessageLine<'_, Request>> {
    requests_sent(out, |op| matches!(op, Op::KeepAlive { .. }))
}

const PAUSED_HOLDER: &str = r#"
name = "etcd-lease-expiry"
duration_ms = 30_000
algorithms = ["etcd"]

[models.etcd]
lease_ttl_ms = 5_000
# The session's end reaches the check at once: these tests pin the deadline loop's timing;
# clientv3's Done() goroutine racing the check is etcd_library.rs's.
session_done = "sync"

[workload]
clients = 3
hold_ms = 2_000

[[faults]]
kind = "pause"
target = "holder"
at_ms = 3_000
duration_ms = 12_000
"#;

/// A holder paused longer than its TTL: the leader's primary lessor revokes its lease one TTL
/// after the last renewal it saw, within one `lease_check_ms` tick (500 ms), on the leader's clock;
/// the revocation deletes the holder's key and the next waiter gets the lock while the paused
/// holder still believes it holds (overlap).
#[test]
fn a_lease_expires_one_ttl_after_the_last_renewal_on_the_leader() {
    for seed in 0..10 {
        let out = run(PAUSED_HOLDER, "etcd", seed);
        let holder = fault_target(&out, "pause");
        let lease = lease_of(&out, &holder, 3_000.0);
        let expired = notes(&out, &format!("lease {lease} expired: proposing revoke"));
        assert_eq!(expired.len(), 1, "seed {seed}: {expired:?}");
        let (expired_at, leader, _) = expired[0].clone();
        assert_eq!(leader, "server-0", "no fault touched the leader");
        let last = renewals_at(&out, &leader, lease).into_iter().rfind(|t| *t < expired_at).unwrap();
        let after = expired_at - last;
        assert!((5_000.0..=5_500.0 + 1.0).contains(&after), "seed {seed}: expired {after} ms after the last renewal");
        // The paused holder's last renewal was before the pause.
        assert!(last <= 3_000.0 + 1.0, "seed {seed}: renewed at {last} during the pause");
        let revoked = notes(&out, &format!("lease {lease} revoked: 1 keys deleted"));
        assert!(!revoked.is_empty() && revoked[0].0 - expired_at < 10.0, "seed {seed}: {revoked:?}");
        // The consequence: the next waiter holds while the paused holder still believes it does
        // (overlap). At resume the holder's 1 s deadline loop, due before the end of its 2 s
        // hold, runs first: the session is over, the application abandons without writing.
        assert!(out.metrics.overlap_events >= 1, "seed {seed}");
        let node = out.history.clients[holder.trim_start_matches("client-").parse::<usize>().unwrap()];
        let abandoned = events(&out, |e| matches!(e, HistoryEvent::Abandoned { .. }));
        assert!(abandoned.iter().any(|e| e.node == node && e.at_ns == 15_000_000_000), "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
    }
}

const LEADER_CRASH_PAUSED_CLIENT: &str = r#"
name = "etcd-lease-extension"
duration_ms = 40_000
algorithms = ["etcd"]

[models.etcd]
lease_ttl_ms = 5_000

[workload]
clients = 3
hold_ms = 200

[[faults]]
kind = "pause"
target = "client-0"
at_ms = 2_000
duration_ms = 30_000

[[faults]]
kind = "crash"
target = "server-0"
at_ms = 3_000
"#;

/// A client stops renewing at 2 s; the leader crashes at 3 s. Without the new leader's extension
/// the lease would expire about one TTL after its last renewal (before 7 s); the new leader
/// refreshes every lease to promotion + election timeout + TTL when it applies its first entry,
/// so the revocation comes exactly that long after the promotion (plus at most one check tick).
#[test]
fn a_new_leader_extends_every_lease_by_the_election_timeout() {
    for seed in 0..10 {
        let out = run(LEADER_CRASH_PAUSED_CLIENT, "etcd", seed);
        let lease = lease_of(&out, "client-0", 2_000.0);
        let promoted = notes(&out, "lessor promoted");
        let (promoted_at, new_leader, detail) =
            promoted.into_iter().find(|(t, _, _)| *t > 3_000.0).expect("a new leader was promoted");
        assert_ne!(new_leader, "server-0");
        assert!(detail.contains("leases extended") && !detail.contains(": 0 leases"), "{detail}");
        // A new leader within a few election timeouts (1 s each, randomised up to 2 s).
        assert!(promoted_at - 3_000.0 < 4_000.0, "seed {seed}: promoted at {promoted_at}");
        let expired = notes(&out, &format!("lease {lease} expired"));
        let (expired_at, at, _) = expired[0].clone();
        assert_eq!(at, new_leader);
        let after = expired_at - promoted_at;
        assert!((6_000.0..=6_500.0 + 1.0).contains(&after), "seed {seed}: revoked {after} ms after promotion");
        // Never earlier than the old leader would have revoked it.
        assert!(expired_at > 2_000.0 + 5_000.0);
    }
}

const STEADY: &str = r#"
name = "etcd-keepalive"
duration_ms = 130_000
algorithms = ["etcd"]

[workload]
clients = 2
hold_ms = 10
think_ms = 500
"#;

/// With the default TTL of 60 s, the client renews TTL/3 = 20 s after each answer, on its
/// 500 ms send loop: every gap between two keep-alives is in [20 s, 20.5 s].
#[test]
fn keep_alives_go_out_a_third_of_the_ttl_after_each_answer() {
    let out = run(STEADY, "etcd", 3);
    for client in ["client-0", "client-1"] {
        let sends: Vec<f64> =
            keep_alives_sent(&out).into_iter().filter(|k| k.node == client).map(|k| k.at_ms()).collect();
        assert!(sends.len() >= 6, "{client}: {sends:?}");
        for w in sends.windows(2) {
            let gap = w[1] - w[0];
            assert!((20_000.0..=20_500.0 + 5.0).contains(&gap), "{client}: keep-alive gap {gap} ms");
        }
    }
}

/// `keepalive_fraction = 0.8` (an application renewing its lease itself, late): every gap between
/// two keep-alives is 0.8 × TTL after the answer, on the 500 ms send loop: [48 s, 48.5 s].
#[test]
fn keep_alives_go_out_at_the_configured_fraction_of_the_ttl() {
    let out = run_edited(STEADY, "etcd", 3, |cfg| cfg.keepalive_fraction = 0.8);
    for client in ["client-0", "client-1"] {
        let sends: Vec<f64> =
            keep_alives_sent(&out).into_iter().filter(|k| k.node == client).map(|k| k.at_ms()).collect();
        assert!(sends.len() >= 3, "{client}: {sends:?}");
        for w in sends.windows(2) {
            let gap = w[1] - w[0];
            assert!((48_000.0..=48_500.0 + 5.0).contains(&gap), "{client}: keep-alive gap {gap} ms");
        }
    }
}

const ISOLATED_HOLDER: &str = r#"
name = "etcd-session-lost"
duration_ms = 40_000
algorithms = ["etcd"]

[models.etcd]
lease_ttl_ms = 5_000
# The session's end reaches the check at once: these tests pin the deadline loop's timing;
# clientv3's Done() goroutine racing the check is etcd_library.rs's.
session_done = "sync"

[workload]
clients = 3
hold_ms = 15_000

[[faults]]
kind = "isolate"
target = "holder"
at_ms = 2_000
duration_ms = 20_000
"#;

/// A holder cut off from every member: its keep-alives go unanswered; one TTL after the last
/// answer (checked by the 1 s deadline loop) the session is over and the application abandons the
/// critical section (it never writes). Meanwhile the leader revoked the lease and another client
/// got the lock: the holder stopped a little after the other began (the client's deadline runs
/// from when the answer arrived, the leader's from when it renewed), the overlap etcd's design
/// accepts without fencing; it never wrote in it.
#[test]
fn a_client_gives_its_session_up_a_ttl_after_the_last_answer() {
    for seed in 0..10 {
        let out = run(ISOLATED_HOLDER, "etcd", seed);
        let holder = fault_target(&out, "isolate");
        let node = out.history.clients[holder.trim_start_matches("client-").parse::<usize>().unwrap()];
        let answers: Vec<f64> = replies_delivered(&out, |r| matches!(r, Reply::KeepAlive { .. }))
            .into_iter()
            .filter(|a| a.node == holder && a.at_ms() < 2_000.0 + 1.0)
            .map(|a| a.at_ms())
            .collect();
        let last_answer = *answers.last().expect("answered before the cut");
        let over = notes(&out, "session over");
        let (over_at, _, _) = over.into_iter().find(|(_, n, _)| *n == holder).expect("session given up");
        let after = over_at - last_answer;
        assert!((5_000.0..=6_000.0 + 1.0).contains(&after), "seed {seed}: gave up {after} ms after the last answer");
        let abandoned = events(&out, |e| matches!(e, HistoryEvent::Abandoned { .. }));
        assert!(abandoned.iter().any(|e| e.node == node && (e.at_ns as f64 / 1e6 - over_at).abs() < 0.001));
        // The isolated holder never wrote after the cut.
        let late_writes = events(&out, |e| matches!(e, HistoryEvent::ResourceWrite { client, .. } if *client == node));
        assert!(late_writes.iter().all(|e| (e.at_ns as f64 / 1e6) < 2_000.0), "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0);
    }
}

/// The same cut-off holder in a program that ignores the session's end
/// (`on_session_lost = "proceed"`): the library still says the session is over a TTL after the
/// last answer, but the section goes on: no `Abandoned`, and the holder's write goes out after
/// the cut (the resource is cut off too, so it is sent after the heal or lost with the cut).
#[test]
fn an_application_that_ignores_the_session_end_does_not_abandon_its_section() {
    for seed in 0..5 {
        let out = run_edited(ISOLATED_HOLDER, "etcd", seed, |cfg| cfg.stop_on_session_lost = false);
        let holder = fault_target(&out, "isolate");
        let node = out.history.clients[holder.trim_start_matches("client-").parse::<usize>().unwrap()];
        assert!(notes(&out, "session over").iter().any(|(_, n, _)| *n == holder), "seed {seed}");
        let notices = events(&out, |e| matches!(e, HistoryEvent::LostNotice { .. }));
        assert!(notices.iter().any(|e| e.node == node), "seed {seed}: the library told the application");
        let abandoned = events(&out, |e| matches!(e, HistoryEvent::Abandoned { .. }));
        assert!(abandoned.iter().all(|e| e.node != node), "seed {seed}: the section was abandoned");
        let released =
            events(&out, |e| matches!(e, HistoryEvent::Released { .. } | HistoryEvent::ReleaseFailed { .. }));
        assert!(
            released.iter().any(|e| e.node == node && e.at_ns > 2_000_000_000),
            "seed {seed}: finished the section"
        );
    }
}
