//! The simulator tests' one fake model: [`Fake`] is a model made of a client library and at most
//! one server, each given by a function, so that a test writes only the behaviour it pins (a
//! library that grants at once, one whose releases all time out, a lease server) and runs it
//! through the real parser, workload driver, engine and checkers ([`run_row`]). The engine's own
//! tests build a world of service nodes directly ([`service_world`]). The parser's tests use
//! `parse_fake.rs` (beside this file) instead: a model that names nodes but is never run.

#![allow(dead_code)]

use locksim_simulator::batch::run_seed;
use locksim_simulator::clock::NodeClock;
use locksim_simulator::directory::Directory;
use locksim_simulator::dist::Dist;
use locksim_simulator::engine::network::{LinkParams, Network};
use locksim_simulator::engine::{Behaviour, Node, World, WorldConfig};
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::rng::stream;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::NS_PER_MS;

/// A fake model: its name, how each client's library is made, at most one server (`server-0`),
/// and whether its tokens fence. No parameters; shared locks allowed.
pub struct Fake<P: Protocol> {
    pub name: &'static str,
    pub library: fn() -> Box<dyn LockClient<P>>,
    pub server: Option<MakeServer<P>>,
    pub fenced: bool,
}

/// How a fake's one server is made.
pub type MakeServer<P> = fn() -> Box<dyn Process<P>>;

impl<P: Protocol> Model for Fake<P> {
    type Protocol = P;
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        "a fake lock library"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _: &Params) -> bool {
        self.fenced
    }
    fn shared_locks(&self, _: &Params) -> bool {
        true
    }
    fn services(&self, _: &Params) -> Vec<(String, NodeKind)> {
        self.server.iter().map(|_| ("server-0".to_string(), NodeKind::Server)).collect()
    }
    fn topology(&self, _: &Params) -> Topology {
        // With a server, as the real models' TCP links; without, no links but the resource's.
        let server = self.server.is_some();
        Topology { ordered_links: server, leaderless: server }
    }
    fn build(&self, _: &Params, w: &WorkloadSpec) -> Cluster<P> {
        Cluster {
            services: self.server.iter().map(|make| make()).collect(),
            clients: (0..w.clients).map(|_| (self.library)()).collect(),
        }
    }
}

/// Parses the scenario `text` against `models` and runs its first row for `seed`, checked.
pub fn run_row(models: &[&'static dyn DynModel], text: &str, seed: u64, trace: bool) -> SeedOutcome {
    let scenario = parse_str("t.toml", text, models).unwrap_or_else(|e| panic!("{e}"));
    run_seed(&scenario, &scenario.runs[0], seed, &RunOptions { trace }).expect("no panic")
}

/// A world of service nodes only (`server-0 …`, running `processes` in order; no clients,
/// resource or faults), for the engine's own tests: every message takes `latency_ms`, links are
/// FIFO when `ordered`, the seed is 1, clocks are exact, and the run ends at `end_ms`.
pub fn service_world<P: Protocol>(
    processes: Vec<Box<dyn Process<P>>>,
    latency_ms: f64,
    ordered: bool,
    end_ms: u64,
    tracing: bool,
) -> World<P> {
    let names: Vec<(String, NodeKind)> =
        (0..processes.len()).map(|i| (format!("server-{i}"), NodeKind::Server)).collect();
    let nodes = processes
        .into_iter()
        .zip(&names)
        .map(|(p, (name, _))| Node::new(Behaviour::Service(p), NodeClock::new(0.0, 0), stream(1, name, "model")))
        .collect();
    let base = LinkParams { latency_ms: Dist::Const(latency_ms), loss: 0.0, duplicate: 0.0 };
    World::new(
        Directory::new(&names),
        nodes,
        WorldConfig {
            end_ns: end_ms * NS_PER_MS,
            network: Network::new(names.len(), base, vec![], ordered),
            net_rng: stream(1, "network", "latency"),
            fault_rng: stream(1, "faults", "selection"),
            faults: vec![],
            occurrences: vec![],
            leaderless: true,
            tracing,
        },
    )
}
