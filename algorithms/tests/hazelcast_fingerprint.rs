//! The hazelcast model's typed fingerprints (CP members and client, ILock members and client,
//! their messages, timers and replicated state) cover every process, message and timer in both
//! modes: the client-symmetric fingerprint applies at every state a walk of every tie order
//! meets, and a one-field difference still tells two values apart.

use locksim_algorithms::hazelcast::ilock::{IlockMsg, LockCall};
use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::scenario::parse_str;

use crate::walk_common::walk_both;

/// Three CP members (and, as a variant, three ILock members) and two clients, each acquiring once.
const SCENARIO: &str = r#"
name = "hazelcast-symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["hazelcast"]

[[variants]]
name = "hazelcast-ilock"
model = "hazelcast"
lock = "ilock"

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn the_symmetric_fingerprint_applies_to_every_hazelcast_state() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("hazelcast-symmetry.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.runs.len(), 2, "the CP lock and ILock");
    for run in &sc.runs {
        let w = walk_both(run, &sc.setup, 10);
        assert!(w.applied, "{}: typed at every state", run.label);
        assert!(w.symmetric <= w.plain, "{}: {} symmetric, {} plain", run.label, w.symmetric, w.plain);
        eprintln!("{}: {} distinct states symmetric, {} plain", run.label, w.symmetric, w.plain);
    }
}

#[test]
fn a_one_field_difference_in_an_ilock_message_differs() {
    let ids = Renaming::identity(5);
    let invoke = |client, uid| IlockMsg::Invoke { client, uid, key: 0, call: LockCall::Lock };
    assert_eq!(hash_of(&invoke(0, 1), &ids), hash_of(&invoke(0, 1), &ids));
    assert_ne!(hash_of(&invoke(0, 1), &ids), hash_of(&invoke(0, 2), &ids), "the uid");
    assert_ne!(hash_of(&invoke(0, 1), &ids), hash_of(&invoke(1, 1), &ids), "the client");
    let unlock = IlockMsg::Invoke { client: 0, uid: 1, key: 0, call: LockCall::Unlock };
    assert_ne!(hash_of(&invoke(0, 1), &ids), hash_of(&unlock, &ids), "the call");
}
