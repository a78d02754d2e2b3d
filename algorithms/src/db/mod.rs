//! `db`: a lock row in a MySQL-style relational database, or MySQL's `GET_LOCK`.
//!
//! Module map:
//! - [`table`]: the lock table (unique name, auto-increment id, owner, count, update_time) and the
//!   user-level lock registry, as pure data structures
//! - [`protocol`]: every message (statements and results, binlog shipping, the failover
//!   manager's probes and orders) and every timer
//! - [`server`]: a MySQL server: executes statements (commit time `service_ms`), runs the cleanup
//!   job, ships its binlog (async or semisync) or applies it as a replica
//! - [`manager`]: the failover manager (`sentinel-0`), MHA style
//! - [`client`]: the client library: INSERT and poll, reentry, release, heartbeat, reconnects
//! - [`library`]: the `client` preset (`spring-jdbc-6.0`, `spring-jdbc-6`, `spring-jdbc-7`;
//!   `locksim-1`, the default, is the model as it was before presets): each version's defaults
//!
//! ## What is modelled, and after what
//!
//! - Acquire is the classic lock-row pattern: `INSERT` a row whose name is unique; a duplicate-key
//!   error means taken, so the client sleeps `poll_ms` and tries again (no notifications; every
//!   failed attempt is a `Refused` event). Reentrant: on duplicate key,
//!   `UPDATE … SET count = count + 1 WHERE name = ? AND owner = ?`; release decrements and deletes
//!   at 0. The fencing token is the row's auto-increment id.
//! - Expiry: a cleanup job on the primary every `cleanup_every_ms` deletes rows whose
//!   `update_time` (the server's wall clock `NOW()`, so a stepped clock expires rows early) is
//!   older than `expire_ms`; the holder may refresh `update_time` every `heartbeat_ms`.
//! - Replication (`server-1`): `async` ships each binlog event `replication_lag_ms` after its
//!   commit (what is inside that window when the primary dies is lost); `semisync` makes the commit
//!   wait for the replica's acknowledgement and falls back to async after `semisync_timeout_ms`
//!   without one, returning to semisync once the replica has caught up (MySQL reference manual,
//!   "Semisynchronous Replication"; `rpl_semi_sync_source_timeout` default 10 000 ms).
//! - Failover is done by a manager node, as MySQL deployments do it (MHA's `masterha_manager`,
//!   orchestrator): a MySQL replica never promotes itself. The manager pings every server once a
//!   second; when the primary has not answered for `failover_after_ms` (MHA: `ping_interval` 3 s,
//!   four misses) it promotes the replica, moves the clients to it (the VIP or proxy change: a
//!   `NewPrimary` notice; a client that misses it finds out from a read-only error or asks), and
//!   demotes the old primary when it can reach it. Like MHA without a secondary check, a manager
//!   cut off from a healthy primary fails over anyway (split brain is possible, as in reality).
//! - `mode = "get_lock"`: `GET_LOCK(name, 0)` polled every `poll_ms` (or, with
//!   `get_lock_timeout_s > 0`, `GET_LOCK(name, timeout)` waiting in the server), `RELEASE_LOCK(name)`:
//!   session-scoped, in server memory, reentrant (MySQL ≥ 5.7), never replicated, so any restart
//!   or failover of the server forgets every lock while the holders go on believing they hold it.
//!   No fencing token.
//! - `mode = "select_for_update"`: an open transaction holding `SELECT … FOR UPDATE` on the
//!   lock's row; waiters block in the server until the holder's `COMMIT`, or fail with error 1205
//!   after `lock_wait_timeout_ms` (`innodb_lock_wait_timeout`, 50 s) and try again. Row locks are
//!   in server memory, never replicated; a reset connection rolls its transaction back.
//! - `mode = "spring_jdbc"`: Spring Integration's `JdbcLockRegistry` over `DefaultLockRepository`
//!   (docs/libraries.md, row 11): an `INT_LOCK` row per lock with `CLIENT_ID` and a time column;
//!   acquire is one transaction `UPDATE … SET CLIENT_ID = ?, CREATED_DATE = ? WHERE … AND
//!   (CLIENT_ID = ? OR CREATED_DATE < ?)` then `INSERT` when no row matched, both times from the
//!   acquiring client's own wall clock (now, and now − `ttl_ms`); 7.0 writes `EXPIRED_AFTER` =
//!   now plus the TTL and compares it with now (`expiry_column`). Polled every `poll_ms`. No count column
//!   (nested acquisitions are counted in the JVM's `ReentrantLock`, and each sends the acquire
//!   again, refreshing the row), no cleanup job, no heartbeat, no token. Release is `DELETE …
//!   WHERE CLIENT_ID = ?`; with `release_missing = "error"` (6.4 and later) 0 rows deleted is
//!   `ReleaseFailed`.
//!
//! - `mode = "shedlock"`: ShedLock's `JdbcTemplateLockProvider` ([`shedlock`]): a `shedlock` row
//!   per job with `lock_until`, `locked_at`, `locked_by`; the lock is the `UPDATE … WHERE name = ?
//!   AND lock_until <= :now` (an `INSERT` on a process's first try), with `lock_until` = the
//!   node's `createdAt` + `lockAtMostFor` (`lock_at_most_for_ms`) and `:now` from the node's wall
//!   clock, or the database's with `time_source = "db"` (`usingDbTime()`). One try: taken means
//!   the run is skipped (a `Failed` the scheduled workload skips on), never polled. Unlock writes
//!   `lock_until = max(now, createdAt + lockAtLeastFor)` (`lock_at_least_for_ms`), from 7.0 only
//!   on the caller's own row (`unlock_by_owner`). No token. Meant for `[workload] kind =
//!   "scheduled"`.
//!
//! Every client↔server and primary↔replica link is a TCP connection: links are ordered, and the
//! client library retransmits an unanswered statement (RTO from 200 ms, doubling) while the
//! server executes each statement id once per connection, as TCP delivers each segment once.

pub mod client;
mod fingerprint;
pub mod library;
pub mod manager;
pub mod protocol;
pub mod server;
pub mod shedlock;
pub mod table;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};

use client::DbClient;
use library::{Library, LIBRARIES};
use manager::FailoverManager;
use server::DbServer;

/// The `db` model.
pub struct Db;

/// The `db` model, as [`registry`](crate::registry) lists it.
pub static DB: Db = Db;

/// Which lock primitive the library uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A row in a table with a unique name.
    Table,
    /// MySQL `GET_LOCK` / `RELEASE_LOCK`.
    GetLock,
    /// An open transaction holding `SELECT … FOR UPDATE` on the lock's row; `COMMIT` releases.
    SelectForUpdate,
    /// Spring Integration's `INT_LOCK` row: UPDATE-then-INSERT with the acquirer's clock.
    SpringJdbc,
    /// ShedLock's `shedlock` row: INSERT once, then `UPDATE … WHERE lock_until <= now`; one try.
    ShedLock,
}

impl Mode {
    /// The `mode` parameter's text for this primitive.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Table => "table",
            Mode::GetLock => "get_lock",
            Mode::SelectForUpdate => "select_for_update",
            Mode::SpringJdbc => "spring_jdbc",
            Mode::ShedLock => "shedlock",
        }
    }
}

/// Which time column a `spring_jdbc` row carries (`expiry_column`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Spring Integration 6.x: `CREATED_DATE` = the writer's now; taken over when it is below
    /// the acquirer's now − ttl.
    CreatedDate,
    /// Spring Integration 7.0: `EXPIRED_AFTER` = the writer's now + ttl; taken over when it is
    /// below the acquirer's now.
    ExpiredAfter,
}

impl Expiry {
    /// The `expiry_column` parameter's text for this column.
    pub fn name(self) -> &'static str {
        match self {
            Expiry::CreatedDate => "created_date",
            Expiry::ExpiredAfter => "expired_after",
        }
    }
}

/// How the primary's changes reach the replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replication {
    /// No replica and no failover manager: one server.
    None,
    /// Each binlog event leaves for the replica `replication_lag_ms` after its commit.
    Async,
    /// A changing statement's result waits for the replica's ack, or for `semisync_timeout_ms`
    /// (then async until the replica catches up).
    Semisync,
}

/// Whose id the `owner` column carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerScope {
    /// One id for the life of the process (Spring Integration's `DefaultLockRepository` id, a
    /// UUID drawn once per repository): a client re-enters any row it left behind.
    Process,
    /// A fresh id per acquisition: a row left behind by a failed release is a stranger's.
    Acquire,
}

/// The model's parameters in engine units, read once ([`Config::from_params`]), after the `client`
/// preset.
#[derive(Clone, Debug)]
pub struct Config {
    /// The lock library (`client`).
    pub library: Library,
    /// `database = "postgres"` (else MariaDB/MySQL): only `spring_jdbc` and `shedlock` run there.
    pub postgres: bool,
    /// Which lock primitive the library uses (`mode`).
    pub mode: Mode,
    /// Sleep between attempts while the lock is taken (`poll_ms`).
    pub poll_ns: Nanos,
    /// 0: rows never expire (no cleanup job).
    pub expire_ns: Nanos,
    /// Period of the cleanup job on the primary (`cleanup_every_ms`).
    pub cleanup_every_ns: Nanos,
    /// 0: no heartbeat.
    pub heartbeat_ns: Nanos,
    /// On duplicate key, re-enter with `UPDATE … count + 1 WHERE owner`; release decrements
    /// (`reentrant`).
    pub reentrant: bool,
    /// How the primary's changes reach the replica (`replication`).
    pub replication: Replication,
    /// From a commit on the primary to its binlog event leaving for the replica
    /// (`replication_lag_ms`).
    pub replication_lag_ns: Nanos,
    /// How long a commit waits for the semisync ack before the primary falls back to async
    /// (`semisync_timeout_ms`).
    pub semisync_timeout_ns: Nanos,
    /// The manager promotes the replica once the primary has not answered for this long
    /// (`failover_after_ms`).
    pub failover_after_ns: Nanos,
    /// Per-statement processing (commit) time, milliseconds.
    pub service_ms: Dist,
    /// Number of clients (the manager tells each of them about a new primary).
    pub clients: usize,
    /// How many times a release whose statement failed is sent again before the call reports
    /// the error (`release_retry`).
    pub release_retry: u32,
    /// Whose id the `owner` column carries (`owner_scope`).
    pub owner_scope: OwnerScope,
    /// The AUTO_INCREMENT counter survives a server restart (MySQL 8.0) or is recomputed as
    /// `MAX(id) + 1` (5.7) (`autoinc_persistent`).
    pub autoinc_persistent: bool,
    /// A locking read waits this long for a row lock before error 1205
    /// (`lock_wait_timeout_ms`).
    pub lock_wait_timeout_ns: Nanos,
    /// `GET_LOCK`'s timeout argument: how long the server makes a request wait for the lock
    /// (`get_lock_timeout_s`; 0: answer at once and poll).
    pub get_lock_timeout_ns: Nanos,
    /// `spring_jdbc`: the row's time to live (`ttl_ms`, Spring's `DEFAULT_TTL` 10 s).
    pub ttl_ns: Nanos,
    /// `spring_jdbc`: which time column the rows carry (`expiry_column`).
    pub expiry: Expiry,
    /// A release whose `DELETE` found no row of this owner is `ReleaseFailed`
    /// (`release_missing = "error"`; Spring Integration 6.4 and later) rather than `Released`.
    pub release_missing_fails: bool,
    /// `shedlock`: `lockAtMostFor`, the lock's life from its `createdAt` (`lock_at_most_for_ms`).
    pub lock_at_most_for_ns: Nanos,
    /// `shedlock`: `lockAtLeastFor`, the least the lock is kept from `createdAt`
    /// (`lock_at_least_for_ms`).
    pub lock_at_least_for_ns: Nanos,
    /// `shedlock`: `usingDbTime()`, the database's clock for every time (`time_source = "db"`).
    pub db_time: bool,
    /// `shedlock`: unlock only the caller's own row (`AND locked_by = ?`, ShedLock 7.0 and
    /// later; `unlock_by_owner`).
    pub unlock_by_owner: bool,
}

impl Config {
    /// Whether the lock lives in a server session (`GET_LOCK`, an open transaction): it dies
    /// with the connection and is never replicated.
    pub fn session_scoped(&self) -> bool {
        matches!(self.mode, Mode::GetLock | Mode::SelectForUpdate)
    }
}

impl Config {
    /// The configuration the scenario's parameters give, with the `client` preset applied
    /// ([`library::resolve`]), for a workload of `clients` clients. Every key is in [`PARAMS`]
    /// and the parser has checked each value's type and range.
    pub fn from_params(params: &Params, clients: usize) -> Config {
        let params = &library::resolve(params);
        Config {
            library: Library::parse(params.str("client")),
            postgres: params.str("database") == "postgres",
            mode: match params.str("mode") {
                "get_lock" => Mode::GetLock,
                "select_for_update" => Mode::SelectForUpdate,
                "spring_jdbc" => Mode::SpringJdbc,
                "shedlock" => Mode::ShedLock,
                _ => Mode::Table,
            },
            poll_ns: ms_to_ns(params.f64("poll_ms")),
            expire_ns: ms_to_ns(params.f64("expire_ms")),
            cleanup_every_ns: ms_to_ns(params.f64("cleanup_every_ms")),
            heartbeat_ns: ms_to_ns(params.f64("heartbeat_ms")),
            reentrant: params.bool("reentrant"),
            replication: match params.str("replication") {
                "async" => Replication::Async,
                "semisync" => Replication::Semisync,
                _ => Replication::None,
            },
            replication_lag_ns: ms_to_ns(params.f64("replication_lag_ms")),
            semisync_timeout_ns: ms_to_ns(params.f64("semisync_timeout_ms")),
            failover_after_ns: ms_to_ns(params.f64("failover_after_ms")),
            service_ms: params.dist("service_ms"),
            clients,
            release_retry: params.int("release_retry") as u32,
            owner_scope: match params.str("owner_scope") {
                "acquire" => OwnerScope::Acquire,
                _ => OwnerScope::Process,
            },
            autoinc_persistent: params.bool("autoinc_persistent"),
            lock_wait_timeout_ns: ms_to_ns(params.f64("lock_wait_timeout_ms")),
            get_lock_timeout_ns: ms_to_ns(params.f64("get_lock_timeout_s") * 1000.0),
            ttl_ns: ms_to_ns(params.f64("ttl_ms")),
            expiry: match params.str("expiry_column") {
                "expired_after" => Expiry::ExpiredAfter,
                _ => Expiry::CreatedDate,
            },
            release_missing_fails: params.str("release_missing") == "error",
            lock_at_most_for_ns: ms_to_ns(params.f64("lock_at_most_for_ms")),
            lock_at_least_for_ns: ms_to_ns(params.f64("lock_at_least_for_ms")),
            db_time: params.str("time_source") == "db",
            unlock_by_owner: params.bool("unlock_by_owner"),
        }
    }

    /// Whether there is a replica and a failover manager.
    pub fn replicated(&self) -> bool {
        self.replication != Replication::None
    }

    /// The service nodes' names and kinds, in the order [`Config::cluster`] builds them: the
    /// primary, and with replication the replica and the failover manager.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        let mut names = vec![("server-0".to_string(), NodeKind::Server)];
        if self.replicated() {
            names.push(("server-1".to_string(), NodeKind::Server));
            names.push(("sentinel-0".to_string(), NodeKind::Sentinel));
        }
        names
    }

    /// The cluster this configuration runs: its services and one library for each of the
    /// `clients` clients.
    pub fn cluster(&self) -> Cluster<Db> {
        // In the order of `services`.
        let mut services: Vec<Box<dyn Process<Db>>> = vec![Box::new(DbServer::new(self.clone(), 0))];
        if self.replicated() {
            services.push(Box::new(DbServer::new(self.clone(), 1)));
            services.push(Box::new(FailoverManager::new(self.clone())));
        }
        let clients =
            (0..self.clients).map(|i| Box::new(DbClient::new(self.clone(), i)) as Box<dyn LockClient<Db>>).collect();
        Cluster { services, clients }
    }
}

/// The configuration for the questions that do not depend on the workload (which services there
/// are, whether grants are fenced): the client count plays no part in them.
fn config_of(params: &Params) -> Config {
    Config::from_params(params, 0)
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"locksim-1\"",
        meaning: "the lock library the clients run: locksim-1 is the model as it was before presets (the mode chosen, no library's defaults); spring-jdbc-6.0, spring-jdbc-6 and spring-jdbc-7 (Spring Integration JdbcLockRegistry 6.0-6.1, 6.4-6.5, 7.0) set mode = spring_jdbc, ttl_ms, poll_ms, owner_scope, reentrant, release_retry, heartbeat_ms, expire_ms, expiry_column and release_missing unless given",
    },
    ParamSpec {
        name: "mode",
        kind: ParamKind::Choice(&["table", "get_lock", "select_for_update", "spring_jdbc", "shedlock"]),
        default: "\"table\"",
        meaning: "a lock row with a unique name (INSERT); MySQL GET_LOCK (session-scoped, in server memory, not replicated); an open transaction holding SELECT … FOR UPDATE on the lock's row (COMMIT releases); Spring Integration's INT_LOCK row (UPDATE … WHERE CLIENT_ID = ? OR CREATED_DATE < now − ttl on the acquirer's clock, then INSERT); or ShedLock's shedlock row (UPDATE … WHERE lock_until <= now, one try: a taken lock skips the run)",
    },
    // ShedLock shedlock-parent-7.9.0: @EnableSchedulerLock.defaultLockAtMostFor has no default
    // (`spring/shedlock-spring/…/annotation/EnableSchedulerLock.java:68`): every application
    // sets one; the README's example is "10m".
    ParamSpec {
        name: "lock_at_most_for_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e12 },
        default: "600000",
        meaning: "shedlock: lockAtMostFor: lock_until = createdAt + this, on the node's clock (or the database's with time_source = db); a run longer than this loses the lock while it runs (no library default: @EnableSchedulerLock requires defaultLockAtMostFor; 10 min is the README's example)",
    },
    // EnableSchedulerLock.java:81 `defaultLockAtLeastFor() default "PT0S"`.
    ParamSpec {
        name: "lock_at_least_for_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e12 },
        default: "0",
        meaning: "shedlock: lockAtLeastFor: unlock writes lock_until = max(now, createdAt + this) (LockConfiguration.getUnlockTime; default PT0S)",
    },
    // JdbcTemplateLockProvider.Configuration.builder().usingDbTime(): off unless called.
    ParamSpec {
        name: "time_source",
        kind: ParamKind::Choice(&["node", "db"]),
        default: "\"node\"",
        meaning: "shedlock: whose clock lock_until, locked_at and the comparison's now come from: node (ClockProvider.now(), the default) or db (usingDbTime(): UTC_TIMESTAMP(3) in the statement)",
    },
    // SqlStatementsSource.getUnlockStatement: `… WHERE name = :name AND locked_by = :lockedBy`
    // from 7.0 (shedlock-parent-7.9.0 :101-104); `WHERE name = :name` alone in 6.x
    // (shedlock-parent-6.10.0 jdbc-template SqlStatementsSource.java:112-114).
    ParamSpec {
        name: "unlock_by_owner",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "shedlock: unlock updates only the caller's own row (AND locked_by = ?, ShedLock 7.0 and later); false: any row of the name (6.x: a run that outlived lockAtMostFor ends the lock of the node that took over)",
    },
    // Spring Integration DefaultLockRepository.DEFAULT_TTL (`:69 @v6.0.0`, `:83 @v6.5.0`).
    ParamSpec {
        name: "ttl_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "10000",
        meaning: "spring_jdbc: a row whose time column is older than this on the acquirer's clock is taken over (DefaultLockRepository DEFAULT_TTL, 10 s)",
    },
    // Spring Integration 7.0 (first tag v7.0.0): `EXPIRED_AFTER` replaces `CREATED_DATE`.
    ParamSpec {
        name: "expiry_column",
        kind: ParamKind::Choice(&["created_date", "expired_after"]),
        default: "\"created_date\"",
        meaning: "spring_jdbc: created_date (6.x): the row carries the writer's now and is taken over when below the acquirer's now − ttl_ms; expired_after (7.0): the row carries the writer's now + ttl_ms and is taken over when below the acquirer's now",
    },
    // Spring Integration 6.4.0 JdbcLockRegistry.JdbcLock.unlock(): 0 rows deleted throws
    // ConcurrentModificationException ("Lock was released in the store due to expiration").
    ParamSpec {
        name: "release_missing",
        kind: ParamKind::Choice(&["ignore", "error"]),
        default: "\"ignore\"",
        meaning: "table and spring_jdbc: a release whose DELETE finds no row of this owner returns normally (ignore: the model before presets, Spring Integration up to 6.3) or fails (error: ReleaseFailed, Spring Integration 6.4 and later)",
    },
    ParamSpec {
        name: "poll_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e7 },
        default: "200",
        meaning: "sleep between attempts while the lock is taken (no notifications)",
    },
    ParamSpec {
        name: "expire_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "30000",
        meaning: "the cleanup job deletes rows whose update_time is older than this (0: never; a crashed holder's row stays forever)",
    },
    ParamSpec {
        name: "cleanup_every_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e10 },
        default: "10000",
        meaning: "period of the cleanup job on the primary",
    },
    ParamSpec {
        name: "heartbeat_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "0",
        meaning: "the holder refreshes update_time this often (0: never)",
    },
    ParamSpec {
        name: "reentrant",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "on duplicate key, UPDATE count = count + 1 WHERE owner; release decrements and deletes at 0",
    },
    ParamSpec {
        name: "replication",
        kind: ParamKind::Choice(&["none", "async", "semisync"]),
        default: "\"none\"",
        meaning: "no replica; a replica fed asynchronously; or semisynchronously (commit waits for its ack)",
    },
    ParamSpec {
        name: "replication_lag_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "5",
        meaning: "from commit on the primary to the change reaching the replica",
    },
    ParamSpec {
        name: "semisync_timeout_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "10000",
        meaning: "a commit waits this long for the replica's ack, then the primary falls back to async (rpl_semi_sync_source_timeout)",
    },
    ParamSpec {
        name: "failover_after_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e10 },
        default: "10000",
        meaning: "the failover manager promotes the replica after the primary has not answered for this long",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "2",
        meaning: "server time per statement (a commit, including its fsync)",
    },
    // Spring Integration 5.5, JdbcLockRegistry.JdbcLock.unlock(): only a
    // TransientDataAccessException or TransactionTimedOutException is retried; a lost connection
    // (Connector/J CommunicationsException, SQLState 08S01, translated to a non-transient
    // DataAccessResourceFailureException) is thrown to the caller at once.
    ParamSpec {
        name: "release_retry",
        kind: ParamKind::Int { min: 0, max: 1000 },
        default: "0",
        meaning: "times a release whose statement failed (connection reset, timeout) is sent again before unlock reports the error (Spring JdbcLockRegistry: 0)",
    },
    // Spring Integration 5.5, DefaultLockRepository(DataSource): `this(dataSource,
    // UUID.randomUUID().toString())`, one id per repository, i.e. per process; every row it
    // writes carries it as CLIENT_ID.
    ParamSpec {
        name: "owner_scope",
        kind: ParamKind::Choice(&["process", "acquire"]),
        default: "\"process\"",
        meaning: "the owner id is fixed for the life of the process (Spring DefaultLockRepository's id) or drawn afresh per acquisition",
    },
    // MySQL 8.0 reference manual, 17.6.1.6 "AUTO_INCREMENT Handling in InnoDB": since 8.0 the
    // counter's maximum is written to the redo log on each change and survives a restart; in
    // 5.7 it lives in memory and is set to SELECT MAX(id) + 1 when the table is first opened.
    ParamSpec {
        name: "autoinc_persistent",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "the AUTO_INCREMENT counter survives a server crash (MySQL 8.0) or is recomputed as MAX(id)+1 at restart (5.7: an emptied table hands ids, the fencing tokens, out again)",
    },
    // MySQL 8.0 reference manual, 17.14 "InnoDB Startup Options and System Variables":
    // innodb_lock_wait_timeout, default 50 (seconds), minimum 1.
    ParamSpec {
        name: "lock_wait_timeout_ms",
        kind: ParamKind::Number { min: 1000.0, max: 1e10 },
        default: "50000",
        meaning: "select_for_update: a waiter's locking read fails with error 1205 after this long (innodb_lock_wait_timeout, 50 s), and the library tries again",
    },
    // Which real server a live run starts for the row (live/src/backends/db.rs). Spring
    // Integration's and ShedLock's statements exist per dialect; the simulated table is the
    // same for both, so simulation reads this only to refuse what PostgreSQL would not run.
    ParamSpec {
        name: "database",
        kind: ParamKind::Choice(&["mariadb", "postgres"]),
        default: "\"mariadb\"",
        meaning: "the server a live run starts: mariadb (MariaDB 10.11, every mode) or postgres (PostgreSQL 15, spring_jdbc and shedlock only: their libraries' PostgreSQL SQL); simulation is the same for both",
    },
    // MySQL 8.0 reference manual, 14.14 "Locking Functions": GET_LOCK(str, timeout) waits up to
    // timeout seconds for the lock and returns 0 when it runs out; the argument has no default.
    // 0 keeps the try-and-poll pattern (GET_LOCK(name, 0) every poll_ms).
    ParamSpec {
        name: "get_lock_timeout_s",
        kind: ParamKind::Number { min: 0.0, max: 1e6 },
        default: "0",
        meaning: "get_lock: GET_LOCK's timeout argument; > 0: the request waits in the server and is granted about a round trip after the holder's RELEASE_LOCK (0 again after the timeout: the library sleeps poll_ms and asks again); 0: poll every poll_ms",
    },
];

impl Model for Db {
    type Protocol = Db;

    fn name(&self) -> &'static str {
        "db"
    }

    fn summary(&self) -> &'static str {
        "a MySQL lock row (INSERT on a unique name, poll, cleanup job, heartbeat) or GET_LOCK; async or semisync replica with MHA-style failover; token = auto-increment id"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let cfg = Config::from_params(params, workload.clients);
        let mut notes = Vec::new();
        if cfg.library != Library::Locksim {
            notes.push(format!(
                "client = \"{}\" sets mode, ttl_ms, poll_ms, owner_scope, reentrant, release_retry, heartbeat_ms, expire_ms, expiry_column and release_missing where the scenario does not (now: mode = {}, expiry_column = {}, release_missing = {}); a value the scenario sets is kept",
                cfg.library.name(),
                cfg.mode.name(),
                cfg.expiry.name(),
                if cfg.release_missing_fails { "error" } else { "ignore" },
            ));
        }
        if cfg.mode == Mode::SpringJdbc {
            notes.push(
                "spring_jdbc: expire_ms, cleanup_every_ms and heartbeat_ms do not apply (the library runs no cleanup job and renews only when the application calls renewLock, not modelled); no fencing token (INT_LOCK has none); the acquire transaction runs serially in the server, so SERIALIZABLE (6.0-6.1) and READ_COMMITTED (6.2 and later) behave alike here (a serialization failure, which Spring retries as transient, never happens); REGION is one value for every client".into(),
            );
        }
        if cfg.mode == Mode::ShedLock {
            notes.push(
                "shedlock: expire_ms, cleanup_every_ms, heartbeat_ms, poll_ms and reentrant do not apply (one try per run, no extension: KeepAliveLockProvider is not modelled); no fencing token; locked_by is the client's name (one JVM per host); the clients' cron fires on each one's wall clock with no scheduler delay".into(),
            );
            if workload.schedule.is_none() {
                notes.push("shedlock without [workload] kind = \"scheduled\": each acquisition is one try, and a taken lock fails it (the loop thinks and tries again)".into());
            }
        }
        let get_lock = cfg.mode == Mode::GetLock;
        if cfg.mode == Mode::SelectForUpdate {
            notes.push(
                "select_for_update: the lock rows exist beforehand; expire_ms, cleanup_every_ms and heartbeat_ms do not apply (the lock lives as long as the transaction); no fencing token; waiters are granted in arrival order (InnoDB's CATS scheduling is not modelled)"
                    .into(),
            );
            notes.push(
                "select_for_update: a paused holder keeps its transaction open for as long as the pause (wait_timeout, 8 h, is beyond the run); a lost client machine likewise"
                    .into(),
            );
        }
        if workload.reentry > 0.0 && !cfg.reentrant {
            notes.push("reentrant = false: nested acquisitions are skipped".into());
        }
        if get_lock {
            notes.push(
                "get_lock: expire_ms, cleanup_every_ms and heartbeat_ms do not apply (the lock lives as long as the session); no fencing token"
                    .into(),
            );
            notes.push(
                "get_lock: a killed client process's session ends when the server sees the reset; a client machine that is lost (crash mode = machine) leaves its session, and its lock, until wait_timeout (8 h) or TCP keepalive (2 h 11 min), beyond the run"
                    .into(),
            );
        }
        if cfg.replicated() {
            notes.push(
                "after a failover the old primary is demoted, not rejoined as a replica, so a second failover has no candidate".into(),
            );
        }
        notes
    }

    fn validate(&self, params: &Params, workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let cfg = Config::from_params(params, workload.clients);
        let mut problems = Vec::new();
        let mode = cfg.mode.name();
        if cfg.postgres && !matches!(cfg.mode, Mode::SpringJdbc | Mode::ShedLock) {
            problems.push(ParamProblem {
                key: "database".into(),
                message: format!(
                    "database = \"postgres\" runs mode = \"spring_jdbc\" or \"shedlock\" (their libraries' PostgreSQL SQL); \
mode = \"{mode}\" is MySQL's (use database = \"mariadb\", or the postgres model for advisory locks)"
                ),
            });
        }
        if cfg.postgres && cfg.replicated() {
            problems.push(ParamProblem {
                key: "replication".into(),
                message: "database = \"postgres\" is one server (the replica and failover manager are MySQL's); use replication = \"none\"".into(),
            });
        }
        if cfg.mode == Mode::ShedLock && cfg.replicated() {
            problems.push(ParamProblem {
                key: "replication".into(),
                message: "mode = \"shedlock\" runs on one server here (its table is not replicated in this model); use replication = \"none\"".into(),
            });
        }
        problems
    }

    fn fenced(&self, params: &Params) -> bool {
        config_of(params).mode == Mode::Table
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        config_of(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Every link is a TCP connection; server-0 leads until a failover.
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Db> {
        Config::from_params(params, workload.clients).cluster()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::model::ParamValue;

    /// Every parameter at its schema default, and `overrides` set as a scenario sets them.
    fn params(overrides: &[(&str, &str)]) -> Params {
        let mut p = Params::default();
        for spec in PARAMS {
            let v = match &spec.kind {
                ParamKind::Choice(_) => ParamValue::Str(spec.default.trim_matches('"').to_string()),
                ParamKind::Bool => ParamValue::Bool(spec.default == "true"),
                ParamKind::Int { .. } => ParamValue::Int(spec.default.parse().expect("int")),
                _ => ParamValue::Num(spec.default.parse().expect("number")),
            };
            p.values.insert(spec.name.to_string(), v);
        }
        for (key, choice) in overrides {
            p.set_explicit(key, ParamValue::Str(choice.to_string()));
        }
        p
    }

    fn choices(key: &str) -> &'static [&'static str] {
        match PARAMS.iter().find(|s| s.name == key).map(|s| &s.kind) {
            Some(ParamKind::Choice(c)) => c,
            other => panic!("{key}: {other:?}"),
        }
    }

    /// The notes and checks quote `mode` and `expiry_column` from the typed configuration: each
    /// choice reads into a variant whose name is the choice again.
    #[test]
    fn every_choice_reads_into_the_variant_of_its_name() {
        for &mode in choices("mode") {
            assert_eq!(Config::from_params(&params(&[("mode", mode)]), 1).mode.name(), mode);
        }
        for &column in choices("expiry_column") {
            assert_eq!(Config::from_params(&params(&[("expiry_column", column)]), 1).expiry.name(), column);
        }
    }

    /// The preset applies inside `from_params`: `spring-jdbc-7` gives Spring's row and its column.
    #[test]
    fn the_configuration_has_the_preset_applied() {
        let cfg = Config::from_params(&params(&[("client", "spring-jdbc-7")]), 2);
        assert_eq!(
            (cfg.library, cfg.mode, cfg.expiry, cfg.clients),
            (Library::Spring7, Mode::SpringJdbc, Expiry::ExpiredAfter, 2)
        );
        assert!(cfg.release_missing_fails);
        let explicit = Config::from_params(&params(&[("client", "spring-jdbc-7"), ("mode", "table")]), 2);
        assert_eq!(explicit.mode, Mode::Table, "a mode the scenario sets is kept");
    }
}
