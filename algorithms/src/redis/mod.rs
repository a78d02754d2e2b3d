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
pub mod keyspace;
pub mod library;
pub mod persistence;
pub mod protocol;
pub mod sentinel;
pub mod server;

use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process};
use locksim_simulator::setup::WorkloadSpec;

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

impl Redis {
    /// The clients' settings: the parameters after the `client` preset ([`library::resolve`]).
    fn client_config(params: &Params) -> ClientConfig {
        let params = &library::resolve(params);
        let replicas = params.int("replicas") as usize;
        ClientConfig {
            ttl_ms: params.f64("ttl_ms").round() as u64,
            unlock: match params.str("unlock") {
                "del" => UnlockMode::Del,
                "get_then_del" => UnlockMode::GetThenDel,
                _ => UnlockMode::CompareAndDelete,
            },
            acquire: if params.str("acquire") == "setnx_then_expire" {
                AcquireMode::SetNxThenExpire
            } else {
                AcquireMode::SetNxPx
            },
            retry_ms: params.dist("retry_ms"),
            watchdog: params.bool("watchdog"),
            replica_ack: params.bool("replica_ack"),
            fencing: params.bool("fencing_counter"),
            servers: 1 + replicas,
            sentinels: if replicas > 0 { params.int("sentinels") as usize } else { 0 },
            timeout_ms: params.f64("timeout_ms").round() as u64,
            retry_attempts: params.int("retry_attempts") as u32,
            retry_interval_ms: params.f64("retry_interval_ms").round() as u64,
            retry_delay: RetryDelay::parse(
                params.str("retry_delay"),
                params.f64("retry_delay_base_ms"),
                params.f64("retry_delay_max_ms"),
            ),
            renewal_error: RenewalError::parse(params.str("renewal_error")),
            renewal_wait: params.bool("renewal_wait"),
            resend_written: ResendWritten::parse(params.str("resend_written")),
            readonly_retry: params.bool("readonly_retry"),
            replica_count: ReplicaCount::parse(params.str("replica_count")),
            release_missing_fails: params.str("release_missing") == "error",
            no_sync: NoSync::parse(params.str("no_sync")),
        }
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
        let mut problems = Vec::new();
        let given = params;
        let params = &library::resolve(params);
        let sentinels = params.int("sentinels");
        let quorum = params.int("quorum");
        if quorum > sentinels {
            problems.push(ParamProblem {
                key: "quorum".into(),
                message: format!("quorum = {quorum} is more than the {sentinels} sentinels: the primary could never be objectively down"),
            });
        }
        if params.bool("watchdog") {
            // Redisson's lock is a hash taken by its own script: neither two-command form applies.
            if params.str("unlock") == "get_then_del" {
                problems.push(ParamProblem {
                    key: "unlock".into(),
                    message: "get_then_del is the plain pattern's release (GET of a string value): with watchdog = true (Redisson's hash lock) use compare_and_delete or del".into(),
                });
            }
            if params.str("acquire") != "set_nx_px" {
                problems.push(ParamProblem {
                    key: "acquire".into(),
                    message: "acquire chooses the plain pattern's command: with watchdog = true Redisson's lock script takes the lock".into(),
                });
            }
        }
        let ttl_ms = params.f64("ttl_ms");
        // Where a value came from the preset, the message says so (the scenario did not write it).
        let from_preset = |key: &str| {
            if given.is_explicit(key) {
                String::new()
            } else {
                format!(" (client = \"{}\" sets {key})", library::client(given))
            }
        };
        if ttl_ms < 3.0 && params.bool("watchdog") {
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
        } else if ttl_ms == 0.0 && params.str("acquire") != "set_nx_px" {
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
        let client = library::client(params);
        let set: Vec<&str> = library::preset_keys(client).into_iter().filter(|k| !params.is_explicit(k)).collect();
        let params = &library::resolve(params);
        if !set.is_empty() {
            notes.push(format!("client = \"{client}\" set {} (the scenario's own values are kept)", set.join(", ")));
        }
        if library::is_redisson(client) {
            notes.push(
                "Redisson preset: Sentinel is followed by its announcements (+switch-master, +sdown/-sdown), not polled every second (scanInterval 1000 ms)"
                    .into(),
            );
        }
        let replicas = params.int("replicas");
        let aof = matches!(params.str("persistence"), "everysec" | "always");
        if client == "redisson-3.52" && replicas > 0 && aof && params.bool("replica_ack") {
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
        if params.f64("ttl_ms") == 0.0 {
            notes.push("ttl_ms = 0: SET NX without PX, the key never expires (redis-py's timeout=None): a crashed or paused holder keeps the lock for ever".into());
        }
        if workload.reentry > 0.0 && !params.bool("watchdog") {
            notes.push(
                "the plain SET NX lock is not reentrant (a second SET NX by the holder is refused): nested acquisitions are skipped; watchdog = true (Redisson) is reentrant"
                    .into(),
            );
        }
        if params.bool("replica_ack") && replicas > 0 && !params.bool("watchdog") {
            notes.push(
                "replica_ack (Redisson's checkLockSyncedSlaves, on by default) also WAITs after the plain pattern's SET NX: the redis.io pattern as published does not (replica_ack = false)"
                    .into(),
            );
        }
        if replicas == 0 && params.int("sentinels") != 3 {
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
        library::resolve(params).bool("fencing_counter")
    }

    fn library(&self, params: &Params) -> Option<String> {
        Some(library::client(params).to_string())
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        let replicas = params.int("replicas") as usize;
        let mut services: Vec<(String, NodeKind)> =
            (0..=replicas).map(|i| (format!("server-{i}"), NodeKind::Server)).collect();
        // Sentinel runs only with replicas: it has nothing to promote otherwise.
        if replicas > 0 {
            let sentinels = params.int("sentinels") as usize;
            services.extend((0..sentinels).map(|i| (format!("sentinel-{i}"), NodeKind::Sentinel)));
        }
        services
    }

    fn topology(&self, _params: &Params) -> Topology {
        // Every link is a TCP connection (see the module header).
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Redis> {
        let replicas = params.int("replicas") as usize;
        let server_cfg = ServerConfig {
            service_ms: params.dist("service_ms"),
            replication_lag_ms: params.dist("replication_lag_ms"),
            persistence: Persistence::parse(params.str("persistence")),
            min_replicas_to_write: params.int("min_replicas_to_write") as u32,
            min_replicas_max_lag_s: (params.f64("min_replicas_max_lag_ms") / 1000.0).floor() as i64,
            initial_primary: "server-0".into(),
        };
        let mut services: Vec<Box<dyn Process<Redis>>> =
            (0..=replicas).map(|_| Box::new(RedisServer::new(server_cfg.clone())) as Box<dyn Process<Redis>>).collect();
        if replicas > 0 {
            let sentinels = params.int("sentinels") as usize;
            let cfg = SentinelConfig {
                servers: 1 + replicas,
                sentinels,
                clients: workload.clients,
                quorum: params.int("quorum") as usize,
                down_after_ms: params.f64("down_after_ms"),
            };
            for _ in 0..sentinels {
                services.push(Box::new(Sentinel::new(cfg.clone())));
            }
        }
        let cfg = Self::client_config(params);
        let clients = (0..workload.clients)
            .map(|_| Box::new(RedisLockClient::new(cfg.clone())) as Box<dyn LockClient<Redis>>)
            .collect();
        Cluster { services, clients }
    }
}
