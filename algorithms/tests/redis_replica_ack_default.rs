//! The redis model's default preset (issue 32: the default is the newest stable release of the
//! library whose lock the row asks for; row 6). A row that names no `client` runs `redis-py-8` for
//! the plain pattern: only `SET NX` (PX with the application's timeout), never `WAIT`, so the grant
//! comes at the `SET`'s answer even with a replica. A row that sets `watchdog = true` runs
//! `redisson-4.7`, whose `checkLockSyncedSlaves` (true by default, `slavesSyncTimeout` 1000 ms)
//! pipelines the lock script with `WAIT 1 1000`. Before the flip (`client = "locksim-1"`) the plain
//! pattern `WAIT`ed too, which no library does for it.

use crate::redis_common;

use redis_common::*;

#[test]
fn by_default_the_plain_pattern_grants_at_the_sets_answer_as_redis_py_does() {
    use Step::*;
    let script = || vec![vec![(10.0, Acquire(0))]];
    // SET at 10.25 ms, answered at 10.55 ms: granted there, no WAIT, no TTL (timeout=None).
    let trace = scripted_as_given("replicas = 1", script(), vec![], 2000.0, 1);
    let sent = find(&trace, "client-0", "send", "Request");
    assert_eq!(sent.len(), 1);
    assert!(sent[0].1.contains("cmd: SetNx {") && sent[0].1.contains("wait: None"), "{}", sent[0].1);
    let granted = find(&trace, "client-0", "note", "lib Granted");
    assert!((granted[0].0 - 10.55).abs() < 1e-9, "granted at {}", granted[0].0);
    // The same with client = "redis-py-8" named: the same trace.
    let named = scripted_as_given("replicas = 1\nclient = \"redis-py-8\"", script(), vec![], 2000.0, 1);
    assert_eq!(trace, named);

    // locksim-1 (the default before the flip): the plain pattern's SET went with WAIT 1 1000, and
    // the grant waited for the replica's acknowledgement (~15.85 ms).
    let trace = scripted_as_given("replicas = 1\nclient = \"locksim-1\"", script(), vec![], 2000.0, 1);
    let sent = find(&trace, "client-0", "send", "cmd: SetNxPx");
    assert!(sent[0].1.contains("wait: Some(WaitSpec { replicas: 1, timeout_ms: 1000 })"), "{}", sent[0].1);
    let granted = find(&trace, "client-0", "note", "lib Granted");
    assert!(granted[0].0 > 15.0 && granted[0].0 < 17.0, "granted at {}", granted[0].0);
}

#[test]
fn by_default_the_watchdog_lock_is_redisson_4_7_and_waits_for_the_replica() {
    use Step::*;
    let script = || vec![vec![(10.0, Acquire(0))]];
    let trace = scripted_as_given("replicas = 1\nwatchdog = true", script(), vec![], 2000.0, 1);
    let sent = find(&trace, "client-0", "send", "HLock");
    assert_eq!(sent.len(), 1);
    assert!(sent[0].1.contains("wait: Some(WaitSpec { replicas: 1, timeout_ms: 1000 })"), "{}", sent[0].1);
    let named =
        scripted_as_given("replicas = 1\nwatchdog = true\nclient = \"redisson-4.7\"", script(), vec![], 2000.0, 1);
    assert_eq!(trace, named, "watchdog = true with no client is redisson-4.7");
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
fn no_attempt_of_a_default_run_with_a_replica_waits_and_the_table_names_redis_py_8() {
    let out = run(WITH_A_REPLICA, "redis", 0);
    let attempts = requests_sent(&out, |c| matches!(c, Command::SetNx { .. }));
    assert!(attempts.len() > 50, "{} attempts", attempts.len());
    assert!(attempts.iter().all(|a| a.msg.wait.is_none()));
    assert_eq!(out.metrics.overlap_events, 0);
    let models = locksim_algorithms::registry();
    let sc = locksim_simulator::scenario::parse_str("r.toml", WITH_A_REPLICA, &models).unwrap();
    let row = &sc.runs[0];
    assert_eq!(row.model.library(&row.params).as_deref(), Some("redis-py-8"));
    // Pinned to locksim-1, every attempt carries the WAIT, as before the flip.
    let old = run(&WITH_A_REPLICA.replace("replicas = 1", "replicas = 1\nclient = \"locksim-1\""), "redis", 0);
    let attempts = requests_sent(&old, |c| matches!(c, Command::SetNxPx { .. }));
    assert!(attempts.len() > 50, "{} attempts", attempts.len());
    assert!(attempts.iter().all(|a| a.msg.wait == Some(WaitSpec { replicas: 1, timeout_ms: 1000 })));
}
