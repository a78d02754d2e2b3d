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
use locksim_simulator::scenario::types::RunSpec;
use locksim_simulator::search::SearchWorld;
use locksim_simulator::setup::Setup;

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

/// Redis and Redlock (one server, two clients, one acquisition each): their lock values and
/// Redisson owner ids, drawn per client, are identity values renamed with their clients; so is
/// the Hazelcast CP client's epoch (its invocation uids' high half; three members), and the
/// client index the members name it by.
const IDENTITIES: &str = r#"
name = "identities"
duration_ms = 3_000
seeds = 1
algorithms = ["redis", "redlock", "hazelcast"]

[models.redlock]
masters = 1
# Constant: a jitter drawn from each client's own stream would differ between mirror images.
retry_delay_ms = 50

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

/// A key with `client-0` and `client-1` swapped.
fn mirror_key(key: &str) -> String {
    key.replace("client-0", "\0").replace("client-1", "client-0").replace('\0', "client-1")
}

/// The world after `steps` steps of `run` (seed 1), taking at each step the enabled event first
/// by (due time, key), the keys mirrored when `mirrored`: the mirrored walk makes the mirror
/// image of the other's choice at every step, so (the model treating its clients alike) it
/// reaches the mirror image of the other's world: the clients swapped, each having drawn its
/// own random values from its own stream.
fn steered(run: &RunSpec, setup: &Setup, steps: usize, mirrored: bool) -> Box<dyn SearchWorld> {
    let mut world = run.model.search_world(setup, &run.params, 1);
    for _ in 0..steps {
        let enabled = world.enabled();
        let key = |seq: u64| {
            let key = world.event_key(seq).unwrap_or_default();
            if mirrored {
                mirror_key(&key)
            } else {
                key
            }
        };
        let Some(first) = enabled.iter().min_by_key(|e| (e.at_ns, key(e.seq))) else { break };
        let seq = first.seq;
        world.step(seq, &[], 1_000_000);
    }
    world
}

#[test]
fn mirror_image_worlds_with_drawn_identities_get_one_symmetric_fingerprint() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("identities.toml", IDENTITIES, &models).unwrap_or_else(|e| panic!("{e}"));
    for run in &sc.runs {
        let label = &run.label;
        let (mut mirrors_differ_by_id, mut states) = (0, std::collections::BTreeSet::new());
        for steps in 1..=40 {
            let (a, b) = (steered(run, &sc.setup, steps, false), steered(run, &sc.setup, steps, true));
            assert!(a.symmetry_applies(), "{label}: symmetry applies after {steps} steps");
            // The clients hold different random values in `a` and `b` (each its own stream's
            // draws) and the server holds one of them: only renaming the values with their
            // clients makes the two one state.
            assert_eq!(
                a.fingerprint_symmetric(),
                b.fingerprint_symmetric(),
                "{label}: the mirror images after {steps} steps are one state"
            );
            mirrors_differ_by_id += usize::from(a.fingerprint() != b.fingerprint());
            states.insert(a.fingerprint_symmetric());
        }
        assert!(mirrors_differ_by_id > 30, "{label}: the plain fingerprint tells the mirror images apart");
        // Not one state for everything: the steps' worlds stay apart.
        assert!(states.len() > 30, "{label}: {} distinct states in 40 steps", states.len());
    }
}

#[test]
fn a_server_naming_one_clients_value_is_not_the_other_clients() {
    use locksim_algorithms::redis::keyspace::Value;
    use locksim_simulator::fingerprint::{identity_hash, identity_owners};
    // Client 3 drew value 11, client 4 value 22 (nodes 0–2 are servers).
    let owners = |a: usize, b: usize| identity_owners([(identity_hash(&11u64), a), (identity_hash(&22u64), b)]);
    let ids = Renaming::identity(5).with_identities(owners(3, 4));
    let swapped = swap_3_4().with_identities(owners(3, 4));
    // The key holding client 3's value is not the key holding client 4's ...
    assert_ne!(hash_of(&Value::Str(11), &ids), hash_of(&Value::Str(22), &ids));
    // ... unless the clients are swapped with their values.
    assert_eq!(hash_of(&Value::Str(11), &swapped), hash_of(&Value::Str(22), &ids));
    // A value nobody holds (an old attempt's) is itself, not any client's.
    assert_ne!(hash_of(&Value::Str(33), &ids), hash_of(&Value::Str(11), &ids));
    assert_ne!(hash_of(&Value::Str(33), &ids), hash_of(&Value::Str(44), &ids));
    // The plain fingerprint (no owners) hashes values as values.
    assert_eq!(hash_of(&Value::Str(11), &Renaming::identity(5)), hash_of(&Value::Str(11), &swap_3_4()));
}
