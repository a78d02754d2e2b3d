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
mod fingerprint;
pub mod library;
pub mod protocol;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::scenario::show_number;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::ms_to_ns;

use crate::params::ParamReader;
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
        meaning: "the key's PX time to live, whole milliseconds as every library sends it",
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

/// Every parameter, read once, after the `client` preset has filled what the scenario left unset
/// ([`library::resolve`]). Times stay in the scenario's milliseconds (the checks quote them);
/// [`RedlockConfig::client_config`] and [`RedlockConfig::master_config`] convert them.
#[derive(Clone, Debug)]
pub struct RedlockConfig {
    /// `client`: the library (its name as the scenario gave it in `client_name`).
    pub library: Library,
    /// `client`, as written.
    pub client_name: String,
    /// `masters`: N.
    pub masters: usize,
    /// `ttl_ms`: the `PX`, whole milliseconds (a fractional value is refused by [`RedlockConfig::read`]).
    pub ttl_ms: u64,
    /// `elapsed_clock`.
    pub elapsed_clock: ElapsedClock,
    /// `drift_factor`.
    pub drift_factor: f64,
    /// `drift_extra_ms`.
    pub drift_extra_ms: f64,
    /// `requests`.
    pub requests: RequestMode,
    /// `node_timeout_ms`.
    pub node_timeout_ms: f64,
    /// `retries`, counted as the library counts it.
    pub retries: u32,
    /// `retry_delay_ms`.
    pub retry_delay_ms: Dist,
    /// `persistence` (one of [`Persistence::AOF_CHOICES`]).
    pub persistence: Persistence,
    /// `restart_delay_ms`.
    pub restart_delay_ms: f64,
    /// `respect_validity`.
    pub respect_validity: bool,
    /// `extend_every_ms` (0: never).
    pub extend_every_ms: f64,
    /// `extend = "pexpire_or_set"`.
    pub extend_sets: bool,
    /// `service_ms`: a master's processing time per command.
    pub service_ms: Dist,
}

impl RedlockConfig {
    /// The configuration the scenario's parameters give, with the `client` preset applied, and
    /// the problems reading them found (see [`ParamReader`]), which [`Model::validate`] reports.
    pub fn read(params: &Params) -> (RedlockConfig, Vec<ParamProblem>) {
        let resolved = library::resolve(params);
        let p = ParamReader::new("redlock", PARAMS, &resolved);
        let client_name = p.str("client").to_string();
        let ttl_ms = p.f64("ttl_ms");
        let cfg = RedlockConfig {
            library: Library::parse(&client_name),
            client_name,
            masters: p.int("masters") as usize,
            ttl_ms: ttl_ms as u64,
            elapsed_clock: ElapsedClock::parse(p.str("elapsed_clock")),
            drift_factor: p.f64("drift_factor"),
            drift_extra_ms: p.f64("drift_extra_ms"),
            requests: RequestMode::parse(p.str("requests")),
            node_timeout_ms: p.f64("node_timeout_ms"),
            retries: p.int("retries") as u32,
            retry_delay_ms: p.dist("retry_delay_ms"),
            persistence: Persistence::parse(p.str("persistence")),
            restart_delay_ms: p.f64("restart_delay_ms"),
            respect_validity: p.bool("respect_validity"),
            extend_every_ms: p.f64("extend_every_ms"),
            extend_sets: p.str("extend") == "pexpire_or_set",
            service_ms: p.dist("service_ms"),
        };
        let mut problems = p.problems();
        if ttl_ms.fract() != 0.0 && !problems.iter().any(|p| p.key == "ttl_ms") {
            problems.push(ParamProblem {
                key: "ttl_ms".into(),
                message: format!(
                    "ttl_ms = {}: the PX a Redlock library sends is a whole number of milliseconds (Redis parses PX as an integer: redlock-rb passes the ttl through and Redis answers \"ERR value is not an integer or out of range\"; node-redlock throws \"Duration must be an integer value in milliseconds.\"; redsync sends int(expiry / time.Millisecond)); use an integer",
                    show_number(ttl_ms)
                ),
            });
        }
        (cfg, problems)
    }

    /// As [`RedlockConfig::read`], for a row the parser has validated (its read found nothing).
    pub fn from_params(params: &Params) -> RedlockConfig {
        Self::read(params).0
    }

    /// The clients' settings.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            library: self.library,
            elapsed_clock: self.elapsed_clock,
            attempts: self.library.attempts(self.retries),
            masters: self.masters,
            ttl_ms: self.ttl_ms,
            drift_ns: drift_ns(self.ttl_ms as f64, self.drift_factor, self.drift_extra_ms),
            node_timeout_ns: ms_to_ns(self.node_timeout_ms),
            retry_delay_ms: self.retry_delay_ms.clone(),
            requests: self.requests,
            respect_validity: self.respect_validity,
            extend_every_ns: Some(self.extend_every_ms).filter(|ms| *ms > 0.0).map(ms_to_ns),
            extend_sets: self.extend_sets,
        }
    }

    /// A master's settings (every master's).
    pub fn master_config(&self) -> MasterConfig {
        MasterConfig {
            persistence: self.persistence,
            restart_delay_ns: ms_to_ns(self.restart_delay_ms),
            service_ms: self.service_ms.clone(),
        }
    }

    /// The masters' names and kinds, `server-0 …`, in the order [`RedlockConfig::cluster`]
    /// builds them.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        (0..self.masters).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }

    /// The cluster this configuration runs for `workload`: the masters and one library per client.
    pub fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Redlock> {
        let master = self.master_config();
        let services = (0..self.masters)
            .map(|_| Box::new(RedisMaster::new(master.clone())) as Box<dyn Process<Redlock>>)
            .collect();
        let client_cfg = self.client_config();
        let clients = (0..workload.clients)
            .map(|_| Box::new(RedlockClient::new(client_cfg.clone())) as Box<dyn LockClient<Redlock>>)
            .collect();
        Cluster { services, clients }
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
        let (cfg, problems) = RedlockConfig::read(params);
        if !problems.is_empty() {
            return problems;
        }
        let mut problems = Vec::new();
        if cfg.library.attempts(cfg.retries) == 0 {
            problems.push(ParamProblem {
                key: "retries".into(),
                message: format!(
                    "retries = 0 with client = \"{}\" makes no attempt at all: redsync's tries counts attempts, so use an integer of at least 1 (redlock-rb's retry_count and node-redlock's retryCount count retries after the first attempt: 0 is one attempt there)",
                    cfg.client_name
                ),
            });
        }
        let ttl_ms = cfg.ttl_ms as f64;
        let drift_ms = cfg.drift_factor * ttl_ms + cfg.drift_extra_ms;
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
        let cfg = RedlockConfig::from_params(params);
        let masters = cfg.masters;
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
        let library = cfg.library;
        if library != Library::RedlockRb {
            notes.push(format!(
                "client = \"{}\" fills the library-dependent parameters the scenario does not set; a value it sets is kept",
                cfg.client_name
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
        RedlockConfig::from_params(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Client↔master links are TCP connections; the masters are independent (no leader).
        Topology { ordered_links: true, leaderless: true }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Redlock> {
        RedlockConfig::from_params(params).cluster(workload)
    }
}
