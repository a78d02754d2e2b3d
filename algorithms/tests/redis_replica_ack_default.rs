//! `replica_ack` follows Redisson's default: `checkLockSyncedSlaves` is true (Redisson `Config`,
//! since the setting came in 3.17.0) with `slavesSyncTimeout` 1000 ms. With a replica and no
//! `replica_ack` in the scenario, the acquiring command is pipelined with `WAIT 1 1000` and the
//! grant waits for the replica's acknowledgement; `replica_ack = false` grants at the `SET`'s answer.
//! In a whole run with a replica, every attempt carries the `WAIT`.

mod redis_common;

use redis_common::*;

#[test]
fn by_default_the_grant_waits_for_the_replica_as_redisson_does() {
    use Step::*;
    let script = || vec![vec![(10.0, Acquire(0))]];
    let trace = scripted("replicas = 1", script(), vec![], 2000.0, 1);
    let sent = find(&trace, "client-0", "send", "cmd: SetNxPx");
    assert_eq!(sent.len(), 1);
    assert!(sent[0].1.contains("wait: Some(WaitSpec { replicas: 1, timeout_ms: 1000 })"), "{}", sent[0].1);
    // SET at 10.25 ms, on the replica 5 ms (the lag) and a link later, acknowledged back at
    // ~15.85 ms: the grant comes after the acknowledgement, not at the SET's answer (10.55 ms).
    let granted = find(&trace, "client-0", "note", "lib Granted");
    assert_eq!(granted.len(), 1);
    assert!(granted[0].0 > 15.0 && granted[0].0 < 17.0, "granted at {}", granted[0].0);

    let trace = scripted("replicas = 1\nreplica_ack = false", script(), vec![], 2000.0, 1);
    assert!(find(&trace, "client-0", "send", "cmd: SetNxPx")[0].1.contains("wait: None"));
    let granted = find(&trace, "client-0", "note", "lib Granted");
    assert!((granted[0].0 - 10.55).abs() < 1e-9, "granted at {}", granted[0].0);
}

const WITH_A_REPLICA: &str = r#"
name = "with-a-replica"
duration_ms = 3000
algorithms = ["redis"]
[models.redis]
replicas = 1
[workload]
clients = 5
"#;

#[test]
fn every_attempt_of_a_run_with_a_replica_waits_for_it_by_default() {
    let out = run(WITH_A_REPLICA, "redis", 0);
    let attempts = trace(&out, "send", "cmd: SetNxPx");
    assert!(attempts.len() > 50, "{} attempts", attempts.len());
    assert!(attempts.iter().all(|(_, _, d)| d.contains("wait: Some(WaitSpec { replicas: 1, timeout_ms: 1000 })")));
    // The replica acknowledges within the lag: nothing fails the check, nothing overlaps.
    assert_eq!(out.metrics.failed_acquisitions, 0);
    assert_eq!(out.metrics.overlap_events, 0);
    assert!(out.metrics.acquisitions > 20, "{} acquisitions", out.metrics.acquisitions);
}
