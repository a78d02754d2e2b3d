//! Helpers shared by the kubernetes model's tests: run one labelled configuration of a scenario
//! text for one seed, or a scenario's network, workload and faults with a typed
//! [`KubernetesConfig`] ([`run_config`]), and read the history and the trace (the Lease calls as
//! the API server received them, the client library's notes).

#![allow(dead_code)]

use crate::common;
pub use common::*;

use locksim_algorithms::kubernetes::library::Library;
pub use locksim_algorithms::kubernetes::KubernetesConfig;
use locksim_algorithms::kubernetes::{Kubernetes, KUBERNETES};
pub use locksim_simulator::dist::Dist;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::model::Cluster;
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::setup::WorkloadSpec;

pub use locksim_algorithms::kubernetes::protocol::{
    ApiError, ApiRequest, ApiResponse, Identity, KubernetesMsg, Lease, LeaseSpec, StoreRequest, StoreResponse, Verb,
};

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

impl TypedConfig for KubernetesConfig {
    type Shipped = Kubernetes;
    fn shipped() -> &'static Kubernetes {
        &KUBERNETES
    }
    fn library_name(&self) -> String {
        self.library.name().to_string()
    }
    fn services(&self) -> Vec<(String, NodeKind)> {
        KubernetesConfig::services(self)
    }
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Kubernetes> {
        assert!(self.servers >= 1, "at least the API server with the store");
        self.cluster(workload)
    }
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

/// Lease calls delivered to `server` that `is`: (true time ms, sender, call). A call comes from
/// a client, or from a front API server forwarding it to the store (see [`forwarded_calls_at`]).
pub fn calls_at<'o>(
    out: &'o SeedOutcome,
    server: &str,
    is: impl Fn(&ApiRequest) -> bool,
) -> Vec<(f64, String, &'o ApiRequest)> {
    delivered::<KubernetesMsg>(out)
        .into_iter()
        .filter(|d| d.node == server)
        .filter_map(|d| match d.msg {
            KubernetesMsg::Request(r) | KubernetesMsg::ToStore(StoreRequest { request: r, .. }) if is(r) => {
                Some((d.at_ms(), d.peer.to_string(), r))
            }
            _ => None,
        })
        .collect()
}

/// The calls of [`calls_at`] a front API server forwarded to the store.
pub fn forwarded_calls_at<'o>(
    out: &'o SeedOutcome,
    server: &str,
    is: impl Fn(&ApiRequest) -> bool,
) -> Vec<(f64, String, &'o ApiRequest)> {
    delivered::<KubernetesMsg>(out)
        .into_iter()
        .filter(|d| d.node == server)
        .filter_map(|d| match d.msg {
            KubernetesMsg::ToStore(StoreRequest { request: r, .. }) if is(r) => {
                Some((d.at_ms(), d.peer.to_string(), r))
            }
            _ => None,
        })
        .collect()
}

/// A GET of Lease 0.
pub fn is_get(r: &ApiRequest) -> bool {
    r.lease == 0 && matches!(r.verb, Verb::Get)
}

/// An UPDATE (PUT) of Lease 0.
pub fn is_put(r: &ApiRequest) -> bool {
    r.lease == 0 && matches!(r.verb, Verb::Update { .. })
}

/// The record a CREATE or an UPDATE writes.
pub fn spec_of(r: &ApiRequest) -> Option<&LeaseSpec> {
    match &r.verb {
        Verb::Get => None,
        Verb::Create { spec } | Verb::Update { spec, .. } => Some(spec),
    }
}

/// A release: a write of the record with no holder.
pub fn is_release(r: &ApiRequest) -> bool {
    spec_of(r).is_some_and(|s| s.holder.is_none())
}

/// The resourceVersion an UPDATE is conditioned on.
pub fn update_rv(r: &ApiRequest) -> Option<u64> {
    match r.verb {
        Verb::Update { resource_version, .. } => Some(resource_version),
        _ => None,
    }
}

/// Answers from an API server delivered to `client` whose result `is`: (true time ms, answer).
pub fn answers_to<'o>(
    out: &'o SeedOutcome,
    client: &str,
    is: impl Fn(&Result<Lease, ApiError>) -> bool,
) -> Vec<(f64, &'o ApiResponse)> {
    delivered::<KubernetesMsg>(out)
        .into_iter()
        .filter(|d| d.node == client && d.peer.starts_with("server-"))
        .filter_map(|d| match d.msg {
            KubernetesMsg::Response(r) if is(&r.result) => Some((d.at_ms(), r)),
            _ => None,
        })
        .collect()
}

/// The node the first fault of `kind` (`pause`, `crash`, …) starts on, and when.
pub fn fault_target(out: &SeedOutcome, kind: &str) -> (f64, String) {
    let (at, fault) = fault_start(out, kind);
    (at, fault.targets[0].clone())
}

/// The history's `LostNotice` times (ms) of a client.
pub fn lost_notices(out: &SeedOutcome, client: &str) -> Vec<f64> {
    events(out, |e| matches!(e, HistoryEvent::LostNotice { .. }))
        .into_iter()
        .filter(|s| client_name(out, s.node) == client)
        .map(|s| s.at_ns as f64 / 1e6)
        .collect()
}

/// Every write the store made, in revision order, from the answers sent (by the store's server,
/// to a client or a front server): (revision, holder, transitions). Each write is answered once
/// with its new revision; GET answers repeat a revision already seen.
pub fn store_writes(out: &SeedOutcome) -> Vec<(u64, Option<Identity>, u64)> {
    let mut writes: Vec<(u64, Option<Identity>, u64)> = Vec::new();
    for s in sent::<KubernetesMsg>(out) {
        let (KubernetesMsg::Response(r) | KubernetesMsg::FromStore(StoreResponse { response: r, .. })) = s.msg else {
            continue;
        };
        let Ok(lease) = &r.result else { continue };
        if writes.iter().any(|w| w.0 == lease.resource_version) {
            continue;
        }
        writes.push((lease.resource_version, lease.spec.holder, lease.spec.transitions));
    }
    writes.sort_by_key(|w| w.0);
    writes
}
