//! `consul`: Consul sessions and the Go api's `Lock` (what `consul lock` runs), on a Consul
//! server cluster whose Raft is the shared consensus core.
//!
//! Module map:
//! - [`protocol`]: the HTTP calls (session, KV), answers, gossip probe, log commands, timers
//! - [`state`]: the state store's sessions, KV entries (LockIndex, ModifyIndex) and node checks
//! - [`server`]: one server: Raft member, session TTL timers, the failure detector behind
//!   `serfHealth`, lock-delay, blocking queries
//! - [`client`]: a client node: `api.Lock` (session, renewals, wait loop, monitor) and its agent
//!
//! Sources (consul, the 1.x line; `api/lock.go`, `agent/structs/structs.go`,
//! `agent/consul/session_ttl.go`, `agent/consul/kvs_endpoint.go`, `agent/consul/state/{kvs,
//! session,delay}.go`, `agent/session_endpoint.go`), memberlist `config.go`
//! (`DefaultLANConfig`), and the Consul docs' "Sessions" page. Each module header says what it
//! follows.
//!
//! How the lock works: a session is bound to the node's `serfHealth` check and to a TTL (15 s for
//! `api.Lock`); the key names the session that holds it. The session ends when its TTL runs out
//! on the leader (after up to 2 × TTL), when the node's agent stops answering gossip
//! (`serfHealth` critical), or when its owner destroys it; its keys are then released (or
//! deleted) and get its lock-delay (15 s), during which the leader refuses to lock them again.
//! A holder learns it lost the lock only from its monitor's blocking query, and a holder cut off
//! from the servers cannot get that answer: its session is invalidated on the servers while it
//! runs on (hashicorp/consul#18271, #1843; patroni/patroni#522). The lock-delay is the only
//! guard, and it is a fixed time, not a fence: a pause or partition longer than the failure
//! detection plus the lock-delay overlaps. The key's `LockIndex` (or `ModifyIndex`) is a token
//! a resource can check.
//!
//! Where the model departs from Consul (each also said where it lives): a client node is one
//! node (application, api client and agent), so a pause freezes the agent's gossip too (a real
//! application pause with the agent running leaves `serfHealth` passing: only the TTL ends the
//! session); the failure detector is the leader probing each agent (memberlist's random probes
//! and Lifeguard's confirmations are not modelled); `?stale` reads, ACLs, the agent cache and
//! semaphores are not modelled; session ids are log indices.

pub mod client;
mod fingerprint;
pub mod protocol;
pub mod server;
pub mod state;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::scenario::show_number;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};

use crate::params::ParamReader;
use client::{ClientConfig, ConsulClient, TokenKind};
use protocol::{Behavior, ConsulMsg, ConsulTimer, ReadMode, SessionSpec};
use server::{ConsulServer, ServerConfig};

/// The `consul` model.
pub struct Consul;

/// The `consul` model, as [`registry`](crate::registry) lists it.
pub static CONSUL: Consul = Consul;

impl Protocol for Consul {
    type Msg = ConsulMsg;
    type Timer = ConsulTimer;
    fn msg_fingerprint(msg: &ConsulMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &ConsulTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "servers",
        kind: ParamKind::Int { min: 1, max: 9 },
        default: "3",
        meaning: "Consul servers (server-0 …), one Raft group; a write needs servers/2 + 1 (the docs recommend 3 or 5)",
    },
    ParamSpec {
        name: "session_ttl_ms",
        kind: ParamKind::Number { min: 0.0, max: 86_400_000.0 },
        default: "15000",
        meaning: "the session's TTL (api/lock.go DefaultLockSessionTTL \"15s\"); 0: no TTL; Consul accepts 10 s to 24 h (session_ttl_min, structs.SessionTTLMax) and invalidates after up to 2 × TTL (structs.SessionTTLMultiplier)",
    },
    ParamSpec {
        name: "session_checks",
        kind: ParamKind::Choice(&["serfHealth", "none"]),
        default: "\"serfHealth\"",
        meaning: "serfHealth: the session is bound to the node's serfHealth check (the server's default when the api sends no checks, agent/session_endpoint.go); none: no checks, only the TTL (Patroni's `checks: []`, patroni#522)",
    },
    ParamSpec {
        name: "behavior",
        kind: ParamKind::Choice(&["release", "delete"]),
        default: "\"release\"",
        meaning: "what an invalidated session does to its keys (structs.SessionKeysRelease, the default, or SessionKeysDelete)",
    },
    ParamSpec {
        name: "lock_delay_ms",
        kind: ParamKind::Number { min: 0.0, max: 60_000.0 },
        default: "15000",
        meaning: "the session's lock-delay: after an invalidation its keys cannot be locked again for this long (agent/session_endpoint.go default 15 s; at most 60 s, structs.MaxLockDelay)",
    },
    ParamSpec {
        name: "read_mode",
        kind: ParamKind::Choice(&["default", "consistent"]),
        default: "\"default\"",
        meaning: "the consistency mode of Lock()'s GET of the key (api.Lock sets none: the default mode, answered by the leader without a quorum check); the monitor always reads ?consistent (monitorLock's RequireConsistent)",
    },
    ParamSpec {
        name: "token",
        kind: ParamKind::Choice(&["lock_index", "modify_index"]),
        default: "\"lock_index\"",
        meaning: "the fencing token the application takes from the key: LockIndex (times acquired; restarts at 1 on a key deleted by a behavior = delete session) or ModifyIndex (the Raft index of the acquire)",
    },
    ParamSpec {
        name: "on_lock_lost",
        kind: ParamKind::Choice(&["stop", "proceed"]),
        default: "\"stop\"",
        meaning: "stop: the application stops when Lock()'s channel closes (consul lock kills its child); proceed: it ignores the channel",
    },
    ParamSpec {
        name: "lock_wait_ms",
        kind: ParamKind::Number { min: 1.0, max: 600_000.0 },
        default: "15000",
        meaning: "Lock()'s blocking GET wait (api/lock.go DefaultLockWaitTime)",
    },
    ParamSpec {
        name: "lock_retry_ms",
        kind: ParamKind::Number { min: 0.0, max: 600_000.0 },
        default: "5000",
        meaning: "Lock()'s wait after a refused acquire, e.g. a lock-delay in force (api/lock.go DefaultLockRetryTime)",
    },
    ParamSpec {
        name: "monitor_wait_ms",
        kind: ParamKind::Number { min: 1.0, max: 600_000.0 },
        default: "300000",
        meaning: "the monitor's blocking query wait: monitorLock sets none, so the server's default_query_time (5 min) applies",
    },
    ParamSpec {
        name: "rpc_client_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "60000",
        meaning: "the agent's deadline for a call to a server, added to a blocking query's wait (limits.rpc_client_timeout, 60 s, since hashicorp/consul#11500 in 1.11)",
    },
    ParamSpec {
        name: "rpc_hold_timeout_ms",
        kind: ParamKind::Number { min: 16.0, max: 1e9 },
        default: "7000",
        meaning: "how long the agent retries a call that finds no leader (rpc_hold_timeout, 7 s), waiting a random stagger of 1/16 of it between tries",
    },
    ParamSpec {
        name: "serf_probe_interval_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e7 },
        default: "1000",
        meaning: "memberlist ProbeInterval (DefaultLANConfig 1 s): how often the leader probes each agent",
    },
    ParamSpec {
        name: "serf_probe_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e7 },
        default: "500",
        meaning: "memberlist ProbeTimeout (DefaultLANConfig 500 ms): an agent not answering a probe this long is suspect",
    },
    ParamSpec {
        name: "serf_suspicion_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e8 },
        default: "4000",
        meaning: "how long a suspect agent has to answer before it is declared failed and serfHealth goes critical: memberlist's SuspicionMult 4 × ProbeInterval (the floor Lifeguard reaches once other members confirm; up to 6 × that without confirmations)",
    },
    ParamSpec {
        name: "heartbeat_ms",
        kind: ParamKind::Number { min: 0.1, max: 1e7 },
        default: "500",
        meaning: "Raft leader heartbeat interval: hashicorp/raft sends one every HeartbeatTimeout / 10; Consul's HeartbeatTimeout is 1 s × raft_multiplier (5)",
    },
    ParamSpec {
        name: "election_ms",
        kind: ParamKind::Number { min: 0.5, max: 1e8 },
        default: "5000",
        meaning: "Raft election timeout (1 s × raft_multiplier 5), randomised in [1, 2) × this",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a server's processing time per call",
    },
];

/// Every parameter, read once.
#[derive(Clone, Debug)]
pub struct ConsulConfig {
    /// Servers in the Raft group.
    pub servers: usize,
    /// The session TTL (`None`: no TTL).
    pub session_ttl_ns: Option<Nanos>,
    /// Bound to `serfHealth`.
    pub serf_check: bool,
    /// Release or delete.
    pub behavior: Behavior,
    /// The session's lock-delay.
    pub lock_delay_ns: Nanos,
    /// `Lock()`'s GET mode.
    pub read_mode: ReadMode,
    /// The token taken from the key.
    pub token: TokenKind,
    /// Stop when the lock is lost.
    pub stop_on_lost: bool,
    /// `DefaultLockWaitTime`.
    pub lock_wait_ns: Nanos,
    /// `DefaultLockRetryTime`.
    pub lock_retry_ns: Nanos,
    /// The monitor's query wait.
    pub monitor_wait_ns: Nanos,
    /// `rpc_client_timeout`.
    pub rpc_timeout_ns: Nanos,
    /// `rpc_hold_timeout`.
    pub rpc_hold_ns: Nanos,
    /// memberlist's probe interval, probe timeout and suspicion timeout.
    pub probe_interval_ns: Nanos,
    /// See `probe_interval_ns`.
    pub probe_timeout_ns: Nanos,
    /// See `probe_interval_ns`.
    pub suspicion_ns: Nanos,
    /// Raft heartbeat interval and election timeout.
    pub heartbeat_ns: Nanos,
    /// See `heartbeat_ns`.
    pub election_ns: Nanos,
    /// A server's processing time.
    pub service_ms: Dist,
}

impl ConsulConfig {
    /// Reads every parameter, each by a name checked against [`PARAMS`] ([`ParamReader`]), and
    /// the problems found (an unknown key, a mistyped read), which [`Model::validate`] reports.
    pub fn read(params: &Params) -> (ConsulConfig, Vec<ParamProblem>) {
        let p = ParamReader::new("consul", PARAMS, params);
        let ttl_ms = p.f64("session_ttl_ms");
        let cfg = ConsulConfig {
            servers: p.int("servers") as usize,
            session_ttl_ns: (ttl_ms > 0.0).then(|| ms_to_ns(ttl_ms)),
            serf_check: p.str("session_checks") == "serfHealth",
            behavior: if p.str("behavior") == "delete" { Behavior::Delete } else { Behavior::Release },
            lock_delay_ns: ms_to_ns(p.f64("lock_delay_ms")),
            read_mode: if p.str("read_mode") == "consistent" { ReadMode::Consistent } else { ReadMode::Default },
            token: if p.str("token") == "modify_index" { TokenKind::ModifyIndex } else { TokenKind::LockIndex },
            stop_on_lost: p.str("on_lock_lost") == "stop",
            lock_wait_ns: ms_to_ns(p.f64("lock_wait_ms")),
            lock_retry_ns: ms_to_ns(p.f64("lock_retry_ms")),
            monitor_wait_ns: ms_to_ns(p.f64("monitor_wait_ms")),
            rpc_timeout_ns: ms_to_ns(p.f64("rpc_client_timeout_ms")),
            rpc_hold_ns: ms_to_ns(p.f64("rpc_hold_timeout_ms")),
            probe_interval_ns: ms_to_ns(p.f64("serf_probe_interval_ms")),
            probe_timeout_ns: ms_to_ns(p.f64("serf_probe_timeout_ms")),
            suspicion_ns: ms_to_ns(p.f64("serf_suspicion_ms")),
            heartbeat_ns: ms_to_ns(p.f64("heartbeat_ms")),
            election_ns: ms_to_ns(p.f64("election_ms")),
            service_ms: p.dist("service_ms"),
        };
        (cfg, p.problems())
    }

    /// As [`ConsulConfig::read`], for a row the parser has validated.
    pub fn from_params(params: &Params) -> ConsulConfig {
        Self::read(params).0
    }
}

impl Model for Consul {
    type Protocol = Consul;

    fn name(&self) -> &'static str {
        "consul"
    }

    fn summary(&self) -> &'static str {
        "Consul: Raft servers, sessions bound to serfHealth and a TTL, api.Lock (acquire=session, lock-delay after invalidation, consistent monitor query); token = the key's LockIndex"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let (_, mut problems) = ConsulConfig::read(params);
        if !problems.is_empty() {
            return problems;
        }
        let params = ParamReader::new("consul", PARAMS, params);
        let ttl = params.f64("session_ttl_ms");
        if ttl != 0.0 && ttl < 10_000.0 {
            problems.push(ParamProblem {
                key: "session_ttl_ms".into(),
                message: format!(
                    "Consul refuses a session TTL below session_ttl_min (10 s): session_ttl_ms = {} (use 0 for no TTL, or 10000 to 86400000)",
                    show_number(ttl)
                ),
            });
        }
        if ttl == 0.0 && params.str("session_checks") == "none" {
            problems.push(ParamProblem {
                key: "session_checks".into(),
                message: "a session with no checks and no TTL is never invalidated: a holder that dies keeps the lock for good; give session_ttl_ms or session_checks = \"serfHealth\"".into(),
            });
        }
        let mut all = params.problems();
        all.extend(problems);
        all
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let mut notes = vec![
            "a client node is the application, api client and Consul agent together: a pause freezes the agent's gossip too, so serfHealth fails during it (an application pause with the agent running ends the session only through its TTL)".to_string(),
            "serfHealth's failure detector is the leader probing each agent every probe interval with the suspicion timeout's floor; memberlist's random probes by every member and Lifeguard's longer first suspicion are not modelled".to_string(),
            "the grant's token is the key's LockIndex or ModifyIndex handed with the acquire's answer (an application reads them with a GET)".to_string(),
        ];
        if workload.reentry > 0.0 {
            notes.push(
                "api.Lock is not reentrant (a second Lock() returns ErrLockHeld): nested acquisitions are skipped"
                    .into(),
            );
        }
        let cfg = ConsulConfig::from_params(params);
        if cfg.behavior == Behavior::Delete && cfg.token == TokenKind::LockIndex {
            notes.push(
                "behavior = \"delete\" with token = \"lock_index\": an invalidation deletes the key, and the next holder's LockIndex starts again at 1 (equal or lower tokens)".into(),
            );
        }
        notes
    }

    fn fenced(&self, _params: &Params) -> bool {
        true
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        (0..ConsulConfig::from_params(params).servers).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Agent-to-server RPC and Raft run over TCP (gossip is UDP; its order does not matter).
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Consul> {
        let cfg = ConsulConfig::from_params(params);
        let members: Vec<String> = (0..cfg.servers).map(|i| format!("server-{i}")).collect();
        let raft = crate::consensus::Config::new(cfg.heartbeat_ns, cfg.election_ns);
        let server_cfg = ServerConfig {
            service_ms: cfg.service_ms.clone(),
            clients: workload.clients,
            probe_interval_ns: cfg.probe_interval_ns,
            probe_timeout_ns: cfg.probe_timeout_ns,
            suspicion_ns: cfg.suspicion_ns,
        };
        let services = (0..cfg.servers)
            .map(|i| {
                Box::new(ConsulServer::new(i, members.clone(), server_cfg.clone(), raft.clone()))
                    as Box<dyn Process<Consul>>
            })
            .collect();
        let client_cfg = ClientConfig {
            servers: cfg.servers,
            session: SessionSpec {
                node: 0,
                serf_check: cfg.serf_check,
                ttl_ns: cfg.session_ttl_ns,
                behavior: cfg.behavior,
                lock_delay_ns: cfg.lock_delay_ns,
            },
            lock_wait_ns: cfg.lock_wait_ns,
            monitor_wait_ns: cfg.monitor_wait_ns,
            lock_retry_ns: cfg.lock_retry_ns,
            rpc_timeout_ns: cfg.rpc_timeout_ns,
            rpc_hold_ns: cfg.rpc_hold_ns,
            read_mode: cfg.read_mode,
            stop_on_lost: cfg.stop_on_lost,
            token: cfg.token,
        };
        let clients = (0..workload.clients)
            .map(|i| Box::new(ConsulClient::new(i, client_cfg.clone())) as Box<dyn LockClient<Consul>>)
            .collect();
        Cluster { services, clients }
    }
}
