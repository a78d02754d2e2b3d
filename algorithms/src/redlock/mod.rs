//! `redlock`: N independent Redis masters and the Redlock client (redis.io "Distributed Locks with
//! Redis"; antirez/redlock-rb, the reference; go-redsync/redsync; mike-marcacci/node-redlock).
//!
//! Module map:
//! - [`protocol`]: the two commands (SET NX PX, compare-and-delete) and their replies; the model's
//!   message and timer enums
//! - [`server`]: one Redis master: wall-clock expiry, single-threaded service, persistence,
//!   delayed restart
//! - [`client`]: the client library: quorum, validity arithmetic, request modes, retries
//!
//! The masters are independent (no replication, no leader): `leaderless` is set, so the `leader`
//! selector means `server-0`. Every client↔master link is a TCP connection, so links are ordered:
//! an unlock sent after a SET that timed out can never overtake it on the same connection.
//! There is no fencing token.
//!
//! Readings of the sources, and what is not modelled:
//! - `retries` counts retries after the first attempt (node-redlock: attempts = retryCount + 1),
//!   as docs/models.md words it; redlock-rb's `retry_count` of 3 counts attempts.
//! - Every failed attempt unlocks all masters before the next (redis.io step 5, redlock-rb,
//!   redsync), in every request mode; node-redlock unlocks only after its last attempt.
//! - The unlock rounds use the same request mode and `node_timeout_ms` as the SET rounds.
//! - Lock extension (redsync `Extend`, node-redlock `using` auto-extension) is not modelled: a
//!   holder has one validity.
//! - A master crash is read as a machine crash (power loss): with `everysec` the writes since
//!   the last fsync are lost (a process crash alone would keep them in the OS page cache).
//! - `restart_delay_ms` counts from the master's last handled event before the crash (see
//!   [`server`]), which may be earlier than the crash itself by the master's idle time.

pub mod client;
pub mod protocol;
pub mod server;

use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::ms_to_ns;

use client::{drift_ns, quorum, ClientConfig, RedlockClient, RequestMode};
use server::{Persistence, RedisMaster};

/// The `redlock` model, and its protocol (its messages and timers are in [`protocol`]).
pub struct Redlock;

/// The `redlock` model, as [`registry`](crate::registry) lists it.
pub static REDLOCK: Redlock = Redlock;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "masters",
        kind: ParamKind::Int { min: 1, max: 99 },
        default: "5",
        meaning: "independent Redis masters (server-0 …); quorum is masters/2 + 1",
    },
    ParamSpec {
        name: "ttl_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "10000",
        meaning: "the key's PX time to live",
    },
    ParamSpec {
        name: "drift_factor",
        kind: ParamKind::Number { min: 0.0, max: 1.0 },
        default: "0.01",
        meaning: "clock drift allowance as a fraction of the TTL, subtracted from the validity",
    },
    ParamSpec {
        name: "drift_extra_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e6 },
        default: "2",
        meaning: "fixed drift allowance added to drift_factor × ttl (Redis expiry precision + 1 ms)",
    },
    ParamSpec {
        name: "requests",
        kind: ParamKind::Choice(&["sequential", "parallel", "parallel_quorum"]),
        default: "\"sequential\"",
        meaning: "one master after another (redlock-rb), all at once waiting for all (redsync), or all at once deciding at the quorum-th answer (node-redlock)",
    },
    ParamSpec {
        name: "node_timeout_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e7 },
        default: "50",
        meaning: "how long the client waits for one master's answer",
    },
    ParamSpec {
        name: "retries",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: "3",
        meaning: "retries after a failed attempt before the acquire call fails (attempts = retries + 1)",
    },
    ParamSpec {
        name: "retry_delay_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e7 },
        default: "{ uniform = [0, 200] }",
        meaning: "random wait between attempts",
    },
    ParamSpec {
        name: "persistence",
        kind: ParamKind::Choice(&["none", "everysec", "always"]),
        default: "\"everysec\"",
        meaning: "what a crashed master still has on restart: nothing, the AOF as of the last once-a-second fsync, or every acknowledged write",
    },
    ParamSpec {
        name: "restart_delay_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "0",
        meaning: "a crashed master answers nothing until this long after its crash (the spec's delayed restart)",
    },
    ParamSpec {
        name: "respect_validity",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "the application stops its critical section when the validity runs out before release",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a master's processing time per command (single-threaded: commands queue)",
    },
];

impl Redlock {
    fn client_config(params: &Params) -> ClientConfig {
        let ttl_ms = params.f64("ttl_ms");
        ClientConfig {
            masters: params.int("masters") as usize,
            ttl_ns: ms_to_ns(ttl_ms),
            drift_ns: drift_ns(ttl_ms, params.f64("drift_factor"), params.f64("drift_extra_ms")),
            node_timeout_ns: ms_to_ns(params.f64("node_timeout_ms")),
            retries: params.int("retries") as u32,
            retry_delay_ms: params.dist("retry_delay_ms"),
            requests: RequestMode::parse(params.str("requests")),
            respect_validity: params.bool("respect_validity"),
        }
    }
}

impl Model for Redlock {
    type Protocol = Redlock;

    fn name(&self) -> &'static str {
        "redlock"
    }

    fn summary(&self) -> &'static str {
        "Redlock: SET NX PX on N independent Redis masters, quorum and validity (redlock-rb, redsync, node-redlock); no fencing"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let mut problems = Vec::new();
        let ttl_ms = params.f64("ttl_ms");
        let drift_ms = params.f64("drift_factor") * ttl_ms + params.f64("drift_extra_ms");
        if drift_ms >= ttl_ms {
            problems.push(ParamProblem {
                key: "ttl_ms".into(),
                message: format!(
                    "ttl_ms = {ttl_ms} leaves no validity: the drift allowance drift_factor × ttl_ms + drift_extra_ms = {drift_ms} ms is not below it, so no lock could ever be granted"
                ),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let mut notes = Vec::new();
        let masters = params.int("masters") as usize;
        if masters.is_multiple_of(2) {
            notes.push(format!(
                "masters = {masters} is even: the quorum is {} (N/2 + 1), so it tolerates {} unreachable masters, no more than {} masters would",
                quorum(masters),
                masters - quorum(masters),
                masters - 1
            ));
        }
        if workload.reentry > 0.0 {
            notes.push(
                "redlock is not reentrant (redlock-rb, redsync and node-redlock are not): nested acquisitions are skipped"
                    .into(),
            );
        }
        if params.f64("restart_delay_ms") > 0.0 {
            notes.push(
                "restart_delay_ms counts from the crashed master's last handled event, which may be earlier than the crash itself"
                    .into(),
            );
        }
        notes
    }

    fn fenced(&self, _params: &Params) -> bool {
        false
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        (0..params.int("masters")).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Client↔master links are TCP connections; the masters are independent (no leader).
        Topology { ordered_links: true, leaderless: true }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Redlock> {
        let cfg = Self::client_config(params);
        let persistence = Persistence::parse(params.str("persistence"));
        let restart_delay_ns = ms_to_ns(params.f64("restart_delay_ms"));
        let service_ms = params.dist("service_ms");
        let services = (0..cfg.masters)
            .map(|_| {
                Box::new(RedisMaster::new(persistence, restart_delay_ns, service_ms.clone()))
                    as Box<dyn Process<Redlock>>
            })
            .collect();
        let clients = (0..workload.clients)
            .map(|_| Box::new(RedlockClient::new(cfg.clone())) as Box<dyn LockClient<Redlock>>)
            .collect();
        Cluster { services, clients }
    }
}
