//! The consul model's typed fingerprints (servers, replicated state, lock client, messages and
//! timers) cover every process, message and timer: the client-symmetric fingerprint applies at
//! every state a walk of every tie order meets, and a one-field difference still tells two
//! values apart (a log entry's origin too, which its hand-written `Debug` leaves out).

use locksim_algorithms::consul::protocol::{Cmd, CmdKind};
use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::scenario::parse_str;

use crate::walk_common::walk_both;

/// Three servers and two clients, each acquiring once.
const SCENARIO: &str = r#"
name = "consul-symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["consul"]

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn the_symmetric_fingerprint_applies_to_every_consul_state() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("consul-symmetry.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let w = walk_both(run, &sc.setup, 10);
    assert!(w.applied, "typed at every state");
    assert!(w.symmetric <= w.plain, "{} symmetric, {} plain", w.symmetric, w.plain);
    eprintln!("consul: {} distinct states symmetric, {} plain", w.symmetric, w.plain);
}

#[test]
fn a_log_entrys_origin_counts() {
    let ids = Renaming::identity(5);
    let acquire = |origin| Cmd { origin, kind: CmdKind::Acquire { key: 0, session: 1 } };
    let text = |c: &Cmd| format!("{c:?}");
    assert_eq!(text(&acquire(Some((0, 1)))), text(&acquire(Some((1, 1)))), "the Debug text leaves it out");
    assert_ne!(hash_of(&acquire(Some((0, 1))), &ids), hash_of(&acquire(Some((1, 1))), &ids), "the server");
    assert_ne!(hash_of(&acquire(Some((0, 1))), &ids), hash_of(&acquire(Some((0, 2))), &ids), "the tag");
    assert_ne!(hash_of(&acquire(None), &ids), hash_of(&acquire(Some((0, 1))), &ids));
}
