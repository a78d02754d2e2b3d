//! A world copied mid-run is the same world: for every model, a run stopped part-way, copied,
//! and both the original and the copy run to the end, gives exactly the history and the trace
//! (byte for byte) of the same seed run in one go. This is what a search that branches a run at
//! an event relies on (`World: Clone`, `simulator/src/engine/copy.rs`), and so is taking a
//! fingerprint on the way.

use locksim_simulator::engine::{World, WorldResult};
use locksim_simulator::model::{Model, Params};
use locksim_simulator::run::build_world;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::Setup;

use crate::walk_common::{walk_both, Walked};

/// Every model, with faults that leave state to copy mid-run: a paused client (a backlog), a
/// crashed leader (a node down, connections reset), an isolated server (a network rule in force).
const SCENARIO: &str = r#"
name = "copy"
duration_ms = 6_000
seeds = 1
algorithms = ["db", "redis", "redlock", "zookeeper", "etcd", "kubernetes", "postgres", "consul", "hazelcast", "dynamodb"]

# The hazelcast model's other mode: Hazelcast 3.8's ILock (plain members, no Raft).
[[variants]]
name = "hazelcast-ilock"
model = "hazelcast"
lock = "ilock"
member_heartbeat_ms = 500
max_no_heartbeat_ms = 700

[workload]
clients = 3
hold_ms = { uniform = [5, 50] }

[[faults]]
kind = "pause"
target = "random-client"
at_ms = 1_000
duration_ms = 2_500

[[faults]]
kind = "crash"
target = "leader"
at_ms = 1_500
duration_ms = 1_500
mode = "process"

[[faults]]
kind = "isolate"
target = "server-0"
at_ms = 2_000
duration_ms = 1_000
"#;

/// The history and the trace of a finished world, as text (every field, in order).
fn record(result: WorldResult) -> (String, String) {
    let trace = result.trace.expect("traced").entries;
    (format!("{:?}", result.history), format!("{trace:?}"))
}

/// Asserts two texts are equal, showing where they first differ (not the whole history).
fn same(got: &str, want: &str, what: &str) {
    if got != want {
        let at = got.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
        let from = at.saturating_sub(200);
        panic!(
            "{what} differs at byte {at}:\n got: …{}\nwant: …{}",
            &got[from..(at + 200).min(got.len())],
            &want[from..(at + 200).min(want.len())]
        );
    }
}

fn run_whole<M: Model>(model: &M, setup: &Setup, params: &Params, seed: u64) -> (String, String) {
    let (mut world, _) = build_world(model, setup, params, seed, true);
    world.run();
    record(world.finish())
}

fn check<M: Model>(model: &M, setup: &Setup, params: &Params) {
    for seed in [1, 2] {
        let whole = run_whole(model, setup, params, seed);
        let (mut world, _): (World<M::Protocol>, _) = build_world(model, setup, params, seed, true);
        // Mid-run, inside the pause, the crash and the isolation.
        world.run_through(2_200_000_000, None).expect("runs");
        let mut copy = world.clone();
        // Taking fingerprints reads only, and a copy's is its original's.
        assert_eq!(copy.fingerprint(), world.fingerprint(), "{}: the copy's fingerprint", model.name());
        assert_eq!(copy.fingerprint_symmetric(), world.fingerprint_symmetric(), "{}: symmetric", model.name());
        world.run();
        copy.run();
        let original = record(world.finish());
        let copied = record(copy.finish());
        assert!(whole.0.len() > 1000, "{}: the run records something", model.name());
        let name = model.name();
        same(&original.0, &whole.0, &format!("{name} seed {seed}: the stopped run's history"));
        same(&original.1, &whole.1, &format!("{name} seed {seed}: the stopped run's trace"));
        same(&copied.0, &whole.0, &format!("{name} seed {seed}: the copy's history"));
        same(&copied.1, &whole.1, &format!("{name} seed {seed}: the copy's trace"));
    }
}

#[test]
fn a_copy_taken_mid_run_runs_on_exactly_as_the_original() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("copy.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    let mut checked = Vec::new();
    for run in &sc.runs {
        let p = &run.params;
        match run.model.name() {
            "db" => check(&locksim_algorithms::db::DB, &sc.setup, p),
            "redis" => check(&locksim_algorithms::redis::REDIS, &sc.setup, p),
            "redlock" => check(&locksim_algorithms::redlock::REDLOCK, &sc.setup, p),
            "zookeeper" => check(&locksim_algorithms::zookeeper::ZOOKEEPER, &sc.setup, p),
            "etcd" => check(&locksim_algorithms::etcd::ETCD, &sc.setup, p),
            "kubernetes" => check(&locksim_algorithms::kubernetes::KUBERNETES, &sc.setup, p),
            "postgres" => check(&locksim_algorithms::postgres::POSTGRES, &sc.setup, p),
            "consul" => check(&locksim_algorithms::consul::CONSUL, &sc.setup, p),
            "hazelcast" => check(&locksim_algorithms::hazelcast::HAZELCAST, &sc.setup, p),
            "dynamodb" => check(&locksim_algorithms::dynamodb::DYNAMODB, &sc.setup, p),
            other => panic!("model {other} is not covered: add it here"),
        }
        checked.push(run.model.name());
    }
    checked.sort_unstable();
    checked.dedup();
    assert_eq!(checked.len(), models.len(), "every registered model is checked: {checked:?}");
}

/// Models with one server and two clients, each acquiring once: every interleaving of the
/// events due at one instant, to a bounded depth, with a visited set of fingerprints.
const SYMMETRIC: &str = r#"
name = "symmetry"
duration_ms = 3_000
seeds = 1
algorithms = ["etcd", "zookeeper", "redis", "redlock"]

[models.etcd]
servers = 1

[models.zookeeper]
servers = 1

[models.redlock]
masters = 1

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 100
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn interchangeable_clients_are_merged_by_the_symmetric_fingerprint() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("symmetry.toml", SYMMETRIC, &models).unwrap_or_else(|e| panic!("{e}"));
    for run in &sc.runs {
        let name = run.model.name();
        let Walked { plain, symmetric, applied } = walk_both(run, &sc.setup, 24);
        assert!(applied, "{name}: every state has a typed fingerprint");
        // The clients start, open their sessions and ask for the lock in either order: states
        // that are mirror images of each other are one state under symmetry (Redis's and
        // Redlock's random owner ids and lock values renamed with their clients).
        assert!(symmetric < plain, "{name}: symmetry merges mirror-image states: {symmetric} symmetric, {plain} plain");
        eprintln!("{name}: {symmetric} distinct states symmetric, {plain} plain");
    }
}
