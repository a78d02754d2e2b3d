//! Mechanism tests of the etcd recipes package's RWMutex (`recipe = "rwmutex"`): readers share and
//! writers exclude, a reader waits only on older writers, and a failed unlock leaves its key in
//! the queue for good (the recipe names a new key per call, so nothing re-holds it).

use crate::etcd_common;

use etcd_common::*;
use locksim_simulator::history::{HistoryEvent, LockMode};
use locksim_simulator::run::SeedOutcome;

const MIXED: &str = r#"
name = "etcd-rwmutex"
duration_ms = 20_000
algorithms = ["etcd"]

[models.etcd]
recipe = "rwmutex"

[workload]
clients = 6
hold_ms = { uniform = [5, 50] }
read_fraction = 0.5
"#;

/// Each client's holds as (mode, from ns, to ns), from its grants to its releases.
fn holds(out: &SeedOutcome) -> Vec<(usize, LockMode, u64, u64)> {
    let mut open: Vec<(usize, LockMode, u64)> = Vec::new();
    let mut done = Vec::new();
    for e in &out.history.events {
        match &e.event {
            HistoryEvent::Granted { mode, nested: false, .. } => open.push((e.node, *mode, e.at_ns)),
            HistoryEvent::Released { nested: false, .. } => {
                let i = open.iter().position(|o| o.0 == e.node).expect("a release follows a grant");
                let (node, mode, from) = open.remove(i);
                done.push((node, mode, from, e.at_ns));
            }
            _ => {}
        }
    }
    done
}

/// Readers hold at the same time; a writer never holds while anyone else does.
#[test]
fn readers_share_and_a_writer_excludes_everyone() {
    let mut shared_together = 0;
    for seed in 0..4 {
        let out = run(MIXED, "etcd", seed);
        let h = holds(&out);
        assert!(h.len() > 100, "seed {seed}: {} holds", h.len());
        for (i, a) in h.iter().enumerate() {
            for b in &h[i + 1..] {
                let overlap = a.2 < b.3 && b.2 < a.3;
                if !overlap {
                    continue;
                }
                assert!(
                    a.1 == LockMode::Shared && b.1 == LockMode::Shared,
                    "seed {seed}: {a:?} and {b:?} overlap with a writer"
                );
                shared_together += 1;
            }
        }
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
    assert!(shared_together > 50, "readers shared only {shared_together} times");
}

/// `waitOnLastRev`: a reader asks only for the last older key under `<prefix>write`, so every key
/// a reader waits for is a writer's; writers wait on readers' keys too.
#[test]
fn a_reader_waits_only_on_older_writers() {
    let out = run(MIXED, "etcd", 1);
    // The mode of each waiting note: the client's next grant.
    let grants = events(&out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }));
    let mut by_reader = 0;
    let mut writer_on_reader = 0;
    for (at_ms, node, detail) in notes(&out, ": waiting for /lock/") {
        let idx: usize = node.trim_start_matches("client-").parse().unwrap();
        let id = out.history.clients[idx];
        let next = grants.iter().find(|g| g.node == id && g.at_ns as f64 / 1e6 >= at_ms);
        let Some(HistoryEvent::Granted { mode, .. }) = next.map(|g| &g.event) else { continue };
        match mode {
            LockMode::Shared => {
                assert!(detail.contains("/lock/0/write/"), "a reader waits on {detail}");
                by_reader += 1;
            }
            LockMode::Exclusive => writer_on_reader += usize::from(detail.contains("/lock/0/read/")),
        }
    }
    assert!(
        by_reader > 10 && writer_on_reader > 10,
        "{by_reader} reader waits, {writer_on_reader} writer waits on readers"
    );
}

/// Known outcome 23's mechanism: a client whose Delete went to the isolated leader gets no answer
/// within the 7 s deadline; the unlock fails and is not resent. Its key stays (its session lives on
/// another member), the next key in the queue waits on it by its create revision (and each later
/// one on the key before it), and nobody is granted again.
#[test]
fn a_failed_unlock_leaves_its_key_and_every_later_lock_waits_behind_it() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/known/23-etcd-rwlock-leader-partition.toml"
    ))
    .unwrap();
    let out = run(&text, "etcd", 0);
    let failed = events(&out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. }));
    let failed = failed.first().expect("an unlock fails");
    let name = format!("client-{}", out.history.clients.iter().position(|&c| c == failed.node).unwrap());
    let failed_ms = failed.at_ns as f64 / 1e6;
    // The revision the failed client held under.
    let (_, _, held) = notes(&out, ": held with create revision ")
        .into_iter()
        .rfind(|(t, n, _)| *n == name && *t < failed_ms)
        .expect("it held");
    let rev = held.rsplit(' ').next().unwrap().to_string();
    let waits_on_it = notes(&out, &format!("(create revision {rev}) to go"));
    assert!(!waits_on_it.is_empty(), "the next key in the queue waits on revision {rev}");
    let later = events(&out, |e| matches!(e, HistoryEvent::Granted { .. }));
    assert!(later.iter().all(|g| g.at_ns <= failed.at_ns), "someone was granted after the failed unlock");
}
