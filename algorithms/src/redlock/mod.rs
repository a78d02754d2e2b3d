//! `redlock`: N independent Redis masters and the Redlock client (redis.io "Distributed Locks with
//! Redis"; antirez/redlock-rb, the reference; go-redsync/redsync; mike-marcacci/node-redlock).
//!
//! Module map:
//! - [`protocol`]: the two commands (SET NX PX, compare-and-delete) and their replies; the model's
//!   message and timer enums
//! - [`server`]: one Redis master: wall-clock expiry, single-threaded service, persistence,
//!   delayed restart
//! - [`client`]: the client library: quorum, validity arithmetic, request modes, retries
//! - [`library`]: the `client` preset (redlock-rb, redsync, node-redlock): each library's
//!   defaults and behaviours, cited
//!
//! The masters are independent (no replication, no leader): `leaderless` is set, so the `leader`
//! selector means `server-0`. Every client↔master link is a TCP connection, so links are ordered:
//! an unlock sent after a SET that timed out can never overtake it on the same connection.
//! There is no fencing token.
//!
//! Readings of the sources, and what is not modelled:
//! - `retries` counts what the chosen library counts (see [`library`]): attempts for redlock-rb
//!   and redsync, retries after the first attempt for node-redlock.
//! - The unlock rounds use the same request mode and `node_timeout_ms` as the SET rounds.
//! - node-redlock's `release` retries up to `retryCount` times before it throws; the model runs
//!   one release round.
//! - Lock extension: redsync's `Mutex.Extend`, called by the application every `extend_every_ms`
//!   while it holds (off by default: an application's choice, in every preset), with the script
//!   `extend` picks (see [`client`]); node-redlock's `using` auto-extension is not modelled.
//! - A master's crash `mode` decides what survives (see [`server`]): a killed process keeps its
//!   AOF (`everysec`, `always`) from the page cache; a lost machine keeps what was fsynced.

pub mod client;
pub mod library;
pub mod protocol;
pub mod server;

use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::scenario::show_number;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::ms_to_ns;

use crate::redis::persistence::Persistence;
use client::{drift_ns, quorum, ClientConfig, ElapsedClock, RedlockClient, RequestMode};
use library::{Library, LIBRARIES};
use server::{MasterConfig, RedisMaster};

/// The `redlock` model, and its protocol (its messages and timers are in [`protocol`]).
pub struct Redlock;

/// The `redlock` model, as [`registry`](crate::registry) lists it.
pub static REDLOCK: Redlock = Redlock;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"redlock-rb\"",
        meaning: "the Redlock library the clients run; it sets elapsed_clock, retries, retry_delay_ms, node_timeout_ms, drift_factor, drift_extra_ms and requests unless given, and how failed attempts and unlock errors are handled",
    },
    ParamSpec {
        name: "elapsed_clock",
        kind: ParamKind::Choice(&["wall", "mono"]),
        default: "\"mono\"",
        meaning: "the clock the library measures an attempt's elapsed time on: mono (redlock-rb CLOCK_MONOTONIC, redsync time.Now's monotonic reading) or wall (node-redlock Date.now, antirez's original redlock-rb Time.now)",
    },
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
        meaning: "clock drift allowance as a fraction of the TTL, subtracted from the validity (0.01 in all three libraries)",
    },
    ParamSpec {
        name: "drift_extra_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e6 },
        default: "2",
        meaning: "fixed drift allowance added to drift_factor × ttl (redlock-rb, node-redlock: 2 ms, Redis expiry precision + 1 ms; redsync: 0)",
    },
    ParamSpec {
        name: "requests",
        kind: ParamKind::Choice(&["sequential", "parallel", "parallel_quorum"]),
        default: "\"sequential\"",
        meaning: "one master after another (redlock-rb), all at once waiting for all (redsync), or all at once deciding at the quorum-th answer (node-redlock); from client unless given",
    },
    ParamSpec {
        name: "node_timeout_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e7 },
        default: "100",
        meaning: "how long the client waits for one master (sequential) or a whole round (parallel): redlock-rb redis_timeout 0.1 s, redsync ttl × timeoutFactor 0.05, node-redlock none (1e7)",
    },
    ParamSpec {
        name: "retries",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: "3",
        meaning: "the library's retry count, counted as it counts it: retries after the first attempt for redlock-rb (3) and node-redlock (10), attempts for redsync (tries, 32)",
    },
    ParamSpec {
        name: "retry_delay_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e7 },
        default: "{ uniform = [200, 250] }",
        meaning: "random wait between attempts: redlock-rb 200 + rand(50), redsync 50–250, node-redlock 200 ± 100 ms",
    },
    ParamSpec {
        name: "persistence",
        kind: ParamKind::Choice(Persistence::AOF_CHOICES),
        default: "\"everysec\"",
        meaning: "what a crashed master still has on restart: nothing; with everysec every acknowledged write after a killed process (the AOF is in the page cache) but only the last once-a-second fsync after a lost machine; with always every acknowledged write",
    },
    ParamSpec {
        name: "restart_delay_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "0",
        meaning: "a crashed master answers nothing until this long after its crash on its monotonic clock (the spec's delayed restart)",
    },
    ParamSpec {
        name: "respect_validity",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "the application checks, just before it writes, that the validity lock() returned is still running on its monotonic clock (else it abandons the section without writing), and stops a section still working when the validity runs out",
    },
    ParamSpec {
        name: "extend_every_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "0",
        meaning: "the application calls redsync's Extend this often while it holds (0: never): the extend script on every master at once, extended when a quorum answered 1 and the new validity is positive; a failed Extend ends the hold",
    },
    ParamSpec {
        name: "extend",
        kind: ParamKind::Choice(&["pexpire_if_value", "pexpire_or_set"]),
        default: "\"pexpire_if_value\"",
        meaning: "the extend script: PEXPIRE where the key holds the client's value (redsync touchScript, every v4 release), or that or else SET NX PX (touchWithSetNXScript, WithSetNXOnExtend, v4.12.0 on, PR #149): a master that restarted empty gets the key back",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a master's processing time per command (single-threaded: commands queue)",
    },
];

impl Redlock {
    /// The clients' settings: the parameters after the `client` preset ([`library::resolve`]).
    pub fn client_config(params: &Params) -> ClientConfig {
        let params = &library::resolve(params);
        let ttl_ms = params.f64("ttl_ms");
        let library = Library::parse(params.str("client"));
        ClientConfig {
            library,
            elapsed_clock: ElapsedClock::parse(params.str("elapsed_clock")),
            attempts: library.attempts(params.int("retries") as u32),
            masters: params.int("masters") as usize,
            ttl_ns: ms_to_ns(ttl_ms),
            drift_ns: drift_ns(ttl_ms, params.f64("drift_factor"), params.f64("drift_extra_ms")),
            node_timeout_ns: ms_to_ns(params.f64("node_timeout_ms")),
            retry_delay_ms: params.dist("retry_delay_ms"),
            requests: RequestMode::parse(params.str("requests")),
            respect_validity: params.bool("respect_validity"),
            extend_every_ns: Some(params.f64("extend_every_ms")).filter(|ms| *ms > 0.0).map(ms_to_ns),
            extend_sets: params.str("extend") == "pexpire_or_set",
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
        let params = &library::resolve(params);
        let library = Library::parse(params.str("client"));
        if library.attempts(params.int("retries") as u32) == 0 {
            problems.push(ParamProblem {
                key: "retries".into(),
                message: format!(
                    "retries = 0 with client = \"{}\" makes no attempt at all: redsync's tries counts attempts, so use an integer of at least 1 (redlock-rb's retry_count and node-redlock's retryCount count retries after the first attempt: 0 is one attempt there)",
                    params.str("client")
                ),
            });
        }
        let ttl_ms = params.f64("ttl_ms");
        let drift_ms = params.f64("drift_factor") * ttl_ms + params.f64("drift_extra_ms");
        if drift_ms >= ttl_ms {
            let (ttl_ms, drift_ms) = (show_number(ttl_ms), show_number(drift_ms));
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
        let library = Library::parse(params.str("client"));
        if library != Library::RedlockRb {
            notes.push(format!(
                "client = \"{}\" fills the library-dependent parameters the scenario does not set; a value it sets is kept",
                params.str("client")
            ));
        }
        if library == Library::NodeRedlock {
            notes.push(
                "node-redlock: release runs one round (the library retries it retryCount times before it throws); ioredis's reconnect-and-resend after a reset is not modelled (a reset is a vote against)"
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
        let master = MasterConfig {
            persistence: Persistence::parse(params.str("persistence")),
            restart_delay_ns: ms_to_ns(params.f64("restart_delay_ms")),
            service_ms: params.dist("service_ms"),
        };
        let services =
            (0..cfg.masters).map(|_| Box::new(RedisMaster::new(master.clone())) as Box<dyn Process<Redlock>>).collect();
        let clients = (0..workload.clients)
            .map(|_| Box::new(RedlockClient::new(cfg.clone())) as Box<dyn LockClient<Redlock>>)
            .collect();
        Cluster { services, clients }
    }
}
