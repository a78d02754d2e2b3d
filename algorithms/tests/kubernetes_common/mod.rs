//! Helpers shared by the kubernetes model's tests: run one labelled configuration of a scenario
//! text for one seed, or a scenario's network, workload and faults with a typed
//! [`KubernetesConfig`] ([`run_config`]), and read the history and the trace (the Lease calls as
//! the API server received them, the client library's notes).

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::*;

use locksim_algorithms::kubernetes::library::Library;
pub use locksim_algorithms::kubernetes::KubernetesConfig;
use locksim_algorithms::kubernetes::{Kubernetes, KUBERNETES};
pub use locksim_simulator::dist::Dist;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

/// The configuration the mechanism tests start from: `locksim-1` (client-go's 15 s / 10 s / 2 s
/// and 5 s HTTP timeout, releasing on cancel), one API server, no service time, so that a Lease
/// call over 1 ms links takes exactly 2 ms.
pub fn locksim_1() -> KubernetesConfig {
    KubernetesConfig {
        library: Library::Locksim,
        lease_duration_ms: 15_000.0,
        renew_deadline_ms: 10_000.0,
        retry_period_ms: 2_000.0,
        request_timeout_ms: 5_000.0,
        release_on_cancel: true,
        servers: 1,
        service_ms: Dist::Const(0.0),
    }
}

/// The kubernetes model fixed to one typed configuration: it builds its cluster from the
/// configuration, not from the scenario's parameters.
struct Configured(KubernetesConfig);

impl Model for Configured {
    type Protocol = Kubernetes;
    fn name(&self) -> &'static str {
        "kubernetes"
    }
    fn summary(&self) -> &'static str {
        "kubernetes, with a typed configuration"
    }
    fn params(&self) -> &'static [ParamSpec] {
        Model::params(&KUBERNETES)
    }
    fn library(&self, _params: &Params) -> Option<String> {
        Some(self.0.library.name().to_string())
    }
    fn fenced(&self, params: &Params) -> bool {
        Model::fenced(&KUBERNETES, params)
    }
    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        self.0.services()
    }
    fn topology(&self, params: &Params) -> Topology {
        Model::topology(&KUBERNETES, params)
    }
    fn build(&self, _params: &Params, workload: &WorkloadSpec) -> Cluster<Kubernetes> {
        self.0.cluster(workload)
    }
}

/// Runs `setup`, a scenario text with one `kubernetes` row and no model parameters (its network,
/// workload and faults), with the model configured as `cfg`, for `seed`, with a trace.
pub fn run_config(setup: &str, cfg: &KubernetesConfig, seed: u64) -> SeedOutcome {
    let models = locksim_algorithms::registry();
    let sc = parse_str("test.toml", setup, &models).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.runs.len(), 1, "one row: the configuration comes from the test");
    assert!(cfg.servers >= 1, "at least the API server with the store");
    Configured(cfg.clone()).run_seed(&sc.setup, &sc.runs[0].params, seed, &RunOptions { trace: true })
}

/// The name (`client-3`) of a client node id.
pub fn client_name(out: &SeedOutcome, node: usize) -> String {
    out.history.client_name(node)
}

/// Grants as (true time ms, client name, token), in time order.
pub fn grants(out: &SeedOutcome) -> Vec<(f64, String, u64)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }))
        .into_iter()
        .map(|s| {
            let HistoryEvent::Granted { token, .. } = s.event else { unreachable!() };
            (s.at_ns as f64 / 1e6, client_name(out, s.node), token.expect("kubernetes grants carry a token"))
        })
        .collect()
}

/// Lease calls delivered to `server` (true time ms, sender, call text), whose text contains `needle`.
pub fn calls_at(out: &SeedOutcome, server: &str, needle: &str) -> Vec<(f64, String, String)> {
    trace(out, "deliver", needle)
        .into_iter()
        .filter(|(_, node, _)| node == server)
        .map(|(t, _, d)| {
            // "← client-1 PUT lease-0 …"
            let rest = d.trim_start_matches("← ");
            let (from, call) = rest.split_once(' ').expect("sender and message");
            (t, from.to_string(), call.to_string())
        })
        .collect()
}

/// Answers delivered to `client` (true time ms, answer text), whose text contains `needle`.
pub fn answers_to(out: &SeedOutcome, client: &str, needle: &str) -> Vec<(f64, String)> {
    trace(out, "deliver", needle)
        .into_iter()
        .filter(|(_, node, d)| node == client && d.starts_with("← server-"))
        .map(|(t, _, d)| (t, d))
        .collect()
}

/// The node named in a fault line such as "pause starts on [client-1] for 12000 ms".
pub fn fault_target(out: &SeedOutcome, kind: &str) -> (f64, String) {
    let (t, _, d) = trace(out, "fault", &format!("{kind} starts on ["))[0].clone();
    let start = d.find('[').unwrap() + 1;
    let end = d.find(']').unwrap();
    (t, d[start..end].to_string())
}

/// The history's `LostNotice` times (ms) of a client.
pub fn lost_notices(out: &SeedOutcome, client: &str) -> Vec<f64> {
    events(out, |e| matches!(e, HistoryEvent::LostNotice { .. }))
        .into_iter()
        .filter(|s| client_name(out, s.node) == client)
        .map(|s| s.at_ns as f64 / 1e6)
        .collect()
}

/// Every write the store made, in revision order, from the answers server-0 sent: (revision,
/// holder text, transitions). Each write is answered once with its new revision; GET answers
/// repeat a revision already seen.
pub fn store_writes(out: &SeedOutcome) -> Vec<(u64, String, u64)> {
    let mut writes: Vec<(u64, String, u64)> = Vec::new();
    for (_, _, d) in trace(out, "send", " 200 rv=") {
        let rv: u64 = field(&d, "rv=").parse().unwrap();
        if writes.iter().any(|w| w.0 == rv) {
            continue;
        }
        writes.push((rv, field(&d, "holder=").to_string(), field(&d, "transitions=").parse().unwrap()));
    }
    writes.sort_by_key(|w| w.0);
    writes
}

/// The text after `name` up to the next space.
pub fn field<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text.find(name).unwrap_or_else(|| panic!("no {name} in {text}")) + name.len();
    text[start..].split(' ').next().unwrap()
}
