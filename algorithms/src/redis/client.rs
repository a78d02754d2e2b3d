//! The lock library on each client: the redis.io single-instance pattern, or Redisson's `lock()`
//! with its watchdog, over one primary that Sentinel may replace.
//!
//! Plain pattern (`watchdog = false`, redis.io "Distributed Locks with Redis"): `SET key random NX
//! PX ttl_ms` with a fresh random value per attempt; a refusal retries after a `retry_ms` draw;
//! release runs the compare-and-delete script (`unlock = "compare_and_delete"`) or a plain `DEL`
//! (`unlock = "del"`, which deletes whoever's lock is there). A script that answers 0 (the lock
//! is no longer ours) returns as a release, or with `release_missing = "error"` fails it
//! (`ReleaseFailed`, refused): redis-py's `Lock.release()` raises `LockNotOwnedError`.
//!
//! Two known-unsafe forms of the plain pattern, each a separate round trip where the safe form has
//! one atomic command:
//! - `acquire = "setnx_then_expire"` (the lock of "Redis in Action", J. Carlson, section 6.2.5
//!   `acquire_lock_with_timeout`, before Redis 2.6.12 gave `SET` its `NX`/`PX` options): `SETNX key
//!   random`, and once it answers 1, `PEXPIRE key ttl_ms`; `lock()` returns when the `PEXPIRE`
//!   answers (whatever it answers, as the book's code ignores it). A client that crashes after the
//!   `SETNX` ran and before its `PEXPIRE` left leaves a key with no time to live: nobody acquires
//!   again. The book's repair (a refused client that finds no TTL sets one) is not modelled: the
//!   option is the pattern without it.
//! - `unlock = "get_then_del"`: `GET key`, and if it answers this attempt's value, `DEL key` in a
//!   second round trip. Between the two the key can expire and another client take it; the `DEL`
//!   then deletes that client's lock. The check and the delete must be one step: the redis.io
//!   compare-and-delete script, or "Redis in Action" 6.2.3's `WATCH`/`MULTI`/`EXEC`
//!   `release_lock`.
//!
//! Redisson `lock()` (`watchdog = true`; RedissonLock, RedissonBaseLock, RedissonFencedLock,
//! renewal/LockTask and RenewalTask, Redisson 3.x):
//! - The lock is a hash `owner → count`; `owner` is the Redisson instance id plus the thread
//!   (one per client start here). Re-entry runs the script again and increments the count, so a
//!   holder that locks 3 times and unlocks twice still holds it.
//! - The lease is `ttl_ms` (Redisson's `lockWatchdogTimeout`, 30 000 ms by default). While held,
//!   the watchdog renews it every lease/3, counted from the previous renewal's completion. A
//!   renewal that errs or times out is logged and rescheduled (RenewalTask, Redisson 3.44+:
//!   `renewal_error = "reschedule"`), or with `renewal_error = "stop"` (Redisson up to 3.43,
//!   `RedissonBaseLock.renewExpiration`) never renewed again: the key expires one lease after the
//!   last renewal while the holder goes on. One that finds the key gone (the script returns 0)
//!   cancels the renewal silently: the holder is not told and goes on. With `renewal_wait` the
//!   renewal goes through the synced eval like the lock (`WAIT`; no replica acknowledging is a
//!   renewal error).
//! - A refused attempt returns the key's `PTTL`; the waiter subscribes to the lock's channel, tries
//!   again, then waits for the unlock message or the TTL, whichever comes first, and tries again.
//!   A message that arrives while the waiter is busy leaves a permit (Redisson's latch semaphore).
//!
//! Both: `fencing_counter = true` makes the acquiring script `INCR` a token key on the same primary
//! (RedissonFencedLock's script; for the plain pattern the same `INCR` in a script with the `SET`),
//! so the token is replicated asynchronously like the lock. `replica_ack` is Redisson's
//! `checkLockSyncedSlaves`, on by default as in Redisson (`config/Config`: `checkLockSyncedSlaves
//! = true` and `slavesSyncTimeout = 1000` since the setting came in 3.17.0, CHANGELOG 20-Mar-2022;
//! unchanged in the 2024 source read): the acquiring script is pipelined with `WAIT <available
//! replicas> 1000` (`syncedEval`); if no replica acknowledged ("None of slaves were synced"), the
//! acquisition fails and the lock just taken is unlocked (`handleNoSync`; `no_sync =
//! "fail_keep"` leaves it, `"unlock_retry"` unlocks and acquires again after the retry delay).
//! With no replica available (none configured, or all reported down) there is no `WAIT`, as in
//! Redisson. The model applies it to the plain pattern too (the redis.io pattern itself has no `WAIT`: `replica_ack =
//! false`).
//!
//! Commands and retries (Redisson 3.x `RedisExecutor`, read at the 2021 source: `execute`,
//! `scheduleRetryTimeout`, `scheduleResponseTimeout`, `isResendAllowed`; defaults from
//! `config/BaseConfig`: `timeout` 3000 ms, `retryAttempts` 3, `retryInterval` 1500 ms): a sent
//! command waits `timeout_ms` for its reply (plus the `WAIT` timeout when one is pipelined). An
//! attempt that times out, or whose connection is reset, is sent AGAIN, unchanged, after
//! `retry_interval_ms`, while fewer than `retry_attempts` retries were made; then the call fails.
//! So a timed-out command that the server did execute runs twice (issue 17): a re-sent `SET NX`
//! finds its own key and is refused (the lock stays set until its TTL), a re-sent Redisson lock
//! script re-enters (hold count 2 on the server), a re-sent unlock finds nothing. A late reply to
//! an abandoned attempt is ignored. Error replies (`READONLY`) are not retried, unless
//! `readonly_retry` (Redisson 3.27.1+): then a `READONLY` reply is a failed attempt, sent again
//! after the retry delay to the primary known then. `retry_delay` replaces the constant interval
//! by Redisson 3.48's equal-jitter delay or redis-py's exponential backoff with jitter, drawn
//! from the client's own random stream. `resend_written = "batch_only"` (Redisson 3.37+): a lock
//! or unlock script written on a connection not known to be closed fails at its timeout or reset
//! instead of being resent, unless it went as the script + `WAIT` batch (replicas and
//! `replica_ack`); one sent after a reset and before any answer (a new connection, refused while
//! the server is down) is retried either way. A lock call that
//! fails fails the acquisition (`Unavailable`); an unlock call that fails is `ReleaseFailed`.
//! Subscriptions are not retried. Difference from the source read: Redisson's
//! `CommandsQueue.channelInactive` fails only commands not yet written; a written command on a
//! closed connection waits for its response timeout before it is re-sent, where the model fails
//! it at the reset (it is re-sent `retry_interval_ms` after the reset instead of after
//! `timeout_ms` + `retry_interval_ms`).
//!
//! With replicas, the library follows Sentinel: it asks every Sentinel for the primary at start,
//! moves to the primary of the highest configuration epoch that a `+switch-master` announces,
//! re-subscribes there while waiting, and (`replica_count = "sentinel_view"`) counts a replica as
//! available unless a Sentinel reported it down (`+sdown`) and not up again (`-sdown`). The
//! `info_…` readings ask the primary's `INFO REPLICATION` instead (Redisson 3.18.1+), before
//! every call or once per client while the cached count is not contradicted by a `WAIT`
//! answering fewer (3.27.0+) or any other number (3.46.0+).

use std::collections::BTreeSet;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_MS};
use rand::Rng;

use super::keyspace::Reply;
use super::protocol::*;
use super::Redis;
use crate::smallmap::SmallMap;

mod fingerprint;

/// Redisson's `slavesSyncTimeout` (`Config` default, 1000 ms): the `WAIT` timeout.
pub const WAIT_TIMEOUT_MS: u64 = 1_000;

/// How a lock is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnlockMode {
    /// The redis.io compare-and-delete script: deletes the key only if it has this attempt's value.
    CompareAndDelete,
    /// A plain `DEL`: deletes whoever's lock is there (with the watchdog, Redisson `forceUnlock`).
    Del,
    /// `GET`, and if it answers this attempt's value, `DEL` in a second round trip (plain pattern).
    GetThenDel,
}

/// How the plain pattern takes a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireMode {
    /// `SET key value NX PX ttl`: the key and its time to live in one command.
    SetNxPx,
    /// `SETNX key value`, then `PEXPIRE key ttl` once the `SETNX` answered 1.
    SetNxThenExpire,
}

/// What the watchdog does after a renewal that failed (`renewal_error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenewalError {
    /// Renew again lease/3 later (Redisson 3.44+ `RenewalTask`: log and `schedule()`).
    Reschedule,
    /// Stop renewing for good (Redisson up to 3.43: `EXPIRATION_RENEWAL_MAP.remove`).
    Stop,
}

impl RenewalError {
    /// The `renewal_error` parameter: `stop`, anything else `reschedule`.
    pub fn parse(s: &str) -> RenewalError {
        if s == "stop" {
            RenewalError::Stop
        } else {
            RenewalError::Reschedule
        }
    }
}

/// What an acquisition does when no replica acknowledged its `WAIT` ("None of slaves were
/// synced", `no_sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSync {
    /// Unlock the key just taken and fail the call (the model before presets).
    UnlockFail,
    /// Fail the call and leave the key: nothing unlocks it and no watchdog renews it, so it
    /// expires one lease later (Redisson 3.17.x, where `handleNoSync` does not exist yet; and
    /// 3.25.0–3.46.0, whose message check no longer matches the new error text).
    FailKeep,
    /// Unlock, then run the whole acquisition again after the retry delay, up to
    /// `retry_attempts` times; then fail (Redisson 3.20.1–3.24.x and from 3.47.0).
    UnlockRetry,
}

impl NoSync {
    /// The `no_sync` parameter: `fail_keep`, `unlock_retry`, anything else `unlock_fail`.
    pub fn parse(s: &str) -> NoSync {
        match s {
            "fail_keep" => NoSync::FailKeep,
            "unlock_retry" => NoSync::UnlockRetry,
            _ => NoSync::UnlockFail,
        }
    }
}

/// Which commands are sent again after their attempt failed (`resend_written`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResendWritten {
    /// Every command (Redisson up to 3.36, redis-py 6+).
    All,
    /// Redisson 3.37+: the lock and unlock scripts (`evalWriteSyncedNoRetryAsync`) are not sent
    /// again once written, unless they went as the script + `WAIT` batch.
    BatchOnly,
}

impl ResendWritten {
    /// The `resend_written` parameter: `batch_only`, anything else `all`.
    pub fn parse(s: &str) -> ResendWritten {
        if s == "batch_only" {
            ResendWritten::BatchOnly
        } else {
            ResendWritten::All
        }
    }
}

/// Where the library gets the replica count it `WAIT`s for (`replica_count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaCount {
    /// Every server but the primary, minus those Sentinel reported `+sdown` and not `-sdown`
    /// (Redisson up to 3.18.0 reads its own Sentinel-polled view, `getAvailableSlaves()`).
    SentinelView,
    /// The primary's `INFO REPLICATION` `connected_slaves`, asked before every call (3.18.1+).
    InfoEachCall,
    /// The same, cached per client; forgotten only when a `WAIT` answers fewer replicas than
    /// the cached count (3.27.0+); with 0 cached no `WAIT` is sent, so it is never forgotten.
    InfoCached,
    /// As `InfoCached`, forgotten when a `WAIT` answers any other count (3.46.0+).
    InfoCachedAnyChange,
}

impl ReplicaCount {
    /// The `replica_count` parameter: `info_each_call`, `info_cached`, `info_cached_any_change`,
    /// anything else `sentinel_view`.
    pub fn parse(s: &str) -> ReplicaCount {
        match s {
            "info_each_call" => ReplicaCount::InfoEachCall,
            "info_cached" => ReplicaCount::InfoCached,
            "info_cached_any_change" => ReplicaCount::InfoCachedAnyChange,
            _ => ReplicaCount::SentinelView,
        }
    }
}

/// The wait before a failed attempt is sent again (`retry_delay`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RetryDelay {
    /// Always `retry_interval_ms`: Redisson's `retryInterval` (up to 3.47).
    Constant,
    /// Redisson 3.48+ `EqualJitterDelay`: before retry n (1, 2, …), `d = min(base × 2^(n-1),
    /// max)`, and the delay is `d/2 + uniform[0, d/2]` (`calcDelay(attempt)` with the attempt
    /// counted from 0, `RedisExecutor.java:174@redisson-3.48.0`).
    EqualJitter {
        /// `baseDelay`, milliseconds.
        base_ms: f64,
        /// `maxDelay`, milliseconds.
        max_ms: f64,
    },
    /// redis-py `ExponentialWithJitterBackoff`: before retry n (1, 2, …), uniform in
    /// `[0, min(cap, base × 2^n)]` (`backoff.py:124-125@v6.0.0`; `Retry` counts failures from 1).
    ExpJitter {
        /// `base`, milliseconds.
        base_ms: f64,
        /// `cap`, milliseconds.
        cap_ms: f64,
    },
}

impl RetryDelay {
    /// The `retry_delay` parameter with its base and cap (unused by `constant`).
    pub fn parse(s: &str, base_ms: f64, max_ms: f64) -> RetryDelay {
        match s {
            "equal_jitter" => RetryDelay::EqualJitter { base_ms, max_ms },
            "exp_jitter" => RetryDelay::ExpJitter { base_ms, cap_ms: max_ms },
            _ => RetryDelay::Constant,
        }
    }

    /// The wait before retry `n` (1 for the first retry), nanoseconds; a jittered delay is drawn
    /// from `rng` (the client's own stream), a constant one draws nothing.
    pub fn before_retry_ns(self, constant_ms: u64, n: u32, rng: &mut impl Rng) -> Nanos {
        match self {
            RetryDelay::Constant => constant_ms * NS_PER_MS,
            RetryDelay::EqualJitter { base_ms, max_ms } => {
                let d = (base_ms * 2f64.powi(n.saturating_sub(1).min(30) as i32)).min(max_ms);
                ms_to_ns(d / 2.0 + rng.gen_range(0.0..=d / 2.0))
            }
            RetryDelay::ExpJitter { base_ms, cap_ms } => {
                let d = (base_ms * 2f64.powi(n.min(30) as i32)).min(cap_ms);
                ms_to_ns(rng.gen_range(0.0..=d))
            }
        }
    }
}

/// The parts of the model's parameters the library uses.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The plain pattern's `PX`, or Redisson's lease (`lockWatchdogTimeout`), milliseconds.
    pub ttl_ms: u64,
    /// How a lock is released (`unlock`).
    pub unlock: UnlockMode,
    /// How the plain pattern takes a lock (`acquire`).
    pub acquire: AcquireMode,
    /// The plain pattern's sleep after a refused `SET NX`, milliseconds.
    pub retry_ms: Dist,
    /// Redisson's `lock()` with its watchdog instead of the plain pattern.
    pub watchdog: bool,
    /// Redisson's `checkLockSyncedSlaves`: `WAIT` after acquiring, and fail without an ack.
    pub replica_ack: bool,
    /// The acquiring script `INCR`s a fencing-token key (`fencing_counter`).
    pub fencing: bool,
    /// Redis servers: the primary and its replicas.
    pub servers: usize,
    /// Sentinels (0 without replicas).
    pub sentinels: usize,
    /// Redisson's `timeout`: how long a sent command waits for its reply, milliseconds.
    pub timeout_ms: u64,
    /// Redisson's `retryAttempts`: how many times a failed attempt is sent again.
    pub retry_attempts: u32,
    /// Redisson's `retryInterval`: the wait before sending it again, milliseconds (with
    /// [`RetryDelay::Constant`]).
    pub retry_interval_ms: u64,
    /// How the wait before a retry is computed (`retry_delay`).
    pub retry_delay: RetryDelay,
    /// What the watchdog does after a failed renewal (`renewal_error`).
    pub renewal_error: RenewalError,
    /// The renewal carries `WAIT` like the acquisition (`renewal_wait`).
    pub renewal_wait: bool,
    /// Which commands are sent again (`resend_written`).
    pub resend_written: ResendWritten,
    /// A `READONLY` reply is retried like a failed attempt (`readonly_retry`).
    pub readonly_retry: bool,
    /// Where the replica count for `WAIT` comes from (`replica_count`).
    pub replica_count: ReplicaCount,
    /// Plain pattern: a release whose compare-and-delete script answers 0 (the lock is no longer
    /// ours) is an error, `ReleaseFailed` (`release_missing = "error"`: redis-py's
    /// `LockNotOwnedError`); else it returns.
    pub release_missing_fails: bool,
    /// What an acquisition does when no replica acknowledged its `WAIT` (`no_sync`).
    pub no_sync: NoSync,
}

/// A request in flight (or waiting to be sent again) and what its answer is for.
#[derive(Clone, Debug)]
struct Pending {
    key: LockKey,
    kind: ReqKind,
    /// The response timeout, or while waiting to be re-sent, the retry interval's timer.
    timer: TimerId,
    cmd: Command,
    wait: Option<WaitSpec>,
    /// The server the current attempt went to.
    to: NodeId,
    /// Attempts made after the first (Redisson's `attempt`).
    attempt: u32,
    /// Whether an attempt is on the wire (false while waiting out the retry interval: a late
    /// reply to the abandoned attempt is ignored, as Redisson's cancelled attempt promise is).
    in_flight: bool,
    /// Whether the current attempt went out on a connection not known to be closed (written);
    /// false: sent after a reset on that connection and before any answer, so it is a new
    /// connection's attempt, refused if the server is down (read only by `resend_written`).
    written: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum ReqKind {
    /// An acquisition attempt; `value` is the plain pattern's random value; `waited` says a
    /// `WAIT` was pipelined.
    Lock {
        value: u64,
        nested: bool,
        waited: bool,
    },
    /// A release call: answered with `Released`.
    Unlock,
    /// The `PEXPIRE` after a `SETNX` that took the lock: its answer completes the acquisition.
    Expire {
        value: u64,
        token: Option<u64>,
    },
    /// The `GET` of a GET-then-DEL unlock; `cleanup`: nobody waits for the release (as
    /// [`ReqKind::Cleanup`]).
    UnlockGet {
        value: u64,
        cleanup: bool,
    },
    /// An unlock nobody waits for (a grant refused by `replica_ack`, or one that came after the
    /// acquisition was cancelled).
    Cleanup,
    /// A watchdog renewal; `waited` says a `WAIT` was pipelined (`renewal_wait`).
    Renew {
        seq: u32,
        waited: bool,
    },
    Subscribe,
    Unsubscribe,
    /// Re-subscribing on a new primary after a failover (the wait goes on regardless).
    Resubscribe,
    /// `INFO REPLICATION` before a call that may `WAIT` (`replica_count = "info_…"`); the call
    /// follows its answer.
    Info {
        then: AfterInfo,
    },
}

/// The call an `INFO REPLICATION` was asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum AfterInfo {
    /// An acquisition attempt.
    Lock { nested: bool },
    /// A watchdog renewal of generation `seq`.
    Renew { seq: u32 },
}

impl ReqKind {
    /// The unlock that ends a release: a release call's (answered with `Released`), or one nobody
    /// waits for (`cleanup`).
    fn release(cleanup: bool) -> ReqKind {
        if cleanup {
            ReqKind::Cleanup
        } else {
            ReqKind::Unlock
        }
    }
}

/// What an acquisition is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Acq {
    Idle,
    Requested {
        req: u64,
    },
    /// `setnx_then_expire`: the `SETNX` took the key; waiting for the `PEXPIRE`'s answer.
    Expiring {
        req: u64,
    },
    /// Plain pattern: sleeping `retry_ms`.
    RetryWait {
        seq: u32,
    },
    /// Redisson: subscribing to the unlock channel before trying again.
    Subscribing {
        req: u64,
    },
    /// Redisson: waiting for the unlock message or the TTL.
    WaitUnlock {
        seq: u32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Held {
    value: u64,
    token: Option<u64>,
    /// Redisson's hold count as the library tracks it (the watchdog runs while it is above 0).
    count: u32,
}

#[derive(Clone, Debug)]
struct KeyState {
    held: Option<Held>,
    acq: Acq,
    subscribed: bool,
    /// An unlock message arrived while the waiter was not blocked on it.
    permit: bool,
    /// The running watchdog's generation (None: not renewing).
    renew_seq: Option<u32>,
    /// Acquisitions run again in this call after no replica acknowledged (`no_sync =
    /// "unlock_retry"`).
    no_sync_retries: u32,
}

impl Default for KeyState {
    fn default() -> Self {
        KeyState { held: None, acq: Acq::Idle, subscribed: false, permit: false, renew_seq: None, no_sync_retries: 0 }
    }
}

/// One client's lock library.
#[derive(Clone, Debug)]
pub struct RedisLockClient {
    cfg: ClientConfig,
    /// The last request id given out. It keeps counting across a crash: a reply to a request sent
    /// before it (on a connection the restarted client no longer has) must not be taken for the
    /// answer to a new request.
    next_req: u64,
    v: Volatile,
}

/// A client keeps its configuration and its request counter (see [`RedisLockClient`]).
impl Durable for RedisLockClient {
    type Disk = (ClientConfig, u64);

    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.next_req)
    }

    fn from_disk((cfg, next_req): Self::Disk) -> Self {
        RedisLockClient { cfg, next_req, v: Volatile::default() }
    }
}

/// What the library loses when its client crashes (`on_start` fills in the rest).
#[derive(Clone, Debug)]
struct Volatile {
    servers: Vec<NodeId>,
    sentinels: Vec<NodeId>,
    primary: NodeId,
    config_epoch: u64,
    replicas_down: BTreeSet<NodeId>,
    /// Redisson's instance id and thread (`UUID:threadId`), new at every start.
    owner: u64,
    /// The last wait or watchdog generation given out (see [`ClientTimer`]).
    seq: u32,
    pending: SmallMap<u64, Pending>,
    keys: SmallMap<LockKey, KeyState>,
    /// Servers whose connection was reset and that have not answered since: a command sent to
    /// one of them is not yet written (the connection is being made again).
    closed: BTreeSet<NodeId>,
    /// `replica_count = "info_cached…"`: the replica count last read from `INFO` (Redisson's
    /// `MasterSlaveEntry.availableSlaves`; kept across failovers, as the entry is).
    cached_replicas: Option<u32>,
}

impl Default for Volatile {
    fn default() -> Self {
        Volatile {
            servers: Vec::new(),
            sentinels: Vec::new(),
            primary: 0,
            config_epoch: 0,
            replicas_down: BTreeSet::new(),
            owner: 0,
            seq: 0,
            pending: SmallMap::new(),
            keys: SmallMap::new(),
            closed: BTreeSet::new(),
            cached_replicas: None,
        }
    }
}

impl RedisLockClient {
    /// A lock library; it draws its Redisson owner id at every start.
    pub fn new(cfg: ClientConfig) -> Self {
        Self::from_disk((cfg, 0))
    }

    /// Whether a release that finds the lock not ours fails (`release_missing = "error"`; plain
    /// pattern only: Redisson's unlock script always fails it).
    fn release_missing_fails(&self) -> bool {
        !self.cfg.watchdog && self.cfg.release_missing_fails
    }

    fn next_seq(&mut self) -> u32 {
        self.v.seq = self.v.seq.wrapping_add(1);
        self.v.seq
    }

    fn lease_ns(&self) -> Nanos {
        self.cfg.ttl_ms * NS_PER_MS
    }

    /// Replicas Redisson counts as available: every server but the primary, minus those a
    /// Sentinel reported down.
    fn available_replicas(&self) -> u32 {
        self.v.servers.iter().filter(|s| **s != self.v.primary && !self.v.replicas_down.contains(s)).count() as u32
    }

    fn request(
        &mut self,
        ctx: &mut Ctx<Redis>,
        key: LockKey,
        cmd: Command,
        wait: Option<WaitSpec>,
        kind: ReqKind,
    ) -> u64 {
        self.next_req += 1;
        let id = self.next_req;
        let to = self.v.primary;
        let written = !self.v.closed.contains(&to);
        let timer = self.send_attempt(ctx, id, to, &cmd, wait);
        self.v.pending.insert(id, Pending { key, kind, timer, cmd, wait, to, attempt: 0, in_flight: true, written });
        id
    }

    /// Sends one attempt of request `id` and arms its response timeout.
    fn send_attempt(
        &mut self,
        ctx: &mut Ctx<Redis>,
        id: u64,
        to: NodeId,
        cmd: &Command,
        wait: Option<WaitSpec>,
    ) -> TimerId {
        let timeout_ms = self.cfg.timeout_ms + wait.map_or(0, |w| w.timeout_ms);
        let timer = ctx.set_timer(timeout_ms * NS_PER_MS, ClientTimer::RequestTimeout { id });
        ctx.send(to, Request { id, cmd: cmd.clone(), wait });
        timer
    }

    /// Whether the lock and unlock scripts go as the script + `WAIT` batch (Redisson's
    /// `syncedEval` outside a single-server configuration, with `checkLockSyncedSlaves`).
    fn batched(&self) -> bool {
        self.cfg.servers > 1 && self.cfg.replica_ack
    }

    /// The current attempt of request `id` failed (no reply within the timeout, its connection
    /// was reset, or with `readonly` a `READONLY` reply under `readonly_retry`). RedisExecutor:
    /// while `attempt < retryAttempts`, the same command is sent again after the retry delay;
    /// else the call fails. With `resend_written = "batch_only"` a lock or unlock script that
    /// was written and not batched fails at once (`isResendAllowed`: `!noRetry`); a `READONLY`
    /// retry ignores that (`RedisExecutor.java:573-574@redisson-3.27.1` does not look at
    /// `noRetry`). Returns the request when it failed for good.
    fn attempt_failed(&mut self, ctx: &mut Ctx<Redis>, id: u64, why: &str, readonly: bool) -> Option<Pending> {
        let no_retry_scripts = self.cfg.resend_written == ResendWritten::BatchOnly && !self.batched();
        let p = self.v.pending.get_mut(&id)?;
        if !p.in_flight {
            return None;
        }
        let no_resend = !readonly
            && no_retry_scripts
            && p.written
            && matches!(p.cmd, Command::HLock { .. } | Command::HUnlock { .. });
        if p.attempt < self.cfg.retry_attempts && !no_resend {
            p.in_flight = false;
            p.attempt += 1;
            let attempt = p.attempt;
            ctx.cancel_timer(p.timer);
            let delay_ns = self.cfg.retry_delay.before_retry_ns(self.cfg.retry_interval_ms, attempt, ctx.rng());
            p.timer = ctx.set_timer(delay_ns, ClientTimer::Resend { id });
            match self.cfg.retry_delay {
                RetryDelay::Constant => {
                    ctx.note(|| format!("request {id}: {why}; attempt {attempt} in {} ms", self.cfg.retry_interval_ms))
                }
                _ => ctx.note(|| format!("request {id}: {why}; attempt {attempt} in {:.3} ms", delay_ns as f64 / 1e6)),
            }
            return None;
        }
        let p = self.v.pending.remove(&id)?;
        ctx.cancel_timer(p.timer);
        if no_resend {
            ctx.note(|| {
                format!("request {id} for lock {}: {why}; written, not sent again (no-retry script): error", p.key)
            });
        } else {
            ctx.note(|| format!("request {id} for lock {}: {why} after {} retries: error", p.key, p.attempt));
        }
        Some(p)
    }

    /// The retry interval is over: the command goes again, under a new id (to the current
    /// primary: Redisson resolves the node at each attempt).
    fn resend(&mut self, ctx: &mut Ctx<Redis>, id: u64) {
        let Some(mut p) = self.v.pending.remove(&id) else { return };
        if p.in_flight {
            self.v.pending.insert(id, p);
            return;
        }
        self.next_req += 1;
        let new_id = self.next_req;
        p.to = self.v.primary;
        p.written = !self.v.closed.contains(&p.to);
        p.timer = self.send_attempt(ctx, new_id, p.to, &p.cmd, p.wait);
        p.in_flight = true;
        // The acquisition waits for this request under its new id.
        let st = self.state(p.key);
        match st.acq {
            Acq::Requested { req } if req == id => st.acq = Acq::Requested { req: new_id },
            Acq::Expiring { req } if req == id => st.acq = Acq::Expiring { req: new_id },
            Acq::Subscribing { req } if req == id => st.acq = Acq::Subscribing { req: new_id },
            _ => {}
        }
        self.v.pending.insert(new_id, p);
    }

    fn state(&mut self, key: LockKey) -> &mut KeyState {
        self.v.keys.get_or_default(key)
    }

    /// One acquisition attempt: the lock script (and `WAIT` with `replica_ack`).
    /// The replica count to `WAIT` for, if the library knows it without asking (`None`: ask
    /// `INFO REPLICATION` first). Without `replica_ack` or replicas nothing is asked.
    fn replicas_to_wait_for(&self) -> Option<u32> {
        if !self.cfg.replica_ack || self.cfg.servers == 1 {
            return Some(self.available_replicas());
        }
        match self.cfg.replica_count {
            ReplicaCount::SentinelView => Some(self.available_replicas()),
            ReplicaCount::InfoEachCall => None,
            ReplicaCount::InfoCached | ReplicaCount::InfoCachedAnyChange => self.v.cached_replicas,
        }
    }

    /// Asks the primary's `INFO REPLICATION` before the call `then`.
    fn ask_replica_count(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, then: AfterInfo) -> u64 {
        self.request(ctx, key, Command::InfoReplication, None, ReqKind::Info { then })
    }

    /// A `WAIT` answered `synced` where `asked` replicas were counted: the cached count is
    /// forgotten when fewer acknowledged (3.27.0+), or any other number (3.46.0+).
    fn check_cached_count(&mut self, asked: u32, synced: u32) {
        let forget = match self.cfg.replica_count {
            ReplicaCount::InfoCached => synced < asked,
            ReplicaCount::InfoCachedAnyChange => synced != asked,
            _ => false,
        };
        if forget {
            self.v.cached_replicas = None;
        }
    }

    fn attempt(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, nested: bool) {
        match self.replicas_to_wait_for() {
            Some(available) => self.send_lock(ctx, key, nested, available),
            None => {
                let req = self.ask_replica_count(ctx, key, AfterInfo::Lock { nested });
                self.state(key).acq = Acq::Requested { req };
            }
        }
    }

    /// The lock script (or `SET NX`), with `WAIT available` when `replica_ack` and
    /// `available > 0`.
    fn send_lock(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, nested: bool, available: u32) {
        let value: u64 = ctx.rng().gen();
        let fence = self.cfg.fencing;
        let cmd = match (self.cfg.watchdog, self.cfg.acquire) {
            (true, _) => Command::HLock { key, owner: self.v.owner, lease_ms: self.cfg.ttl_ms, fence },
            // ttl_ms = 0: redis-py's timeout=None, a SET NX without PX (the model's SETNX).
            (false, AcquireMode::SetNxPx) if self.cfg.ttl_ms == 0 => Command::SetNx { key, value, fence },
            (false, AcquireMode::SetNxPx) => Command::SetNxPx { key, value, px_ms: self.cfg.ttl_ms, fence },
            (false, AcquireMode::SetNxThenExpire) => Command::SetNx { key, value, fence },
        };
        let wait = (self.cfg.replica_ack && available > 0)
            .then_some(WaitSpec { replicas: available, timeout_ms: WAIT_TIMEOUT_MS });
        let req = self.request(ctx, key, cmd, wait, ReqKind::Lock { value, nested, waited: wait.is_some() });
        self.state(key).acq = Acq::Requested { req };
    }

    /// Sends the (first) unlock command for a lock this library holds or just took: a release
    /// call's (`cleanup = false`, answered with `Released`) or one nobody waits for.
    fn send_unlock(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, value: u64, cleanup: bool) {
        let done = ReqKind::release(cleanup);
        let (cmd, kind) = match (self.cfg.watchdog, self.cfg.unlock) {
            (true, UnlockMode::CompareAndDelete) => {
                (Command::HUnlock { key, owner: self.v.owner, lease_ms: self.cfg.ttl_ms }, done)
            }
            // Redisson `forceUnlock`: DEL and publish.
            (true, UnlockMode::Del) => (Command::Del { key, publish: true }, done),
            (false, UnlockMode::CompareAndDelete) => (Command::DelIfEquals { key, value }, done),
            (false, UnlockMode::Del) => (Command::Del { key, publish: false }, done),
            // The model refuses it with the watchdog (a Redisson hash has no string to GET).
            (_, UnlockMode::GetThenDel) => (Command::Get { key }, ReqKind::UnlockGet { value, cleanup }),
        };
        self.request(ctx, key, cmd, None, kind);
    }

    /// The `GET` of a GET-then-DEL unlock answered. Our value: the `DEL` follows in a second round
    /// trip and deletes whatever is there when it arrives. Another value or none: the lock is not
    /// ours any more and the release returns (as the compare-and-delete script's 0 does with
    /// `release_missing = "ignore"`; "Redis in Action"'s `release_lock` returns False).
    fn on_unlock_get(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey, kind: ReqKind, r: Response) {
        let ReqKind::UnlockGet { value, cleanup } = kind else { return };
        match r.answer {
            Answer::Reply(Reply::Value(v)) if v == value => {
                ctx.note(|| format!("lock {key}: GET found our value; DEL follows"));
                self.request(ctx, key, Command::Del { key, publish: false }, None, ReqKind::release(cleanup));
            }
            _ if cleanup => {}
            Answer::Reply(_) => out.push(LockEvent::Released { key }),
            _ => out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable }),
        }
    }

    /// The acquisition succeeded: the application holds the lock.
    fn grant(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey, value: u64, token: Option<u64>) {
        let st = self.state(key);
        let first = st.held.is_none();
        let held = st.held.get_or_insert(Held { value, token, count: 0 });
        held.count += 1;
        if token.is_some() {
            held.token = token;
        }
        let token = held.token;
        if self.cfg.watchdog && first {
            self.start_watchdog(ctx, key);
        }
        out.push(LockEvent::Granted { key, token });
    }

    /// The `PEXPIRE` after a successful `SETNX` answered: `lock()` returns, whatever the answer
    /// (the pattern does not check it). An error reply fails the call; the key keeps no TTL.
    fn on_expire_answer(
        &mut self,
        ctx: &mut Ctx<Redis>,
        out: &mut LockEvents,
        id: u64,
        key: LockKey,
        kind: ReqKind,
        r: Response,
    ) {
        let ReqKind::Expire { value, token } = kind else { return };
        if self.state(key).acq != (Acq::Expiring { req: id }) {
            // The acquisition was given up meanwhile: hand the lock straight back.
            self.send_unlock(ctx, key, value, true);
            return;
        }
        match r.answer {
            Answer::Reply(_) => {
                self.state(key).acq = Acq::Idle;
                self.grant(ctx, out, key, value, token);
            }
            _ => self.fail(ctx, out, key, false),
        }
    }

    fn unsubscribe(&mut self, ctx: &mut Ctx<Redis>, key: LockKey) {
        let st = self.state(key);
        st.permit = false;
        if st.subscribed {
            st.subscribed = false;
            self.request(ctx, key, Command::Unsubscribe { key }, None, ReqKind::Unsubscribe);
        }
    }

    fn start_watchdog(&mut self, ctx: &mut Ctx<Redis>, key: LockKey) {
        let seq = self.next_seq();
        self.state(key).renew_seq = Some(seq);
        let after = self.lease_ns() / 3;
        ctx.set_timer(after, ClientTimer::Renew { key, seq });
    }

    fn on_lock_answer(
        &mut self,
        ctx: &mut Ctx<Redis>,
        out: &mut LockEvents,
        id: u64,
        key: LockKey,
        kind: ReqKind,
        r: Response,
    ) {
        let ReqKind::Lock { value, nested, waited } = kind else { return };
        let current = self.state(key).acq == Acq::Requested { req: id };
        match r.answer {
            Answer::Reply(Reply::Acquired { token }) => {
                if !current {
                    // The acquisition was given up meanwhile: hand the lock straight back.
                    self.send_unlock(ctx, key, value, true);
                    return;
                }
                self.state(key).acq = Acq::Idle;
                if waited && r.synced.unwrap_or(0) == 0 {
                    // checkLockSyncedSlaves: "None of slaves were synced".
                    self.on_no_sync(ctx, out, key, value, nested);
                    return;
                }
                self.unsubscribe(ctx, key);
                if !self.cfg.watchdog && self.cfg.acquire == AcquireMode::SetNxThenExpire {
                    // The key has no time to live yet: the second command gives it one.
                    let cmd = Command::PExpire { key, ttl_ms: self.cfg.ttl_ms };
                    let req = self.request(ctx, key, cmd, None, ReqKind::Expire { value, token });
                    self.state(key).acq = Acq::Expiring { req };
                    return;
                }
                self.grant(ctx, out, key, value, token);
            }
            Answer::Reply(Reply::Taken { pttl_ms }) => {
                if !current {
                    return;
                }
                out.push(LockEvent::Refused { key });
                if nested {
                    // Our own lock is gone and someone else holds the key: a nested lock() would
                    // block behind the new holder; the workload cannot block a critical section,
                    // so the nested acquisition fails.
                    self.state(key).acq = Acq::Idle;
                    out.push(LockEvent::Failed { key, reason: FailReason::Refused });
                    return;
                }
                if !self.cfg.watchdog {
                    let seq = self.next_seq();
                    self.state(key).acq = Acq::RetryWait { seq };
                    let after = ms_to_ns(self.cfg.retry_ms.sample_non_negative(ctx.rng()));
                    ctx.set_timer(after, ClientTimer::Retry { key, seq });
                    return;
                }
                let st = self.state(key);
                if !st.subscribed {
                    st.subscribed = true;
                    let req = self.request(ctx, key, Command::Subscribe { key }, None, ReqKind::Subscribe);
                    self.state(key).acq = Acq::Subscribing { req };
                    return;
                }
                if std::mem::take(&mut st.permit) {
                    return self.attempt(ctx, key, false);
                }
                let seq = self.next_seq();
                self.state(key).acq = Acq::WaitUnlock { seq };
                // ttl < 0 (no expiry): wait for the message only.
                if let Some(ttl) = pttl_ms.filter(|t| *t >= 0) {
                    ctx.set_timer(ttl as u64 * NS_PER_MS, ClientTimer::WaitUnlock { key, seq });
                }
            }
            _ => {
                // An error (READONLY) or something unexpected: the acquisition fails.
                if current {
                    self.fail(ctx, out, key, nested);
                }
            }
        }
    }

    /// No replica acknowledged the `WAIT` after a grant ("None of slaves were synced"): what the
    /// version does (`no_sync`). A nested acquisition is never run again (the lock is held).
    fn on_no_sync(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey, value: u64, nested: bool) {
        if self.cfg.no_sync == NoSync::FailKeep {
            // No handleNoSync (3.17.x) or one that no longer recognises the error (3.25.0–3.46.0,
            // CommandAsyncService.java:858,906@redisson-3.25.0): the error reaches the caller
            // and the key stays until its lease runs out (no watchdog was started).
            ctx.note(|| format!("lock {key}: no replica acknowledged the grant (WAIT): failing; the key stays"));
            self.unsubscribe(ctx, key);
            out.push(LockEvent::Failed { key, reason: FailReason::Refused });
            return;
        }
        let tries = self.state(key).no_sync_retries;
        if self.cfg.no_sync == NoSync::UnlockFail || nested || tries >= self.cfg.retry_attempts {
            ctx.note(|| format!("lock {key}: no replica acknowledged the grant (WAIT): failing and unlocking"));
            self.send_unlock(ctx, key, value, true);
            self.unsubscribe(ctx, key);
            out.push(LockEvent::Failed { key, reason: FailReason::Refused });
            return;
        }
        // handleNoSync unlocks, and the retry wrapper runs the acquisition again after the
        // retry delay (RedissonBaseLock.java:334-340@redisson-3.20.1;
        // connection/ServiceManager.java:568-578@redisson-3.48.0).
        let n = tries + 1;
        self.state(key).no_sync_retries = n;
        let delay_ns = self.cfg.retry_delay.before_retry_ns(self.cfg.retry_interval_ms, n, ctx.rng());
        ctx.note(|| {
            format!(
                "lock {key}: no replica acknowledged the grant (WAIT): unlocking, acquisition {n} again in {:.3} ms",
                delay_ns as f64 / 1e6
            )
        });
        self.send_unlock(ctx, key, value, true);
        let seq = self.next_seq();
        self.state(key).acq = Acq::RetryWait { seq };
        ctx.set_timer(delay_ns, ClientTimer::Retry { key, seq });
    }

    fn fail(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey, nested: bool) {
        self.state(key).acq = Acq::Idle;
        if !nested {
            self.unsubscribe(ctx, key);
        }
        out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
    }

    fn on_response(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, r: Response) {
        let Some(kind) = self.v.pending.get(&r.id).filter(|p| p.in_flight).map(|p| &p.kind) else { return };
        let subscription = matches!(kind, ReqKind::Subscribe | ReqKind::Unsubscribe | ReqKind::Resubscribe);
        let p = if self.cfg.readonly_retry && r.answer == Answer::ReadOnly && !subscription {
            // Redisson 3.27.1+ (RedisReadonlyException), redis-py 6+ (a ConnectionError): sent
            // again after the retry delay, to the primary known then; once the retries are
            // spent the error reaches the caller as before.
            match self.attempt_failed(ctx, r.id, "READONLY reply", true) {
                None => return,
                Some(p) => p,
            }
        } else {
            let Some(p) = self.v.pending.remove(&r.id) else { return };
            ctx.cancel_timer(p.timer);
            p
        };
        let key = p.key;
        if let (Some(w), Some(synced)) = (p.wait, r.synced) {
            self.check_cached_count(w.replicas, synced);
        }
        match p.kind {
            ReqKind::Info { then } => self.on_info_answer(ctx, out, r.id, key, then, r.answer),
            ReqKind::Lock { .. } => self.on_lock_answer(ctx, out, r.id, key, p.kind, r),
            ReqKind::Expire { .. } => self.on_expire_answer(ctx, out, r.id, key, p.kind, r),
            ReqKind::UnlockGet { .. } => self.on_unlock_get(ctx, out, key, p.kind, r),
            // An error reply (READONLY after a failover) is raised by unlock(): not retried
            // (RedisExecutor retries timeouts and connection errors only).
            ReqKind::Unlock if !matches!(r.answer, Answer::Reply(_)) => {
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable })
            }
            // Redisson's unlock script answers nil when the hash has no field for this owner (the
            // lease expired, or another owner holds it): `RedissonBaseLock.unlockAsync0` fails the
            // call with IllegalMonitorStateException ("attempt to unlock lock, not locked by current
            // thread"), so `unlock()` throws to the application (Redisson 3.x).
            ReqKind::Unlock if self.cfg.watchdog && r.answer == Answer::Reply(Reply::Nil) => {
                ctx.note(|| {
                    format!(
                        "lock {key}: unlock script found no hold of ours: unlock() throws IllegalMonitorStateException"
                    )
                });
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused })
            }
            // redis-py's `Lock.release()`: the compare-and-delete script answered 0 (the key
            // expired, or another client's token is there): `do_release` raises
            // `LockNotOwnedError` (`lock.py:258-265@v5.2.1`, `:278-285@v6.0.0` and `@v8.0.0`).
            ReqKind::Unlock
                if self.release_missing_fails()
                    && self.cfg.unlock == UnlockMode::CompareAndDelete
                    && r.answer == Answer::Reply(Reply::Int(0)) =>
            {
                ctx.note(|| format!("lock {key}: release script found the lock not ours: LockNotOwnedError"));
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused })
            }
            ReqKind::Unlock => out.push(LockEvent::Released { key }),
            ReqKind::Cleanup | ReqKind::Unsubscribe | ReqKind::Resubscribe => {}
            ReqKind::Renew { seq, waited } => {
                if self.state(key).renew_seq != Some(seq) {
                    return;
                }
                match r.answer {
                    Answer::Reply(Reply::Int(1)) if waited && r.synced.unwrap_or(0) == 0 => {
                        // The synced eval's check: "None of slaves were synced", an error.
                        self.renewal_failed(ctx, key, seq, "no replica acknowledged the renewal (WAIT)");
                    }
                    Answer::Reply(Reply::Int(1)) => {
                        let after = self.lease_ns() / 3;
                        ctx.set_timer(after, ClientTimer::Renew { key, seq });
                    }
                    Answer::Reply(Reply::Int(0)) => {
                        // LockTask: the key is gone; cancel the renewal. Nobody tells the holder.
                        self.state(key).renew_seq = None;
                        ctx.note(|| {
                            format!("lock {key}: watchdog renewal found the lock gone; renewal stops (holder not told)")
                        });
                    }
                    _ => self.renewal_failed(ctx, key, seq, "the renewal got an error reply"),
                }
            }
            ReqKind::Subscribe => {
                if self.state(key).acq == (Acq::Subscribing { req: r.id }) {
                    self.attempt(ctx, key, false);
                }
            }
        }
    }

    /// `INFO REPLICATION` answered: the call it was asked for goes out with that count.
    fn on_info_answer(
        &mut self,
        ctx: &mut Ctx<Redis>,
        out: &mut LockEvents,
        id: u64,
        key: LockKey,
        then: AfterInfo,
        answer: Answer,
    ) {
        let count = match answer {
            Answer::Reply(Reply::Int(n)) => Some(n.max(0) as u32),
            _ => None,
        };
        if let (Some(n), ReplicaCount::InfoCached | ReplicaCount::InfoCachedAnyChange) = (count, self.cfg.replica_count)
        {
            self.v.cached_replicas = Some(n);
        }
        match then {
            AfterInfo::Lock { nested } => {
                if self.state(key).acq != (Acq::Requested { req: id }) {
                    return;
                }
                match count {
                    Some(n) => self.send_lock(ctx, key, nested, n),
                    None => self.fail(ctx, out, key, nested),
                }
            }
            AfterInfo::Renew { seq } => {
                if self.state(key).renew_seq != Some(seq) {
                    return;
                }
                match count {
                    Some(n) => self.send_renewal(ctx, key, seq, n),
                    None => self.renewal_failed(ctx, key, seq, "INFO REPLICATION failed"),
                }
            }
        }
    }

    /// The watchdog's renewal script; with `renewal_wait` it goes through the synced eval, as
    /// the lock does (`WAIT available` when `replica_ack` and `available > 0`).
    fn send_renewal(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, seq: u32, available: u32) {
        let owner = self.v.owner;
        let lease_ms = self.cfg.ttl_ms;
        let wait = (self.cfg.renewal_wait && self.cfg.replica_ack && available > 0)
            .then_some(WaitSpec { replicas: available, timeout_ms: WAIT_TIMEOUT_MS });
        let kind = ReqKind::Renew { seq, waited: wait.is_some() };
        self.request(ctx, key, Command::HRenew { key, owner, lease_ms }, wait, kind);
    }

    /// A renewal failed (an error reply, no reply after the retries, or no replica synced):
    /// `renewal_error` decides whether the watchdog renews again lease/3 later or stops.
    fn renewal_failed(&mut self, ctx: &mut Ctx<Redis>, key: LockKey, seq: u32, why: &str) {
        match self.cfg.renewal_error {
            // RenewalTask: log the error and schedule the next renewal.
            RenewalError::Reschedule => {
                let after = self.lease_ns() / 3;
                ctx.set_timer(after, ClientTimer::Renew { key, seq });
            }
            // RedissonBaseLock.renewExpiration (up to 3.43): log, and remove the entry from
            // EXPIRATION_RENEWAL_MAP: nothing renews the key again; the holder is not told.
            RenewalError::Stop => {
                self.state(key).renew_seq = None;
                ctx.note(|| format!("lock {key}: {why}: the watchdog stops for good (holder not told)"));
            }
        }
    }

    fn on_request_timeout(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, id: u64, why: &str) {
        let Some(p) = self.attempt_failed(ctx, id, why, false) else { return };
        let key = p.key;
        match p.kind {
            ReqKind::Lock { nested, .. } => {
                if self.state(key).acq == (Acq::Requested { req: id }) {
                    self.fail(ctx, out, key, nested);
                }
            }
            ReqKind::Expire { .. } => {
                if self.state(key).acq == (Acq::Expiring { req: id }) {
                    self.fail(ctx, out, key, false);
                }
            }
            // unlock() raises the error: the application gives the lock up and moves on.
            ReqKind::Unlock | ReqKind::UnlockGet { cleanup: false, .. } => {
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable })
            }
            ReqKind::Renew { seq, .. } | ReqKind::Info { then: AfterInfo::Renew { seq } } => {
                if self.state(key).renew_seq == Some(seq) {
                    self.renewal_failed(ctx, key, seq, why);
                }
            }
            ReqKind::Info { then: AfterInfo::Lock { nested } } => {
                if self.state(key).acq == (Acq::Requested { req: id }) {
                    self.fail(ctx, out, key, nested);
                }
            }
            ReqKind::Subscribe => {
                if self.state(key).acq == (Acq::Subscribing { req: id }) {
                    self.state(key).subscribed = false;
                    self.fail(ctx, out, key, false);
                }
            }
            ReqKind::Cleanup
            | ReqKind::UnlockGet { cleanup: true, .. }
            | ReqKind::Unsubscribe
            | ReqKind::Resubscribe => {}
        }
    }

    fn on_unlock_message(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey) {
        let st = self.state(key);
        if !st.subscribed || st.acq == Acq::Idle {
            return;
        }
        out.push(LockEvent::Notified { key });
        match st.acq {
            Acq::WaitUnlock { .. } => self.attempt(ctx, key, false),
            _ => st.permit = true,
        }
    }

    fn on_sentinel_event(&mut self, ctx: &mut Ctx<Redis>, e: SentinelEvent) {
        match e {
            SentinelEvent::SwitchMaster { config_epoch, primary } => self.switch_to(ctx, config_epoch, primary),
            SentinelEvent::ReplicaDown { node } => {
                self.v.replicas_down.insert(node);
            }
            SentinelEvent::ReplicaUp { node } => {
                self.v.replicas_down.remove(&node);
            }
        }
    }

    /// Follows the primary of the highest configuration epoch announced.
    fn switch_to(&mut self, ctx: &mut Ctx<Redis>, config_epoch: u64, primary: NodeId) {
        if config_epoch < self.v.config_epoch || primary == self.v.primary {
            return;
        }
        self.v.config_epoch = config_epoch;
        let old = self.v.primary;
        self.v.replicas_down.insert(old);
        self.v.replicas_down.remove(&primary);
        self.v.primary = primary;
        let name = ctx.name_of(primary);
        ctx.note(|| format!("primary is now {name} (config epoch {config_epoch})"));
        // Redisson re-subscribes its channels on the new primary.
        let waiting: Vec<LockKey> = self.v.keys.iter().filter(|(_, s)| s.subscribed).map(|(k, _)| *k).collect();
        for key in waiting {
            self.request(ctx, key, Command::Subscribe { key }, None, ReqKind::Resubscribe);
        }
    }
}

impl LockClient<Redis> for RedisLockClient {
    fn on_start(&mut self, ctx: &mut Ctx<Redis>, _out: &mut LockEvents) {
        self.v.servers =
            (0..self.cfg.servers).map(|i| ctx.node_named(&format!("server-{i}")).expect("server exists")).collect();
        self.v.sentinels = (0..self.cfg.sentinels)
            .map(|i| ctx.node_named(&format!("sentinel-{i}")).expect("sentinel exists"))
            .collect();
        self.v.primary = self.v.servers[0];
        self.v.config_epoch = 0;
        self.v.owner = ctx.rng().gen();
        for s in self.v.sentinels.clone() {
            ctx.send(s, GetMasterAddr);
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey, mode: LockMode) {
        let _ = (out, mode); // exclusive only: the model rejects read_fraction > 0
        let st = self.state(key);
        st.no_sync_retries = 0;
        let nested = st.held.is_some();
        self.attempt(ctx, key, nested);
    }

    fn release(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, key: LockKey) {
        let Some(mut held) = self.state(key).held else {
            // Nothing held (it cannot happen with the shared driver): the call returns.
            out.push(LockEvent::Released { key });
            return;
        };
        let value = held.value;
        held.count = held.count.saturating_sub(1);
        let all = held.count == 0 || self.cfg.unlock == UnlockMode::Del || !self.cfg.watchdog;
        let st = self.state(key);
        if all {
            st.held = None;
            st.renew_seq = None;
        } else {
            st.held = Some(held);
        }
        self.send_unlock(ctx, key, value, false);
    }

    fn cancel(&mut self, ctx: &mut Ctx<Redis>, _out: &mut LockEvents, key: LockKey) {
        // The request in flight (if any) stays pending: a grant that arrives now is unlocked.
        self.state(key).acq = Acq::Idle;
        self.unsubscribe(ctx, key);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, from: NodeId, msg: RedisMsg) {
        if !self.v.closed.is_empty() {
            // An answer: the connection to `from` is open again.
            self.v.closed.remove(&from);
        }
        match msg {
            RedisMsg::Response(r) => self.on_response(ctx, out, r),
            RedisMsg::UnlockMessage(m) => self.on_unlock_message(ctx, out, m.key),
            RedisMsg::SentinelEvent(e) => self.on_sentinel_event(ctx, e),
            RedisMsg::MasterAddr(m) => self.switch_to(ctx, m.config_epoch, m.primary),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, _timer: TimerId, tag: RedisTimer) {
        let RedisTimer::Client(t) = tag else { return };
        match t {
            ClientTimer::RequestTimeout { id } => self.on_request_timeout(ctx, out, id, "response timeout"),
            ClientTimer::Resend { id } => self.resend(ctx, id),
            ClientTimer::Retry { key, seq } => {
                if self.state(key).acq == (Acq::RetryWait { seq }) {
                    self.attempt(ctx, key, false);
                }
            }
            ClientTimer::WaitUnlock { key, seq } => {
                if self.state(key).acq == (Acq::WaitUnlock { seq }) {
                    self.attempt(ctx, key, false);
                }
            }
            ClientTimer::Renew { key, seq } => {
                let st = self.state(key);
                if st.renew_seq == Some(seq) && st.held.is_some() {
                    match self.replicas_to_wait_for() {
                        Some(available) => self.send_renewal(ctx, key, seq, available),
                        // Only a renewal that can WAIT asks INFO first.
                        None if self.cfg.renewal_wait => {
                            self.ask_replica_count(ctx, key, AfterInfo::Renew { seq });
                        }
                        None => self.send_renewal(ctx, key, seq, 0),
                    }
                }
            }
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Redis>, out: &mut LockEvents, peer: NodeId) {
        // The connection closed: every attempt on it has failed (a connection error), and is
        // retried like a timed-out one. Idempotent: an attempt already failed is not in flight.
        self.v.closed.insert(peer);
        let ids: Vec<u64> =
            self.v.pending.iter().filter(|(_, p)| p.in_flight && p.to == peer).map(|(id, _)| *id).collect();
        for id in ids {
            self.on_request_timeout(ctx, out, id, "connection reset");
        }
    }

    fn reentrant(&self) -> bool {
        self.cfg.watchdog
    }

    /// The Redisson owner id and every lock value this client drew and still holds or waits on:
    /// the keyspace only compares them for equality (`set_nx_px`, `del_if_equals`, `touch`, the
    /// hash's `contains_key`/`get` by owner) and the client too (`on_unlock_get`); nothing
    /// orders by them or derives a delay from them.
    fn identity_values(&self, out: &mut Vec<u64>) {
        use locksim_simulator::fingerprint::identity_hash;
        out.push(identity_hash(&self.v.owner));
        for (_, p) in self.v.pending.iter() {
            if let ReqKind::Lock { value, .. } | ReqKind::Expire { value, .. } | ReqKind::UnlockGet { value, .. } =
                &p.kind
            {
                out.push(identity_hash(value));
            }
            // A compare-and-delete unlock's value lives on only in its command once the hold ends.
            if let Command::SetNxPx { value, .. } | Command::SetNx { value, .. } | Command::DelIfEquals { value, .. } =
                &p.cmd
            {
                out.push(identity_hash(value));
            }
        }
        for (_, st) in self.v.keys.iter() {
            if let Some(held) = &st.held {
                out.push(identity_hash(&held.value));
            }
        }
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
