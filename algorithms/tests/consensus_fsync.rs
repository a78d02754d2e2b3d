//! A follower's disk sync (`fsync_ms`, etcd and ZooKeeper): a write commits only once a quorum
//! has it on disk, so each write a lock acquisition makes waits one sync longer, and the
//! follower's acknowledgement leaves when its sync is done. With `fsync_ms = 0` (the default)
//! nothing changes and nothing is drawn.

use crate::common;

use common::{delivered, events, run, sent};
use locksim_algorithms::consensus::ConsensusMsg;
use locksim_algorithms::etcd::protocol::EtcdMsg;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

/// One client taking one lock in turn on three members: no contention, so a section's wait is
/// the recipe's own calls.
fn scenario(model: &str, fsync: &str) -> String {
    // etcd as before presets (one member per client): clientv3-3.5, the default, spreads the
    // calls round-robin, and a follower's sync then queues behind another one, which would blur
    // the one-sync-per-acknowledgement timing pinned below.
    let pin = if model == "etcd" { "client = \"locksim-1\"" } else { "" };
    format!(
        r#"
name = "fsync"
duration_ms = 20_000
algorithms = ["{model}"]

[network]
latency_ms = 1

[models.{model}]
fsync_ms = {fsync}
{pin}

[workload]
clients = 1
hold_ms = 50
think_ms = 50
"#
    )
}

/// Median time (ms) from each section's first acquire call to its grant. (The first section
/// also opens the session and, in ZooKeeper, creates the lock's parent node: more writes.)
fn median_wait_ms(out: &SeedOutcome) -> f64 {
    let starts = events(out, |e| matches!(e, HistoryEvent::AcquireStart { .. }));
    let grants = events(out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    assert!(grants.len() > 50, "{} grants", grants.len());
    let mut waits: Vec<f64> = starts.iter().zip(&grants).map(|(s, g)| (g.at_ns - s.at_ns) as f64 / 1e6).collect();
    waits.sort_by(f64::total_cmp);
    waits[waits.len() / 2]
}

/// The extra median wait a 20 ms sync gives `model`'s sections, in milliseconds.
fn extra_wait_ms_with_a_20_ms_sync(model: &str) -> f64 {
    let fast = median_wait_ms(&run(&scenario(model, "0"), model, 1));
    let synced = median_wait_ms(&run(&scenario(model, "20"), model, 1));
    println!("{model}: wait {fast:.3} ms without a sync, {synced:.3} ms with");
    synced - fast
}

/// etcd's Mutex.Lock is one write (the lock transaction) and reads: with a 20 ms sync every
/// section waits 20 ms longer (both followers sync in parallel; the leader needs one).
#[test]
fn an_etcd_lock_waits_one_sync_longer() {
    let extra = extra_wait_ms_with_a_20_ms_sync("etcd");
    assert!((19.9..20.1).contains(&extra), "{extra:.3} ms more");
}

/// Curator's lock makes one write (its ephemeral sequential node) and reads (the children):
/// one sync longer, as in etcd.
#[test]
fn a_zookeeper_lock_waits_one_sync_longer() {
    let extra = extra_wait_ms_with_a_20_ms_sync("zookeeper");
    assert!((19.9..20.1).contains(&extra), "{extra:.3} ms more");
}

/// The follower's acknowledgement of an append with entries leaves when its sync is done: 20 ms
/// after the append arrived, once the start-up's syncs (which queue one behind another) are
/// over.
#[test]
fn a_follower_acknowledges_entries_after_its_sync() {
    let out = run(&scenario("etcd", "20"), "etcd", 1);
    let appends: Vec<(f64, &str)> = delivered::<EtcdMsg>(&out)
        .into_iter()
        .filter(|d| d.at_ms() > 1000.0 && d.node != "server-0")
        .filter(|d| matches!(d.msg, EtcdMsg::Consensus(ConsensusMsg::Append { entries, .. }) if !entries.is_empty()))
        .map(|d| (d.at_ms(), d.node))
        .collect();
    assert!(appends.len() > 50, "{} appends with entries", appends.len());
    let acks: Vec<_> = sent::<EtcdMsg>(&out)
        .into_iter()
        .filter(|s| matches!(s.msg, EtcdMsg::Consensus(ConsensusMsg::AppendReply { success: true, .. })))
        .collect();
    let mut checked = 0;
    for (at, node) in appends.iter().take(40) {
        let ack = acks.iter().find(|a| a.node == *node && a.at_ms() >= *at).expect("an acknowledgement");
        // Traced when it is handed to the network: its arrival says when it left.
        let arrives = ack.arrives_ns.expect("a sent message arrives") as f64 / 1e6;
        let left = arrives - 1.0;
        assert!((left - at - 20.0).abs() < 0.01, "{node}: append at {at:.3} ms, ack left at {left:.3} ms");
        checked += 1;
    }
    assert_eq!(checked, 40);
}
