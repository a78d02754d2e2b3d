//! `zookeeper`: a ZooKeeper ensemble (sessions, ephemeral sequential znodes, one-shot watches)
//! and a Curator-like lock client running one of three recipes: InterProcessMutex
//! (`sequential`), the paper's herd-prone simple lock (`naive`), or InterProcessReadWriteLock
//! (`read_write`).
//!
//! Module map:
//! - [`protocol`]: paths, client requests and replies, watch events, the connect handshake, the
//!   servers' own messages, the replicated transactions, and the model's message and timer
//!   enums ([`protocol::ZkMsg`], [`protocol::ZkTimer`])
//! - [`tree`]: the replicated data tree and session table (sequence numbers, czxid, ephemerals)
//! - [`session`]: session timing: the leader's expiry queue in `tick_ms` buckets, the negotiated
//!   timeout, the client's ping / read / connect timeouts and Curator's LOST delay
//! - [`server`]: one ensemble server on the shared Raft log ([`crate::consensus`], standing in
//!   for ZAB): write forwarding, reads from applied state, watches, session tracking and expiry
//! - [`connection`]: the client's ZooKeeper handle and Curator connection states
//! - [`recipe`]: the recipes' pure decisions (who holds, whom to watch) and Curator's retry policy
//! - [`client`]: the lock client: the recipes as state machines, reentrancy, fencing tokens
//! - [`library`]: the `client` preset (`curator-5.4`, the default, `kazoo-2.10`, `kazoo-2.11`;
//!   `locksim-1` is the model as it was before presets): each library's defaults and behaviours,
//!   cited
//!
//! Sources: the ZooKeeper recipes page ("Locks", "Shared Locks", the herd effect), the
//! ZooKeeper Administrator's Guide (`tickTime`, min/max session timeout), Hunt et al.,
//! "ZooKeeper: Wait-free coordination for Internet-scale systems" (USENIX ATC 2010, "Simple
//! Locks"), Junqueira, "Note on fencing and distributed locks" (2016); apache/zookeeper
//! (`ExpiryQueue`, `SessionTrackerImpl`, `LearnerSessionTracker`, `ClientCnxn`,
//! `PrepRequestProcessor` for sequence suffixes); apache/curator (`LockInternals`,
//! `StandardLockInternalsDriver`, `InterProcessMutex`, `InterProcessReadWriteLock`,
//! `ConnectionStateManager`, `ExponentialBackoffRetry`, `CuratorFrameworkFactory` defaults).
//! Each module's header says what it follows.
//!
//! Every link is a TCP connection in ZooKeeper (client to server, server to server), and the
//! client relies on its order (FIFO client order, answers before later watch events), so links
//! are ordered (`ordered_links`).
//!
//! Approximations, and what is not modelled (also in [`Model::limitations`] where a
//! configuration makes them matter):
//! - ZAB is the shared Raft log: a leader, quorum commit, sending ZAB's messages (opt-in
//!   `Pattern::Zab` of the log): a write is a proposal to each follower, its ack, and a commit
//!   to each follower nobody answers (6 messages with 3 servers); idle, the servers exchange only
//!   the leader's ping every half tick and each follower's answer, which also feed the log's
//!   failure detector. Leader loss is detected as ZooKeeper does (opt-in `leader_timeout_ns` of
//!   the log): `sync_limit × tick_ms` of silence (a paused or lost leader, a partition), or at
//!   once when a killed leader's connection resets. The election itself is Raft's, in a
//!   randomised `election_ms` to twice it, standing for FastLeaderElection plus the discovery
//!   and synchronisation phases (`initLimit` is not modelled); catching up a follower that
//!   stalled or whose link broke is the log's resend, not ZooKeeper's DIFF / TRUNC / SNAP. A
//!   follower whose link broke, or that was silent for `sync_limit × tick_ms`, gets no proposal
//!   or commit until it answers (ZooKeeper's leader drops its `LearnerHandler`); the leader's
//!   resend once a round stands for the follower connecting to it again. The zxid is (term,
//!   log index).
//! - A killed server process resets its connections (clients and followers react at once); a
//!   lost or frozen host tells nobody: they notice through their timeouts. A message the
//!   network drops on a TCP link breaks that
//!   connection instead of being retransmitted (see [`connection`]); a follower's lost forward
//!   to the leader makes the follower drop its clients, as a broken learner link would.
//! - The client pings after a third of the timeout without sending (docs/models.md); `ClientCnxn`
//!   uses half the read timeout minus up to a second.
//! - Curator's connection timeout is `connection_timeout_ms`, 15 s by default as in Curator;
//!   its retry policy is `ExponentialBackoffRetry(retry_base_sleep_ms, retry_max_retries)`,
//!   1000 ms and 3 by default as in Curator's getting-started example (`retry_policy = "kazoo"`:
//!   kazoo's unlimited `KazooRetry`).
//! - Lock parents exist implicitly (no `creatingParentsIfNeeded` round trip); no child watches,
//!   `sync`, ACLs, local sessions, quotas or snapshots (the tree is kept across a crash).
//! - The `Disconnected` state event wakes Curator's waiters (they list again) but is not counted
//!   as a notification: only watch events on nodes are.

pub mod client;
pub mod connection;
mod fingerprint;
pub mod library;
pub mod protocol;
pub mod recipe;
pub mod server;
pub mod session;
pub mod tree;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::setup::WorkloadSpec;

use crate::notice_race::NoticeRace;

use client::{ClientConfig, LossPolicy, Recipe, ReleaseMode, StateDelivery, ZkClient};
use library::{Library, LIBRARIES};
use protocol::{ZkMsg, ZkTimer};
use recipe::{RetryKind, RetryPolicy};
use server::{ServerConfig, ZkServer};
use session::negotiate_timeout_ms;

/// The `zookeeper` model.
pub struct ZooKeeper;

/// The `zookeeper` model, as [`registry`](crate::registry) lists it.
pub static ZOOKEEPER: ZooKeeper = ZooKeeper;

impl Protocol for ZooKeeper {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    fn msg_fingerprint(msg: &ZkMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &ZkTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"curator-5.4\"",
        meaning: "the lock library and version the clients run (default curator-5.4, the newest stable preset): locksim-1 is the model as it was before presets (mixed versions, see docs/libraries.md); curator-5.4 sets session_timeout_ms, connection_timeout_ms, retry_policy, retry_base_sleep_ms, retry_max_retries, state_delivery, state_delivery_ms, resume_to_check_ms and release unless given, kazoo-2.10 and kazoo-2.11 set session_timeout_ms, retry_policy, state_delivery, state_delivery_ms, resume_to_check_ms and release; curator-5.4 also has the ZooKeeper Java client's 100 ms cleanup sleep after a lost connection",
    },
    ParamSpec {
        name: "servers",
        kind: ParamKind::Int { min: 1, max: 15 },
        default: "3",
        meaning: "ensemble size (server-0 …); a write commits on a majority, servers/2 + 1",
    },
    ParamSpec {
        name: "tick_ms",
        kind: ParamKind::Number { min: 1.0, max: 600_000.0 },
        default: "2000",
        meaning: "tickTime: session expiry is checked in buckets of one tick; session timeouts are clamped to [2, 20] ticks",
    },
    ParamSpec {
        name: "session_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e8 },
        default: "40000",
        meaning: "the session timeout the client asks for (negotiated into [2, 20] × tick_ms); pings after a third of it, SUSPENDED after 2/3, LOST a whole timeout later",
    },
    ParamSpec {
        name: "recipe",
        kind: ParamKind::Choice(&["sequential", "naive", "read_write"]),
        default: "\"sequential\"",
        meaning: "Curator InterProcessMutex (watch the predecessor), the one-node lock every waiter watches (herd), or InterProcessReadWriteLock (needed for read_fraction > 0)",
    },
    ParamSpec {
        name: "on_connection_loss",
        kind: ParamKind::Choice(&["suspended", "lost"]),
        default: "\"suspended\"",
        meaning: "when the application stops treating the lock as held: at Curator SUSPENDED (the standard policy) or only at LOST",
    },
    ParamSpec {
        name: "sync_limit",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "5",
        meaning: "syncLimit, in ticks: a follower that hears nothing from its leader for sync_limit × tick_ms goes looking for a new one, and a leader without a quorum heard from within as long steps down (zoo_sample.cfg: 5)",
    },
    ParamSpec {
        name: "election_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e7 },
        default: "200",
        meaning: "how long a leader election takes once servers look for a leader (randomised in [1, 2) × it; FastLeaderElection's finalizeWait is 200 ms)",
    },
    ParamSpec {
        name: "retry_base_sleep_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e7 },
        default: "1000",
        meaning: "Curator ExponentialBackoffRetry baseSleepTimeMs: retry n sleeps base × random(1 .. 2^(n+1)) after a CONNECTIONLOSS",
    },
    ParamSpec {
        name: "retry_max_retries",
        kind: ParamKind::Int { min: 0, max: 29 },
        default: "3",
        meaning: "Curator ExponentialBackoffRetry maxRetries: how many times a failed operation is retried before the acquisition fails",
    },
    ParamSpec {
        name: "retry_policy",
        kind: ParamKind::Choice(&["exponential_backoff", "kazoo"]),
        default: "\"exponential_backoff\"",
        meaning: "Curator's ExponentialBackoffRetry(retry_base_sleep_ms, retry_max_retries), or kazoo's KazooRetry(max_tries=None): unlimited retries sleeping 0.1 s × 2^n (at most 3600 s) ± 40 %",
    },
    ParamSpec {
        name: "connection_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e8 },
        default: "15000",
        meaning: "Curator connectionTimeoutMs: an operation issued while disconnected waits this long for a connection before it fails with CONNECTIONLOSS",
    },
    ParamSpec {
        name: "state_delivery",
        kind: ParamKind::Choice(&["sync", "threads"]),
        default: "\"sync\"",
        meaning: "how SUSPENDED and LOST reach the application: sync (the model before presets: at once, and the check before a write runs the connection's clock first) or threads (Curator: SendThread, EventThread, ConnectionStateManager's thread; kazoo: its connection thread, under the GIL; state_delivery_ms after the connection noticed, SUSPENDED also after curator-5.4's 100 ms cleanup sleep; after a pause the application thread races them to its check, resume_to_check_ms)",
    },
    ParamSpec {
        name: "state_delivery_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "{ uniform = [1.5, 4.5] }",
        meaning: "with state_delivery = \"threads\": from the connection noticing a state to the listener running, less the cleanup sleep (Curator 5.4.0 live, SIGSTOP past the session: SUSPENDED at the listener 101.8-104.4 ms after SIGCONT, 100 of them the sleep)",
    },
    ParamSpec {
        name: "resume_to_check_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "{ uniform = [1, 7] }",
        meaning: "with state_delivery = \"threads\": after a pause that outlived the read timeout, how long the resumed application thread takes to reach its check before a write; a state reaching the listener sooner is seen (Curator 5.4.0 live: the write left 1.3-7.1 ms after SIGCONT)",
    },
    ParamSpec {
        name: "release",
        kind: ParamKind::Choice(&["fail_fast", "retry_loop"]),
        default: "\"fail_fast\"",
        meaning: "a release whose delete fails: fail_fast (the model before presets: ReleaseFailed at once, the delete goes on in the background) or retry_loop (Curator's RetryLoop, kazoo's retry: retried under the retry policy, ReleaseFailed only when it gives up)",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a server's processing time per reply or watch event",
    },
    ParamSpec {
        name: "fsync_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0",
        meaning: "a follower's txn-log sync before it acks a proposal (SyncRequestProcessor, then SendAckRequestProcessor); 0: a sync that costs nothing; sim compare measures this machine's",
    },
];

/// Every parameter, read once, after the `client` preset has filled what the scenario left unset
/// ([`library::resolve`]), in the types the servers and the clients use.
#[derive(Clone, Debug)]
pub struct ZooKeeperConfig {
    /// `client`: the client library and version.
    pub library: Library,
    /// `servers`: the ensemble's size.
    pub servers: usize,
    /// `tick_ms` as the servers use it (whole milliseconds, as ZooKeeper's `tickTime` is).
    pub tick_ms: u64,
    /// `session_timeout_ms` as the scenario gives it (the client asks for it rounded).
    pub session_timeout_ms: f64,
    /// `recipe`.
    pub recipe: Recipe,
    /// `on_connection_loss`.
    pub loss_policy: LossPolicy,
    /// `sync_limit`: ticks of silence before a follower is dropped.
    pub sync_limit: u64,
    /// `election_ms`.
    pub election_ms: f64,
    /// `retry_base_sleep_ms`, `retry_max_retries`, `retry_policy`.
    pub retry: RetryPolicy,
    /// `connection_timeout_ms`, rounded.
    pub connection_timeout_ms: u64,
    /// `state_delivery`.
    pub state_delivery: StateDelivery,
    /// `state_delivery_ms` and `resume_to_check_ms`.
    pub race: NoticeRace,
    /// `release`.
    pub release: ReleaseMode,
    /// `service_ms`: a server's processing time.
    pub service_ms: Dist,
    /// `fsync_ms`: a follower's txn-log sync.
    pub fsync_ms: Dist,
}

impl ZooKeeperConfig {
    /// The configuration the scenario's parameters give, with the `client` preset applied. Every
    /// key is in [`PARAMS`] and the parser has checked each value's type and range.
    pub fn from_params(params: &Params) -> ZooKeeperConfig {
        let params = &library::resolve(params);
        ZooKeeperConfig {
            library: Library::parse(params.str("client")),
            servers: params.int("servers") as usize,
            tick_ms: (params.f64("tick_ms").round() as u64).max(1),
            session_timeout_ms: params.f64("session_timeout_ms"),
            recipe: match params.str("recipe") {
                "naive" => Recipe::Naive,
                "read_write" => Recipe::ReadWrite,
                _ => Recipe::Sequential,
            },
            loss_policy: if params.str("on_connection_loss") == "lost" {
                LossPolicy::Lost
            } else {
                LossPolicy::Suspended
            },
            sync_limit: params.int("sync_limit") as u64,
            election_ms: params.f64("election_ms"),
            retry: RetryPolicy {
                base_sleep_ms: params.f64("retry_base_sleep_ms").round() as u64,
                max_retries: params.int("retry_max_retries") as u32,
                kind: if params.str("retry_policy") == "kazoo" {
                    RetryKind::Kazoo
                } else {
                    RetryKind::ExponentialBackoff
                },
            },
            connection_timeout_ms: params.f64("connection_timeout_ms").round() as u64,
            state_delivery: if params.str("state_delivery") == "threads" {
                StateDelivery::Threads
            } else {
                StateDelivery::Sync
            },
            race: NoticeRace {
                delivery_ms: params.dist("state_delivery_ms"),
                resume_to_check_ms: params.dist("resume_to_check_ms"),
            },
            release: if params.str("release") == "retry_loop" { ReleaseMode::RetryLoop } else { ReleaseMode::FailFast },
            service_ms: params.dist("service_ms"),
            fsync_ms: params.dist("fsync_ms"),
        }
    }

    /// The servers' names, `server-0 …`.
    pub fn member_names(&self) -> Vec<String> {
        (0..self.servers).map(|i| format!("server-{i}")).collect()
    }

    /// The settings of server `index`.
    pub fn server_config(&self, index: usize) -> ServerConfig {
        ServerConfig {
            index,
            members: self.member_names(),
            tick_ms: self.tick_ms,
            election_ms: self.election_ms,
            sync_limit: self.sync_limit,
            service_ms: self.service_ms.clone(),
            fsync_ms: self.fsync_ms.clone(),
        }
    }

    /// The lock client's settings.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            servers: self.member_names(),
            session_timeout_ms: self.session_timeout_ms.round() as u64,
            recipe: self.recipe,
            policy: self.loss_policy,
            retry: self.retry,
            connection_timeout_ms: self.connection_timeout_ms,
            state_delivery: self.state_delivery,
            race: self.race.clone(),
            notice_path: if self.library.is_kazoo() { "kazoo" } else { "curator" },
            cleanup_sleep_ms: self.library.cleanup_sleep_ms(),
            release: self.release,
            reentrant: self.library.reentrant(),
        }
    }

    /// The servers' names and kinds, in the order [`ZooKeeperConfig::cluster`] builds them.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        self.member_names().into_iter().map(|name| (name, NodeKind::Server)).collect()
    }

    /// The cluster this configuration runs for `workload`: the ensemble and one lock client per
    /// workload client.
    pub fn cluster(&self, workload: &WorkloadSpec) -> Cluster<ZooKeeper> {
        let services = (0..self.servers)
            .map(|index| Box::new(ZkServer::new(self.server_config(index))) as Box<dyn Process<ZooKeeper>>)
            .collect();
        let client_cfg = self.client_config();
        let clients = (0..workload.clients)
            .map(|_| Box::new(ZkClient::new(client_cfg.clone())) as Box<dyn LockClient<ZooKeeper>>)
            .collect();
        Cluster { services, clients }
    }
}

/// The text of the choices the preset note quotes, as the scenario writes them.
fn retry_policy_name(kind: RetryKind) -> &'static str {
    match kind {
        RetryKind::ExponentialBackoff => "exponential_backoff",
        RetryKind::Kazoo => "kazoo",
    }
}

/// See [`retry_policy_name`].
fn state_delivery_name(delivery: StateDelivery) -> &'static str {
    match delivery {
        StateDelivery::Sync => "sync",
        StateDelivery::Threads => "threads",
    }
}

/// See [`retry_policy_name`].
fn release_name(release: ReleaseMode) -> &'static str {
    match release {
        ReleaseMode::FailFast => "fail_fast",
        ReleaseMode::RetryLoop => "retry_loop",
    }
}

impl Model for ZooKeeper {
    type Protocol = ZooKeeper;

    fn name(&self) -> &'static str {
        "zookeeper"
    }

    fn summary(&self) -> &'static str {
        "ZooKeeper ensemble (quorum log, sessions expiring in tick buckets, ephemeral sequential znodes, watches) with Curator's InterProcessMutex / ReadWriteLock or the naive herd lock; czxid fencing token"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let cfg = ZooKeeperConfig::from_params(params);
        let mut notes = Vec::new();
        let lib = cfg.library;
        if lib != Library::Locksim {
            notes.push(format!(
                "client = \"{}\" sets session_timeout_ms, connection_timeout_ms, retry_policy, retry_base_sleep_ms, retry_max_retries, state_delivery, state_delivery_ms, resume_to_check_ms and release where the scenario does not (now: session_timeout_ms = {}, retry_policy = {}, state_delivery = {}, release = {}); a value the scenario sets is kept",
                lib.name(),
                cfg.session_timeout_ms,
                retry_policy_name(cfg.retry.kind),
                state_delivery_name(cfg.state_delivery),
                release_name(cfg.release),
            ));
        }
        if lib == Library::Curator54 {
            notes.push("curator-5.4: acquire(time)'s wall-clock deadline (LockInternals.java:303-316) is not modelled: the workload's acquire timeout runs on the monotonic clock".into());
        }
        if lib.is_kazoo() {
            notes.push(format!(
                "{}: the ping schedule (read_timeout/2 minus 10-400 ms) and kazoo 2.10's wall-clock heartbeat and retry deadlines are not modelled (kazoo-2.10 and kazoo-2.11 run the same); kazoo's Lock is not reentrant: nested acquisitions are skipped; its listeners run on kazoo's connection thread, which races the resumed application thread under the GIL: state_delivery = \"threads\" without a cleanup sleep, both sides' times measured live (kazoo 2.10.0); a pause past the read timeout but short of the session is noticed at the resume here, where kazoo notices only a ping unanswered by its next ping deadline",
                lib.name()
            ));
        }
        let tick = cfg.tick_ms;
        let asked = cfg.session_timeout_ms.round() as u64;
        let got = negotiate_timeout_ms(asked, tick);
        if got != asked {
            notes.push(format!(
                "session_timeout_ms = {asked} is outside [2, 20] × tick_ms = [{}, {}]: the servers negotiate it to {got} ms, as ZooKeeper's min/maxSessionTimeout do",
                2 * tick,
                20 * tick
            ));
        }
        let servers = cfg.servers;
        if servers.is_multiple_of(2) {
            notes.push(format!(
                "an even ensemble of {servers} needs {} servers for a quorum: it tolerates no more failures than {} servers",
                servers / 2 + 1,
                servers - 1
            ));
        }
        if workload.reentry > 0.0 && cfg.recipe == Recipe::Naive {
            notes.push("the naive recipe is not reentrant (a second create finds the node taken): nested acquisitions are skipped".into());
        }
        notes.push(
            "replication is the shared Raft log standing in for ZAB (leader, quorum commit, ZAB's proposal / ack / commit messages and half-tick pings); a follower that stalled or whose link broke is caught up by the log's resend once a heartbeat round, not ZooKeeper's DIFF / TRUNC / SNAP (one whose link broke, or that was silent for sync_limit × tick_ms, gets nothing else until it answers that resend, where in ZooKeeper it reconnects itself); ZooKeeper's failure detection (sync_limit × tick_ms of silence, or a reset from a killed leader) starts an election that takes election_ms to twice it, without FastLeaderElection's vote rounds or the discovery and synchronisation phases (initLimit)"
                .into(),
        );
        notes
    }

    fn shared_locks(&self, params: &Params) -> bool {
        // Only Curator's InterProcessReadWriteLock grants shared locks.
        ZooKeeperConfig::from_params(params).recipe == Recipe::ReadWrite
    }

    fn fenced(&self, _params: &Params) -> bool {
        true
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        ZooKeeperConfig::from_params(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<ZooKeeper> {
        ZooKeeperConfig::from_params(params).cluster(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::model::ParamValue;

    fn params(overrides: &[(&str, ParamValue)]) -> Params {
        let mut p = Params::default();
        for spec in PARAMS {
            let v = match spec.kind {
                ParamKind::Int { .. } => ParamValue::Int(spec.default.parse().unwrap()),
                ParamKind::Choice(_) => ParamValue::Str(spec.default.trim_matches('"').to_string()),
                // The distribution defaults that are not a number.
                ParamKind::Dist { .. } if spec.name == "state_delivery_ms" => ParamValue::Dist(Dist::Uniform(1.5, 4.5)),
                ParamKind::Dist { .. } if spec.name == "resume_to_check_ms" => {
                    ParamValue::Dist(Dist::Uniform(1.0, 7.0))
                }
                _ => ParamValue::Num(spec.default.parse().unwrap()),
            };
            p.values.insert(spec.name.to_string(), v);
        }
        // As a scenario sets them: explicit, so the default preset keeps them.
        for (k, v) in overrides {
            p.set_explicit(k, v.clone());
        }
        p
    }

    fn facts(read_fraction: f64, reentry: f64) -> WorkloadSpec {
        WorkloadSpec { read_fraction, reentry, clients: 10, ..WorkloadSpec::default() }
    }

    #[test]
    fn shared_locks_need_the_read_write_recipe() {
        for recipe in ["sequential", "naive"] {
            assert!(!ZOOKEEPER.shared_locks(&params(&[("recipe", ParamValue::Str(recipe.into()))])), "{recipe}");
        }
        let rw = params(&[("recipe", ParamValue::Str("read_write".into()))]);
        assert!(ZOOKEEPER.shared_locks(&rw));
        assert!(ZOOKEEPER.validate(&rw, &facts(0.5, 0.0)).is_empty());
    }

    #[test]
    fn limitations_name_the_clamped_timeout_the_even_ensemble_and_the_naive_nesting() {
        let p = params(&[
            ("session_timeout_ms", ParamValue::Num(1000.0)),
            ("servers", ParamValue::Int(4)),
            ("recipe", ParamValue::Str("naive".into())),
        ]);
        let notes = ZOOKEEPER.limitations(&p, &facts(0.0, 0.5)).join("\n");
        assert!(notes.contains("negotiate it to 4000 ms"), "{notes}");
        assert!(notes.contains("needs 3 servers for a quorum"), "{notes}");
        assert!(notes.contains("not reentrant"), "{notes}");
        // The default preset, curator-5.4, asks for Curator's 60 s, which tickTime 2000 caps.
        let defaults = ZOOKEEPER.limitations(&params(&[]), &facts(0.0, 0.0)).join("\n");
        assert!(defaults.contains("negotiate it to 40000 ms") && !defaults.contains("quorum:"), "{defaults}");
        let before =
            ZOOKEEPER.limitations(&params(&[("client", ParamValue::Str("locksim-1".into()))]), &facts(0.0, 0.0));
        assert!(!before.join("\n").contains("negotiate"), "{before:?}");
    }

    /// The preset note quotes each choice as the scenario writes it.
    #[test]
    fn the_preset_note_names_the_choices_in_force() {
        let kazoo = params(&[("client", ParamValue::Str("kazoo-2.10".into()))]);
        let notes = ZOOKEEPER.limitations(&kazoo, &facts(0.0, 0.0)).join("\n");
        assert!(
            notes.contains("client = \"kazoo-2.10\" sets")
                && notes.contains("retry_policy = kazoo, state_delivery = threads, release = retry_loop)"),
            "{notes}"
        );
        let explicit = params(&[
            ("client", ParamValue::Str("curator-5.4".into())),
            ("retry_policy", ParamValue::Str("exponential_backoff".into())),
            ("state_delivery", ParamValue::Str("sync".into())),
            ("release", ParamValue::Str("fail_fast".into())),
        ]);
        let notes = ZOOKEEPER.limitations(&explicit, &facts(0.0, 0.0)).join("\n");
        assert!(
            notes.contains("retry_policy = exponential_backoff, state_delivery = sync, release = fail_fast)"),
            "{notes}"
        );
    }

    #[test]
    fn the_cluster_has_the_servers_and_one_library_per_client_on_ordered_links() {
        let p = params(&[("servers", ParamValue::Int(5))]);
        let c = ZOOKEEPER.build(&p, &WorkloadSpec { clients: 7, locks: 2, ..WorkloadSpec::default() });
        let names: Vec<String> = ZOOKEEPER.services(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["server-0", "server-1", "server-2", "server-3", "server-4"]);
        assert_eq!(c.services.len(), 5);
        assert_eq!(c.clients.len(), 7);
        let t = ZOOKEEPER.topology(&p);
        assert!(t.ordered_links && !t.leaderless);
        assert!(c.clients[0].reentrant());
        let naive = ZOOKEEPER.build(
            &params(&[("recipe", ParamValue::Str("naive".into()))]),
            &WorkloadSpec { clients: 1, locks: 1, ..WorkloadSpec::default() },
        );
        assert!(!naive.clients[0].reentrant());
    }
}
