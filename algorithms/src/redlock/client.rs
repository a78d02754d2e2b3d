//! The Redlock client library (redis.io "Distributed Locks with Redis", the reference redlock-rb,
//! go-redsync/redsync, mike-marcacci/node-redlock): one acquisition is a round of `SET NX PX` on
//! every master, judged by quorum and by the validity left after the time the round took.
//!
//! An attempt, as in redlock-rb `lock()`:
//! 1. note the start on the `elapsed_clock` (wall: redlock-rb `Time.now`, node-redlock
//!    `Date.now`; monotonic: redsync `time.Now()`, whose `Sub` uses the monotonic reading);
//!    one random value per `acquire` call, kept across retries (redlock-rb
//!    `get_unique_lock_id`, redsync `genValueFunc` once per `Lock`);
//! 2. `SET key value NX PX ttl` on the masters (`ttl` a whole number of milliseconds, as every
//!    library sends it: redlock-rb's lock script `SET … PX ARGV[2]`, node-redlock's `acquire`
//!    refuses a fractional duration, redsync's extend sends `int(m.expiry/time.Millisecond)`),
//!    each waited for at most `node_timeout_ms`
//!    (a master that does not answer in time counts as a failure);
//! 3. validity = ttl − elapsed − (drift_factor × ttl + drift_extra_ms); acquired when
//!    successes ≥ N/2 + 1 and validity > 0 (redlock-rb: `n >= @quorum && validity_time > 0`;
//!    node-redlock checks the quorum only, and measures elapsed from the call's start);
//! 4. otherwise the unlock script on ALL masters, including those that did not answer (a SET that
//!    timed out may still have landed), then a random `retry_delay_ms` and another attempt, up to
//!    the library's attempt count ([`Library::attempts`]); then the call fails. node-redlock
//!    unlocks once, after its last attempt.
//!
//! A master whose process was killed resets its connections ([`LockClient::on_reset`]): the
//! request outstanding on that connection fails at once, as the real client's socket read
//! raises `ECONNRESET`, instead of waiting out `node_timeout_ms`.
//!
//! `requests` decides how a round visits the masters (the same for SET and unlock rounds):
//! - `sequential` (redlock-rb): one master after another, each with its own timeout; every master
//!   is visited even when the outcome is already decided. Latency = sum of the round trips.
//! - `parallel` (redsync `actOnPoolsAsync`): all at once, wait for every answer or the timeout.
//!   Latency = the largest round trip.
//! - `parallel_quorum` (node-redlock `_attemptOperation`): all at once, decided at the quorum-th
//!   success (or the quorum-th refusal). Latency = the quorum-th smallest round trip.
//!
//! Holding: the library treats the lock as held until the validity runs out or the application
//! releases. `lock()` hands the application the validity (redlock-rb `lib/redlock/client.rb`:
//! `lock` returns `{validity:, resource:, value:}`; go-redsync/redsync `mutex.go`: `Until()`, set
//! to `now.Add(expiry - now.Sub(start) - drift)` after the quorum, on Go's monotonic reading).
//! What an application that respects it (`respect_validity`) does with it, in two places:
//! - just before it writes, it compares its own monotonic clock with the validity end
//!   ([`LockClient::check_before_write`]: `now < validity end`, else it abandons the section
//!   without writing). This is the check that matters after a pause: the application's
//!   overdue hold ends first on resuming, and the check sees that the validity has run out.
//!   Only a pause between the check and the write (the workload's `check_to_write_ms`,
//!   Kleppmann's case) defeats it.
//! - while it still works, the validity end is its deadline (a `context.WithDeadline(ctx,
//!   m.Until())`): when the validity runs out before the section reaches its check, the library
//!   reports `Lost` with `honour = true` and the section stops there. Once the check has passed,
//!   the write is on its way and the deadline no longer stops it: `Lost` is only reported
//!   (`honour = false`), as it always is without `respect_validity`.
//!
//! Extension (`extend_every_ms` > 0: the application calls redsync's `Mutex.Extend` every that
//! long while it holds; go-redsync/redsync `mutex.go` `ExtendContext`, lines 158-173, `touch` 279-296 @v4.12.1):
//! the extend script on every master at once (`actOnPoolsAsync`), waiting for every answer (or
//! `node_timeout_ms`, which stands for the caller's context: `ExtendContext` sets no timeout of
//! its own), whatever `requests` is; extended when at least a quorum answered 1 and
//! `until = now + expiry − elapsed − expiry × driftFactor` is still ahead. The script is
//! `touchScript` (`if GET == value then PEXPIRE`), or with `extend = "pexpire_or_set"`
//! `touchWithSetNXScript` (v4.12.0, PR #149, `WithSetNXOnExtend`: `elseif SET NX PX`), which
//! puts the key back on a master that restarted empty. A successful extension gives the holder a
//! new validity; a failed one (`ErrExtendFailed`, or fewer than a quorum) ends the hold: the
//! application stops its section (`Lost`, honoured unless its write is already on its way), as a
//! caller of `Extend` does on `false`. Nothing is extended after the validity has run out.
//!
//! Release: the unlock script on every master (redlock-rb `unlock`). redlock-rb ignores every
//! per-node error and the release reads as done; redsync and node-redlock raise when fewer than
//! a quorum of masters deleted the key, reported as `ReleaseFailed`. No fencing token: Redlock
//! has none, so grants carry `token: None`.
//!
//! Request ids keep counting across a client crash: they stand for the new connections a
//! restarted client opens, on which no reply meant for the old process can arrive. Everything
//! else the library knows is volatile (`Volatile`). A timer is told apart from a stale one by
//! its [`TimerId`], which the lock's phase holds.

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_MS};
use rand::Rng;

use super::library::Library;
use super::protocol::{ClientTimer, Command, RedlockMsg, RedlockTimer, Request};
use super::Redlock;
use crate::smallmap::SmallMap;

mod fingerprint;

/// How a round visits the masters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestMode {
    /// One master after another, each with its own timeout (redlock-rb).
    Sequential,
    /// All at once; wait for every answer or the timeout (redsync).
    Parallel,
    /// All at once; decided at the quorum-th success or refusal (node-redlock).
    ParallelQuorum,
}

impl RequestMode {
    /// The `requests` parameter: `parallel`, `parallel_quorum`, anything else `sequential`.
    pub fn parse(s: &str) -> RequestMode {
        match s {
            "parallel" => RequestMode::Parallel,
            "parallel_quorum" => RequestMode::ParallelQuorum,
            _ => RequestMode::Sequential,
        }
    }
}

/// The clock an attempt's elapsed time is measured on (`elapsed_clock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElapsedClock {
    /// The wall clock: a forward step makes the round look longer, a backward one shorter.
    Wall,
    /// The monotonic clock.
    Mono,
}

impl ElapsedClock {
    /// The `elapsed_clock` parameter: `mono`, anything else `wall`.
    pub fn parse(s: &str) -> ElapsedClock {
        if s == "mono" {
            ElapsedClock::Mono
        } else {
            ElapsedClock::Wall
        }
    }
}

/// The client's settings (from the model's parameters, after the `client` preset).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The library (`client`): what it does with failed attempts, validity and unlock errors.
    pub library: Library,
    /// The clock elapsed time is measured on (`elapsed_clock`).
    pub elapsed_clock: ElapsedClock,
    /// Attempts one acquire call makes (`retries`, counted as the library counts it).
    pub attempts: u32,
    /// The number of masters, N (`masters`).
    pub masters: usize,
    /// The lock's time to live (`ttl_ms`), whole milliseconds: the `PX` the library sends, and
    /// the ttl its validity arithmetic starts from.
    pub ttl_ms: u64,
    /// drift_factor × ttl + drift_extra_ms, in nanoseconds.
    pub drift_ns: Nanos,
    /// How long to wait for one master (sequential) or a whole round (parallel)
    /// (`node_timeout_ms`).
    pub node_timeout_ns: Nanos,
    /// The random wait between a failed attempt and the next, milliseconds.
    pub retry_delay_ms: Dist,
    /// How a round visits the masters (`requests`).
    pub requests: RequestMode,
    /// Whether the application respects the validity: it checks it just before writing
    /// ([`LockClient::check_before_write`]) and stops a section still working when it runs out.
    pub respect_validity: bool,
    /// How often the application calls `Extend` while it holds (`extend_every_ms`); `None`:
    /// never.
    pub extend_every_ns: Option<Nanos>,
    /// The extend script sets a missing key (`extend = "pexpire_or_set"`, redsync
    /// `WithSetNXOnExtend`).
    pub extend_sets: bool,
}

impl ClientConfig {
    /// Successes needed: N/2 + 1 (integer division, as every implementation computes it).
    pub fn quorum(&self) -> usize {
        quorum(self.masters)
    }

    /// The time to live in nanoseconds, for the validity arithmetic.
    pub fn ttl_ns(&self) -> Nanos {
        self.ttl_ms * NS_PER_MS
    }
}

/// N/2 + 1.
pub fn quorum(masters: usize) -> usize {
    masters / 2 + 1
}

/// validity = ttl − elapsed − drift, in signed nanoseconds (negative when the round took too long;
/// a wall-clock elapsed time may itself be negative after a backward step).
pub fn validity_ns(ttl_ns: Nanos, elapsed_ns: i64, drift_ns: Nanos) -> i64 {
    ttl_ns as i64 - elapsed_ns - drift_ns as i64
}

/// The drift allowance: drift_factor × ttl + drift_extra_ms (redlock-rb adds 2 ms for Redis's
/// 1 ms expiry precision plus 1 ms minimum drift).
pub fn drift_ns(ttl_ms: f64, drift_factor: f64, drift_extra_ms: f64) -> Nanos {
    ms_to_ns(drift_factor * ttl_ms + drift_extra_ms)
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// What a round is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// SET NX PX on the masters.
    Acquire,
    /// The unlock script after a failed attempt (then retry or fail).
    UnlockAfterFailure,
    /// The unlock script for the application's release.
    Release,
    /// The extend script while holding (the phase stays `Holding`; the round is `Lock::extend`).
    Extend,
}

/// One pass over the masters.
#[derive(Clone, Debug)]
struct Round {
    purpose: Purpose,
    start: Instant,
    /// Sequential: the master in flight (or the next one to ask).
    next: usize,
    /// Requests sent and not yet answered or timed out: request id → master index.
    outstanding: SmallMap<u64, usize>,
    /// Answers `OK` / 1.
    ok: usize,
    /// Answers nil / 0.
    nil: usize,
    /// Requests that got no answer in time, or whose connection was reset.
    failed: usize,
    /// The timer for the master in flight (sequential) or the whole round (parallel).
    timer: Option<TimerId>,
}

impl Round {
    /// Fails every request of this round outstanding on master `m`, whose connection was reset:
    /// drops each from the round and from the client's `pending` map, counts it as failed, and
    /// returns how many there were.
    fn fail_requests_on(&mut self, m: usize, pending: &mut SmallMap<u64, LockKey>) -> usize {
        let before = self.outstanding.len();
        self.outstanding.retain(|id, mi| {
            let on_m = *mi == m;
            if on_m {
                pending.remove(id);
            }
            !on_m
        });
        let failed = before - self.outstanding.len();
        self.failed += failed;
        failed
    }
}

#[derive(Clone, Debug)]
enum Phase {
    /// Between two phases inside one handler (a round just closed, an attempt about to start);
    /// never left in place when a handler returns.
    Between,
    Round(Round),
    RetryWait {
        timer: TimerId,
    },
    /// The validity timer runs until it fires (then `Lost`) or the application releases.
    Holding {
        validity: Option<TimerId>,
        /// When the validity runs out, on this client's monotonic clock (signed: the grant's
        /// reading plus a validity that may be ≤ 0 under node-redlock).
        validity_end_mono_ns: i64,
        /// The application's check before its write passed: the write is committed.
        checked: bool,
        /// The application's next `Extend` call (`extend_every_ms`), if it extends.
        extend_due: Option<TimerId>,
    },
}

/// Both clock readings at one moment: the elapsed time is taken on `elapsed_clock`.
#[derive(Clone, Copy, Debug)]
struct Instant {
    mono_ns: Nanos,
    wall_ns: i64,
}

impl Instant {
    fn now(ctx: &Ctx<Redlock>) -> Instant {
        Instant { mono_ns: ctx.now_mono_ns(), wall_ns: ctx.now_wall_ns() }
    }

    /// The time from `self` to `now` on `clock`, signed.
    fn elapsed_ns(self, now: Instant, clock: ElapsedClock) -> i64 {
        match clock {
            ElapsedClock::Mono => now.mono_ns as i64 - self.mono_ns as i64,
            ElapsedClock::Wall => now.wall_ns - self.wall_ns,
        }
    }
}

/// One lock key this client is acquiring, holding or releasing.
#[derive(Clone, Debug)]
struct Lock {
    value: u64,
    /// When the acquire call started (node-redlock measures the validity from here).
    call_start: Instant,
    /// Attempts started so far in this acquire call.
    attempts: u32,
    /// Answers (OK or nil) in the last SET round: none at all makes the failure `Unavailable`.
    last_answers: usize,
    phase: Phase,
    /// An extend round in flight while `phase` is `Holding`.
    extend: Option<Round>,
}

/// What the library loses when its node crashes.
#[derive(Clone, Debug, Default)]
struct Volatile {
    locks: SmallMap<LockKey, Lock>,
    /// Request id → key, for requests whose answer the client still waits for.
    pending: SmallMap<u64, LockKey>,
}

/// The Redlock client library of one client node.
#[derive(Clone, Debug)]
pub struct RedlockClient {
    cfg: ClientConfig,
    /// The masters' node ids, resolved from their names at the first start (the same after a
    /// restart).
    master_ids: Vec<NodeId>,
    /// Survives a crash (see the module header): a reply to a request of the crashed process can
    /// never match a request of the restarted one.
    next_request_id: u64,
    v: Volatile,
    /// A scratch buffer for `on_reset`, empty between calls (so a crash has nothing to clear).
    reset_keys: Vec<LockKey>,
}

/// A client keeps its configuration, the masters' ids and its request counter (see
/// [`RedlockClient`]); the locks in progress and the scratch buffer are rebuilt empty.
impl Durable for RedlockClient {
    type Disk = (ClientConfig, Vec<NodeId>, u64);

    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.master_ids, self.next_request_id)
    }

    fn from_disk((cfg, master_ids, next_request_id): Self::Disk) -> Self {
        RedlockClient { cfg, master_ids, next_request_id, v: Volatile::default(), reset_keys: Vec::new() }
    }
}

impl RedlockClient {
    /// A client library; it finds the masters (`server-0 …`) by name when it starts.
    pub fn new(cfg: ClientConfig) -> RedlockClient {
        Self::from_disk((cfg, Vec::new(), 1))
    }

    fn resolve_masters(&mut self, ctx: &mut Ctx<Redlock>) {
        if self.master_ids.len() != self.cfg.masters {
            self.master_ids = (0..self.cfg.masters)
                .map(|i| {
                    ctx.node_named(&format!("server-{i}"))
                        .unwrap_or_else(|| panic!("redlock: no node named server-{i}"))
                })
                .collect();
        }
    }

    fn disarm(ctx: &mut Ctx<Redlock>, timer: Option<TimerId>) {
        if let Some(id) = timer {
            ctx.cancel_timer(id);
        }
    }

    fn command(&self, purpose: Purpose, key: LockKey, value: u64) -> Command {
        let px_ms = self.cfg.ttl_ms;
        match purpose {
            Purpose::Acquire => Command::SetNx { key, value, px_ms },
            Purpose::UnlockAfterFailure | Purpose::Release => Command::Unlock { key, value },
            Purpose::Extend => Command::Touch { key, value, px_ms, set_if_missing: self.cfg.extend_sets },
        }
    }

    /// Sends `purpose`'s command to master `m` and records it as outstanding in `round`.
    fn send_to(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey, value: u64, round: &mut Round, m: usize) {
        let id = self.next_request_id;
        self.next_request_id += 1;
        let cmd = self.command(round.purpose, key, value);
        round.outstanding.insert(id, m);
        self.v.pending.insert(id, key);
        ctx.send(self.master_ids[m], Request { id, cmd });
    }

    /// Starts a round on `key` and installs it as the lock's phase.
    fn start_round(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey, purpose: Purpose) {
        let value = self.v.locks[&key].value;
        let mut round = Round {
            purpose,
            start: Instant::now(ctx),
            next: 0,
            outstanding: SmallMap::with_capacity(self.cfg.masters),
            ok: 0,
            nil: 0,
            failed: 0,
            timer: None,
        };
        match self.cfg.requests {
            RequestMode::Sequential => self.send_to(ctx, key, value, &mut round, 0),
            RequestMode::Parallel | RequestMode::ParallelQuorum => {
                for m in 0..self.cfg.masters {
                    self.send_to(ctx, key, value, &mut round, m);
                }
            }
        }
        round.timer = Some(ctx.set_timer(self.cfg.node_timeout_ns, ClientTimer::NodeTimeout { key }));
        self.v.locks.get_mut(&key).expect("lock").phase = Phase::Round(round);
    }

    /// Whether the round has its answer, under the request mode.
    fn decided(&self, round: &Round) -> bool {
        let n = self.cfg.masters;
        let done = round.ok + round.nil + round.failed;
        match self.cfg.requests {
            RequestMode::Sequential | RequestMode::Parallel => done == n,
            RequestMode::ParallelQuorum => {
                let q = self.cfg.quorum();
                round.ok >= q || round.nil + round.failed >= q || done == n
            }
        }
    }

    /// After an answer or a timeout: ask the next master (sequential) or close the round.
    fn advance(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, key: LockKey) {
        let Some(lock) = self.v.locks.get(&key) else { return };
        // Most answers of a parallel round only count: the round stays as it is, so it is not
        // moved out and back (a copy of the round each way; 5% of a Redlock run in a profile).
        if let Phase::Round(round) = &lock.phase {
            let next_due = self.cfg.requests == RequestMode::Sequential && round.outstanding.is_empty();
            if !next_due && !self.decided(round) {
                return;
            }
        }
        let lock = self.v.locks.get_mut(&key).expect("lock");
        let Phase::Round(mut round) = std::mem::replace(&mut lock.phase, Phase::Between) else {
            unreachable!("advance outside a round")
        };
        let value = lock.value;
        if self.decided(&round) {
            Self::disarm(ctx, round.timer.take());
            // Answers still outstanding (parallel_quorum) are no longer waited for.
            for id in std::mem::take(&mut round.outstanding).into_keys() {
                self.v.pending.remove(&id);
            }
            self.finish(ctx, out, key, round);
        } else {
            if self.cfg.requests == RequestMode::Sequential && round.outstanding.is_empty() {
                round.next += 1;
                Self::disarm(ctx, round.timer.take());
                let m = round.next;
                self.send_to(ctx, key, value, &mut round, m);
                round.timer = Some(ctx.set_timer(self.cfg.node_timeout_ns, ClientTimer::NodeTimeout { key }));
            }
            self.v.locks.get_mut(&key).expect("lock").phase = Phase::Round(round);
        }
    }

    fn finish(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, key: LockKey, round: Round) {
        let n = self.cfg.masters;
        let now = Instant::now(ctx);
        let lib = self.cfg.library;
        match round.purpose {
            Purpose::Acquire => {
                let q = self.cfg.quorum();
                let lock = self.v.locks.get_mut(&key).expect("lock");
                let start = if lib.validity_from_call_start() { lock.call_start } else { round.start };
                let elapsed_ns = start.elapsed_ns(now, self.cfg.elapsed_clock);
                let validity = validity_ns(self.cfg.ttl_ns(), elapsed_ns, self.cfg.drift_ns);
                lock.last_answers = round.ok + round.nil;
                let (ok, attempt) = (round.ok, lock.attempts);
                if round.ok >= q && (validity > 0 || !lib.checks_validity()) {
                    ctx.note(|| {
                        format!(
                            "redlock granted lock{key}: {ok}/{n} masters, elapsed_ms={:.3} validity_ms={:.3}",
                            ms(elapsed_ns),
                            ms(validity)
                        )
                    });
                    // node-redlock may hand out a lock whose validity is already gone: it is
                    // reported lost at once.
                    let validity_end_mono_ns = now.mono_ns as i64 + validity;
                    let validity = Some(ctx.set_timer(validity.max(0) as Nanos, ClientTimer::Validity { key }));
                    let extend_due = self.cfg.extend_every_ns.map(|d| ctx.set_timer(d, ClientTimer::ExtendDue { key }));
                    self.v.locks.get_mut(&key).expect("lock").phase =
                        Phase::Holding { validity, validity_end_mono_ns, checked: false, extend_due };
                    out.push(LockEvent::Granted { key, token: None });
                } else {
                    let last = attempt >= self.cfg.attempts;
                    let unlock = lib.unlocks_each_failed_attempt() || last;
                    ctx.note(|| {
                        format!(
                            "redlock attempt {attempt} on lock{key} failed: {ok}/{n} masters (quorum {q}), elapsed_ms={:.3} validity_ms={:.3}; {}",
                            ms(elapsed_ns),
                            ms(validity),
                            if unlock { format!("unlocking all {n}") } else { "retrying without unlocking".into() }
                        )
                    });
                    if unlock {
                        self.start_round(ctx, key, Purpose::UnlockAfterFailure);
                    } else {
                        self.retry_or_fail(ctx, out, key);
                    }
                }
            }
            Purpose::UnlockAfterFailure => self.retry_or_fail(ctx, out, key),
            Purpose::Extend => unreachable!("an extend round is closed by finish_extend"),
            Purpose::Release => {
                let deleted = round.ok;
                let lock = self.v.locks.remove(&key);
                let raise = lib.release_raises() && deleted < self.cfg.quorum();
                ctx.note(|| {
                    format!(
                        "redlock released lock{key}: deleted on {deleted}/{n} masters{}",
                        if raise { " (fewer than a quorum: the unlock call raises)" } else { "" }
                    )
                });
                drop(lock);
                if raise {
                    let reason = if round.ok + round.nil == 0 { FailReason::Unavailable } else { FailReason::Refused };
                    out.push(LockEvent::ReleaseFailed { key, reason });
                } else {
                    out.push(LockEvent::Released { key });
                }
            }
        }
    }

    /// After a failed attempt (and its unlock round, if any): wait and try again, or fail the call.
    fn retry_or_fail(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, key: LockKey) {
        {
            let lock = self.v.locks.get_mut(&key).expect("lock");
            if lock.attempts < self.cfg.attempts {
                let delay_ns = ms_to_ns(self.cfg.retry_delay_ms.sample_non_negative(ctx.rng()));
                let timer = ctx.set_timer(delay_ns, ClientTimer::RetryDelay { key });
                self.v.locks.get_mut(&key).expect("lock").phase = Phase::RetryWait { timer };
            } else {
                let reason = if lock.last_answers == 0 { FailReason::Unavailable } else { FailReason::Refused };
                let attempts = lock.attempts;
                ctx.note(|| format!("redlock gives up lock{key} after {attempts} attempts"));
                self.v.locks.remove(&key);
                out.push(LockEvent::Failed { key, reason });
            }
        }
    }

    fn start_attempt(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey) {
        self.v.locks.get_mut(&key).expect("lock").attempts += 1;
        self.start_round(ctx, key, Purpose::Acquire);
    }

    /// Starts an extend round on a held lock: the script on every master at once, one timer
    /// for the round (redsync `actOnPoolsAsync`, whatever `requests` is).
    fn start_extend(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey) {
        let value = self.v.locks[&key].value;
        let mut round = Round {
            purpose: Purpose::Extend,
            start: Instant::now(ctx),
            next: 0,
            outstanding: SmallMap::with_capacity(self.cfg.masters),
            ok: 0,
            nil: 0,
            failed: 0,
            timer: None,
        };
        for m in 0..self.cfg.masters {
            self.send_to(ctx, key, value, &mut round, m);
        }
        round.timer = Some(ctx.set_timer(self.cfg.node_timeout_ns, ClientTimer::NodeTimeout { key }));
        self.v.locks.get_mut(&key).expect("lock").extend = Some(round);
    }

    /// Drops an extend round in flight: its timer and the requests it still waits for.
    fn drop_extend(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey) {
        let Some(lock) = self.v.locks.get_mut(&key) else { return };
        if let Some(mut round) = lock.extend.take() {
            Self::disarm(ctx, round.timer.take());
            for id in round.outstanding.keys() {
                self.v.pending.remove(id);
            }
        }
    }

    /// Closes the extend round once every master answered (or the round timed out): a new
    /// validity and the next call, or the end of the hold.
    fn finish_extend(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, key: LockKey) {
        let n = self.cfg.masters;
        let q = self.cfg.quorum();
        let now = Instant::now(ctx);
        let Some(lock) = self.v.locks.get_mut(&key) else { return };
        let Some(mut round) = lock.extend.take() else { return };
        Self::disarm(ctx, round.timer.take());
        for id in std::mem::take(&mut round.outstanding).into_keys() {
            self.v.pending.remove(&id);
        }
        let lock = self.v.locks.get_mut(&key).expect("lock");
        let Phase::Holding { validity, validity_end_mono_ns, checked, extend_due } = &mut lock.phase else { return };
        let elapsed_ns = round.start.elapsed_ns(now, self.cfg.elapsed_clock);
        let left = validity_ns(self.cfg.ttl_ns(), elapsed_ns, self.cfg.drift_ns);
        let ok = round.ok;
        Self::disarm(ctx, validity.take());
        if ok >= q && left > 0 {
            ctx.note(|| format!("redlock extended lock{key}: {ok}/{n} masters, validity_ms={:.3}", ms(left)));
            *validity_end_mono_ns = now.mono_ns as i64 + left;
            *validity = Some(ctx.set_timer(left as Nanos, ClientTimer::Validity { key }));
            *extend_due = self.cfg.extend_every_ns.map(|d| ctx.set_timer(d, ClientTimer::ExtendDue { key }));
        } else {
            // redsync: `false` (fewer than a quorum, or ErrExtendFailed); its caller stops.
            let honour = !*checked;
            ctx.note(|| {
                format!(
                    "redlock extend of lock{key} failed: {ok}/{n} masters (quorum {q}), validity_ms={:.3}; the hold ends (honour={honour})",
                    ms(left)
                )
            });
            out.push(LockEvent::Lost { key, honour });
        }
    }

    /// Drops a lock's timers and outstanding requests (cancel, crash of an attempt).
    fn forget(&mut self, ctx: &mut Ctx<Redlock>, key: LockKey) -> Option<Lock> {
        self.drop_extend(ctx, key);
        let mut lock = self.v.locks.remove(&key)?;
        match &mut lock.phase {
            Phase::Round(round) => {
                Self::disarm(ctx, round.timer.take());
                for id in round.outstanding.keys() {
                    self.v.pending.remove(id);
                }
            }
            // The retry timer is left to fire: its id no longer matches any lock's phase.
            Phase::RetryWait { .. } | Phase::Between => {}
            Phase::Holding { validity, extend_due, .. } => {
                Self::disarm(ctx, validity.take());
                Self::disarm(ctx, extend_due.take());
            }
        }
        Some(lock)
    }
}

impl LockClient<Redlock> for RedlockClient {
    fn on_start(&mut self, ctx: &mut Ctx<Redlock>, _out: &mut LockEvents) {
        self.resolve_masters(ctx);
    }

    fn acquire(&mut self, ctx: &mut Ctx<Redlock>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        self.resolve_masters(ctx);
        // A lock the application abandoned after a Lost notice without releasing: its keys
        // expire on their own (the validity has already run out).
        self.forget(ctx, key);
        let value = ctx.rng().gen::<u64>();
        let call_start = Instant::now(ctx);
        self.v
            .locks
            .insert(key, Lock { value, call_start, attempts: 0, last_answers: 0, phase: Phase::Between, extend: None });
        self.start_attempt(ctx, key);
    }

    fn release(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, key: LockKey) {
        let holding = matches!(self.v.locks.get(&key).map(|l| &l.phase), Some(Phase::Holding { .. }));
        if !holding {
            // Nothing held under this key (the library never granted it): nothing to unlock.
            out.push(LockEvent::Released { key });
            return;
        }
        // An Extend call in flight is dropped: the application unlocks instead.
        self.drop_extend(ctx, key);
        if let Some(Lock { phase: Phase::Holding { validity, extend_due, .. }, .. }) = self.v.locks.get_mut(&key) {
            Self::disarm(ctx, validity.take());
            Self::disarm(ctx, extend_due.take());
        }
        self.start_round(ctx, key, Purpose::Release);
    }

    fn cancel(&mut self, ctx: &mut Ctx<Redlock>, _out: &mut LockEvents, key: LockKey) {
        let Some(lock) = self.forget(ctx, key) else { return };
        // A SET round in flight may have landed on some masters: clean them up without waiting.
        if let Phase::Round(Round { purpose: Purpose::Acquire, .. }) = lock.phase {
            for m in 0..self.cfg.masters {
                let id = self.next_request_id;
                self.next_request_id += 1;
                let cmd = Command::Unlock { key, value: lock.value };
                ctx.send(self.master_ids[m], Request { id, cmd });
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, _from: NodeId, msg: RedlockMsg) {
        let RedlockMsg::Reply(reply) = msg else { return };
        // Late (after its timeout), duplicated, or for a round already decided: ignored.
        let Some(key) = self.v.pending.remove(&reply.id) else { return };
        if let Some(Lock { extend: Some(round), .. }) = self.v.locks.get_mut(&key) {
            if round.outstanding.remove(&reply.id).is_some() {
                if reply.ok {
                    round.ok += 1;
                } else {
                    round.nil += 1;
                }
                if round.outstanding.is_empty() {
                    self.finish_extend(ctx, out, key);
                }
                return;
            }
        }
        let Some(Lock { phase: Phase::Round(round), .. }) = self.v.locks.get_mut(&key) else { return };
        if round.outstanding.remove(&reply.id).is_none() {
            return;
        }
        if reply.ok {
            round.ok += 1;
        } else {
            round.nil += 1;
        }
        if round.purpose == Purpose::Acquire && !reply.ok {
            out.push(LockEvent::Refused { key });
        }
        self.advance(ctx, out, key);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, timer: TimerId, tag: RedlockTimer) {
        let RedlockTimer::Client(tag) = tag else { return };
        let key = tag.key();
        let Some(lock) = self.v.locks.get_mut(&key) else { return };
        if let (ClientTimer::NodeTimeout { .. }, Some(round)) = (tag, lock.extend.as_mut()) {
            if round.timer == Some(timer) {
                // The masters that have not answered count as failures.
                round.timer = None;
                self.finish_extend(ctx, out, key);
                return;
            }
        }
        // Only the timer the lock's phase holds counts; any other is stale.
        match (tag, &mut lock.phase) {
            (ClientTimer::NodeTimeout { .. }, Phase::Round(round)) if round.timer == Some(timer) => {
                // Every request still outstanding has waited node_timeout_ms: a failure each.
                round.timer = None;
                for id in std::mem::take(&mut round.outstanding).into_keys() {
                    self.v.pending.remove(&id);
                    round.failed += 1;
                }
                self.advance(ctx, out, key);
            }
            (ClientTimer::RetryDelay { .. }, Phase::RetryWait { timer: t }) if *t == timer => {
                self.start_attempt(ctx, key)
            }
            (ClientTimer::ExtendDue { .. }, Phase::Holding { extend_due, .. }) if *extend_due == Some(timer) => {
                *extend_due = None;
                self.start_extend(ctx, key);
            }
            (ClientTimer::Validity { .. }, Phase::Holding { validity, checked, extend_due, .. })
                if *validity == Some(timer) =>
            {
                *validity = None;
                // Nothing is extended once the validity is gone.
                Self::disarm(ctx, extend_due.take());
                let checked = *checked;
                self.drop_extend(ctx, key);
                // The deadline stops only a section that has not passed its check yet.
                let honour = self.cfg.respect_validity && !checked;
                ctx.note(|| format!("redlock validity of lock{key} ran out before release (honour={honour})"));
                out.push(LockEvent::Lost { key, honour });
            }
            _ => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Redlock>, out: &mut LockEvents, peer: NodeId) {
        // The connection to a master was closed under an outstanding request: the client's read
        // raises (redlock-rb `lock_instance` rescues it as a failure, redsync and node-redlock
        // count it as an error). Only requests still outstanding count, so a repeated reset
        // changes nothing.
        let Some(m) = self.master_ids.iter().position(|&id| id == peer) else { return };
        // The keys as they are now (advancing one lock may change the map), in a buffer kept
        // between calls: a reset comes with every refused connection, so a new list for each
        // would be an allocation per refused request.
        let mut keys = std::mem::take(&mut self.reset_keys);
        keys.extend(self.v.locks.keys().copied());
        for &key in &keys {
            // An extend round waiting for this master: its request failed.
            if let Some(Lock { extend: Some(round), .. }) = self.v.locks.get_mut(&key) {
                let failed = round.fail_requests_on(m, &mut self.v.pending);
                if failed > 0 && round.outstanding.is_empty() {
                    self.finish_extend(ctx, out, key);
                }
            }
            let Some(Lock { phase: Phase::Round(round), .. }) = self.v.locks.get_mut(&key) else { continue };
            if round.fail_requests_on(m, &mut self.v.pending) == 0 {
                continue;
            }
            ctx.note(|| format!("connection to server-{m} reset: its request for lock{key} failed"));
            self.advance(ctx, out, key);
        }
        keys.clear();
        self.reset_keys = keys;
    }

    /// `respect_validity`: is the validity `lock()` returned still running on my monotonic clock?
    /// Without it the application does not check.
    fn check_before_write(&mut self, ctx: &mut Ctx<Redlock>, _out: &mut LockEvents, key: LockKey) -> bool {
        if !self.cfg.respect_validity {
            return true;
        }
        let now_ns = ctx.now_mono_ns() as i64;
        let Some(Lock { phase: Phase::Holding { validity_end_mono_ns, checked, .. }, .. }) = self.v.locks.get_mut(&key)
        else {
            // No grant behind the section: there is no validity to trust.
            ctx.note(|| format!("redlock check of lock{key}: not held, no write"));
            return false;
        };
        let left_ns = *validity_end_mono_ns - now_ns;
        let ok = left_ns > 0;
        *checked = ok;
        ctx.note(|| {
            format!(
                "redlock check of lock{key} before the write: validity left_ms={:.3}: {}",
                ms(left_ns),
                if ok { "write" } else { "ran out, abandon" }
            )
        });
        ok
    }

    fn reentrant(&self) -> bool {
        false
    }

    /// In the parallel modes the masters are a set: `start_round`, `start_extend` and `cancel`
    /// send to every master at once, a round counts answers (`ok`, `nil`, `failed`) without
    /// remembering who gave them, a reset fails the requests outstanding on that master only,
    /// and each request id is `1 + masters × round + master index` (every id is drawn in a
    /// block of `masters`, in index order), which the fingerprint hashes as (round, master).
    /// Sequential (redlock-rb) visits `server-0`, then `server-1`, …: `Round::next` is a
    /// position in that order, the first master of every round is always the same, so swapping
    /// two masters changes what happens next.
    fn servers_interchangeable(&self) -> bool {
        self.cfg.requests != RequestMode::Sequential
    }

    /// Each lock's value, drawn per `acquire` call: the masters' keyspace only compares it for
    /// equality (`set_nx_px`, `del_if_equals`, `pexpire_if_equals`), and nothing orders by it or
    /// derives a delay from it.
    fn identity_values(&self, out: &mut Vec<u64>) {
        for (_, lock) in self.v.locks.iter() {
            out.push(locksim_simulator::fingerprint::identity_hash(&lock.value));
        }
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_of_the_known_outcome() {
        // 5 sequential masters at 1 ms each, ttl 10 s, factor 0.01, extra 2 ms: 9893 ms.
        let drift = drift_ns(10_000.0, 0.01, 2.0);
        assert_eq!(drift, 102_000_000);
        assert_eq!(validity_ns(10_000_000_000, 5_000_000, drift), 9_893_000_000);
        assert_eq!(validity_ns(10_000_000_000, -1_000_000_000, drift), 10_898_000_000);
        assert!(validity_ns(100_000_000, 99_000_000, drift_ns(100.0, 0.01, 2.0)) < 0);
    }

    #[test]
    fn quorum_is_a_strict_majority() {
        assert_eq!(quorum(1), 1);
        assert_eq!(quorum(2), 2);
        assert_eq!(quorum(3), 2);
        assert_eq!(quorum(4), 3);
        assert_eq!(quorum(5), 3);
    }
}
