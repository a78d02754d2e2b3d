//! `hazelcast`: Hazelcast's CP subsystem `FencedLock` (5.x): a CP group of 3 to 7 members running
//! Raft (the shared consensus core), CP sessions kept alive by client heartbeats, and the lock's
//! fence, a monotonic `long` from `lockAndGetFence()`.
//!
//! Module map:
//! - [`protocol`]: invocations (`CreateSessionOp`, `HeartbeatSessionOp`, `LockOp`, `UnlockOp`),
//!   responses, log commands, timers
//! - [`state`]: the group's sessions and locks (owner, reentry count, fence, wait queue)
//! - [`server`]: one CP member: Raft, the state, the leader's expired-session check
//! - [`client`]: a client: the `FencedLock` proxy and the session manager's heartbeats
//!
//! Sources (hazelcast/hazelcast, the 5.x line): `config/cp/CPSubsystemConfig.java`
//! (`DEFAULT_SESSION_TTL_SECONDS` 300, `DEFAULT_HEARTBEAT_INTERVAL_SECONDS` 5, CP member and
//! group sizes 3-7), `config/cp/RaftAlgorithmConfig.java` (leader election timeout 2 s, leader
//! heartbeat period 5 s, 5 missed heartbeats), `config/cp/FencedLockConfig.java`
//! (`DEFAULT_LOCK_ACQUIRE_LIMIT` 0: reentrant without bound), `cp/internal/session/
//! RaftSessionService.java` (`CHECK_EXPIRED_SESSIONS_TASK_PERIOD_IN_MILLIS` 1 s),
//! `cp/internal/datastructures/lock/Lock.java`, and the `FencedLock` javadoc ("If the lock holder
//! ... its session is closed ... the lock is released ... the fence"). Each module header says
//! what it follows.
//!
//! How it fails, by mechanism: a holder that stops heartbeating (paused, cut off) for longer
//! than the session TTL loses its session on the leader, which releases its lock to the next
//! waiter with a higher fence; the old holder resumes believing it holds, and only a resource
//! that checks the fence rejects its writes. The TTL is five minutes by default, so a pause must
//! be long; the fence is the design's answer to the rest.
//!
//! Where the model departs from Hazelcast: the group exists from the start with `server-0`
//! leading (no CP discovery or membership changes); session expiry compares each member's own
//! monotonic clock (Hazelcast reads the wall clock, `Clock.currentTimeMillis()`); a cancelled
//! wait (`tryLock` timing out) is dropped on the client only; the client is a smart client that
//! invokes the leader directly.
//!
//! `lock = "ilock"` runs the pre-3.12 lock instead, for contrast ([`ilock`]): Hazelcast 3.8's
//! `ILock`, a lock entry in a partition owned by one member with one backup, members removing
//! each other after `hazelcast.max.no.heartbeat.seconds` of silence and releasing a removed
//! member's clients' locks; no fence. Under a partition between members each side grants the
//! lock (Jepsen, "Hazelcast 3.8.3", 2017). The CP parameters do not apply to it, nor its own to
//! the FencedLock.

pub mod client;
mod fingerprint;
pub mod ilock;
pub mod protocol;
pub mod server;
pub mod state;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};

use crate::params::ParamReader;
use client::{ClientConfig, HazelcastClient};
use ilock::client::IlockClient;
use ilock::member::IlockMember;
use ilock::IlockConfig;
use protocol::{HazelcastMsg, HazelcastTimer};
use server::{HazelcastServer, ServerConfig};

/// The `hazelcast` model.
pub struct Hazelcast;

/// The `hazelcast` model, as [`registry`](crate::registry) lists it.
pub static HAZELCAST: Hazelcast = Hazelcast;

impl Protocol for Hazelcast {
    type Msg = HazelcastMsg;
    type Timer = HazelcastTimer;
    fn msg_fingerprint(msg: &HazelcastMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &HazelcastTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "lock",
        kind: ParamKind::Choice(&["fenced_lock", "ilock"]),
        default: "\"fenced_lock\"",
        meaning: "fenced_lock: the CP subsystem's FencedLock (3.12+); ilock: the pre-3.12 ILock of Hazelcast 3.8, a partitioned lock store with one backup and no consensus, for contrast (Jepsen's Hazelcast 3.8.3 analysis)",
    },
    ParamSpec {
        name: "servers",
        kind: ParamKind::Int { min: 3, max: 7 },
        default: "3",
        meaning: "CP members in the CP group holding the lock (server-0 …; CPSubsystemConfig: cp-member-count and group-size between 3 and 7)",
    },
    ParamSpec {
        name: "session_ttl_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e10 },
        default: "300000",
        meaning: "session-time-to-live-seconds (CPSubsystemConfig.DEFAULT_SESSION_TTL_SECONDS, 300): a session not heartbeaten this long is closed and its locks released",
    },
    ParamSpec {
        name: "session_heartbeat_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "5000",
        meaning: "session-heartbeat-interval-seconds (DEFAULT_HEARTBEAT_INTERVAL_SECONDS, 5): how often the client heartbeats a session in use",
    },
    ParamSpec {
        name: "lock_acquire_limit",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: "0",
        meaning: "FencedLockConfig lock-acquire-limit (DEFAULT_LOCK_ACQUIRE_LIMIT 0: reentrant without bound; 1: not reentrant)",
    },
    ParamSpec {
        name: "raft_heartbeat_ms",
        kind: ParamKind::Number { min: 0.1, max: 1e7 },
        default: "5000",
        meaning: "RaftAlgorithmConfig leader-heartbeat-period-in-millis (5000)",
    },
    ParamSpec {
        name: "raft_election_ms",
        kind: ParamKind::Number { min: 0.5, max: 1e8 },
        default: "25000",
        meaning: "how long a follower waits without the leader before it campaigns, randomised in [1, 2) × this: leader-heartbeat-period (5 s) × max-missed-leader-heartbeat-count (5) (RaftAlgorithmConfig); the 2 s leader-election-timeout bounds one election round in Hazelcast and is not modelled apart",
    },
    ParamSpec {
        name: "invocation_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "120000",
        meaning: "hazelcast.client.invocation.timeout.seconds (120): a non-blocking invocation gives up after this long",
    },
    ParamSpec {
        name: "invocation_retry_pause_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e7 },
        default: "1000",
        meaning: "hazelcast.client.invocation.retry.pause.millis (1000): the wait before an invocation is retried on another member",
    },
    ParamSpec {
        name: "member_heartbeat_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "5000",
        meaning: "lock = ilock: hazelcast.heartbeat.interval.seconds (3.x GroupProperty, 5): how often members heartbeat each other",
    },
    ParamSpec {
        name: "max_no_heartbeat_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e10 },
        default: "300000",
        meaning: "lock = ilock: hazelcast.max.no.heartbeat.seconds (3.x GroupProperty, 300): a member not heard from this long is removed from the cluster",
    },
    ParamSpec {
        name: "client_endpoint_remove_delay_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "10000",
        meaning: "lock = ilock: ClientEngineImpl.ENDPOINT_REMOVE_DELAY_SECONDS (10 in 3.8): after a member is removed, its clients are disconnected (their locks released) this much later",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a CP member's processing time per invocation",
    },
];

/// Every parameter, read once.
#[derive(Clone, Debug)]
pub struct HazelcastConfig {
    /// CP group members.
    pub servers: usize,
    /// Session TTL.
    pub session_ttl_ns: Nanos,
    /// Session heartbeat interval.
    pub session_heartbeat_ns: Nanos,
    /// Reentry limit (0: none).
    pub acquire_limit: u32,
    /// Raft leader heartbeat period.
    pub raft_heartbeat_ns: Nanos,
    /// Raft election timeout (base).
    pub raft_election_ns: Nanos,
    /// Client invocation timeout.
    pub invocation_timeout_ns: Nanos,
    /// Client invocation retry pause.
    pub retry_pause_ns: Nanos,
    /// Member processing time.
    pub service_ms: Dist,
    /// `lock = "ilock"`: the pre-3.12 `ILock` instead of the CP FencedLock.
    pub ilock: bool,
    /// `ILock`: the member heartbeat interval.
    pub member_heartbeat_ns: Nanos,
    /// `ILock`: the silence after which a member is removed.
    pub max_no_heartbeat_ns: Nanos,
    /// `ILock`: the delay before a removed member's clients are disconnected.
    pub endpoint_remove_delay_ns: Nanos,
}

impl HazelcastConfig {
    /// Reads every parameter, each by a name checked against [`PARAMS`] ([`ParamReader`]), and
    /// the problems found (an unknown key, a mistyped read), which [`Model::validate`] reports.
    pub fn read(params: &Params) -> (HazelcastConfig, Vec<ParamProblem>) {
        let p = ParamReader::new("hazelcast", PARAMS, params);
        let cfg = HazelcastConfig {
            servers: p.int("servers") as usize,
            session_ttl_ns: ms_to_ns(p.f64("session_ttl_ms")),
            session_heartbeat_ns: ms_to_ns(p.f64("session_heartbeat_ms")),
            acquire_limit: p.int("lock_acquire_limit") as u32,
            raft_heartbeat_ns: ms_to_ns(p.f64("raft_heartbeat_ms")),
            raft_election_ns: ms_to_ns(p.f64("raft_election_ms")),
            invocation_timeout_ns: ms_to_ns(p.f64("invocation_timeout_ms")),
            retry_pause_ns: ms_to_ns(p.f64("invocation_retry_pause_ms")),
            service_ms: p.dist("service_ms"),
            ilock: p.str("lock") == "ilock",
            member_heartbeat_ns: ms_to_ns(p.f64("member_heartbeat_ms")),
            max_no_heartbeat_ns: ms_to_ns(p.f64("max_no_heartbeat_ms")),
            endpoint_remove_delay_ns: ms_to_ns(p.f64("client_endpoint_remove_delay_ms")),
        };
        (cfg, p.problems())
    }

    /// As [`HazelcastConfig::read`], for a row the parser has validated.
    pub fn from_params(params: &Params) -> HazelcastConfig {
        Self::read(params).0
    }
}

impl Model for Hazelcast {
    type Protocol = Hazelcast;

    fn name(&self) -> &'static str {
        "hazelcast"
    }

    fn summary(&self) -> &'static str {
        "Hazelcast CP FencedLock: Raft CP group, CP sessions heartbeaten by the client (TTL 300 s), reentrant lock waiting in the group; token = the fence (commit index of the acquire); lock = \"ilock\": the pre-3.12 ILock (a partitioned lock entry with one backup, no consensus, no token)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let (cfg, problems) = HazelcastConfig::read(params);
        if !problems.is_empty() {
            return problems;
        }
        let params = ParamReader::new("hazelcast", PARAMS, params);
        let (ttl, hb) = (params.f64("session_ttl_ms"), params.f64("session_heartbeat_ms"));
        let mut problems = Vec::new();
        if cfg.ilock {
            let (beat, max) = (params.f64("member_heartbeat_ms"), params.f64("max_no_heartbeat_ms"));
            if max <= beat {
                problems.push(ParamProblem {
                    key: "max_no_heartbeat_ms".into(),
                    message: format!(
                        "a member is removed after this much silence, which must be longer than the heartbeat interval: max_no_heartbeat_ms = {} is not above member_heartbeat_ms = {}",
                        locksim_simulator::scenario::show_number(max),
                        locksim_simulator::scenario::show_number(beat)
                    ),
                });
            }
        } else if ttl <= hb {
            let (ttl, hb) =
                (locksim_simulator::scenario::show_number(ttl), locksim_simulator::scenario::show_number(hb));
            problems.push(ParamProblem {
                key: "session_ttl_ms".into(),
                message: format!(
                    "CPSubsystemConfig requires the session TTL to be greater than the session heartbeat interval: session_ttl_ms = {ttl} is not above session_heartbeat_ms = {hb}"
                ),
            });
        }
        let mut all = params.problems();
        all.extend(problems);
        all
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let cfg = HazelcastConfig::from_params(params);
        if cfg.ilock {
            return vec![
                "lock = ilock: each member removes the members it has not heard from (Hazelcast's master decides and the others follow); a removed member never rejoins (no split-brain merge); one lock partition per key with one backup; clients use unisocket routing through their own member and are never disconnected for silence (a paused client keeps its lock); a member's restart comes back empty with every member in its view".to_string(),
            ];
        }
        let mut notes = vec![
            "the CP group exists from the start, led by server-0; CP discovery, membership changes and snapshots are not modelled".to_string(),
            "session expiry compares each CP member's monotonic clock (Hazelcast reads its wall clock)".to_string(),
        ];
        if workload.acquire_timeout_ms.is_some() {
            notes.push("a cancelled wait (tryLock's timeout) is dropped on the client only: the group's wait key stays until the session closes".into());
        }
        if workload.reentry > 0.0 && cfg.acquire_limit == 1 {
            notes.push("lock_acquire_limit = 1: a nested acquisition fails (LockAcquireLimitReachedException)".into());
        }
        notes
    }

    fn fenced(&self, params: &Params) -> bool {
        // ILock has no fence; FencedLock's is the commit index.
        !HazelcastConfig::from_params(params).ilock
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        (0..HazelcastConfig::from_params(params).servers).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Hazelcast's member and client connections are TCP.
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Hazelcast> {
        let cfg = HazelcastConfig::from_params(params);
        if cfg.ilock {
            return build_ilock(&cfg, workload);
        }
        let members: Vec<String> = (0..cfg.servers).map(|i| format!("server-{i}")).collect();
        let raft = crate::consensus::Config::new(cfg.raft_heartbeat_ns, cfg.raft_election_ns);
        let server_cfg = ServerConfig {
            service_ms: cfg.service_ms.clone(),
            clients: workload.clients,
            session_ttl_ns: cfg.session_ttl_ns,
            heartbeat_ns: cfg.session_heartbeat_ns,
            acquire_limit: cfg.acquire_limit,
        };
        let services = (0..cfg.servers)
            .map(|i| {
                Box::new(HazelcastServer::new(i, members.clone(), server_cfg.clone(), raft.clone()))
                    as Box<dyn Process<Hazelcast>>
            })
            .collect();
        let client_cfg = ClientConfig {
            servers: cfg.servers,
            heartbeat_ns: cfg.session_heartbeat_ns,
            invocation_timeout_ns: cfg.invocation_timeout_ns,
            retry_pause_ns: cfg.retry_pause_ns,
        };
        let clients = (0..workload.clients)
            .map(|_| Box::new(HazelcastClient::new(client_cfg.clone())) as Box<dyn LockClient<Hazelcast>>)
            .collect();
        Cluster { services, clients }
    }
}

/// The `ILock` cluster: plain members and unisocket clients.
fn build_ilock(hz: &HazelcastConfig, workload: &WorkloadSpec) -> Cluster<Hazelcast> {
    let cfg = IlockConfig {
        members: hz.servers,
        clients: workload.clients,
        heartbeat_ns: hz.member_heartbeat_ns,
        max_no_heartbeat_ns: hz.max_no_heartbeat_ns,
        endpoint_remove_delay_ns: hz.endpoint_remove_delay_ns,
        // GroupProperty.INVOCATION_RETRY_PAUSE: hazelcast.invocation.retry.pause.millis, 500.
        retry_pause_ns: ms_to_ns(500.0),
    };
    let services =
        (0..cfg.members).map(|i| Box::new(IlockMember::new(i, cfg.clone())) as Box<dyn Process<Hazelcast>>).collect();
    let clients = (0..workload.clients)
        .map(|i| Box::new(IlockClient::new(i as u32, cfg.members)) as Box<dyn LockClient<Hazelcast>>)
        .collect();
    Cluster { services, clients }
}
