//! `single`: one lock server that keeps its holders in memory and hands out a fencing token that
//! survives a restart, and a client that polls it. The smallest complete model: the example of
//! docs/adding-a-model.md, section 11.

mod client;
pub mod protocol;
mod server;

use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};

use client::Client;
use protocol::{SingleMsg, SingleTimer};
use server::Server;

/// The model, which is also its own protocol.
pub struct Single;

/// The registry's entry.
pub static SINGLE: Single = Single;

impl Protocol for Single {
    type Msg = SingleMsg;
    type Timer = SingleTimer;
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Number { min: 0.0, max: 10_000.0 },
        default: "0.05",
        meaning: "the server's processing time per request",
    },
    ParamSpec {
        name: "retry_ms",
        kind: ParamKind::Number { min: 0.001, max: 60_000.0 },
        default: "100",
        meaning: "how long a client waits for an answer before it asks again",
    },
];

/// The parameters, read once.
struct SingleConfig {
    service_ns: Nanos,
    retry_ns: Nanos,
}

impl SingleConfig {
    fn from_params(params: &Params) -> SingleConfig {
        SingleConfig { service_ns: ms_to_ns(params.f64("service_ms")), retry_ns: ms_to_ns(params.f64("retry_ms")) }
    }
}

impl Model for Single {
    type Protocol = Single;

    fn name(&self) -> &'static str {
        "single"
    }

    fn summary(&self) -> &'static str {
        "one in-memory lock server with a durable fencing token; clients poll it"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn fenced(&self, _params: &Params) -> bool {
        true
    }

    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        vec![("server-0".to_string(), NodeKind::Server)]
    }

    fn topology(&self, _params: &Params) -> Topology {
        // TCP links; one server and no election: `leader` means server-0.
        Topology { ordered_links: true, leaderless: true }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Single> {
        let cfg = SingleConfig::from_params(params);
        let services: Vec<Box<dyn Process<Single>>> = vec![Box::new(Server::new(cfg.service_ns))];
        let clients =
            (0..workload.clients).map(|_| Box::new(Client::new(cfg.retry_ns)) as Box<dyn LockClient<Single>>).collect();
        Cluster { services, clients }
    }
}
