//! The lock recipes, judged on the recorded history: grants in queue (sequence) order with
//! strictly increasing czxid tokens; one wake-up per release, going to the next in line
//! (sequential) against every waiter on every release (naive); readers sharing and writers
//! alone (read_write); nested acquisitions counting without a new node.

use crate::zookeeper_common;

use locksim_simulator::history::{HistoryEvent, LockMode};
use locksim_simulator::run::SeedOutcome;
use zookeeper_common::*;

const NO_FAULTS: &str = r#"
name = "zk-recipes"
duration_ms = 15000
[[variants]]
name = "sequential"
model = "zookeeper"
recipe = "sequential"
[[variants]]
name = "naive"
model = "zookeeper"
recipe = "naive"
[workload]
clients = 20
"#;

/// Non-nested grants in true-time order: (client node, token).
fn grants(out: &SeedOutcome) -> Vec<(usize, u64)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }))
        .into_iter()
        .map(|e| match e.event {
            HistoryEvent::Granted { token, .. } => (e.node, token.expect("zookeeper grants carry a token")),
            _ => unreachable!(),
        })
        .collect()
}

#[test]
fn grants_come_in_sequence_order_and_each_release_wakes_only_the_next_in_line() {
    for seed in 0..5 {
        let out = run(NO_FAULTS, "sequential", seed);
        assert_eq!(out.metrics.overlap_events, 0);
        let g = grants(&out);
        assert!(g.len() > 100, "seed {seed}: only {} grants", g.len());
        // Tokens are the lock nodes' czxids: granted strictly in creation order.
        for w in g.windows(2) {
            assert!(w[1].1 > w[0].1, "seed {seed}: token {} granted after {}", w[1].1, w[0].1);
        }
        // Every wake-up goes to the client granted next, and no release wakes two clients.
        let mut pending: Option<usize> = None;
        let mut wakeups = 0;
        for e in &out.history.events {
            match e.event {
                HistoryEvent::Notification { .. } => {
                    assert!(pending.is_none(), "seed {seed}: a second wake-up before the next grant at {} ns", e.at_ns);
                    pending = Some(e.node);
                    wakeups += 1;
                }
                HistoryEvent::Granted { nested: false, .. } => {
                    if let Some(n) = pending.take() {
                        assert_eq!(n, e.node, "seed {seed}: client {n} was woken but client {} was granted", e.node);
                    }
                }
                _ => {}
            }
        }
        // With 20 clients there is nearly always someone waiting behind the holder.
        let releases = out.metrics.releases;
        assert!(
            wakeups as u64 <= releases && wakeups as u64 + 25 >= releases,
            "seed {seed}: {wakeups} wake-ups, {releases} releases"
        );
    }
}

#[test]
fn the_naive_recipe_wakes_every_waiter_on_every_release() {
    // Ten clients queued at once, each acquiring once: 9 + 8 + ... + 1 = 45 wake-ups against 9.
    let herd = r#"
name = "zk-herd"
duration_ms = 60000
[[variants]]
name = "sequential"
model = "zookeeper"
recipe = "sequential"
[[variants]]
name = "naive"
model = "zookeeper"
recipe = "naive"
[workload]
clients = 10
hold_ms = 2000
think_ms = 0
acquisitions_per_client = 1
"#;
    for seed in 0..3 {
        let naive = run(herd, "naive", seed);
        let sequential = run(herd, "sequential", seed);
        assert_eq!(naive.metrics.acquisitions, 10);
        assert_eq!(sequential.metrics.acquisitions, 10);
        assert_eq!(naive.metrics.notifications, 45, "seed {seed}");
        assert_eq!(sequential.metrics.notifications, 9, "seed {seed}");
        assert_eq!(naive.metrics.overlap_events + sequential.metrics.overlap_events, 0);
        // Every release wakes every client still waiting: the k-th client granted was woken
        // once by each of the k - 1 releases before its grant (the events of one release reach
        // clients at different times, as each server applies the delete on its own).
        let mut woken = std::collections::BTreeMap::new();
        let mut per_grant = Vec::new();
        for e in &naive.history.events {
            match e.event {
                HistoryEvent::Notification { .. } => *woken.entry(e.node).or_insert(0) += 1,
                HistoryEvent::Granted { .. } => per_grant.push(woken.get(&e.node).copied().unwrap_or(0)),
                _ => {}
            }
        }
        assert_eq!(per_grant, (0..10).collect::<Vec<_>>(), "seed {seed}");
        // Each woken waiter tries to create the node again; all but one are refused.
        assert_eq!(naive.metrics.refused_attempts, 9 + 36, "seed {seed}");
    }
}

#[test]
fn readers_share_the_lock_and_writers_hold_it_alone() {
    let rw = r#"
name = "zk-rw"
duration_ms = 15000
[[variants]]
name = "read_write"
model = "zookeeper"
recipe = "read_write"
[workload]
clients = 10
read_fraction = 0.6
hold_ms = { uniform = [20, 60] }
"#;
    for seed in 0..3 {
        let out = run(rw, "read_write", seed);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}: an exclusive hold overlapped");
        // Walk the holder intervals: count concurrent readers and writers.
        let mut readers = 0i32;
        let mut writers = 0i32;
        let mut max_readers = 0;
        let mut modes = std::collections::BTreeMap::new();
        let (mut shared_grants, mut exclusive_grants) = (0, 0);
        for e in &out.history.events {
            match e.event {
                HistoryEvent::Granted { mode, nested: false, .. } => {
                    modes.insert(e.node, mode);
                    match mode {
                        LockMode::Shared => {
                            readers += 1;
                            shared_grants += 1;
                        }
                        LockMode::Exclusive => {
                            writers += 1;
                            exclusive_grants += 1;
                        }
                    }
                    assert!(
                        writers <= 1 && (writers == 0 || readers == 0),
                        "seed {seed}: {writers} writers with {readers} readers"
                    );
                    max_readers = max_readers.max(readers);
                }
                HistoryEvent::Released { nested: false, .. } | HistoryEvent::Abandoned { .. } => {
                    match modes.remove(&e.node) {
                        Some(LockMode::Shared) => readers -= 1,
                        Some(LockMode::Exclusive) => writers -= 1,
                        None => {}
                    }
                }
                _ => {}
            }
        }
        assert!(
            shared_grants > 50 && exclusive_grants > 20,
            "seed {seed}: {shared_grants} shared, {exclusive_grants} exclusive"
        );
        assert!(max_readers >= 3, "seed {seed}: readers never shared (at most {max_readers} at once)");
    }
}

#[test]
fn nested_acquisitions_count_without_creating_a_node() {
    let nested = r#"
name = "zk-reentry"
duration_ms = 10000
[[variants]]
name = "sequential"
model = "zookeeper"
recipe = "sequential"
[[variants]]
name = "naive"
model = "zookeeper"
recipe = "naive"
[workload]
clients = 4
reentry = 1.0
"#;
    let out = run(nested, "sequential", 1);
    let outer = events(&out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. })).len();
    let inner = events(&out, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })).len();
    assert!(outer > 50);
    // Every hold nests once (reentry = 1); the last holds of the run may still be unnested.
    assert!(inner + 4 >= outer && inner <= outer, "{outer} outer, {inner} nested");
    // A nested grant carries the outer grant's token: the same node.
    let mut last_token = std::collections::BTreeMap::new();
    for e in &out.history.events {
        if let HistoryEvent::Granted { token, nested, .. } = e.event {
            if nested {
                assert_eq!(last_token.get(&e.node), Some(&token));
            }
            last_token.insert(e.node, token);
        }
    }
    // One lock node per outer acquisition: creates sent = outer grants (+ those still waiting).
    let creates =
        requests_sent(&out, |op| matches!(op, Op::Create(_))).iter().filter(|c| c.node.starts_with("client-")).count();
    assert!(creates >= outer && creates <= outer + 4, "{creates} creates for {outer} acquisitions");
    assert_eq!(out.metrics.overlap_events, 0);

    // The naive recipe is not reentrant: the workload skips nesting.
    let naive = run(nested, "naive", 1);
    assert!(events(&naive, |e| matches!(e, HistoryEvent::Granted { nested: true, .. })).is_empty());
    assert!(naive.metrics.acquisitions > 50);
}

#[test]
fn known_outcome_7_counts_1225_wakeups_for_the_naive_recipe_and_49_for_the_sequential_one() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/known/07-zookeeper-herd.toml"))
            .expect("the known-outcome scenario");
    for seed in 0..2 {
        let naive = run_with(&text, "naive", seed, false);
        let sequential = run_with(&text, "sequential", seed, false);
        assert_eq!((naive.metrics.acquisitions, naive.metrics.releases), (50, 50), "seed {seed}");
        assert_eq!(naive.metrics.notifications, 1225, "seed {seed}");
        assert_eq!(sequential.metrics.notifications, 49, "seed {seed}");
        assert_eq!(naive.metrics.overlap_events + sequential.metrics.overlap_events, 0);
    }
}
