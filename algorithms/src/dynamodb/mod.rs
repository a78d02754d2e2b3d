//! `dynamodb`: the AWS DynamoDB Lock Client (awslabs/amazon-dynamodb-lock-client 1.x) on a
//! DynamoDB table.
//!
//! Module map:
//! - [`protocol`]: the table calls (`GetItem`, conditional `PutItem`, `UpdateItem`,
//!   `DeleteItem`), answers, timers
//! - [`server`]: the table (`server-0`), one linearizable conditional-write service
//! - [`client`]: `acquireLock`'s loop, the heartbeat thread, `releaseLock`
//!
//! Sources: `AmazonDynamoDBLockClient.java` (`acquireLock`, `sendHeartbeat`, `releaseLock`,
//! `DEFAULT_BUFFER_MS` 1 s), `AmazonDynamoDBLockClientOptions.java` (lease duration 20 s,
//! heartbeat period 5 s), `LockItem.java` (`isExpired`: lookup time + lease on the client's
//! `System.nanoTime()`), cirello-io/dynamolock#280 (a heartbeat that errors on the client but
//! was applied). No absolute times are stored: a waiter declares a lock stale only after seeing
//! the same record version number (RVN) for a whole lease on its own clock, so clock offsets do
//! nothing; what breaks exclusion is a holder that stops heartbeating for a lease (paused, cut
//! off, or its heartbeat thread gone while the application runs on) and resumes without checking,
//! and the lock has no ordered token to fence it.
//!
//! Where the model departs: DynamoDB is one node applying calls at once (what that leaves out
//! is said in [`server`]); the SDK's retries are not modelled (a call has one try and an
//! optional timeout); the application's own check is `lockItem.isExpired()` before it writes
//! (`check_expired`), not a session monitor callback.

pub mod client;
mod fingerprint;
pub mod protocol;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};

use crate::params::ParamReader;
use client::{ClientConfig, DynamoClient};
use protocol::{DynamoMsg, DynamoTimer};
use server::DynamoTable;

/// The `dynamodb` model.
pub struct Dynamo;

/// The `dynamodb` model, as [`registry`](crate::registry) lists it.
pub static DYNAMODB: Dynamo = Dynamo;

impl Protocol for Dynamo {
    type Msg = DynamoMsg;
    type Timer = DynamoTimer;
    fn msg_fingerprint(msg: &DynamoMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &DynamoTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "lease_duration_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "20000",
        meaning: "leaseDuration (AmazonDynamoDBLockClientOptions default 20 s): a waiter takes the lock over once its RVN has not changed for this long on the waiter's clock",
    },
    ParamSpec {
        name: "heartbeat_period_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "5000",
        meaning: "heartbeatPeriod (default 5 s): the background thread rewrites each held lock's RVN this often",
    },
    ParamSpec {
        name: "refresh_period_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "1000",
        meaning: "AcquireLockOptions refreshPeriod (DEFAULT_BUFFER_MS, 1 s): acquireLock's sleep between looks",
    },
    ParamSpec {
        name: "additional_wait_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "1000",
        meaning: "AcquireLockOptions additionalTimeToWaitForLock (DEFAULT_BUFFER_MS, 1 s): acquireLock gives up (LockNotGrantedException) after this plus one lease of the lock it found",
    },
    ParamSpec {
        name: "request_timeout_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "0",
        meaning: "the SDK call's timeout (ClientConfiguration requestTimeout, 0 = none, the SDK v1 default; a context deadline in the Go port): a call unanswered this long fails on the client, whether or not it took effect",
    },
    ParamSpec {
        name: "heartbeat_thread_stops_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "0",
        meaning: "the client's background heartbeat thread ends this long after the client starts (0: never); its locks are not heartbeaten again while the application runs on (run() returns on an interrupt, and an Error escapes it: AmazonDynamoDBLockClient 1.1.0 lines 1160-1191; Iceberg's own DynamoDB lock's heartbeat task likewise stopped for good on its first exception, apache/iceberg#2034)",
    },
    ParamSpec {
        name: "check_expired",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "the application calls lockItem.isExpired() (a lease since the last successful heartbeat, or dropped) before it writes and abandons the section if so",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "5",
        meaning: "a DynamoDB call's latency at the table (single-digit milliseconds, the service's stated figure)",
    },
];

/// Every parameter, read once.
#[derive(Clone, Debug)]
pub struct DynamoConfig {
    /// `leaseDuration`.
    pub lease_ns: Nanos,
    /// `heartbeatPeriod`.
    pub heartbeat_ns: Nanos,
    /// `refreshPeriod`.
    pub refresh_ns: Nanos,
    /// `additionalTimeToWaitForLock`.
    pub additional_wait_ns: Nanos,
    /// The SDK call's timeout.
    pub request_timeout_ns: Option<Nanos>,
    /// When the heartbeat thread ends, after the client's start (`None`: never).
    pub heartbeat_stops_ns: Option<Nanos>,
    /// The application's `isExpired()` check.
    pub check_expired: bool,
    /// The table's latency per call (`service_ms`).
    pub service_ms: Dist,
}

impl DynamoConfig {
    /// Reads every parameter, each by a name checked against [`PARAMS`] ([`ParamReader`]), and
    /// the problems found (an unknown key, a mistyped read), which [`Model::validate`] reports.
    pub fn read(params: &Params) -> (DynamoConfig, Vec<ParamProblem>) {
        let p = ParamReader::new("dynamodb", PARAMS, params);
        let timeout = p.f64("request_timeout_ms");
        let stops = p.f64("heartbeat_thread_stops_ms");
        let cfg = DynamoConfig {
            lease_ns: ms_to_ns(p.f64("lease_duration_ms")),
            heartbeat_ns: ms_to_ns(p.f64("heartbeat_period_ms")),
            refresh_ns: ms_to_ns(p.f64("refresh_period_ms")),
            additional_wait_ns: ms_to_ns(p.f64("additional_wait_ms")),
            request_timeout_ns: (timeout > 0.0).then(|| ms_to_ns(timeout)),
            heartbeat_stops_ns: (stops > 0.0).then(|| ms_to_ns(stops)),
            check_expired: p.bool("check_expired"),
            service_ms: p.dist("service_ms"),
        };
        (cfg, p.problems())
    }

    /// As [`DynamoConfig::read`], for a row the parser has validated.
    pub fn from_params(params: &Params) -> DynamoConfig {
        Self::read(params).0
    }
}

impl Model for Dynamo {
    type Protocol = Dynamo;

    fn name(&self) -> &'static str {
        "dynamodb"
    }

    fn summary(&self) -> &'static str {
        "AWS DynamoDB Lock Client: one item per lock, conditional writes on a random record version number, heartbeats every 5 s, takeover after the same RVN for a 20 s lease on the waiter's clock; no token"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let (_, problems) = DynamoConfig::read(params);
        if !problems.is_empty() {
            return problems;
        }
        let params = ParamReader::new("dynamodb", PARAMS, params);
        let (lease, hb) = (params.f64("lease_duration_ms"), params.f64("heartbeat_period_ms"));
        let mut problems = params.problems();
        if hb >= lease {
            let (lease, hb) =
                (locksim_simulator::scenario::show_number(lease), locksim_simulator::scenario::show_number(hb));
            problems.push(ParamProblem {
                key: "heartbeat_period_ms".into(),
                message: format!(
                    "the heartbeat period must be below the lease duration (the lock client's docs: heartbeat well within the lease): heartbeat_period_ms = {hb} is not below lease_duration_ms = {lease}"
                ),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let mut notes = vec![
            "DynamoDB is one linearizable node answering after service_ms: its replication, partitions, throttling and outages are not modelled, nor the SDK's retries".to_string(),
        ];
        if DynamoConfig::from_params(params).heartbeat_stops_ns.is_some() {
            notes.push("heartbeat_thread_stops_ms: every client's heartbeat thread ends at that time after its start, whatever ended it".into());
        }
        if workload.reentry > 0.0 {
            notes.push("the lock client is not reentrant (a second acquireLock waits for its own lock): nested acquisitions are skipped".into());
        }
        notes
    }

    fn fenced(&self, _params: &Params) -> bool {
        false
    }

    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        vec![("server-0".to_string(), NodeKind::Server)]
    }

    fn topology(&self, _params: &Params) -> Topology {
        // HTTPS over TCP.
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Dynamo> {
        let cfg = DynamoConfig::from_params(params);
        let services = vec![Box::new(DynamoTable::new(cfg.service_ms.clone())) as Box<dyn Process<Dynamo>>];
        let client_cfg = ClientConfig {
            lease_ns: cfg.lease_ns,
            heartbeat_ns: cfg.heartbeat_ns,
            refresh_ns: cfg.refresh_ns,
            additional_wait_ns: cfg.additional_wait_ns,
            request_timeout_ns: cfg.request_timeout_ns,
            heartbeat_stops_ns: cfg.heartbeat_stops_ns,
            check_expired: cfg.check_expired,
        };
        let clients = (0..workload.clients)
            .map(|i| Box::new(DynamoClient::new(i as u32, client_cfg.clone())) as Box<dyn LockClient<Dynamo>>)
            .collect();
        Cluster { services, clients }
    }
}
