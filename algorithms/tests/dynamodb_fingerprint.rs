//! The dynamodb model's typed fingerprints (table, lock client, calls, answers, timers) cover
//! every process, message and timer: the client-symmetric fingerprint applies at every state a
//! walk of every tie order meets and merges the mirror images of two clients' starts (the owner
//! index each writes goes through the renaming, as the client it names); a one-field difference
//! still tells two states apart.

use locksim_algorithms::dynamodb::protocol::{Call, Item};
use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::scenario::parse_str;

use crate::walk_common::walk_both;

/// The table and two clients, each acquiring once.
const SCENARIO: &str = r#"
name = "dynamodb-symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["dynamodb"]

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn swapped_dynamodb_clients_are_one_symmetric_state() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("dynamodb-symmetry.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let w = walk_both(run, &sc.setup, 16);
    assert!(w.applied, "typed at every state");
    // The two clients start and send their first GetItem in either order: mirror images.
    assert!(w.symmetric < w.plain, "{} symmetric, {} plain", w.symmetric, w.plain);
}

#[test]
fn an_owner_is_hashed_as_the_client_it_names() {
    // Nodes: the table (0), client-0 (1), client-1 (2).
    let same = Renaming::identity(3).with_clients(vec![1, 2]);
    let swap = Renaming::from_permutation(&[0, 2, 1]).with_clients(vec![1, 2]);
    let item = |owner, rvn| Item { owner, rvn, lease_ms: 20_000, released: false };
    assert_eq!(hash_of(&item(0, 7), &swap), hash_of(&item(1, 7), &same), "swapped owners hash alike");
    assert_ne!(hash_of(&item(0, 7), &same), hash_of(&item(1, 7), &same), "two owners differ");
    assert_ne!(hash_of(&item(0, 7), &same), hash_of(&item(0, 8), &same), "a one-field difference: the RVN");
    let delete = |owner| Call::Delete { key: 0, expected: 7, owner };
    assert_eq!(hash_of(&delete(0), &swap), hash_of(&delete(1), &same));
    assert_ne!(hash_of(&delete(0), &same), hash_of(&delete(1), &same));
}
