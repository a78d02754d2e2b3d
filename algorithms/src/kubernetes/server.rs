//! One API server (`server-i`) and, on `server-0`, the store behind all of them.
//!
//! The store stands for etcd as kube-apiserver uses it: one linearizable key space where every
//! write gets the next global revision, which becomes the object's `resourceVersion` (etcd's mod
//! revision). It holds one Lease per lock key and answers the three calls `resourcelock.LeaseLock`
//! makes:
//! - GET: the Lease, or 404 NotFound;
//! - CREATE: 409 AlreadyExists if the Lease exists, else stores it at the next revision;
//! - UPDATE: 404 if absent, 409 Conflict unless the request's `resourceVersion` is the Lease's
//!   current one (the optimistic concurrency every Kubernetes update runs: the apiserver's
//!   `GuaranteedUpdate` compares it and etcd's transaction checks the mod revision), else stores
//!   the new spec at the next revision.
//!
//! A call takes effect when it reaches the store (its linearization point) and its answer leaves
//! `service_ms` later (the apiserver's handling and etcd's write, fsync included).
//!
//! With `servers > 1`, `server-1 …` are front API servers without a store of their own: each
//! passes a request to `server-0` and relays the answer (kube-apiserver keeps no Lease state:
//! client-go's GET has no `resourceVersion`, so it is read from etcd, and every write goes to
//! etcd). The store's server is the one every write goes through, so it is the `leader` for the
//! scenario selectors; with it down no call succeeds anywhere, as with etcd down.
//!
//! Durability: the store is durable (etcd fsyncs before it answers), so a crash keeps every Lease
//! and the revision counter; an API server's only volatile state is where the store is.

use std::collections::BTreeMap;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::ms_to_ns;

use super::protocol::{
    ApiError, ApiRequest, ApiResponse, KubernetesMsg, KubernetesTimer, Lease, StoreRequest, StoreResponse, Verb,
};
use super::Kubernetes;

mod fingerprint;

/// The node that holds the store.
pub const STORE_NODE: &str = "server-0";

/// An API server's settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Processing time per call, drawn at the store.
    pub service_ms: Dist,
}

/// The Lease objects and the revision counter (what etcd keeps for them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Store {
    leases: BTreeMap<LockKey, Lease>,
    /// The last revision handed out (etcd's current revision); every write takes the next one.
    revision: u64,
}

impl Store {
    /// Applies one call.
    pub fn apply(&mut self, lease: LockKey, verb: &Verb) -> Result<Lease, ApiError> {
        match *verb {
            Verb::Get => self.leases.get(&lease).copied().ok_or(ApiError::NotFound),
            Verb::Create { spec } => {
                if self.leases.contains_key(&lease) {
                    return Err(ApiError::AlreadyExists);
                }
                Ok(self.write(lease, spec))
            }
            Verb::Update { spec, resource_version } => {
                let current = self.leases.get(&lease).ok_or(ApiError::NotFound)?;
                if current.resource_version != resource_version {
                    return Err(ApiError::Conflict);
                }
                Ok(self.write(lease, spec))
            }
        }
    }

    fn write(&mut self, lease: LockKey, spec: super::protocol::LeaseSpec) -> Lease {
        self.revision += 1;
        let stored = Lease { spec, resource_version: self.revision };
        self.leases.insert(lease, stored);
        stored
    }

    /// The Lease of a lock key, if created.
    pub fn lease(&self, lease: LockKey) -> Option<&Lease> {
        self.leases.get(&lease)
    }

    /// The store's current revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}

/// What an API server forgets in a crash.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The store's node, looked up at start.
    store_node: Option<NodeId>,
}

/// One API server; `server-0` also holds the store.
#[derive(Clone, Debug)]
pub struct ApiServer {
    cfg: ServerConfig,
    /// Durable: the store, on `server-0` only.
    store: Option<Store>,
    v: Volatile,
}

impl ApiServer {
    /// An API server; `with_store` for `server-0`.
    pub fn new(cfg: ServerConfig, with_store: bool) -> Self {
        ApiServer::from_disk((cfg, with_store.then(Store::default)))
    }

    /// The store, if this server holds it (for tests).
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// Applies a call at the store: the answer leaves after the service time.
    fn serve(&mut self, ctx: &mut Ctx<Kubernetes>, request: &ApiRequest) -> Option<(ApiResponse, u64)> {
        let store = self.store.as_mut()?;
        let result = store.apply(request.lease, &request.verb);
        let after = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        Some((ApiResponse { id: request.id, result }, after))
    }
}

impl Durable for ApiServer {
    /// The configuration, and the store, which is durable (etcd fsyncs before answering): it
    /// stays as it is.
    type Disk = (ServerConfig, Option<Store>);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.store)
    }
    fn from_disk((cfg, store): Self::Disk) -> Self {
        ApiServer { cfg, store, v: Volatile::default() }
    }
}

impl Process<Kubernetes> for ApiServer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Kubernetes>) {
        self.v.store_node = ctx.node_named(STORE_NODE);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Kubernetes>, from: NodeId, msg: KubernetesMsg) {
        match msg {
            KubernetesMsg::Request(request) => match self.serve(ctx, &request) {
                Some((response, after)) => ctx.send_after(after, from, response),
                None => {
                    if let Some(store) = self.v.store_node {
                        ctx.send(store, StoreRequest { client: from, request });
                    }
                }
            },
            KubernetesMsg::ToStore(StoreRequest { client, request }) => {
                if let Some((response, after)) = self.serve(ctx, &request) {
                    ctx.send_after(after, from, StoreResponse { client, response });
                }
            }
            KubernetesMsg::FromStore(StoreResponse { client, response }) => ctx.send(client, response),
            KubernetesMsg::Response(_) => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<Kubernetes>, _timer: TimerId, tag: KubernetesTimer) {
        // An API server sets no timers; a client timer cannot reach it.
        match tag {
            KubernetesTimer::Client(_) => {}
        }
    }

    /// The store's server is the one every write goes through: it leads (for the `leader`
    /// selector) for the whole run; the store never moves.
    fn leadership(&self) -> Option<u64> {
        self.store.as_ref().map(|_| 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::protocol::{Identity, LeaseSpec};

    fn spec(client: u32, transitions: u64) -> LeaseSpec {
        LeaseSpec {
            holder: Some(Identity { client, uuid: 7 }),
            lease_duration_secs: 15,
            acquire_time_us: 0,
            renew_time_us: 0,
            transitions,
        }
    }

    /// GET/CREATE/UPDATE with 404 and 409 as the API server answers them, one revision per write
    /// shared by every Lease (etcd's revision counter).
    #[test]
    fn store_checks_existence_and_resource_version() {
        let mut store = Store::default();
        assert_eq!(store.apply(0, &Verb::Get), Err(ApiError::NotFound));
        let update = Verb::Update { spec: spec(1, 0), resource_version: 1 };
        assert_eq!(store.apply(0, &update), Err(ApiError::NotFound));
        let created = store.apply(0, &Verb::Create { spec: spec(1, 0) }).unwrap();
        assert_eq!(created.resource_version, 1);
        assert_eq!(store.apply(0, &Verb::Create { spec: spec(2, 0) }), Err(ApiError::AlreadyExists));
        let other = store.apply(5, &Verb::Create { spec: spec(2, 0) }).unwrap();
        assert_eq!(other.resource_version, 2, "one counter for every Lease");
        let renewed = store.apply(0, &update).unwrap();
        assert_eq!((renewed.resource_version, renewed.spec), (3, spec(1, 0)));
        // The same precondition again: the Lease has moved on.
        assert_eq!(store.apply(0, &Verb::Update { spec: spec(2, 1), resource_version: 1 }), Err(ApiError::Conflict));
        assert_eq!(store.apply(0, &Verb::Get), Ok(renewed));
        assert_eq!(store.revision(), 3);
        assert_eq!(store.lease(5), Some(&other));
    }
}
