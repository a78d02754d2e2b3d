//! `postgres`: PostgreSQL advisory locks (`pg_advisory_lock`, `pg_try_advisory_lock`,
//! `pg_advisory_xact_lock`), on one primary, optionally behind PgBouncer or with a standby that
//! takes over.
//!
//! Module map:
//! - [`locks`]: the advisory lock table of one server (holders per session, waiters in order) and
//!   the `lock_fence` generation table, as pure data structures
//! - [`protocol`]: every message (statements and results on a connection, TCP keepalive probes,
//!   WAL shipping, the restart probe) and every timer
//! - [`server`]: a PostgreSQL server: sessions, advisory locks, keepalives and idle timeouts, WAL
//!   to the standby, the standby's promotion
//! - [`bouncer`]: PgBouncer in `session` or `transaction` pool mode
//! - [`client`]: the client library (libpq and the application's lock calls)
//!
//! ## What is modelled, and after what
//!
//! PostgreSQL 15 documentation, 13.3.5 "Advisory Locks" and 9.27.10 "Advisory Lock Functions":
//! a session-level lock (`pg_advisory_lock`, `pg_try_advisory_lock`) is held "until explicitly
//! released or the session ends"; a transaction-level one (`pg_advisory_xact_lock`) until the
//! transaction commits or rolls back. "If a session already holds a given advisory lock,
//! additional requests by it will always succeed, even if other sessions are awaiting the lock"
//! (the requests stack). `pg_advisory_unlock` of a lock the session does not hold returns false
//! with a warning. The locks live in the server's shared memory: never written to the WAL, so a
//! standby has none of them and a failover drops every one.
//!
//! A session ends when its client closes the connection, when the client's process dies (its OS
//! resets the connection), or when the server's TCP keepalive gives up on a client that vanished
//! silently: `tcp_keepalives_idle`, `_interval`, `_count` (postgresql.conf.sample of REL_15,
//! lines 80-85: 0 "selects the system default"; Linux tcp(7): 7200 s, 75 s, 9), so 2 h 11 min
//! 15 s after the last packet; or on `idle_session_timeout` / `idle_in_transaction_session_timeout`
//! (lines 696-697, both 0: off).
//!
//! PgBouncer 1.18 (doc/config.md of tag pgbouncer_1_18_0): `pool_mode = transaction` hands a
//! server connection to a client for one transaction only (line 94) and reuses idle server
//! connections last-in first-out (`server_round_robin = 0`, line 192), with `default_pool_size`
//! 20 (line 127); `server_reset_query` (`DISCARD ALL`, which includes `pg_advisory_unlock_all()`)
//! runs only in session pooling (`server_reset_query_always = 0`, line 442). So a session lock
//! taken through it stays on whichever server connection ran the call; the next client handed
//! that connection is granted the same lock at once (the session already holds it), and the
//! holder's unlock, run elsewhere, returns false. golang-migrate's users hit this (PR #992, which
//! added a lock-table strategy, `x-lock-strategy`, first in v4.17.1); a transaction-scoped lock
//! (`pg_advisory_xact_lock`, proposed there in PR #908) avoids it.
//!
//! There is no fencing token. An application fences with a `bigint` generation of its own
//! (`fence = "generation"`): after the lock, `UPDATE lock_fence SET generation = generation + 1
//! WHERE key = $1 RETURNING generation`, a committed, replicated row whose value the protected
//! resource checks (it rejects a write whose generation is below one it has seen).
//!
//! Failover (`standby = true`): `server-1` streams the primary's WAL (`replication_lag_ms`) and
//! promotes itself when it has heard nothing from the primary for `failover_after_ms` (Patroni's
//! `ttl`, 30 s: the leader key expires). Clients list both hosts, as libpq's multi-host
//! connection string with `target_session_attrs=read-write` does, and try them in order.

pub mod bouncer;
pub mod client;
mod fingerprint;
pub mod locks;
pub mod protocol;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_SEC};

use bouncer::Bouncer;
use client::PgClient;
use server::PgServer;

/// The `postgres` model.
pub struct Postgres;

/// The `postgres` model, as [`registry`](crate::registry) lists it.
pub static POSTGRES: Postgres = Postgres;

/// How long the lock is held by the server (`scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `pg_advisory_lock` / `pg_try_advisory_lock`: until `pg_advisory_unlock` or the session's end.
    Session,
    /// `BEGIN; SELECT pg_advisory_xact_lock(…)`: until `COMMIT` or `ROLLBACK`.
    Transaction,
}

/// How the library asks for the lock (`acquire`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// The blocking call: waits in the server until the lock is free.
    Wait,
    /// The `try` call: false at once when taken; the application sleeps `poll_ms` and asks again.
    Try,
}

/// What sits between the clients and the primary (`pgbouncer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooler {
    /// Each client has its own server session.
    Direct,
    /// PgBouncer, `pool_mode = session`: one server connection per client connection.
    Session,
    /// PgBouncer, `pool_mode = transaction`: a server connection per transaction.
    Transaction,
}

/// The model's parameters, read once from the scenario ([`Config::from_params`]) in engine units.
#[derive(Clone, Debug)]
pub struct Config {
    /// `scope`.
    pub scope: Scope,
    /// `acquire`.
    pub acquire: Acquire,
    /// `poll_ms`: the application's sleep after a `try` that returned false.
    pub poll_ns: Nanos,
    /// `fence = "generation"`: the application bumps a generation row after each grant.
    pub fence: bool,
    /// `pgbouncer`.
    pub pooler: Pooler,
    /// `pool_size` (PgBouncer's `default_pool_size`).
    pub pool_size: usize,
    /// `standby`: `server-1` streams the WAL and promotes itself.
    pub standby: bool,
    /// `replication_lag_ms`: from a commit on the primary to its WAL reaching the standby.
    pub replication_lag_ns: Nanos,
    /// `failover_after_ms`: the standby promotes itself after this long without the primary.
    pub failover_after_ns: Nanos,
    /// `tcp_keepalives_idle_s`: a silent connection's first probe.
    pub keepalive_idle_ns: Nanos,
    /// `tcp_keepalives_interval_s`: between probes.
    pub keepalive_interval_ns: Nanos,
    /// `tcp_keepalives_count`: unanswered probes before the connection is dead.
    pub keepalive_count: u32,
    /// `idle_session_timeout_ms` (0: off).
    pub idle_session_timeout_ns: Nanos,
    /// `idle_in_transaction_session_timeout_ms` (0: off).
    pub idle_in_transaction_timeout_ns: Nanos,
    /// `service_ms`: the server's time per statement.
    pub service_ms: Dist,
}

impl Config {
    /// The configuration the scenario's parameters give. Every key is in [`PARAMS`] and the
    /// parser has checked each value's type and range, so the reads cannot fail.
    pub fn from_params(params: &Params) -> Config {
        let seconds = |key: &str| ms_to_ns(params.f64(key) * 1000.0);
        Config {
            scope: match params.str("scope") {
                "transaction" => Scope::Transaction,
                _ => Scope::Session,
            },
            acquire: match params.str("acquire") {
                "try" => Acquire::Try,
                _ => Acquire::Wait,
            },
            poll_ns: ms_to_ns(params.f64("poll_ms")),
            fence: params.str("fence") == "generation",
            pooler: match params.str("pgbouncer") {
                "session" => Pooler::Session,
                "transaction" => Pooler::Transaction,
                _ => Pooler::Direct,
            },
            pool_size: params.int("pool_size") as usize,
            standby: params.bool("standby"),
            replication_lag_ns: ms_to_ns(params.f64("replication_lag_ms")),
            failover_after_ns: ms_to_ns(params.f64("failover_after_ms")),
            keepalive_idle_ns: seconds("tcp_keepalives_idle_s"),
            keepalive_interval_ns: seconds("tcp_keepalives_interval_s"),
            keepalive_count: params.int("tcp_keepalives_count") as u32,
            idle_session_timeout_ns: ms_to_ns(params.f64("idle_session_timeout_ms")),
            idle_in_transaction_timeout_ns: ms_to_ns(params.f64("idle_in_transaction_session_timeout_ms")),
            service_ms: params.dist("service_ms"),
        }
    }

    /// How long a client that vanished silently keeps its session: the last packet, then
    /// `idle`, then `count` probes `interval` apart.
    pub fn keepalive_gives_up_after_ns(&self) -> Nanos {
        self.keepalive_idle_ns + self.keepalive_count as Nanos * self.keepalive_interval_ns
    }

    /// The PgBouncer node's name, when there is one (the server after the PostgreSQL servers).
    pub fn bouncer_name(&self) -> Option<&'static str> {
        match (self.pooler, self.standby) {
            (Pooler::Direct, _) => None,
            (_, false) => Some("server-1"),
            (_, true) => Some("server-2"),
        }
    }
}

/// How often the primary tells the standby it is alive (a WAL sender keepalive; Patroni's leader
/// refresh stands behind it), and how often the standby checks.
pub const PRIMARY_BEAT_NS: Nanos = NS_PER_SEC;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "scope",
        kind: ParamKind::Choice(&["session", "transaction"]),
        default: "\"session\"",
        meaning: "session: pg_advisory_lock / pg_try_advisory_lock, held until pg_advisory_unlock or the session ends; transaction: BEGIN; pg_advisory_xact_lock, held until COMMIT (the release) or ROLLBACK (PostgreSQL 15 docs, 13.3.5)",
    },
    ParamSpec {
        name: "acquire",
        kind: ParamKind::Choice(&["wait", "try"]),
        default: "\"wait\"",
        meaning: "wait: the blocking call (waits in the server's lock queue); try: the pg_try_ variant, false at once when taken, asked again after poll_ms",
    },
    ParamSpec {
        name: "poll_ms",
        kind: ParamKind::Number { min: 0.001, max: 1e7 },
        default: "100",
        meaning: "acquire = try: the application's sleep after false (no PostgreSQL default: the caller's loop)",
    },
    ParamSpec {
        name: "fence",
        kind: ParamKind::Choice(&["none", "generation"]),
        default: "\"none\"",
        meaning: "none: grants carry no token (advisory locks have none); generation: after the lock the application runs UPDATE lock_fence SET generation = generation + 1 RETURNING generation (in the lock's transaction for scope = transaction) and writes with it",
    },
    // PgBouncer 1.18 doc/config.md: pool_mode (session default, transaction), server_round_robin
    // 0 (LIFO), server_reset_query DISCARD ALL only in session pooling.
    ParamSpec {
        name: "pgbouncer",
        kind: ParamKind::Choice(&["none", "session", "transaction"]),
        default: "\"none\"",
        meaning: "none: clients connect to PostgreSQL; session / transaction: through PgBouncer 1.18 with that pool_mode (transaction: a server connection per transaction, reused LIFO, no reset query)",
    },
    ParamSpec {
        name: "pool_size",
        kind: ParamKind::Int { min: 1, max: 10_000 },
        default: "20",
        meaning: "PgBouncer's server connections for the pool (default_pool_size, 20)",
    },
    ParamSpec {
        name: "standby",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "server-1 is a streaming standby that promotes itself after failover_after_ms without the primary; clients list both hosts (libpq target_session_attrs=read-write)",
    },
    ParamSpec {
        name: "replication_lag_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "5",
        meaning: "standby: from a commit on the primary to its WAL being applied on the standby (asynchronous streaming replication)",
    },
    // Patroni docs, "Global/Universal": ttl 30 (seconds), the leader key's TTL.
    ParamSpec {
        name: "failover_after_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e10 },
        default: "30000",
        meaning: "standby: promotes itself after this long without hearing from the primary (Patroni ttl, 30 s)",
    },
    // postgresql.conf.sample (REL_15) lines 80-85: 0 selects the system default; Linux tcp(7):
    // tcp_keepalive_time 7200, tcp_keepalive_intvl 75, tcp_keepalive_probes 9.
    ParamSpec {
        name: "tcp_keepalives_idle_s",
        kind: ParamKind::Number { min: 1.0, max: 1e7 },
        default: "7200",
        meaning: "a client connection silent this long gets its first keepalive probe (tcp_keepalives_idle, 0 = the OS default: Linux 7200 s)",
    },
    ParamSpec {
        name: "tcp_keepalives_interval_s",
        kind: ParamKind::Number { min: 1.0, max: 1e7 },
        default: "75",
        meaning: "between unanswered keepalive probes (tcp_keepalives_interval, 0 = the OS default: Linux 75 s)",
    },
    ParamSpec {
        name: "tcp_keepalives_count",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "9",
        meaning: "unanswered probes after which the server drops the connection and ends the session, releasing its locks (tcp_keepalives_count, 0 = the OS default: Linux 9)",
    },
    // postgresql.conf.sample (REL_15) lines 696-697: both "0 is disabled".
    ParamSpec {
        name: "idle_session_timeout_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "0",
        meaning: "a session idle outside a transaction this long is terminated, its session locks with it (idle_session_timeout; 0: off)",
    },
    ParamSpec {
        name: "idle_in_transaction_session_timeout_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e10 },
        default: "0",
        meaning: "a session idle inside a transaction this long is terminated, its transaction rolled back (idle_in_transaction_session_timeout; 0: off)",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "server time per statement",
    },
];

impl Model for Postgres {
    type Protocol = Postgres;

    fn name(&self) -> &'static str {
        "postgres"
    }

    fn summary(&self) -> &'static str {
        "PostgreSQL advisory locks (session or transaction scope, blocking or try), optionally through PgBouncer or with a self-promoting standby; no token (an application generation row fences)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let cfg = Config::from_params(params);
        let mut problems = Vec::new();
        if cfg.standby && cfg.pooler != Pooler::Direct {
            problems.push(ParamProblem {
                key: "pgbouncer".into(),
                message: "PgBouncer in front of a standby pair is not modelled (it would need its own failover): set pgbouncer = \"none\" or standby = false".into(),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<String> {
        let cfg = Config::from_params(params);
        let mut notes = vec![
            "the client's own keepalive (libpq keepalives, OS defaults) is not modelled: a client whose server vanished without a reset (crash mode = machine, a cut link) waits for an answer for ever".to_string(),
            "keepalive probes are answered by the client node as a whole: a paused client (SIGSTOP, GC) answers none here, while a real kernel would; only machine-level silence should outlast tcp_keepalives_*".to_string(),
        ];
        if cfg.standby {
            notes.push("a promoted standby has no standby of its own; an old primary that restarts asks server-1 and stays read-only if it was promoted (Patroni would rewind it and rejoin it); a primary merely cut off from the standby keeps serving (split brain; Patroni's demotion on losing its DCS key is not modelled)".into());
        }
        if cfg.pooler == Pooler::Transaction {
            notes.push("pgbouncer = transaction: server connections are opened as needed up to pool_size and never closed while healthy (server_idle_timeout, 600 s, not modelled)".into());
        }
        notes
    }

    fn fenced(&self, params: &Params) -> bool {
        Config::from_params(params).fence
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        let cfg = Config::from_params(params);
        let mut names = vec![("server-0".to_string(), NodeKind::Server)];
        if cfg.standby {
            names.push(("server-1".to_string(), NodeKind::Server));
        }
        if let Some(bouncer) = cfg.bouncer_name() {
            names.push((bouncer.to_string(), NodeKind::Server));
        }
        names
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Every link is a TCP connection; the primary leads.
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Postgres> {
        let cfg = Config::from_params(params);
        let mut services: Vec<Box<dyn Process<Postgres>>> = vec![Box::new(PgServer::new(cfg.clone(), 0))];
        if cfg.standby {
            services.push(Box::new(PgServer::new(cfg.clone(), 1)));
        }
        if cfg.pooler != Pooler::Direct {
            services.push(Box::new(Bouncer::new(cfg.clone())));
        }
        let clients = (0..workload.clients)
            .map(|i| Box::new(PgClient::new(cfg.clone(), i)) as Box<dyn LockClient<Postgres>>)
            .collect();
        Cluster { services, clients }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::model::ParamValue;

    fn defaults() -> Params {
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
        p
    }

    #[test]
    fn defaults_give_linux_keepalive_of_two_hours_eleven_minutes() {
        let cfg = Config::from_params(&defaults());
        assert_eq!(cfg.keepalive_gives_up_after_ns(), (7200 + 9 * 75) * NS_PER_SEC);
        assert_eq!(cfg.idle_session_timeout_ns, 0);
        assert_eq!(cfg.idle_in_transaction_timeout_ns, 0);
        assert_eq!(
            (cfg.scope, cfg.acquire, cfg.pooler, cfg.fence),
            (Scope::Session, Acquire::Wait, Pooler::Direct, false)
        );
    }

    #[test]
    fn bouncer_follows_the_postgres_servers() {
        let mut p = defaults();
        p.values.insert("pgbouncer".into(), ParamValue::Str("transaction".into()));
        let names: Vec<String> = POSTGRES.services(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["server-0", "server-1"]);
        p.values.insert("standby".into(), ParamValue::Bool(true));
        assert_eq!(POSTGRES.validate(&p, &WorkloadSpec::default()).len(), 1);
    }
}
