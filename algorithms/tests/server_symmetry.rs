//! Server symmetry (issue 36): Redlock's masters are renamed by the symmetric fingerprint when
//! the client treats them as a set (the parallel request modes: redsync, node-redlock), and only
//! then. Two worlds that differ only by which of two masters was paused merge, and so does every
//! state a walk of every tie order reaches from them; under sequential requests (redlock-rb,
//! which visits `server-0` first) they stay apart; a world differing in what matters (the
//! pause's length) never merges with them; a master a search's fault menu names is pinned. The masters persist with `always`: under `everysec`
//! each one's fsync phase, drawn at its start, is state that tells it from the others.

use std::collections::BTreeSet;

use locksim_algorithms::redlock::protocol::{Command, Reply, Request};
use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::scenario::types::RunSpec;
use locksim_simulator::search::{Injection, SearchWorld};
use locksim_simulator::setup::{FaultKind, Setup};

use crate::walk_common::walk;

/// Three masters, one client acquiring once, under each request mode.
const SCENARIO: &str = r#"
name = "redlock-server-symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["redlock"]

[models.redlock]
masters = 3
ttl_ms = 500
requests = "sequential"
# With the default `everysec` each master arms its fsync timer at a phase drawn from its own
# stream: real state that tells the masters apart (no mirror image exists). `always` arms none.
persistence = "always"

[[variants]]
name = "redlock-parallel"
model = "redlock"
requests = "parallel"
masters = 3
ttl_ms = 500
persistence = "always"

[[variants]]
name = "redlock-parallel-quorum"
model = "redlock"
requests = "parallel_quorum"
masters = 3
ttl_ms = 500
persistence = "always"

[network]
latency_ms = 1

[workload]
clients = 1
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

const MS: u64 = 1_000_000;

/// The row labelled `label` of the scenario, and its setup.
fn row(label: &str) -> (RunSpec, Setup) {
    let models = locksim_algorithms::registry();
    let sc = parse_str("redlock-server-symmetry.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = sc.runs.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row {label}")).clone();
    (run, sc.setup)
}

/// The row's world once every node has started (a server is renamed only after its first start,
/// whose draw is keyed by its name), the client's first round on its way to the masters, then
/// `server` paused for `pause_ms` from now.
fn paused(label: &str, server: usize, pause_ms: u64) -> Box<dyn SearchWorld> {
    let (run, setup) = row(label);
    let mut w = run.model.search_world(&setup, &run.params, 1);
    loop {
        let enabled = w.enabled();
        let start = enabled.iter().find(|e| w.event_key(e.seq).is_some_and(|k| k.starts_with("start ")));
        let Some(e) = start else { break };
        w.step(e.seq, &[], MS);
    }
    let target = w.nodes().iter().position(|(name, _)| *name == format!("server-{server}")).expect("server");
    let fault = Injection { kind: FaultKind::Pause, target, duration_ns: Some(pause_ms * MS), value: 0.0 };
    let now = w.now_ns();
    let seq = w.inject_fault(&fault, now);
    w.enabled();
    w.step(seq, &[], MS);
    w
}

/// Every symmetric fingerprint a walk of every tie order meets from `w` within `depth` steps.
fn reached(w: Box<dyn SearchWorld>, depth: u32) -> BTreeSet<u64> {
    let mut seen = BTreeSet::new();
    assert!(walk(w, depth, |w| w.fingerprint_symmetric(), &mut seen), "typed at every state");
    seen
}

#[test]
fn mirror_images_merge_under_parallel_requests() {
    for label in ["redlock-parallel", "redlock-parallel-quorum"] {
        let (a, b) = (paused(label, 0, 600), paused(label, 1, 600));
        assert!(a.symmetry_applies() && b.symmetry_applies(), "{label}");
        assert_ne!(a.fingerprint(), b.fingerprint(), "{label}: by node id they differ");
        assert_eq!(a.fingerprint_symmetric(), b.fingerprint_symmetric(), "{label}: the masters swapped");
        // The requests in flight to the other masters, their answers, the round's decision:
        // every state one reaches has its mirror image in the other's.
        let (ra, rb) = (reached(a, 10), reached(b, 10));
        assert!(ra.len() > 10, "{label}: the walk went somewhere ({} states)", ra.len());
        assert_eq!(ra, rb, "{label}");
    }
}

#[test]
fn sequential_requests_keep_the_masters_apart() {
    // redlock-rb asks server-0 first: a pause of server-0 stalls the round, one of server-1
    // does not (not yet). Not interchangeable, so not renamed.
    let (a, b) = (paused("redlock", 0, 600), paused("redlock", 1, 600));
    assert!(a.symmetry_applies());
    assert_ne!(a.fingerprint_symmetric(), b.fingerprint_symmetric());
    assert_ne!(reached(a, 6), reached(b, 6));
}

#[test]
fn a_difference_that_matters_is_not_merged() {
    // The same master paused 1 ms longer: its keys, the round's timeout and what the client
    // decides may all differ, so neither this world nor its mirror image merges with it.
    let label = "redlock-parallel";
    let (a, b, c) = (paused(label, 0, 600), paused(label, 1, 600), paused(label, 0, 601));
    assert_ne!(c.fingerprint_symmetric(), a.fingerprint_symmetric());
    assert_ne!(c.fingerprint_symmetric(), b.fingerprint_symmetric());
    // Two masters paused are not one master paused, whichever two.
    let mut d = paused(label, 0, 600);
    let target = d.nodes().iter().position(|(name, _)| name == "server-1").expect("server-1");
    let now = d.now_ns();
    let seq =
        d.inject_fault(&Injection { kind: FaultKind::Pause, target, duration_ns: Some(600 * MS), value: 0.0 }, now);
    d.enabled();
    d.step(seq, &[], MS);
    assert_ne!(d.fingerprint_symmetric(), a.fingerprint_symmetric());
}

#[test]
fn a_pinned_master_is_not_renamed() {
    // A search whose fault menu names server-0 (`crash@server-0`) pins it: the mirror images
    // no longer merge, in the world or in its copies, and the other two masters still do.
    let label = "redlock-parallel";
    let (mut a, mut b) = (paused(label, 0, 600), paused(label, 1, 600));
    let (mut a2, mut b2) = (paused(label, 1, 600), paused(label, 2, 600));
    for w in [&mut a, &mut b, &mut a2, &mut b2] {
        w.pin_for_symmetry(&[0]);
    }
    assert!(a.symmetry_applies());
    assert_ne!(a.fingerprint_symmetric(), b.fingerprint_symmetric());
    assert_ne!(a.box_clone().fingerprint_symmetric(), b.box_clone().fingerprint_symmetric());
    assert_eq!(a2.fingerprint_symmetric(), b2.fingerprint_symmetric(), "server-1 and server-2 still swap");
}

#[test]
fn a_request_id_is_hashed_as_its_round_and_master() {
    // Nodes: server-0 … server-2 (0–2), client-0 (3). Request ids come in blocks of one per
    // master in index order: id 1 is round 0's request to server-0, id 2 its request to server-1.
    let servers = vec![0, 1, 2];
    let same = Renaming::identity(4).with_servers(servers.clone());
    let swap = Renaming::from_permutation(&[1, 0, 2, 3]).with_servers(servers);
    let set = |id| Request { id, cmd: Command::SetNx { key: 0, value: 7, px_ms: 500 } };
    assert_eq!(hash_of(&set(1), &swap), hash_of(&set(2), &same), "swapped masters swap their ids");
    assert_ne!(hash_of(&set(1), &same), hash_of(&set(2), &same), "two ids differ");
    assert_ne!(hash_of(&set(1), &swap), hash_of(&set(4), &same), "round 1's id is not round 0's");
    let reply = |id| Reply { id, ok: true };
    assert_eq!(hash_of(&reply(2), &swap), hash_of(&reply(1), &same));
    assert_eq!(hash_of(&reply(3), &swap), hash_of(&reply(3), &same), "server-2 is not moved");
}
