//! `redis`: one Redis primary, optional replicas and Sentinel, and a lock library that is either
//! the redis.io single-instance pattern or Redisson's `lock()` with its watchdog.
//!
//! Module map:
//! - [`keyspace`]: the keyspace with wall-clock PX expiry and the lock commands and scripts
//! - [`command_loop`]: the single-threaded command loop (`service_ms` per command)
//! - [`persistence`]: RDB snapshots and the AOF, and what a restart loads per kind of crash
//!   (also Redlock's masters': one persistence model for every Redis server of the crate)
//! - [`protocol`]: every message (commands, pub/sub, replication stream, Sentinel) and every timer
//! - [`server`]: one Redis server: single-threaded service, active expiry, replication with lag,
//!   `WAIT`, persistence, role changes
//! - [`sentinel`]: Sentinel: SDOWN, ODOWN with `quorum`, leader election per epoch, promotion,
//!   reconfiguration, client notification
//! - [`client`]: the lock library (plain pattern or Redisson), following Sentinel's announcements
//! - [`library`]: the `client` preset (Redisson and redis-py by version): each library's defaults
//!   and behaviours, cited; `locksim-1` keeps the model's own settings
//!
//! Sources: redis.io "Distributed Locks with Redis" (the single-instance pattern and "Why
//! failover-based implementations are not enough"), the `WAIT` and `SET` command pages, the Redis
//! source (`db.c` expiry, `expire.c` active cycle, `replication.c`, `sentinel.c`), and Redisson
//! (`RedissonLock`, `RedissonBaseLock`, `RedissonFencedLock`, `renewal/LockTask`,
//! `renewal/RenewalTask`, `Config`), and for the two-command forms of the plain pattern
//! (`acquire = "setnx_then_expire"`, `unlock = "get_then_del"`) J. Carlson, "Redis in Action"
//! (sections 6.2.3 and 6.2.5). Each module's header says what it follows.
//!
//! Every link is a TCP connection (client↔server, the replication link, Sentinel's links), so
//! links are ordered (`ordered_links`): the replication stream relies on it, and an unlock sent
//! after a lock request never overtakes it.

pub mod client;
pub mod command_loop;
mod fingerprint;
pub mod keyspace;
pub mod library;
pub mod persistence;
pub mod protocol;
pub mod sentinel;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::setup::WorkloadSpec;

use crate::params::ParamReader;
use client::{
    AcquireMode, ClientConfig, NoSync, RedisLockClient, RenewalError, ReplicaCount, ResendWritten, RetryDelay,
    UnlockMode,
};
use library::LIBRARIES;
use persistence::Persistence;
use sentinel::{Sentinel, SentinelConfig};
use server::{RedisServer, ServerConfig};

/// The `redis` model.
pub struct Redis;

/// The `redis` model, as [`registry`](crate::registry) lists it.
pub static REDIS: Redis = Redis;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"redis-py-8\"",
        meaning: "the lock library and version the clients run (Redisson 3.17 … 4.7, redis-py 5, 6, 8); it sets every library-dependent parameter the scenario does not set (docs/models.md lists them); unset: the newest stable release, redis-py-8 for the plain pattern (no WAIT, no TTL unless ttl_ms is given, no token), redisson-4.7 when the row sets watchdog = true; locksim-1: the model as it was before presets, a mix of versions (see docs/libraries.md)",
    },
    ParamSpec {
        name: "ttl_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "30000",
        meaning: "the lock key's PX time to live; with the watchdog, Redisson's lease (lockWatchdogTimeout); 0 (plain pattern with set_nx_px only): no expiry, SET NX without PX (redis-py's timeout=None)",
    },
    ParamSpec {
        name: "unlock",
        kind: ParamKind::Choice(&["compare_and_delete", "del", "get_then_del"]),
        default: "\"compare_and_delete\"",
        meaning: "release by the compare-and-delete script (Redisson: its owner-checked unlock script), by a plain DEL that deletes whoever's lock is there (Redisson: forceUnlock), or (plain pattern) by GET and, if it answers our value, a separate DEL, which deletes another client's lock taken in between (the race the redis.io script and Redis in Action 6.2.3's WATCH/MULTI release_lock close)",
    },
    ParamSpec {
        name: "release_missing",
        kind: ParamKind::Choice(&["ignore", "error"]),
        default: "\"ignore\"",
        meaning: "plain pattern: a release that finds the lock no longer ours (the compare-and-delete script answers 0: the key expired or another client holds it) returns as a release (ignore), or fails, counted in failed_releases (error: redis-py's Lock.release() raises LockNotOwnedError); Redisson's unlock always fails it",
    },
    ParamSpec {
        name: "acquire",
        kind: ParamKind::Choice(&["set_nx_px", "setnx_then_expire"]),
        default: "\"set_nx_px\"",
        meaning: "plain pattern: one SET NX PX (redis.io, Redis 2.6.12+), or SETNX and then a separate PEXPIRE (Redis in Action 6.2.5: a client crashing between the two leaves a key that never expires)",
    },
    ParamSpec {
        name: "retry_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e7 },
        default: "{ uniform = [50, 250] }",
        meaning: "plain pattern: wait after a refused SET NX before trying again (the watchdog mode waits for the unlock message or the TTL instead)",
    },
    ParamSpec {
        name: "watchdog",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "Redisson lock(): reentrant hash lock, lease renewed every lease/3 while held, waiters woken by pub/sub",
    },
    ParamSpec {
        name: "replicas",
        kind: ParamKind::Int { min: 0, max: 16 },
        default: "0",
        meaning: "replicas of the primary (server-1 …), fed asynchronously; with replicas, Sentinel runs",
    },
    ParamSpec {
        name: "replication_lag_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e7 },
        default: "5",
        meaning: "how long a write waits in the primary's output buffer before it leaves for the replicas (lost if the primary crashes first)",
    },
    ParamSpec {
        name: "sentinels",
        kind: ParamKind::Int { min: 1, max: 15 },
        default: "3",
        meaning: "Sentinel processes (sentinel-0 …) when replicas > 0",
    },
    ParamSpec {
        name: "quorum",
        kind: ParamKind::Int { min: 1, max: 15 },
        default: "2",
        meaning: "Sentinels that must see the primary down (ODOWN); the failover leader also needs a majority of all Sentinels",
    },
    ParamSpec {
        name: "down_after_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "30000",
        meaning: "down-after-milliseconds: a Sentinel calls an instance subjectively down after this long without a valid reply",
    },
    ParamSpec {
        name: "replica_ack",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "Redisson checkLockSyncedSlaves (Config: true by default since it was added in 3.17.0; slavesSyncTimeout 1000 ms): WAIT for the available replicas (1000 ms) after acquiring; none acknowledged: fail and unlock. Applies to the plain pattern too: false is the redis.io pattern, which does not WAIT",
    },
    ParamSpec {
        name: "fencing_counter",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "the acquiring script INCRs a token key on the same primary (RedissonFencedLock): replicated asynchronously, so it can go back after a failover",
    },
    ParamSpec {
        name: "persistence",
        kind: ParamKind::Choice(Persistence::CHOICES),
        default: "\"rdb\"",
        meaning: "what a restarted server loads: nothing; the last RDB snapshot (stock redis.conf: save 3600 1 300 100 60 10000, appendonly no); the AOF with appendfsync everysec (a killed process loses nothing, a lost machine the last second); or always (nothing lost)",
    },
    ParamSpec {
        name: "min_replicas_to_write",
        kind: ParamKind::Int { min: 0, max: 16 },
        default: "0",
        meaning: "min-replicas-to-write (redis.conf 7.x, off by default): a primary with fewer replicas that acknowledged within min_replicas_max_lag_ms refuses writes with NOREPLICAS (an error to the client)",
    },
    ParamSpec {
        name: "min_replicas_max_lag_ms",
        kind: ParamKind::Number { min: 1000.0, max: 1e9 },
        default: "10000",
        meaning: "min-replicas-max-lag (redis.conf 7.x: 10 seconds; Redis counts whole seconds, so it is rounded down to seconds)",
    },
    ParamSpec {
        name: "timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "3000",
        meaning: "Redisson timeout: how long a sent command waits for its reply before the attempt fails (BaseConfig, Redisson 3.x)",
    },
    ParamSpec {
        name: "retry_attempts",
        kind: ParamKind::Int { min: 0, max: 100 },
        default: "3",
        meaning: "Redisson retryAttempts: a command whose attempt timed out or whose connection was reset is sent again this many times, then the call fails (BaseConfig; RedisExecutor)",
    },
    ParamSpec {
        name: "retry_interval_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "1500",
        meaning: "Redisson retryInterval: the wait before an attempt is sent again (BaseConfig, Redisson 3.x)",
    },
    ParamSpec {
        name: "retry_delay",
        kind: ParamKind::Choice(&["constant", "equal_jitter", "exp_jitter"]),
        default: "\"constant\"",
        meaning: "the wait before retry n: constant retry_interval_ms (Redisson up to 3.47); equal_jitter: d = min(retry_delay_base_ms × 2^(n-1), retry_delay_max_ms), d/2 + uniform[0, d/2] (Redisson 3.48+ EqualJitterDelay); exp_jitter: uniform[0, min(retry_delay_max_ms, retry_delay_base_ms × 2^n)] (redis-py ExponentialWithJitterBackoff); drawn from the client's own random stream",
    },
    ParamSpec {
        name: "retry_delay_base_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "1000",
        meaning: "retry_delay equal_jitter or exp_jitter: the base delay",
    },
    ParamSpec {
        name: "retry_delay_max_ms",
        kind: ParamKind::Number { min: 0.0, max: 1e9 },
        default: "2000",
        meaning: "retry_delay equal_jitter or exp_jitter: the cap",
    },
    ParamSpec {
        name: "renewal_error",
        kind: ParamKind::Choice(&["reschedule", "stop"]),
        default: "\"reschedule\"",
        meaning: "the watchdog after a renewal that failed (an error reply, no reply after the retries, no replica synced): reschedule it lease/3 later (Redisson 3.44+ RenewalTask) or stop renewing for good (Redisson up to 3.43: the entry leaves EXPIRATION_RENEWAL_MAP; the key expires one lease after the last renewal while the holder goes on)",
    },
    ParamSpec {
        name: "renewal_wait",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "the watchdog's renewal goes through the synced eval like the acquisition: with replica_ack and available replicas it carries WAIT, and no replica acknowledging is a renewal error (Redisson, every version read)",
    },
    ParamSpec {
        name: "resend_written",
        kind: ParamKind::Choice(&["all", "batch_only"]),
        default: "\"all\"",
        meaning: "which commands are sent again after a timeout or reset: all; or batch_only (Redisson 3.37+ evalWriteSyncedNoRetryAsync): the lock and unlock scripts already written on a live connection are not resent unless they went as the script + WAIT batch (replicas and replica_ack); a command sent on a connection known closed (refused) is retried either way",
    },
    ParamSpec {
        name: "readonly_retry",
        kind: ParamKind::Bool,
        default: "false",
        meaning: "a READONLY reply is retried after the retry delay like a failed attempt, up to retry_attempts, to the primary known then (Redisson 3.27.1+; redis-py 6+ as a ConnectionError); false: the call fails at once",
    },
    ParamSpec {
        name: "replica_count",
        kind: ParamKind::Choice(&["sentinel_view", "info_each_call", "info_cached", "info_cached_any_change"]),
        default: "\"sentinel_view\"",
        meaning: "where the replica count for WAIT comes from: every replica Sentinel did not report down (Redisson up to 3.18.0 reads its own Sentinel view); the primary's INFO REPLICATION connected_slaves asked before every call (3.18.1+); the same cached per client and forgotten only when a WAIT answers fewer (3.27.0+: once 0 is cached, as right after a failover, it never WAITs again) or any other count (3.46.0+)",
    },
    ParamSpec {
        name: "no_sync",
        kind: ParamKind::Choice(&["unlock_fail", "fail_keep", "unlock_retry"]),
        default: "\"unlock_fail\"",
        meaning: "with replica_ack, an acquisition whose WAIT no replica acknowledged (\"None of slaves were synced\"): unlock the key just taken and fail (the model before presets); fail and leave the key, which expires one lease later with no watchdog (Redisson 3.17.x, 3.25.0-3.46.0); or unlock and run the acquisition again after the retry delay, up to retry_attempts times, then fail (Redisson 3.20.1-3.24.x, 3.47.0 and later)",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "a server's processing time per command (single-threaded: commands queue)",
    },
];

/// Every parameter, read once, after the `client` preset has filled what the scenario left unset
/// ([`library::resolve`]). Times stay in the scenario's milliseconds (the checks and notes quote
/// them); [`RedisConfig::client_config`], [`RedisConfig::server_config`] and
/// [`RedisConfig::sentinel_config`] convert them for the nodes.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// The preset that ran ([`library::client`]: `client`, or the newest Redisson for a watchdog row).
    pub client: String,
    /// `ttl_ms`: the lock key's PX (the watchdog's lease); 0: no expiry.
    pub ttl_ms: f64,
    /// `unlock`.
    pub unlock: UnlockMode,
    /// `release_missing = "error"`.
    pub release_missing_fails: bool,
    /// `acquire`.
    pub acquire: AcquireMode,
    /// `retry_ms`: the plain pattern's wait after a refused SET NX.
    pub retry_ms: Dist,
    /// `watchdog`: Redisson's lock().
    pub watchdog: bool,
    /// `replicas` of the primary.
    pub replicas: usize,
    /// `replication_lag_ms`.
    pub replication_lag_ms: Dist,
    /// `sentinels` (run only with replicas).
    pub sentinels: usize,
    /// `quorum`.
    pub quorum: usize,
    /// `down_after_ms`: down-after-milliseconds.
    pub down_after_ms: f64,
    /// `replica_ack`: Redisson's checkLockSyncedSlaves (WAIT after acquiring).
    pub replica_ack: bool,
    /// `fencing_counter`: the acquiring script INCRs a token key.
    pub fencing_counter: bool,
    /// `persistence`.
    pub persistence: Persistence,
    /// `min_replicas_to_write` (0: off).
    pub min_replicas_to_write: u32,
    /// `min_replicas_max_lag_ms`.
    pub min_replicas_max_lag_ms: f64,
    /// `timeout_ms`: Redisson's timeout.
    pub timeout_ms: f64,
    /// `retry_attempts`: Redisson's retryAttempts.
    pub retry_attempts: u32,
    /// `retry_interval_ms`: Redisson's retryInterval.
    pub retry_interval_ms: f64,
    /// `retry_delay` with `retry_delay_base_ms` and `retry_delay_max_ms`.
    pub retry_delay: RetryDelay,
    /// `renewal_error`.
    pub renewal_error: RenewalError,
    /// `renewal_wait`.
    pub renewal_wait: bool,
    /// `resend_written`.
    pub resend_written: ResendWritten,
    /// `readonly_retry`.
    pub readonly_retry: bool,
    /// `replica_count`.
    pub replica_count: ReplicaCount,
    /// `no_sync`.
    pub no_sync: NoSync,
    /// `service_ms`: a server's processing time per command.
    pub service_ms: Dist,
}

impl RedisConfig {
    /// The configuration the scenario's parameters give, with the `client` preset applied, and
    /// the problems reading them found (a key the schema lacks, a value of another type; see
    /// [`ParamReader`]): [`Model::validate`] reports those, so a row with one never runs.
    pub fn read(params: &Params) -> (RedisConfig, Vec<ParamProblem>) {
        let client = library::client(params).to_string();
        let resolved = library::resolve(params);
        let p = ParamReader::new("redis", PARAMS, &resolved);
        let cfg = RedisConfig {
            client,
            ttl_ms: p.f64("ttl_ms"),
            unlock: match p.str("unlock") {
                "del" => UnlockMode::Del,
                "get_then_del" => UnlockMode::GetThenDel,
                _ => UnlockMode::CompareAndDelete,
            },
            release_missing_fails: p.str("release_missing") == "error",
            acquire: if p.str("acquire") == "setnx_then_expire" {
                AcquireMode::SetNxThenExpire
            } else {
                AcquireMode::SetNxPx
            },
            retry_ms: p.dist("retry_ms"),
            watchdog: p.bool("watchdog"),
            replicas: p.int("replicas") as usize,
            replication_lag_ms: p.dist("replication_lag_ms"),
            sentinels: p.int("sentinels") as usize,
            quorum: p.int("quorum") as usize,
            down_after_ms: p.f64("down_after_ms"),
            replica_ack: p.bool("replica_ack"),
            fencing_counter: p.bool("fencing_counter"),
            persistence: Persistence::parse(p.str("persistence")),
            min_replicas_to_write: p.int("min_replicas_to_write") as u32,
            min_replicas_max_lag_ms: p.f64("min_replicas_max_lag_ms"),
            timeout_ms: p.f64("timeout_ms"),
            retry_attempts: p.int("retry_attempts") as u32,
            retry_interval_ms: p.f64("retry_interval_ms"),
            retry_delay: RetryDelay::parse(
                p.str("retry_delay"),
                p.f64("retry_delay_base_ms"),
                p.f64("retry_delay_max_ms"),
            ),
            renewal_error: RenewalError::parse(p.str("renewal_error")),
            renewal_wait: p.bool("renewal_wait"),
            resend_written: ResendWritten::parse(p.str("resend_written")),
            readonly_retry: p.bool("readonly_retry"),
            replica_count: ReplicaCount::parse(p.str("replica_count")),
            no_sync: NoSync::parse(p.str("no_sync")),
            service_ms: p.dist("service_ms"),
        };
        (cfg, p.problems())
    }

    /// As [`RedisConfig::read`], for a row the parser has validated (its read found nothing).
    pub fn from_params(params: &Params) -> RedisConfig {
        Self::read(params).0
    }

    /// The Sentinels that run: `sentinels` with replicas, none without (nothing to promote).
    pub fn running_sentinels(&self) -> usize {
        if self.replicas > 0 {
            self.sentinels
        } else {
            0
        }
    }

    /// The clients' settings.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            ttl_ms: self.ttl_ms.round() as u64,
            unlock: self.unlock,
            acquire: self.acquire,
            retry_ms: self.retry_ms.clone(),
            watchdog: self.watchdog,
            replica_ack: self.replica_ack,
            fencing: self.fencing_counter,
            servers: 1 + self.replicas,
            sentinels: self.running_sentinels(),
            timeout_ms: self.timeout_ms.round() as u64,
            retry_attempts: self.retry_attempts,
            retry_interval_ms: self.retry_interval_ms.round() as u64,
            retry_delay: self.retry_delay,
            renewal_error: self.renewal_error,
            renewal_wait: self.renewal_wait,
            resend_written: self.resend_written,
            readonly_retry: self.readonly_retry,
            replica_count: self.replica_count,
            release_missing_fails: self.release_missing_fails,
            no_sync: self.no_sync,
        }
    }

    /// A server's settings (every server's: the primary and its replicas run the same).
    pub fn server_config(&self) -> ServerConfig {
        ServerConfig {
            service_ms: self.service_ms.clone(),
            replication_lag_ms: self.replication_lag_ms.clone(),
            persistence: self.persistence,
            min_replicas_to_write: self.min_replicas_to_write,
            // Redis counts min-replicas-max-lag in whole seconds.
            min_replicas_max_lag_s: (self.min_replicas_max_lag_ms / 1000.0).floor() as i64,
            initial_primary: "server-0".into(),
        }
    }

    /// A Sentinel's settings, for a cluster with `clients` clients.
    pub fn sentinel_config(&self, clients: usize) -> SentinelConfig {
        SentinelConfig {
            servers: 1 + self.replicas,
            sentinels: self.sentinels,
            clients,
            quorum: self.quorum,
            down_after_ms: self.down_after_ms,
        }
    }

    /// The service nodes' names and kinds, in the order [`RedisConfig::cluster`] builds them:
    /// `server-0` (the primary) and its replicas, then the Sentinels.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        let mut services: Vec<(String, NodeKind)> =
            (0..=self.replicas).map(|i| (format!("server-{i}"), NodeKind::Server)).collect();
        services.extend((0..self.running_sentinels()).map(|i| (format!("sentinel-{i}"), NodeKind::Sentinel)));
        services
    }

    /// The cluster this configuration runs for `workload`.
    pub fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Redis> {
        let server_cfg = self.server_config();
        let mut services: Vec<Box<dyn Process<Redis>>> = (0..=self.replicas)
            .map(|_| Box::new(RedisServer::new(server_cfg.clone())) as Box<dyn Process<Redis>>)
            .collect();
        let sentinel_cfg = self.sentinel_config(workload.clients);
        for _ in 0..self.running_sentinels() {
            services.push(Box::new(Sentinel::new(sentinel_cfg.clone())));
        }
        let client_cfg = self.client_config();
        let clients = (0..workload.clients)
            .map(|_| Box::new(RedisLockClient::new(client_cfg.clone())) as Box<dyn LockClient<Redis>>)
            .collect();
        Cluster { services, clients }
    }
}

impl Model for Redis {
    type Protocol = Redis;

    fn name(&self) -> &'static str {
        "redis"
    }

    fn summary(&self) -> &'static str {
        "one Redis primary (+ async replicas and Sentinel): redis.io SET NX PX lock (redis-py) or Redisson lock() with the watchdog; an INCR fencing token with fencing_counter (locksim-1; no library preset has one)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let (cfg, problems) = RedisConfig::read(params);
        if !problems.is_empty() {
            return problems;
        }
        let mut problems = Vec::new();
        let given = params;
        let (sentinels, quorum) = (cfg.sentinels, cfg.quorum);
        if quorum > sentinels {
            problems.push(ParamProblem {
                key: "quorum".into(),
                message: format!("quorum = {quorum} is more than the {sentinels} sentinels: the primary could never be objectively down"),
            });
        }
        if cfg.watchdog {
            // Redisson's lock is a hash taken by its own script: neither two-command form applies.
            if cfg.unlock == UnlockMode::GetThenDel {
                problems.push(ParamProblem {
                    key: "unlock".into(),
                    message: "get_then_del is the plain pattern's release (GET of a string value): with watchdog = true (Redisson's hash lock) use compare_and_delete or del".into(),
                });
            }
            if cfg.acquire != AcquireMode::SetNxPx {
                problems.push(ParamProblem {
                    key: "acquire".into(),
                    message: "acquire chooses the plain pattern's command: with watchdog = true Redisson's lock script takes the lock".into(),
                });
            }
        }
        let ttl_ms = cfg.ttl_ms;
        // Where a value came from the preset, the message says so (the scenario did not write it).
        let from_preset = |key: &str| {
            if given.is_explicit(key) {
                String::new()
            } else {
                format!(" (client = \"{}\" sets {key})", library::client(given))
            }
        };
        if ttl_ms < 3.0 && cfg.watchdog {
            problems.push(ParamProblem {
                key: "ttl_ms".into(),
                message: format!(
                    "with the watchdog, ttl_ms is the lease renewed every lease/3 ms: it must be at least 3{}",
                    from_preset("ttl_ms")
                ),
            });
        } else if ttl_ms > 0.0 && ttl_ms < 1.0 {
            problems.push(ParamProblem {
                key: "ttl_ms".into(),
                message: format!(
                    "ttl_ms = {}: use 0 (no expiry) or a number of at least 1",
                    locksim_simulator::scenario::show_number(ttl_ms)
                ),
            });
        } else if ttl_ms == 0.0 && cfg.acquire != AcquireMode::SetNxPx {
            problems.push(ParamProblem {
                key: "ttl_ms".into(),
                message: format!(
                    "ttl_ms = 0 (no expiry) is SET NX without PX: it needs acquire = \"set_nx_px\" (setnx_then_expire would PEXPIRE the key to 0){}",
                    from_preset("ttl_ms")
                ),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let mut notes = Vec::new();
        let cfg = RedisConfig::from_params(params);
        let client = cfg.client.as_str();
        let set: Vec<&str> = library::preset_keys(client).into_iter().filter(|k| !params.is_explicit(k)).collect();
        if !set.is_empty() {
            notes.push(format!("client = \"{client}\" set {} (the scenario's own values are kept)", set.join(", ")));
        }
        if library::is_redisson(client) {
            notes.push(
                "Redisson preset: Sentinel is followed by its announcements (+switch-master, +sdown/-sdown), not polled every second (scanInterval 1000 ms)"
                    .into(),
            );
        }
        let replicas = cfg.replicas;
        let aof = matches!(cfg.persistence, Persistence::EverySec | Persistence::Always);
        if client == "redisson-3.52" && replicas > 0 && aof && cfg.replica_ack {
            notes.push(
                "Redisson 3.46.0-3.52.0 send WAITAOF 1 <replicas> instead of WAIT when the primary has appendonly yes (the grant also waits for the primary's fsync): not modelled, the model sends WAIT"
                    .into(),
            );
        }
        if client.starts_with("redis-py-") && replicas > 0 {
            notes.push(
                "redis-py preset with replicas: redis-py's SentinelConnectionPool asks Sentinel for the primary at each new connection; the model's client follows Sentinel's +switch-master announcements"
                    .into(),
            );
        }
        if cfg.ttl_ms == 0.0 {
            notes.push("ttl_ms = 0: SET NX without PX, the key never expires (redis-py's timeout=None): a crashed or paused holder keeps the lock for ever".into());
        }
        if workload.reentry > 0.0 && !cfg.watchdog {
            notes.push(
                "the plain SET NX lock is not reentrant (a second SET NX by the holder is refused): nested acquisitions are skipped; watchdog = true (Redisson) is reentrant"
                    .into(),
            );
        }
        if cfg.replica_ack && replicas > 0 && !cfg.watchdog {
            notes.push(
                "replica_ack (Redisson's checkLockSyncedSlaves, on by default) also WAITs after the plain pattern's SET NX: the redis.io pattern as published does not (replica_ack = false)"
                    .into(),
            );
        }
        if replicas == 0 && cfg.sentinels != 3 {
            notes.push("sentinels is ignored with replicas = 0 (Sentinel has nothing to promote)".into());
        }
        if replicas > 0 {
            notes.push(
                "Sentinel: INFO is folded into the 1 s PING; the leader announces +switch-master once the promoted replica reports its new role, without waiting for the other replicas' reconfiguration; no TILT mode"
                    .into(),
            );
            notes.push("a replica (re)connecting always gets a full resynchronisation (no partial PSYNC)".into());
        }
        notes
    }

    fn fenced(&self, params: &Params) -> bool {
        RedisConfig::from_params(params).fencing_counter
    }

    fn library(&self, params: &Params) -> Option<String> {
        Some(RedisConfig::from_params(params).client)
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        RedisConfig::from_params(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Every link is a TCP connection (see the module header).
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Redis> {
        RedisConfig::from_params(params).cluster(workload)
    }
}
