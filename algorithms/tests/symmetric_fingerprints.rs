//! The typed fingerprints of db (with its replica and failover manager), postgres (behind
//! PgBouncer, or with a standby), kubernetes (behind a front API server) and Redis with Sentinel
//! cover every process, message and timer: the client-symmetric fingerprint applies at every
//! state a walk of every tie order meets, merges no state the plain fingerprint tells apart
//! beyond what renaming clients allows, and keeps apart the states a one-field difference
//! separates. Client ids in their state go through the renaming (a client's id in a server's
//! session or a relayed request): two clients swapped give one fingerprint.

use locksim_algorithms::kubernetes::protocol::{
    ApiRequest, ApiResponse, KubernetesMsg, StoreRequest, StoreResponse, Verb,
};
use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::scenario::parse_str;

use crate::walk_common::{walk_both, Walked};

/// One primary (and, where the model has them, a standby or replica with its failover process,
/// a pooler, a front server) and two clients, each acquiring once.
const MODELS: &str = r#"
name = "symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["db", "postgres", "kubernetes"]

[[variants]]
name = "db-replicated"
model = "db"
replication = "semisync"

[[variants]]
name = "postgres-pooled"
model = "postgres"
pgbouncer = "transaction"

[[variants]]
name = "postgres-standby"
model = "postgres"
standby = true

[[variants]]
name = "kubernetes-fronted"
model = "kubernetes"
servers = 2

[[variants]]
name = "redis-sentinel"
model = "redis"
replicas = 1
sentinels = 2

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn the_symmetric_fingerprint_applies_to_every_state_of_these_models() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("symmetry.toml", MODELS, &models).unwrap_or_else(|e| panic!("{e}"));
    let mut labels = Vec::new();
    for run in &sc.runs {
        let label = run.label.clone();
        let Walked { plain, symmetric, applied } = walk_both(run, &sc.setup, 12);
        assert!(applied, "{label}: every process, message in flight and timer has a typed fingerprint");
        // Renaming clients only merges: the symmetric key never tells apart two states the
        // plain one merges (each state is a permutation of itself).
        assert!(symmetric <= plain, "{label}: {symmetric} symmetric > {plain} plain");
        eprintln!("{label}: {symmetric} distinct states symmetric, {plain} plain");
        labels.push(label);
    }
    labels.sort();
    assert_eq!(
        labels,
        [
            "db",
            "db-replicated",
            "kubernetes",
            "kubernetes-fronted",
            "postgres",
            "postgres-pooled",
            "postgres-standby",
            "redis-sentinel"
        ]
    );
}

/// `client-3` and `client-4` swapped (nodes 0–2 are servers).
fn swap_3_4() -> Renaming {
    Renaming::from_permutation(&[0, 1, 2, 4, 3])
}

fn get(id: u64) -> ApiRequest {
    ApiRequest { id, lease: 0, verb: Verb::Get }
}

#[test]
fn a_front_server_relaying_for_a_client_renames_it() {
    let ids = Renaming::identity(5);
    let for_3: KubernetesMsg = StoreRequest { client: 3, request: get(7) }.into();
    let for_4: KubernetesMsg = StoreRequest { client: 4, request: get(7) }.into();
    // The relayed request for client 3, with 3 and 4 swapped, is the one for client 4.
    assert_eq!(hash_of(&for_3, &swap_3_4()), hash_of(&for_4, &ids));
    assert_ne!(hash_of(&for_3, &ids), hash_of(&for_4, &ids), "the client is hashed");
    // A one-field difference: the request's id.
    let other_id: KubernetesMsg = StoreRequest { client: 3, request: get(8) }.into();
    assert_ne!(hash_of(&for_3, &ids), hash_of(&other_id, &ids));
    // The variant counts: a request and an answer with the same fields differ.
    let answer: KubernetesMsg = StoreResponse {
        client: 3,
        response: ApiResponse { id: 7, result: Err(locksim_algorithms::kubernetes::protocol::ApiError::NotFound) },
    }
    .into();
    let asked: KubernetesMsg = get(7).into();
    assert_ne!(hash_of(&answer, &ids), hash_of(&asked, &ids));
}
