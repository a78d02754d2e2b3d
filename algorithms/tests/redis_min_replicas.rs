//! `min_replicas_to_write` (Redis `min-replicas-to-write` / `min-replicas-max-lag`): an isolated
//! primary refuses writes with NOREPLICAS once its replica's last ACK is older than the lag, and
//! not before; with the stock setting (0) it never does.

use crate::redis_common;

use redis_common::*;

#[test]
fn an_isolated_primary_refuses_writes_once_its_replica_is_past_the_lag() {
    let text = known("14-redis-isolated-primary.toml");
    let out = run(&text, "min-replicas-1", 0);
    let refusals = responses_sent(&out, |a| *a == Answer::NoReplicas);
    // Before its replica's first ACK reaches it the primary has no good replica either, and
    // refuses (refreshGoodSlavesCount counts none): a start-up race that depends on the seed's
    // latencies. Every refusal before the cut comes before that first ACK.
    let first_ack = delivered::<RedisMsg>(&out)
        .iter()
        .find(|a| matches!(a.msg, RedisMsg::ReplAck(_)) && a.node == "server-0")
        .expect("a first ACK")
        .at_ms();
    assert!(
        refusals.iter().filter(|r| r.at_ms() < 5_000.0).all(|r| r.at_ms() < first_ack),
        "refused with a good replica"
    );
    // Cut at 5 s; the last ACK came at most 1 s before; refused once more than 10 whole seconds
    // separate it from the primary's clock.
    let first = refusals.iter().find(|r| r.at_ms() >= 5_000.0).expect("a refusal after the cut").at_ms();
    assert!(first > 15_000.0 && first < 17_100.0, "first NOREPLICAS after the cut at {first}");
    // Before the promotion (~35 s) only the isolated primary refuses; the promoted replica, with
    // no replica of its own until the heal, refuses too afterwards.
    assert!(refusals.iter().filter(|r| r.at_ms() < 34_000.0).all(|r| r.node == "server-0"));
    let out = run(&text, "default", 0);
    assert!(responses_sent(&out, |a| *a == Answer::NoReplicas).is_empty());
}
