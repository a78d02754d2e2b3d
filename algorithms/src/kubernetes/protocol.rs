//! The messages and timers of the kubernetes model: the Lease calls a candidate makes to an API
//! server (GET, CREATE, UPDATE of a `coordination.k8s.io/v1` Lease) and their answers, the hop
//! from a front API server to the store behind it, and the client library's timers. Their `Debug`
//! text is what the trace prints, so it reads like the HTTP call (`PUT lease-0 rv=7 …`).

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;

/// A candidate's identity (`resourcelock.ResourceLockConfig.Identity`). kube-controller-manager
/// builds it as `hostname + "_" + uuid.NewUUID()` once per process start
/// (`cmd/kube-controller-manager/app/controllermanager.go`, `Run`: "add a uniquifier so that two
/// processes on the same host don't accidentally both become active"), so a restarted client is
/// a new candidate; `uuid` is drawn from the client's stream at every (re)start.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The client's index: `client-<client>` stands for the hostname.
    pub client: u32,
    /// The uniquifier, drawn at every (re)start.
    pub uuid: u32,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client-{}_{:08x}", self.client, self.uuid)
    }
}

/// A Lease's spec as client-go writes it (`resourcelock.LeaderElectionRecordToLeaseSpec`).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct LeaseSpec {
    /// `holderIdentity`; `None` is the empty string a released Lease carries ("If empty, no one
    /// owns this lease and all callers may acquire", `resourcelock/interface.go`).
    pub holder: Option<Identity>,
    /// `leaseDurationSeconds`: `int(LeaseDuration / time.Second)` when acquiring or renewing, 1 on
    /// release. Candidates judge expiry with this value, not with their own configuration.
    pub lease_duration_secs: u32,
    /// `acquireTime` and `renewTime`: `metav1.MicroTime` of the writer's wall clock (µs since the
    /// run's epoch). Nobody reads them as times; they only make every renewal a change.
    pub acquire_time_us: i64,
    /// `renewTime`, as `acquire_time_us` (µs): the writer's wall clock at its write.
    pub renew_time_us: i64,
    /// `leaseTransitions`: +1 whenever a candidate that is not the holder takes the Lease.
    pub transitions: u64,
}

impl fmt::Debug for LeaseSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.holder {
            Some(h) => write!(f, "holder={h:?}")?,
            None => f.write_str("holder=\"\"")?,
        }
        write!(
            f,
            " duration={}s transitions={} renew={}us",
            self.lease_duration_secs, self.transitions, self.renew_time_us
        )
    }
}

/// A Lease as the API server returns it: the spec and `metadata.resourceVersion` (the etcd
/// revision of the object's last write).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The Lease's spec.
    pub spec: LeaseSpec,
    /// `metadata.resourceVersion`: the store's revision at the Lease's last write.
    pub resource_version: u64,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rv={} {:?}", self.resource_version, self.spec)
    }
}

/// What a request asks of the Lease.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `Leases(ns).Get` (`LeaseLock.Get`): a quorum read (no `resourceVersion` in GetOptions).
    Get,
    /// `Leases(ns).Create` (`LeaseLock.Create`): 409 AlreadyExists if the Lease exists.
    Create {
        /// The spec to store.
        spec: LeaseSpec,
    },
    /// `Leases(ns).Update` (`LeaseLock.Update`) of the object last read or written, whose
    /// `resourceVersion` is the precondition: 409 Conflict if the Lease has changed since.
    Update {
        /// The new spec.
        spec: LeaseSpec,
        /// The `resourceVersion` of the object the writer last read or wrote: the precondition.
        resource_version: u64,
    },
}

/// A request from a client library to an API server.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiRequest {
    /// The client's id for the request, echoed in the answer (it starts from the identity's
    /// uuid at each start, so a restarted client's ids are new).
    pub id: u64,
    /// The lock key whose Lease the call is about (`lease-<key>`).
    pub lease: LockKey,
    /// What the call asks.
    pub verb: Verb,
}

impl fmt::Debug for ApiRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verb {
            Verb::Get => write!(f, "GET lease-{} #{}", self.lease, self.id),
            Verb::Create { spec } => write!(f, "POST lease-{} {spec:?} #{}", self.lease, self.id),
            Verb::Update { spec, resource_version } => {
                write!(f, "PUT lease-{} rv={resource_version} {spec:?} #{}", self.lease, self.id)
            }
        }
    }
}

/// The API server's errors a Lease call can get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiError {
    /// 404 NotFound: GET or UPDATE of a Lease that does not exist.
    NotFound,
    /// 409 AlreadyExists: CREATE of a Lease that exists.
    AlreadyExists,
    /// 409 Conflict: UPDATE whose `resourceVersion` is not the Lease's.
    Conflict,
}

/// The answer to an [`ApiRequest`].
#[derive(Clone, PartialEq, Eq)]
pub struct ApiResponse {
    /// The `id` of the request answered.
    pub id: u64,
    /// The Lease as read or as written, or the error.
    pub result: Result<Lease, ApiError>,
}

impl fmt::Debug for ApiResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(lease) => write!(f, "200 {lease:?} #{}", self.id),
            Err(ApiError::NotFound) => write!(f, "404 NotFound #{}", self.id),
            Err(ApiError::AlreadyExists) => write!(f, "409 AlreadyExists #{}", self.id),
            Err(ApiError::Conflict) => write!(f, "409 Conflict #{}", self.id),
        }
    }
}

/// A front API server passes a client's request on to the store (server-0).
#[derive(Clone, PartialEq, Eq)]
pub struct StoreRequest {
    /// The client to relay the answer to.
    pub client: NodeId,
    /// The client's request.
    pub request: ApiRequest,
}

impl fmt::Debug for StoreRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "store: {:?}", self.request)
    }
}

/// The store's answer, which the front API server relays to `client`.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreResponse {
    /// The client the answer is for.
    pub client: NodeId,
    /// The store's answer.
    pub response: ApiResponse,
}

impl fmt::Debug for StoreResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "store: {:?}", self.response)
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the kubernetes model.
    #[derive(Clone)]
    pub enum KubernetesMsg: Fingerprint {
        /// Client → API server.
        Request(ApiRequest),
        /// API server → client.
        Response(ApiResponse),
        /// Front API server → the store.
        ToStore(StoreRequest),
        /// The store → front API server.
        FromStore(StoreResponse),
    }
}

/// The client library's timers, one kind per wait in client-go's loops, each for one Lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The next `tryAcquireOrRenew` of the Lease's acquire loop (`wait.JitterUntil`), renew
    /// loop (`wait.Until`) or renew poll (`wait.PollImmediateUntil`'s ticker).
    Retry {
        /// The Lease (lock key) of the elector that set it.
        key: LockKey,
    },
    /// The leader-election client's HTTP timeout (`rest.Config.Timeout`) for the request in flight.
    RequestTimeout {
        /// The Lease (lock key) of the elector that set it.
        key: LockKey,
    },
    /// The renew poll's `context.WithTimeout(ctx, RenewDeadline)`.
    RenewDeadline {
        /// The Lease (lock key) of the elector that set it.
        key: LockKey,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the kubernetes model. The API server sets none (it answers each request as
    /// it comes); only the client library waits.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum KubernetesTimer: Fingerprint {
        /// The client library's timer.
        Client(ClientTimer),
    }
}
