//! `etcd`: a Raft cluster with leases and revisions, and the clientv3/concurrency Mutex on top
//! (etcd 3.4: `etcdserver`, `lease/lessor.go`, `mvcc`, `clientv3/lease.go`,
//! `clientv3/concurrency/session.go` and `mutex.go`; etcd issue #11456 and Jepsen's etcd 3.4.3
//! analysis for the `recheck_after_wait = false` bug).
//!
//! Module map:
//! - [`protocol`]: client calls and answers, watch events, log commands, member-to-member
//!   forwarding; the model's message and timer types
//! - [`mvcc`]: the revisioned key space (create revisions, prefix ranges, watch history)
//! - [`lessor`]: leases: TTLs, the primary's expiry clock, promotion and demotion
//! - [`applied`]: which proposals were applied (a duplicated proposal takes effect once)
//! - [`server`]: one member: Raft replica, store, lessor, watches, forwarding, read index
//! - [`client`]: the client library: keep-alive loop, Session, Mutex, endpoint switching
//! - [`library`]: the `client` preset (`clientv3-3.4`, `clientv3-3.5`; `locksim-1`, the default,
//!   is the model as it was before presets): each version's behaviours, cited
//!
//! The servers `server-0 …` form one Raft group ([`crate::consensus`]) with etcd's
//! `--heartbeat-interval` and `--election-timeout` (randomised in [1, 2) × the timeout, check
//! quorum on). Lease expiry runs on the leader's monotonic clock (Go's `time.Now()` carries a
//! monotonic reading, which the lessor's comparisons use). Every link is TCP in etcd (gRPC to
//! clients, the peer transport's streams between members), so links are ordered.
//!
//! What a violation can come from here, all by mechanism: a holder paused or cut off longer than
//! its lease TTL (its lease expires on the leader, the revocation deletes its key, the next waiter
//! proceeds), a client clock or pause that keeps it believing it holds; and with
//! `recheck_after_wait = false`, a waiter whose own key was revoked while it waited being told it
//! holds the lock.

//! Where the model departs from etcd (each also said where it lives; the first item is
//! `locksim-1`'s, which the `clientv3-*` presets replace by clientv3's behaviour, see [`library`]):
//! - a client talks to one member at a time (clientv3 3.4 and 3.5 balance unary calls round-robin) and
//!   moves on at a connection reset (a killed member), a call's deadline (7 s, etcd's
//!   `ReqTimeout`), the keep-alive stream unanswered that long, or "no leader"; gRPC keepalive
//!   pings are off unless `keepalive_time_ms` is set (clientv3 `DialKeepAliveTime` 0);
//! - message loss hits etcd's TCP links as loss, not as retransmission delay: a lost call costs
//!   the 7 s request timeout; only the watch stream, which has no timeout in etcd, is made
//!   reliable (ack and resend after 200 ms) so a lost event cannot hang a waiter for good;
//!   duplicated requests and proposals take effect once (TCP never delivers twice);
//! - a failed Unlock is not resent (clientv3 never resends a write that may have reached a
//!   member) and reports `ReleaseFailed`; a call given up on an open connection is cancelled on it
//!   (`RST_STREAM`), and a member drops a request whose cancel it read before starting it; the
//!   application stops treating its lock as held when the session ends (`Lost { honour: true }`);
//! - lease ids are the log index of their grant (etcd derives them from the member id and time);
//!   TTLs are not rounded to whole seconds; a leader's lessor promotion does not spread expiries
//!   (etcd only does that above 1 000 leases) and no revoke rate limit applies;
//! - a keep-alive that reaches a leader before its lessor is promoted is dropped (the client
//!   resends it 500 ms later) rather than held;
//! - Raft as in [`crate::consensus`]: no pre-vote, no leadership transfer, no compaction.

pub mod applied;
pub mod client;
mod fingerprint;
pub mod lessor;
pub mod library;
pub mod mvcc;
pub mod protocol;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::scenario::show_number;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_SEC};

use crate::notice_race::NoticeRace;

use client::{ClientConfig, EtcdClient};
use library::{Library, LIBRARIES};
use server::{EtcdServer, ServerConfig};

/// The `etcd` model.
pub struct Etcd;

/// The `etcd` model, as [`registry`](crate::registry) lists it.
pub static ETCD: Etcd = Etcd;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"clientv3-3.5\"",
        meaning: "the clientv3 version the clients run (default clientv3-3.5, the newest stable read): locksim-1 is the model as it was before presets (mixed versions, see docs/libraries.md); clientv3-3.4 and clientv3-3.5 set lease_ttl_ms, keepalive_fraction, keepalive_time_ms, call_deadline, balancer recheck_after_wait and session_done unless given",
    },
    ParamSpec {
        name: "call_deadline",
        kind: ParamKind::Choice(&["req_timeout", "none"]),
        default: "\"req_timeout\"",
        meaning: "req_timeout (the model before presets): the client gives up on a call, and on a keep-alive stream unanswered, after 5 s + 2 × election_ms and moves to another member; none (clientv3): no client deadline, the members answer 'request timed out' after that ReqTimeout and the keep-alive ends only at its TTL deadline",
    },
    ParamSpec {
        name: "balancer",
        kind: ParamKind::Choice(&["pinned", "round_robin"]),
        default: "\"pinned\"",
        meaning: "pinned (the model before presets; clientv3 up to 3.3.13): every call to the one member the client is connected to; round_robin (clientv3 3.3.14 and later): each unary call to the next ready member, the keep-alive and watch streams staying where they were opened",
    },
    ParamSpec {
        name: "servers",
        kind: ParamKind::Int { min: 1, max: 99 },
        default: "3",
        meaning: "members of the Raft group (server-0 …); a write needs servers/2 + 1 of them",
    },
    ParamSpec {
        name: "lease_ttl_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "60000",
        meaning: "the session's lease TTL (concurrency.WithTTL; etcd raises it to its minimum, 1.5 election timeouts in whole seconds)",
    },
    ParamSpec {
        name: "heartbeat_ms",
        kind: ParamKind::Number { min: 0.1, max: 1e7 },
        default: "100",
        meaning: "Raft heartbeat interval (--heartbeat-interval)",
    },
    ParamSpec {
        name: "election_ms",
        kind: ParamKind::Number { min: 0.5, max: 1e8 },
        default: "1000",
        meaning: "Raft election timeout (--election-timeout), randomised in [1, 2) × this; a new leader extends every lease by it",
    },
    ParamSpec {
        name: "lease_check_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e8 },
        default: "500",
        meaning: "how often the leader's lessor looks for expired leases to revoke",
    },
    ParamSpec {
        name: "recheck_after_wait",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "after waiting, Lock re-reads its own key and fails if the session expired (clientv3 3.5; false: every 3.4.x, etcd issue #11456, whose fix is in 3.5.0 and later only)",
    },
    ParamSpec {
        name: "keepalive_time_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "0",
        meaning: "gRPC keepalive ping interval on the client's connection (clientv3 Config.DialKeepAliveTime; 0 = off, clientv3's default; grpc-go raises a value below 10 s to 10 s)",
    },
    ParamSpec {
        name: "keepalive_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "20000",
        meaning: "a keepalive ping unanswered this long closes the connection (clientv3 Config.DialKeepAliveTimeout; grpc-go's default when unset: 20 s)",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a member's processing time per client request or watch event",
    },
    ParamSpec {
        name: "fsync_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0",
        meaning: "a follower's WAL fsync of appended entries before it answers the leader (etcdserver raft.go: a follower sends after storage.Save); 0: a sync that costs nothing; sim compare measures this machine's",
    },
    ParamSpec {
        name: "recipe",
        kind: ParamKind::Choice(&["mutex", "rwmutex"]),
        default: "\"mutex\"",
        meaning: "concurrency.Mutex, or the read-write lock of clientv3's recipes (recipe.RWMutex: a reader waits only for older writers; needed for read_fraction > 0)",
    },
    ParamSpec {
        name: "keepalive_fraction",
        kind: ParamKind::Number { min: 0.01, max: 1.0 },
        default: "0.3333333333333333",
        meaning: "when the next lease keep-alive is due, as a fraction of the TTL after the last answer (clientv3 lease.go recvKeepAlive: nextKeepAlive = now + TTL/3; a hand-rolled renewal at 0.8 × TTL is 0.8)",
    },
    ParamSpec {
        name: "on_session_lost",
        kind: ParamKind::Choice(&["stop", "proceed"]),
        default: "\"stop\"",
        meaning: "what the application does when its session ends while it holds the lock: stop (it selects on Session.Done(), as concurrency's docs advise) or proceed (it ignores the lost lease and finishes the section)",
    },
    ParamSpec {
        name: "session_done",
        kind: ParamKind::Choice(&["sync", "goroutines"]),
        default: "\"sync\"",
        meaning: "how the session's end reaches the application: sync (the model before presets: at once, so a holder resumed past its lease always learns it before its check) or goroutines (clientv3: the lessor closes the keep-alive, the Session's goroutine then closes Done(), session_done_ms later; after a pause the application thread races them to its check, resume_to_check_ms)",
    },
    ParamSpec {
        name: "session_done_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "{ uniform = [0.1, 0.2] }",
        meaning: "with session_done = \"goroutines\": from the lessor closing the keep-alive to Session.Done() closed (clientv3 3.4.23 live, SIGSTOP past the lease: Done() closed 0.1-0.2 ms after SIGCONT)",
    },
    ParamSpec {
        name: "resume_to_check_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "{ uniform = [0, 0.3] }",
        meaning: "with session_done = \"goroutines\": how long the application thread takes from its wake-up to its check before a write; a Done() closed sooner is seen (clientv3 3.4.23 live: the check passed before Done() closed in 4 of 8 runs; the range puts the even race there)",
    },
];

/// etcd's minimum lease TTL: `(3 × electionTicks / 2) × heartbeat`, rounded up to whole seconds
/// (`etcdserver.NewServer`: `minTTL`, `math.Ceil(minTTL.Seconds())`).
pub fn min_lease_ttl_ns(heartbeat_ms: f64, election_ms: f64) -> Nanos {
    let ticks = (election_ms / heartbeat_ms).floor().max(1.0) as u64;
    let min_ns = ms_to_ns(((3 * ticks) / 2) as f64 * heartbeat_ms);
    min_ns.div_ceil(NS_PER_SEC) * NS_PER_SEC
}

/// How long the client waits for an answer before it moves to another member: etcd's server-side
/// request timeout, `5 s + 2 × election timeout` (`ReqTimeout`).
pub fn request_timeout_ns(election_ms: f64) -> Nanos {
    5 * NS_PER_SEC + 2 * ms_to_ns(election_ms)
}

/// grpc-go's floor for the keepalive ping interval (`dialoptions.go`, `WithKeepaliveParams`:
/// `internal.KeepaliveMinPingTime`, 10 s).
pub const GRPC_MIN_PING_NS: Nanos = 10 * NS_PER_SEC;

/// The client's gRPC keepalive interval: `None` when `keepalive_time_ms` is 0 (clientv3's
/// `dialSetupOpts` adds `grpc.WithKeepaliveParams` only when `DialKeepAliveTime > 0`), else at
/// least grpc-go's 10 s floor.
pub fn keepalive_time_ns(keepalive_time_ms: f64) -> Option<Nanos> {
    (keepalive_time_ms > 0.0).then(|| ms_to_ns(keepalive_time_ms).max(GRPC_MIN_PING_NS))
}

/// The keep-alive schedule: `None` for clientv3's own `TTL / 3` (the schema default, computed in
/// whole nanoseconds as Go's `time.Duration` division does), else the fraction of the TTL.
pub fn keepalive_fraction(fraction: f64) -> Option<f64> {
    ((fraction - 1.0 / 3.0).abs() > 1e-9).then_some(fraction)
}

/// Every parameter, read once, after the `client` preset has filled what the scenario left unset
/// ([`library::resolve`]). Times stay in the scenario's milliseconds (the checks and notes quote
/// them); [`EtcdConfig::server_config`] and [`EtcdConfig::client_config`] convert them.
#[derive(Clone, Debug)]
pub struct EtcdConfig {
    /// `client`: the clientv3 version.
    pub library: Library,
    /// `call_deadline = "req_timeout"`: each call carries the request timeout as its deadline.
    pub client_deadline: bool,
    /// `balancer = "round_robin"` (else `pinned`).
    pub round_robin: bool,
    /// `servers`: the Raft members.
    pub servers: usize,
    /// `lease_ttl_ms`: the session's lease TTL asked for.
    pub lease_ttl_ms: f64,
    /// `heartbeat_ms`: `--heartbeat-interval`.
    pub heartbeat_ms: f64,
    /// `election_ms`: `--election-timeout`.
    pub election_ms: f64,
    /// `lease_check_ms`: the lessor's expiry check period.
    pub lease_check_ms: f64,
    /// `recheck_after_wait`: the Mutex re-checks its key after the wait.
    pub recheck_after_wait: bool,
    /// `keepalive_time_ms`: the gRPC keepalive ping interval (0: none).
    pub keepalive_time_ms: f64,
    /// `keepalive_timeout_ms`: the gRPC keepalive ping's timeout.
    pub keepalive_timeout_ms: f64,
    /// `service_ms`: a member's processing time.
    pub service_ms: Dist,
    /// `fsync_ms`: the WAL fsync.
    pub fsync_ms: Dist,
    /// `recipe = "rwmutex"` (else `mutex`).
    pub rw_recipe: bool,
    /// `keepalive_fraction`: the keep-alive schedule as a fraction of the TTL.
    pub keepalive_fraction: f64,
    /// `on_session_lost = "stop"` (else `proceed`).
    pub stop_on_session_lost: bool,
    /// `session_done = "goroutines"`: the race of `Session.Done()` with the resumed application
    /// (`session_done_ms`, `resume_to_check_ms`); `None` for `sync`.
    pub session_done: Option<NoticeRace>,
}

impl EtcdConfig {
    /// The configuration the scenario's parameters give, with the `client` preset applied. Every
    /// key is in [`PARAMS`] and the parser has checked each value's type and range.
    pub fn from_params(params: &Params) -> EtcdConfig {
        let params = &library::resolve(params);
        EtcdConfig {
            library: Library::parse(params.str("client")),
            client_deadline: params.str("call_deadline") != "none",
            round_robin: params.str("balancer") == "round_robin",
            servers: params.int("servers") as usize,
            lease_ttl_ms: params.f64("lease_ttl_ms"),
            heartbeat_ms: params.f64("heartbeat_ms"),
            election_ms: params.f64("election_ms"),
            lease_check_ms: params.f64("lease_check_ms"),
            recheck_after_wait: params.bool("recheck_after_wait"),
            keepalive_time_ms: params.f64("keepalive_time_ms"),
            keepalive_timeout_ms: params.f64("keepalive_timeout_ms"),
            service_ms: params.dist("service_ms"),
            fsync_ms: params.dist("fsync_ms"),
            rw_recipe: params.str("recipe") == "rwmutex",
            keepalive_fraction: params.f64("keepalive_fraction"),
            stop_on_session_lost: params.str("on_session_lost") == "stop",
            session_done: (params.str("session_done") == "goroutines").then(|| NoticeRace {
                delivery_ms: params.dist("session_done_ms"),
                resume_to_check_ms: params.dist("resume_to_check_ms"),
            }),
        }
    }

    /// The members' names, `server-0 …`, in Raft member order.
    pub fn member_names(&self) -> Vec<String> {
        (0..self.servers).map(|i| format!("server-{i}")).collect()
    }

    /// The Raft timings and fsync every member runs.
    pub fn raft_config(&self) -> crate::consensus::Config {
        let mut raft = crate::consensus::Config::new(ms_to_ns(self.heartbeat_ms), ms_to_ns(self.election_ms));
        raft.fsync_ms = self.fsync_ms.clone();
        raft
    }

    /// A member's settings.
    pub fn server_config(&self) -> ServerConfig {
        ServerConfig {
            service_ms: self.service_ms.clone(),
            lease_check_ns: ms_to_ns(self.lease_check_ms),
            election_ns: ms_to_ns(self.election_ms),
            min_ttl_ns: min_lease_ttl_ns(self.heartbeat_ms, self.election_ms),
            req_timeout_ns: (!self.client_deadline).then(|| request_timeout_ns(self.election_ms)),
        }
    }

    /// The client library's settings.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            servers: self.servers,
            lease_ttl_ns: ms_to_ns(self.lease_ttl_ms),
            recheck_after_wait: self.recheck_after_wait,
            request_timeout_ns: request_timeout_ns(self.election_ms),
            client_deadline: self.client_deadline,
            round_robin: self.round_robin,
            keepalive_time_ns: keepalive_time_ns(self.keepalive_time_ms),
            keepalive_timeout_ns: ms_to_ns(self.keepalive_timeout_ms),
            keepalive_fraction: keepalive_fraction(self.keepalive_fraction),
            stop_on_session_lost: self.stop_on_session_lost,
            rw_recipe: self.rw_recipe,
            session_done: self.session_done.clone(),
        }
    }

    /// The members' names and kinds, in the order [`EtcdConfig::cluster`] builds them.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        self.member_names().into_iter().map(|name| (name, NodeKind::Server)).collect()
    }

    /// The cluster this configuration runs for `workload`: the members and one client library
    /// per workload client.
    pub fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Etcd> {
        let members = self.member_names();
        let (raft, server_cfg) = (self.raft_config(), self.server_config());
        let services = (0..self.servers)
            .map(|i| {
                Box::new(EtcdServer::new(i, members.clone(), server_cfg.clone(), raft.clone()))
                    as Box<dyn Process<Etcd>>
            })
            .collect();
        let client_cfg = self.client_config();
        let clients = (0..workload.clients)
            .map(|i| Box::new(EtcdClient::new(i, client_cfg.clone())) as Box<dyn LockClient<Etcd>>)
            .collect();
        Cluster { services, clients }
    }
}

impl Model for Etcd {
    type Protocol = Etcd;

    fn name(&self) -> &'static str {
        "etcd"
    }

    fn summary(&self) -> &'static str {
        "etcd: Raft cluster, leases kept alive by the client, clientv3/concurrency Mutex (lowest create revision holds, wait on the predecessor's delete); token = create revision"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let cfg = EtcdConfig::from_params(params);
        let mut problems = Vec::new();
        let (hb, el) = (cfg.heartbeat_ms, cfg.election_ms);
        if el < 5.0 * hb {
            let (el, hb) = (show_number(el), show_number(hb));
            problems.push(ParamProblem {
                key: "election_ms".into(),
                message: format!(
                    "etcd requires --election-timeout to be at least 5 × --heartbeat-interval: election_ms = {el} is below 5 × {hb}"
                ),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let cfg = EtcdConfig::from_params(params);
        let mut notes = Vec::new();
        if cfg.library != Library::Locksim {
            notes.push(format!(
                "client = \"{}\" sets lease_ttl_ms, keepalive_fraction, keepalive_time_ms, call_deadline, balancer, recheck_after_wait and session_done where the scenario does not (now: call_deadline = {}, balancer = {}, recheck_after_wait = {}); a value the scenario sets is kept",
                cfg.library.name(),
                if cfg.client_deadline { "req_timeout" } else { "none" },
                if cfg.round_robin { "round_robin" } else { "pinned" },
                cfg.recheck_after_wait,
            ));
        }
        if !cfg.client_deadline {
            notes.push(
                "call_deadline = \"none\": a call to a member that answers nothing (frozen, cut off) waits until the member answers or the workload's acquire timeout cancels a Lock; an Unlock waits without end, as clientv3's with context.Background() does".into(),
            );
        }
        if cfg.round_robin {
            notes.push(
                "balancer = \"round_robin\": each member is one gRPC sub-connection; a member whose connection reset is skipped for 1 s (grpc-go's first reconnect back-off), not until its reconnect succeeds; when no member is ready the next in turn is tried".into(),
            );
        }
        let servers = cfg.servers;
        if servers.is_multiple_of(2) {
            notes.push(format!(
                "servers = {servers} is even: a quorum is {} members, so it survives {} failures, no more than {} members would",
                servers / 2 + 1,
                servers - (servers / 2 + 1),
                servers - 1
            ));
        }
        if workload.reentry > 0.0 {
            notes.push(
                "etcd's Mutex is not reentrant (a second Lock in the same session returns at once and one Unlock frees it): nested acquisitions are skipped".into(),
            );
        }
        let ttl_ms = cfg.lease_ttl_ms;
        let min_ns = min_lease_ttl_ns(cfg.heartbeat_ms, cfg.election_ms);
        if ms_to_ns(ttl_ms) < min_ns {
            notes.push(format!(
                "lease_ttl_ms = {ttl_ms} is below etcd's minimum lease TTL ({} ms for these timeouts): the server grants the minimum",
                min_ns / 1_000_000
            ));
        }
        let ka_ms = cfg.keepalive_time_ms;
        if ka_ms > 0.0 && ms_to_ns(ka_ms) < GRPC_MIN_PING_NS {
            notes.push(format!(
                "keepalive_time_ms = {ka_ms} is below grpc-go's 10 s minimum ping interval: the client pings every 10 s"
            ));
        }
        if cfg.rw_recipe && workload.acquire_timeout_ms.is_some() {
            notes.push(
                "recipe = \"rwmutex\": RLock and Lock take no context (rwmutex.go uses context.TODO()), so a real application cannot cancel them; acquire_timeout_ms cancels the wait and deletes the own key as Mutex.Lock does".into(),
            );
        }
        if ttl_ms.fract() != 0.0 || !(ttl_ms as u64).is_multiple_of(1000) {
            notes.push(format!("etcd lease TTLs are whole seconds; lease_ttl_ms = {ttl_ms} is used as given"));
        }
        notes
    }

    fn shared_locks(&self, params: &Params) -> bool {
        // Only the recipes package's RWMutex grants shared locks.
        EtcdConfig::from_params(params).rw_recipe
    }

    fn fenced(&self, _params: &Params) -> bool {
        true
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        EtcdConfig::from_params(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Every link is TCP in etcd (gRPC to clients, the peer transport between members).
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Etcd> {
        EtcdConfig::from_params(params).cluster(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_minimum_ttl_and_request_timeout() {
        // Defaults: 10 election ticks of 100 ms: 1.5 s, rounded up to 2 s.
        assert_eq!(min_lease_ttl_ns(100.0, 1000.0), 2 * NS_PER_SEC);
        assert_eq!(min_lease_ttl_ns(100.0, 2000.0), 3 * NS_PER_SEC);
        assert_eq!(request_timeout_ns(1000.0), 7 * NS_PER_SEC);
    }
}
