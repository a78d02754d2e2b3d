//! `min_replicas_to_write` (Redis `min-replicas-to-write` / `min-replicas-max-lag`): an isolated
//! primary refuses writes with NOREPLICAS once its replica's last ACK is older than the lag, and
//! not before; with the stock setting (0) it never does.

mod redis_common;

use redis_common::*;

#[test]
fn an_isolated_primary_refuses_writes_once_its_replica_is_past_the_lag() {
    let text = known("14-redis-isolated-primary.toml");
    let out = run(&text, "min-replicas-1", 0);
    let refusals = trace(&out, "send", "NoReplicas");
    assert!(!refusals.is_empty());
    // Cut at 5 s; the last ACK came at most 1 s before; refused once more than 10 whole seconds
    // separate it from the primary's clock.
    let first = refusals[0].0;
    assert!(first > 15_000.0 && first < 17_100.0, "first NOREPLICAS at {first}");
    // Before the promotion (~35 s) only the isolated primary refuses; the promoted replica, with
    // no replica of its own until the heal, refuses too afterwards.
    assert!(refusals.iter().filter(|r| r.0 < 34_000.0).all(|r| r.1 == "server-0"));
    let out = run(&text, "default", 0);
    assert!(trace(&out, "send", "NoReplicas").is_empty());
}
