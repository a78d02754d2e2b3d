//! The client library: clientv3's lease keep-alive loop, a concurrency `Session`, and the
//! concurrency `Mutex` (etcd 3.4 `clientv3/concurrency/mutex.go`, `session.go`,
//! `clientv3/lease.go`).
//!
//! Session: `Lease.Grant(ttl)` then `KeepAlive`: a keep-alive is sent at once, then whenever
//! `nextKeepAlive` has passed, checked every 500 ms (`retryConnWait`); each answer sets
//! `nextKeepAlive = now + TTL/3` (`keepalive_fraction` changes the third, for an application
//! that renews its lease itself, later) and `deadline = now + TTL` (the first deadline is 5 s,
//! `defaultTTL`). Every second (`deadlineLoop`) a passed deadline closes the keep-alive: the
//! session is over (`Session.Done()`); so is an answer with TTL 0 (lease gone). The application
//! then stops treating a held lock as held (`Lost { honour: true }`, as programs that select on
//! `Session.Done()` do; `on_session_lost = "proceed"` is the program that does not) and opens a
//! new session for its next lock.
//!
//! Mutex.Lock: one transaction puts `prefix/<lease hex>` under the lease if it has no create
//! revision yet, and reads the key with the lowest create revision under the prefix; `myRev` is
//! the put's revision (or the existing key's create revision). Lowest create revision holds.
//! Otherwise `waitDeletes`: get the key with the highest create revision ≤ myRev − 1, watch it
//! from the get's header revision until a DELETE event, repeat until none is left. Then (3.5.0
//! and later, `recheck_after_wait = true`) get the own key again and fail with `ErrSessionExpired`
//! if it is gone; every 3.4.x (`false`, issue #11456; the fix never reached the 3.4 branch:
//! `concurrency/mutex.go:69-77 @v3.4.23`) returns success without looking. A wait that fails or is
//! cancelled (the workload's acquire timeout is the Lock's context) deletes the own key
//! (`m.Unlock`) before Lock returns; a Lock called meanwhile starts after that delete, so the
//! delete can never remove the next Lock's key. Unlock deletes the own key. The token is `myRev`.
//! Every watch DELETE event reaching the waiter is a `Notified`.
//!
//! RWMutex (`recipe = "rwmutex"`; etcd 3.5 `client/v3/experimental/recipes/rwmutex.go`, `key.go`):
//! `RLock` and `Lock` put a new key under the session's lease, `<pfx>read/…` or `<pfx>write/…`
//! (`newUniqueEphemeralKey`: a fresh key per call, so a key left by a failed unlock stays in the
//! queue until the lease ends), then loop on `waitOnLastRev`: get the last key created before their
//! own under `<pfx>write` (a reader) or `<pfx>` (a writer), watch it from the own key's revision
//! until a DELETE, repeat; none left: held. There is no recheck of the own key after waiting (the
//! recipe has none), so a waiter whose lease ran out while it waited is told it holds, as
//! `recheck_after_wait = false` is for the Mutex. A failed wait returns its error without deleting
//! the own key, and a failed unlock (not resent, as for the Mutex) leaves it too: the session keeps
//! the key alive, and every later key of the lock waits behind it until the session ends. The
//! recipe's calls take no context (`context.TODO()`); the workload's `acquire_timeout_ms` cancels
//! a wait as it does the Mutex's (deleting the own key), which the recipe itself cannot do. The model's put is the Mutex's transaction, whose
//! extra read of the lowest key the RWMutex ignores (one round trip either way).
//!
//! Presets (`client`, [`super::library`]): `call_deadline = "none"` (clientv3 3.4 and 3.5) gives
//! calls no deadline of the client's own (clientv3 has none beyond the caller's context:
//! `concurrency/mutex.go:54, 80-82 @v3.4.23`); the members answer `etcdserver: request timed out`
//! after their `ReqTimeout` instead, and the keep-alive stream stays where it is until the session
//! ends at its TTL deadline (`lease.go:537-552`). `balancer = "round_robin"` (clientv3 ≥ 3.3.14:
//! `balancer/picker/roundrobin_balanced.go:55-67 @v3.4.23`; gRPC `round_robin` in 3.5) sends each
//! unary call to the next ready member (client-i starting at member i mod n); the keep-alive and
//! watch streams stay on the member they were opened on, moving only when its connection resets;
//! a member whose connection reset is not ready for [`RECONNECT_BACKOFF_NS`] (grpc-go's first
//! reconnect back-off), and when none is ready the next one in turn is tried anyway. The text
//! below is `locksim-1`, the model before presets (`req_timeout`, `pinned`).
//!
//! Connection: the client knows every member and talks to one at a time (`client-i` starts at
//! member i mod n; clientv3 3.5 balances unary calls round-robin, which this model does not). It
//! moves to the next member when the member resets the connection (its process was killed), a
//! call or the keep-alive stream is unanswered for the request timeout (5 s + 2 × election
//! timeout, etcd's server-side `ReqTimeout`), or a member answers "no leader"; with
//! `keepalive_time_ms` set, also when a gRPC keepalive ping goes unanswered for
//! `keepalive_timeout_ms` (off by default: clientv3 `Config.DialKeepAliveTime` 0). A ping answered
//! by a restarted member (new incarnation) means the old connection died with it. When the client
//! gives up on a call whose connection is still open, gRPC cancels the stream on it
//! ([`StreamCancel`], HTTP/2 `RST_STREAM`); the member drops the request if it has not started it.
//! On a new connection the watch is re-created from the same revision. The watch stream is TCP in
//! etcd: the model resends an unconfirmed watch request every 200 ms and the member resends
//! unacknowledged events, so the simulator's message loss delays a wake-up instead of losing it. A
//! call in flight fails with its connection: clientv3 resends a read (repeatable; after 25 ms, up to
//! 100 times) but never a write whose request may have reached a server (etcd 3.5
//! `client/v3/retry_interceptor.go`, `isSafeRetryMutableRPC`), so a failed lock transaction fails
//! the Lock and a failed Unlock reports `ReleaseFailed` (the own key stays until the session ends;
//! the next Lock in the session finds it first and holds under the same create revision).

use std::sync::Arc;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::Nanos;

use crate::notice_race::NoticeRace;

use super::protocol::{
    ClientTimer, EtcdError, EtcdMsg, EtcdTimer, KeyInfo, LeaseId, Op, Ping, Pong, Reply, Request, Response, Revision,
    StreamCancel, WatchAck, WatchEvent,
};
use super::Etcd;

mod fingerprint;

/// clientv3 `retryConnWait`: the keep-alive send loop's period.
pub const KEEPALIVE_LOOP_NS: Nanos = 500_000_000;
/// clientv3 `deadlineLoop` period.
pub const DEADLINE_LOOP_NS: Nanos = 1_000_000_000;
/// clientv3 `defaultTTL`: the deadline before the first keep-alive answer.
pub const FIRST_KEEPALIVE_TIMEOUT_NS: Nanos = 5_000_000_000;
/// clientv3 `defaultBackoffWaitBetween`.
pub const RETRY_BACKOFF_NS: Nanos = 25_000_000;
/// clientv3 `defaultUnaryMaxRetries`.
pub const MAX_RETRIES: u32 = 100;

/// grpc-go's first reconnect back-off (`backoff.DefaultConfig.BaseDelay`, 1 s): a member whose
/// connection reset is not picked by the round-robin balancer for this long.
pub const RECONNECT_BACKOFF_NS: Nanos = 1_000_000_000;

/// A watch request not confirmed within TCP's minimum retransmission timeout is sent again (the
/// model's stand-in for the TCP stream it travels on).
pub const WATCH_RESEND_NS: Nanos = 200_000_000;

/// Why the client leaves its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gone {
    /// The member's end reset it (its process died): nothing sent on it will run any more.
    Reset,
    /// The member stopped answering in time (frozen, cut off, or without a leader): the
    /// connection is still open, so the abandoned call's stream is cancelled on it.
    Silent,
    /// The member restarted (a new incarnation answered a ping): reconnect to it.
    Restarted,
}

/// The client library's settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The number of members (`servers`).
    pub servers: usize,
    /// The TTL the session asks for (`lease_ttl_ms`).
    pub lease_ttl_ns: Nanos,
    /// After waiting, get the own key again and fail if it is gone (clientv3 3.5.0 and later);
    /// `false` is every 3.4.x, which reports the lock held without looking (etcd issue #11456).
    pub recheck_after_wait: bool,
    /// How long a call or the keep-alive stream may go unanswered before the client moves on.
    pub request_timeout_ns: Nanos,
    /// Whether the client itself gives up on a call (and on the keep-alive stream) after
    /// `request_timeout_ns` (`call_deadline = "req_timeout"`, the model before presets); `false`
    /// (`"none"`, clientv3): no client deadline, the members answer their `ReqTimeout`.
    pub client_deadline: bool,
    /// Unary calls go round-robin over the ready members (`balancer = "round_robin"`); `false`:
    /// every call goes to the one member the client is connected to (`"pinned"`).
    pub round_robin: bool,
    /// gRPC keepalive: a ping every this often (`Config.DialKeepAliveTime`); `None` when off,
    /// clientv3's default.
    pub keepalive_time_ns: Option<Nanos>,
    /// A ping unanswered this long closes the connection (`Config.DialKeepAliveTimeout`).
    pub keepalive_timeout_ns: Nanos,
    /// When the next keep-alive is due after an answer, as a fraction of the TTL; `None` is
    /// clientv3's `TTL / 3` (`keepalive_fraction`).
    pub keepalive_fraction: Option<f64>,
    /// The application stops a held section when the session ends (it selects on
    /// `Session.Done()`); `false`: it ignores the end and finishes the section
    /// (`on_session_lost = "proceed"`).
    pub stop_on_session_lost: bool,
    /// The recipes package's `RWMutex` instead of `concurrency.Mutex` (`recipe = "rwmutex"`).
    pub rw_recipe: bool,
    /// How the session's end reaches the application: `None` at once, and a check before a
    /// write after a pause always learns it first (`session_done = "sync"`, the model before
    /// presets); `Some` (`"goroutines"`, clientv3): through the lessor's and the Session's
    /// goroutines, raced by the application's thread: the race shared with the zookeeper
    /// model's Curator and kazoo ([`NoticeRace`]), its `delivery_ms` from the lessor closing the
    /// keep-alive (`ka.close()`) to `Done()` closed (`session_done_ms`), its `resume_to_check_ms`
    /// the application thread's time from its wake-up to its check.
    pub session_done: Option<NoticeRace>,
}

#[derive(Clone, Debug, Default)]
enum Session {
    #[default]
    None,
    Granting,
    Live {
        lease: LeaseId,
        /// Session generation (named by its loops' timers).
        gen: u64,
        next_keepalive_ns: Nanos,
        deadline_ns: Nanos,
        /// When the oldest unanswered keep-alive was sent.
        unanswered_since: Option<Nanos>,
    },
}

/// What the in-flight call is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Grant,
    Txn,
    WaitGet,
    Recheck,
    Unlock,
    /// mutex.go's `m.Unlock` after a failed or cancelled wait; `fail` is the Lock's error, which
    /// it returns once the delete is done.
    Cleanup {
        fail: Option<(LockKey, FailReason)>,
    },
}

#[derive(Clone, Debug)]
struct Call {
    id: u64,
    purpose: Purpose,
    op: Op,
    retries: u32,
    /// The member it was sent to (an index into `servers`).
    member: usize,
    /// Out on the wire (false while it waits for its retry back-off).
    sent: bool,
    /// The call's timeout, cancelled when the answer comes.
    timer: Option<TimerId>,
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// Waiting for the session's lease.
    Session,
    Txn,
    /// waitDeletes' get.
    WaitGet,
    /// Watching the predecessor `key`.
    Watching {
        key: String,
    },
    Recheck,
    Held,
    Unlocking,
    /// Lock was called while the previous Lock's cleanup delete is still out: it starts after.
    AfterCleanup,
}

#[derive(Clone, Debug)]
struct Mutex {
    key: LockKey,
    prefix: Arc<str>,
    my_key: Arc<str>,
    my_rev: Revision,
    step: Step,
    /// The RWMutex's lock kind (`None`: `concurrency.Mutex`).
    rw: Option<LockMode>,
}

#[derive(Clone, Debug)]
struct Watch {
    id: u64,
    key: Arc<str>,
    start_rev: Revision,
    created: bool,
    /// The last event seen (events are numbered per watch).
    last_seq: u64,
}

/// clientv3 with a concurrency Session and Mutex.
#[derive(Clone, Debug)]
pub struct EtcdClient {
    cfg: ClientConfig,
    index: usize,
    /// The members' node ids (looked up at the first start; a restart keeps them).
    servers: Vec<NodeId>,
    // Kept across a crash though not state: the counters that number this node's requests,
    // sessions and pings. They are never reused, so nothing addressed to the node's previous life
    // matches anything in the new one (the members drop a request id they have seen from this
    // node as a duplicate).
    next_id: u64,
    session_gen: u64,
    ping_seq: u64,
    /// Everything else, replaced whole at a crash.
    v: Volatile,
}

/// What the client loses in a crash.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The member this client is connected to (an index into `servers`).
    endpoint: usize,
    session: Session,
    call: Option<Call>,
    mutex: Option<Mutex>,
    watch: Option<Watch>,
    /// The member's incarnation this connection was made to (from its first pong).
    conn_incarnation: Option<u64>,
    /// When the oldest unanswered ping went out.
    ping_since: Option<Nanos>,
    /// `round_robin`: the member the next unary call tries first.
    next_pick: usize,
    /// `round_robin`: per member, until when its connection is not ready (it reset).
    not_ready_until: Vec<Nanos>,
    /// When the keep-alive deadline loop's next tick is due (a pause makes it overdue).
    deadline_tick_ns: Nanos,
    /// `session_done = "goroutines"`: a session's end on its way to the application.
    done: Option<PendingDone>,
}

/// A session's end not yet seen by the application: `Session.Done()` closes at `at_ns`.
#[derive(Clone, Debug)]
struct PendingDone {
    /// The session generation that ended (the timer carries the same).
    gen: u64,
    at_ns: Nanos,
    timer: TimerId,
    /// The lock held when the session ended: its key and its create revision.
    key: LockKey,
    my_rev: Revision,
}

impl EtcdClient {
    /// Client `index`; it starts on member `index` mod `servers`.
    pub fn new(index: usize, cfg: ClientConfig) -> Self {
        EtcdClient::from_disk(ClientDisk { cfg, index, servers: Vec::new(), next_id: 0, session_gen: 0, ping_seq: 0 })
    }

    fn server(&self) -> NodeId {
        self.servers[self.v.endpoint]
    }

    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The member a unary call goes to: the connected one (`pinned`), or the next ready one in
    /// turn (`round_robin`; the next in turn when none is ready).
    fn pick(&mut self, ctx: &mut Ctx<Etcd>) -> usize {
        if !self.cfg.round_robin {
            return self.v.endpoint;
        }
        let n = self.servers.len();
        let now = ctx.now_mono_ns();
        let start = self.v.next_pick % n;
        let ready = |m: usize| self.v.not_ready_until.get(m).is_none_or(|&t| t <= now);
        let member = (0..n).map(|k| (start + k) % n).find(|&m| ready(m)).unwrap_or(start);
        self.v.next_pick = (member + 1) % n;
        member
    }

    /// Sends `op` as the in-flight call.
    fn call(&mut self, ctx: &mut Ctx<Etcd>, purpose: Purpose, op: Op, retries: u32) {
        let id = self.fresh_id();
        let member = self.pick(ctx);
        ctx.send(self.servers[member], Request { id, op: op.clone() });
        let timer = self
            .cfg
            .client_deadline
            .then(|| ctx.set_timer(self.cfg.request_timeout_ns, ClientTimer::CallTimeout { id }));
        self.v.call = Some(Call { id, purpose, op, retries, member, sent: true, timer });
    }

    fn lease(&self) -> Option<LeaseId> {
        match self.v.session {
            Session::Live { lease, .. } => Some(lease),
            _ => None,
        }
    }

    // ----- session -----

    fn open_session(&mut self, ctx: &mut Ctx<Etcd>) {
        self.v.session = Session::Granting;
        let ttl_ns = self.cfg.lease_ttl_ns;
        self.call(ctx, Purpose::Grant, Op::LeaseGrant { ttl_ns }, 0);
    }

    fn session_granted(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, lease: LeaseId) {
        self.session_gen += 1;
        let gen = self.session_gen;
        let now = ctx.now_mono_ns();
        self.v.session = Session::Live {
            lease,
            gen,
            next_keepalive_ns: now,
            deadline_ns: now + FIRST_KEEPALIVE_TIMEOUT_NS,
            unanswered_since: None,
        };
        ctx.note(|| format!("session: lease {lease}"));
        self.keepalive_send(ctx);
        self.v.deadline_tick_ns = now + DEADLINE_LOOP_NS;
        ctx.set_timer(DEADLINE_LOOP_NS, ClientTimer::KeepAliveDeadline { gen });
        if matches!(&self.v.mutex, Some(m) if m.step == Step::Session) {
            self.lock_txn(ctx, out);
        }
    }

    /// The send loop: a keep-alive when `nextKeepAlive` has passed, then again in 500 ms.
    fn keepalive_send(&mut self, ctx: &mut Ctx<Etcd>) {
        let now = ctx.now_mono_ns();
        let server = self.server();
        if let Session::Live { lease, gen, next_keepalive_ns, unanswered_since, .. } = &mut self.v.session {
            if *next_keepalive_ns <= now {
                let lease = *lease;
                unanswered_since.get_or_insert(now);
                self.next_id += 1;
                ctx.send(server, Request { id: self.next_id, op: Op::KeepAlive { lease } });
            }
            let gen = *gen;
            ctx.set_timer(KEEPALIVE_LOOP_NS, ClientTimer::KeepAliveSend { gen });
        }
    }

    fn deadline_check(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        let now = ctx.now_mono_ns();
        let Session::Live { gen, deadline_ns, unanswered_since, .. } = &self.v.session else { return };
        let gen = *gen;
        if *deadline_ns < now {
            ctx.note(|| "keep-alive unanswered for a whole TTL: session over".to_string());
            return self.session_lost(ctx, out);
        }
        self.v.deadline_tick_ns = now + DEADLINE_LOOP_NS;
        ctx.set_timer(DEADLINE_LOOP_NS, ClientTimer::KeepAliveDeadline { gen });
        if self.cfg.client_deadline && unanswered_since.is_some_and(|t| now >= t + self.cfg.request_timeout_ns) {
            self.reconnect(ctx, out, Gone::Silent, "keep-alive stream unanswered");
        }
    }

    fn keepalive_answer(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, lease_answered: LeaseId, ttl_ns: Nanos) {
        let now = ctx.now_mono_ns();
        let Session::Live { lease, next_keepalive_ns, deadline_ns, unanswered_since, .. } = &mut self.v.session else {
            return;
        };
        if *lease != lease_answered {
            return;
        }
        if ttl_ns == 0 {
            ctx.note(|| "keep-alive answered TTL 0: lease gone, session over".to_string());
            return self.session_lost(ctx, out);
        }
        *next_keepalive_ns = now
            + match self.cfg.keepalive_fraction {
                None => ttl_ns / 3,
                Some(fraction) => (ttl_ns as f64 * fraction) as Nanos,
            };
        *deadline_ns = now + ttl_ns;
        *unanswered_since = None;
    }

    /// `Session.Done()`: the application stops treating its lock as held (unless it ignores the
    /// session's end: `on_session_lost = "proceed"`); the mutex's wait, if any, goes on (it is
    /// not tied to the session). Under `session_done = "goroutines"` the application learns it
    /// `session_done_ms` later ([`EtcdClient::close_done_later`]).
    fn session_lost(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        let gen = match self.v.session {
            Session::Live { gen, .. } => gen,
            _ => 0,
        };
        self.v.session = Session::None;
        if let Some(m) = &self.v.mutex {
            if m.step == Step::Held {
                let (key, my_rev) = (m.key, m.my_rev);
                match &self.cfg.session_done {
                    None => out.push(LockEvent::Lost { key, honour: self.cfg.stop_on_session_lost }),
                    Some(race) => {
                        let delay_ns = race.delivery_ns(ctx.rng());
                        self.close_done_later(ctx, gen, key, my_rev, delay_ns);
                    }
                }
            }
        }
        if matches!(&self.v.call, Some(c) if c.purpose == Purpose::Grant) {
            self.v.call = None;
        }
    }

    /// `session_done = "goroutines"`: the lessor has closed the keep-alive (`ka.close()` closes
    /// its channels: `deadlineLoop` on a passed deadline, `recvKeepAlive` on a TTL-0 answer,
    /// `clientv3/lease.go:537-552, 509-513, 591-596 @v3.4.23`); the Session's goroutine, ranging
    /// over that channel, then closes `donec` (`concurrency/session.go:64-69`), which is what the
    /// application's `Session.Done()` select sees. Those goroutine hand-offs take `delay_ns`
    /// (drawn from `session_done_ms`).
    fn close_done_later(&mut self, ctx: &mut Ctx<Etcd>, gen: u64, key: LockKey, my_rev: Revision, delay_ns: Nanos) {
        let at_ns = ctx.now_mono_ns() + delay_ns;
        ctx.note(|| format!("clientv3: keep-alive closed; Session.Done() closes in {} ms", delay_ns as f64 / 1e6));
        let timer = ctx.set_timer(delay_ns, ClientTimer::SessionDone { gen });
        self.v.done = Some(PendingDone { gen, at_ns, timer, key, my_rev });
    }

    /// `Session.Done()` closes: the application's select sees the end (if it still holds the
    /// lock it held when the session ended). Returns whether it stops (`on_session_lost`).
    fn deliver_done(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) -> bool {
        let Some(d) = self.v.done.take() else { return false };
        ctx.note(|| "clientv3: Session.Done() closed".to_string());
        let still_held =
            matches!(&self.v.mutex, Some(m) if m.step == Step::Held && m.key == d.key && m.my_rev == d.my_rev);
        if !still_held {
            return false;
        }
        out.push(LockEvent::Lost { key: d.key, honour: self.cfg.stop_on_session_lost });
        self.cfg.stop_on_session_lost
    }

    /// `session_done = "goroutines"`, the check before a write: the application's thread and
    /// clientv3's goroutines race. After a pause they resume together, each overdue: the lessor's
    /// `deadlineLoop` (its `time.After(time.Second)` fired during the pause) finds the deadline
    /// passed and closes the keep-alive, the Session's goroutine then closes `Done()`
    /// (`session_done_ms`); the application thread reaches its check `resume_to_check_ms` after
    /// its wake-up and sees `Done()` closed only if it closed by then. The same holds for an end
    /// already noticed and on its way. The check is made at the wake-up instant, with the
    /// closing delivered first when it wins (time within the draws is not spent).
    fn race_to_the_check(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, race: &NoticeRace) -> bool {
        let now = ctx.now_mono_ns();
        let deadline_overdue = matches!(self.v.session, Session::Live { deadline_ns, .. } if deadline_ns < now)
            && self.v.deadline_tick_ns <= now;
        let Some(check) = race.check_after_resume(ctx.rng(), now, deadline_overdue, self.v.done.is_some()) else {
            return true;
        };
        if deadline_overdue {
            ctx.note(|| "clientv3: the deadline loop's overdue tick runs at the wake-up".to_string());
            self.deadline_check(ctx, out);
        }
        ctx.note(|| format!("clientv3: the application thread reaches its check in {} ms", check.app_ns as f64 / 1e6));
        let Some(d) = &self.v.done else { return true };
        if !check.sees(d.at_ns) {
            let late_ns = d.at_ns - check.at_ns;
            ctx.note(|| format!("clientv3: Session.Done() closes {} ms after the check", late_ns as f64 / 1e6));
            return true;
        }
        ctx.cancel_timer(d.timer);
        !self.deliver_done(ctx, out)
    }

    // ----- connection -----

    /// The client leaves its connection (to the next member, unless `gone` is
    /// [`Gone::Restarted`]: then to the same one). The keep-alive and watch streams are re-opened
    /// on the new connection, the watch from the same revision; the call in flight fails with the
    /// connection (a read is resent). When the old connection is still open (`Gone::Silent`) gRPC
    /// cancels the abandoned call's stream on it ([`StreamCancel`]), so a member that was only
    /// frozen drops the call when it wakes instead of running it late.
    /// With `round_robin` only a call sent on the connection left behind goes with it.
    fn reconnect(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, gone: Gone, why: &str) {
        let old = self.v.endpoint;
        let call_goes = |c: &Call| !self.cfg.round_robin || (c.sent && c.member == old);
        if gone == Gone::Silent {
            if let Some(call) = self.v.call.as_ref().filter(|c| call_goes(c)) {
                ctx.send(self.server(), StreamCancel { id: call.id });
            }
        }
        let call = match self.v.call.take() {
            Some(c) if !call_goes(&c) => {
                self.v.call = Some(c);
                None
            }
            c => c,
        };
        if gone != Gone::Restarted {
            self.v.endpoint = (self.v.endpoint + 1) % self.servers.len();
        }
        let name = ctx.name_of(self.server());
        ctx.note(|| format!("{why}: connecting to {name}"));
        self.v.conn_incarnation = None;
        self.v.ping_since = None;
        // The keep-alive stream re-opens; an unanswered keep-alive is resent by the 500 ms loop
        // (its nextKeepAlive only moves on an answer).
        if let Session::Live { unanswered_since, .. } = &mut self.v.session {
            *unanswered_since = None;
        }
        if let Some(w) = self.v.watch.take() {
            self.start_watch(ctx, w.key, w.start_rev);
        }
        if let Some(call) = call {
            if let Some(t) = call.timer {
                ctx.cancel_timer(t);
            }
            let error = (gone == Gone::Reset).then_some(EtcdError::ConnectionClosed);
            self.handle_failed_call(ctx, out, call, error);
        }
    }

    fn start_watch(&mut self, ctx: &mut Ctx<Etcd>, key: impl Into<Arc<str>>, start_rev: Revision) {
        let id = self.fresh_id();
        self.v.watch = Some(Watch { id, key: key.into(), start_rev, created: false, last_seq: 0 });
        self.send_watch(ctx);
    }

    fn send_watch(&mut self, ctx: &mut Ctx<Etcd>) {
        let Some(w) = &self.v.watch else { return };
        let op = Op::Watch { watch_id: w.id, key: w.key.clone(), start_rev: w.start_rev };
        ctx.send(self.server(), Request { id: w.id, op });
        ctx.set_timer(WATCH_RESEND_NS, ClientTimer::WatchResend { watch_id: w.id });
    }

    /// The cancel goes on the watch stream itself, to the member the watch was opened on
    /// (clientv3 `watchGrpcStream.run`: `wc.Send` of a `WatchCancelRequest` on the stream,
    /// `clientv3/watch.go:698-716 @v3.4.23`), never through the unary balancer: sent round-robin
    /// it reached a member without that watch and the watch stayed, its events flowing and
    /// acknowledged for the rest of the run (93-208 client messages per acquisition under
    /// `clientv3-3.4` against 19 for the recipe live).
    fn cancel_watch(&mut self, ctx: &mut Ctx<Etcd>) {
        if let Some(w) = self.v.watch.take() {
            let id = self.fresh_id();
            ctx.send(self.server(), Request { id, op: Op::WatchCancel { watch_id: w.id } });
        }
    }

    // ----- the mutex -----

    fn lock_txn(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        let Some(lease) = self.lease() else {
            return self.open_session(ctx);
        };
        let _ = out;
        if matches!(&self.v.mutex, Some(m) if m.rw.is_some()) {
            self.next_id += 1;
        }
        let unique = self.next_id;
        let Some(m) = self.v.mutex.as_mut() else { return };
        m.my_key = match m.rw {
            None => format!("{}{:x}", m.prefix, lease).into(),
            // recipes/key.go newUniqueEphemeralKey: `<pfx>read/<n>` or `<pfx>write/<n>`, a new key
            // per call (etcd names it by time.Now().UnixNano(); here by the client's call counter).
            Some(LockMode::Shared) => format!("{}read/{:x}-{unique}", m.prefix, lease).into(),
            Some(LockMode::Exclusive) => format!("{}write/{:x}-{unique}", m.prefix, lease).into(),
        };
        m.step = Step::Txn;
        let op = Op::MutexTxn { my_key: m.my_key.clone(), prefix: m.prefix.clone(), lease };
        self.call(ctx, Purpose::Txn, op, 0);
    }

    fn wait_get(&mut self, ctx: &mut Ctx<Etcd>) {
        let Some(m) = self.v.mutex.as_mut() else { return };
        m.step = Step::WaitGet;
        // RWMutex.waitOnLastRev: a reader waits only on keys under `<pfx>write`, a writer on every
        // key under the lock's prefix.
        let prefix = match m.rw {
            Some(LockMode::Shared) => format!("{}write", m.prefix).into(),
            _ => m.prefix.clone(),
        };
        let op = Op::LastCreateBelow { prefix, max_create_rev: m.my_rev.saturating_sub(1) };
        self.call(ctx, Purpose::WaitGet, op, 0);
    }

    /// waitDeletes returned: recheck the own key (fixed versions) or hold at once (3.4.3, and
    /// the RWMutex, whose `RLock`/`Lock` return as soon as nothing older blocks them).
    fn waited(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        if self.cfg.recheck_after_wait && !self.cfg.rw_recipe {
            let Some(m) = self.v.mutex.as_mut() else { return };
            m.step = Step::Recheck;
            let op = Op::Get { key: m.my_key.clone() };
            self.call(ctx, Purpose::Recheck, op, 0);
        } else {
            self.granted(ctx, out);
        }
    }

    fn granted(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        let Some(m) = self.v.mutex.as_mut() else { return };
        m.step = Step::Held;
        let (key, rev) = (m.key, m.my_rev);
        ctx.note(|| format!("lock {key}: held with create revision {rev}"));
        out.push(LockEvent::Granted { key, token: Some(rev) });
    }

    /// Lock returns an error: when the wait failed (`cleanup`) mutex.go first deletes the own key
    /// and returns once that delete is done.
    fn lock_failed(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, reason: FailReason, cleanup: bool) {
        self.cancel_watch(ctx);
        if let Some(m) = self.v.mutex.take() {
            if cleanup && !m.my_key.is_empty() {
                self.call(ctx, Purpose::Cleanup { fail: Some((m.key, reason)) }, Op::Delete { key: m.my_key }, 0);
            } else {
                out.push(LockEvent::Failed { key: m.key, reason });
            }
        }
    }

    /// The cleanup delete is done (answered, or failed: mutex.go ignores its error): the Lock
    /// returns its error, and a Lock called meanwhile starts.
    fn cleanup_done(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, fail: Option<(LockKey, FailReason)>) {
        if let Some((key, reason)) = fail {
            out.push(LockEvent::Failed { key, reason });
        }
        if matches!(&self.v.mutex, Some(m) if m.step == Step::AfterCleanup) {
            self.start_lock(ctx, out);
        }
    }

    /// Mutex.Lock begins: with the session's lease, or once a session is open.
    fn start_lock(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        if let Some(m) = self.v.mutex.as_mut() {
            m.step = Step::Session;
        }
        match self.v.session {
            Session::Live { .. } => self.lock_txn(ctx, out),
            Session::Granting => {}
            Session::None => self.open_session(ctx),
        }
    }

    fn on_response(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, resp: Response) {
        if let Ok(Reply::KeepAlive { lease, ttl_ns }) = resp.result {
            return self.keepalive_answer(ctx, out, lease, ttl_ns);
        }
        let Some(call) = self.v.call.as_ref() else { return };
        if call.id != resp.id {
            return;
        }
        let call = self.v.call.take().expect("checked");
        if let Some(t) = call.timer {
            ctx.cancel_timer(t);
        }
        match resp.result {
            Err(e) => self.call_failed(ctx, out, call, Some(e)),
            Ok(reply) => self.call_answered(ctx, out, call.purpose, resp.header_rev, reply),
        }
    }

    fn call_answered(
        &mut self,
        ctx: &mut Ctx<Etcd>,
        out: &mut LockEvents,
        purpose: Purpose,
        header_rev: Revision,
        reply: Reply,
    ) {
        match (purpose, reply) {
            (Purpose::Grant, Reply::LeaseGranted { lease, .. }) => self.session_granted(ctx, out, lease),
            (Purpose::Txn, Reply::Txn { my_create_rev, owner, .. }) => {
                let Some(m) = self.v.mutex.as_mut() else { return };
                m.my_rev = my_create_rev;
                // The RWMutex does not look at the lowest key: it always asks what blocks it.
                let holds = m.rw.is_none() && owner.as_ref().is_none_or(|o: &KeyInfo| o.create_rev == my_create_rev);
                if holds {
                    self.granted(ctx, out);
                } else {
                    self.wait_get(ctx);
                }
            }
            (Purpose::WaitGet, Reply::Range { kv }) => match kv {
                None => self.waited(ctx, out),
                Some(pred) => {
                    let Some(m) = self.v.mutex.as_mut() else { return };
                    m.step = Step::Watching { key: pred.key.clone() };
                    let key = m.key;
                    ctx.note(|| {
                        format!("lock {key}: waiting for {} (create revision {}) to go", pred.key, pred.create_rev)
                    });
                    // Mutex.waitDelete watches from the get's revision, RWMutex's WaitEvents from
                    // its own key's.
                    let from = if m.rw.is_some() { m.my_rev } else { header_rev };
                    self.start_watch(ctx, pred.key, from);
                }
            },
            (Purpose::Recheck, Reply::Range { kv }) => {
                if kv.is_some() {
                    self.granted(ctx, out);
                } else {
                    ctx.note(|| "own key gone after waiting: ErrSessionExpired".to_string());
                    self.lock_failed(ctx, out, FailReason::SessionLost, false);
                }
            }
            (Purpose::Cleanup { fail }, _) => self.cleanup_done(ctx, out, fail),
            (Purpose::Unlock, Reply::Deleted { .. }) => {
                if let Some(m) = self.v.mutex.take() {
                    out.push(LockEvent::Released { key: m.key });
                }
            }
            _ => {}
        }
    }

    /// A call got an error or no answer in time: the client moves to another member (a lease
    /// error is an answer like any other and keeps the connection).
    /// With `round_robin` the balancer does not move on a failed call (the next call goes to the
    /// next member anyway).
    fn call_failed(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, call: Call, error: Option<EtcdError>) {
        if self.cfg.round_robin {
            if error.is_none() {
                ctx.send(self.servers[call.member], StreamCancel { id: call.id });
            }
            return self.handle_failed_call(ctx, out, call, error);
        }
        if error.is_none() {
            // The call's deadline passed: gRPC resets its stream on the still-open connection.
            ctx.send(self.server(), StreamCancel { id: call.id });
        }
        if error != Some(EtcdError::LeaseNotFound) {
            self.reconnect(ctx, out, Gone::Silent, if error.is_some() { "no leader" } else { "call unanswered" });
        }
        self.handle_failed_call(ctx, out, call, error);
    }

    /// What a failed call means for the session or the lock.
    fn handle_failed_call(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, call: Call, error: Option<EtcdError>) {
        let retry_read = call.op.repeatable() && call.retries < MAX_RETRIES;
        match call.purpose {
            Purpose::Grant => {
                self.v.session = Session::None;
                if matches!(&self.v.mutex, Some(m) if m.step == Step::Session) {
                    self.lock_failed(ctx, out, FailReason::Unavailable, false);
                }
            }
            Purpose::Txn => {
                let reason = if error == Some(EtcdError::LeaseNotFound) {
                    FailReason::SessionLost
                } else {
                    FailReason::Unavailable
                };
                self.lock_failed(ctx, out, reason, false);
            }
            Purpose::WaitGet | Purpose::Recheck if retry_read => self.retry_later(ctx, call),
            // Mutex.Lock deletes its key when the wait fails; RWMutex.RLock/Lock return the error
            // and leave it (rwmutex.go), in the queue until the session's lease ends.
            Purpose::WaitGet | Purpose::Recheck => {
                self.lock_failed(ctx, out, FailReason::Unavailable, !self.cfg.rw_recipe)
            }
            // Mutex.Unlock returns the Delete's error: clientv3 never resends a Delete that may
            // have reached a member (`retry_interceptor.go`: `isSafeRetryMutableRPC`), and the
            // application moves on. The own key stays until the session's lease ends; the next
            // Lock in this session finds it and holds again under the same create revision.
            Purpose::Unlock => {
                if let Some(m) = self.v.mutex.take() {
                    let reason = match error {
                        None | Some(EtcdError::Timeout) => FailReason::Timeout,
                        Some(_) => FailReason::Unavailable,
                    };
                    ctx.note(|| format!("lock {}: Unlock failed ({reason:?}): not resent", m.key));
                    out.push(LockEvent::ReleaseFailed { key: m.key, reason });
                }
            }
            Purpose::Cleanup { fail } => self.cleanup_done(ctx, out, fail),
        }
    }

    /// The gRPC keepalive (only when `keepalive_time_ms` is set): a ping every
    /// `keepalive_time_ms`; one unanswered for `keepalive_timeout_ms` closes the connection.
    fn ping(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents) {
        let Some(every_ns) = self.cfg.keepalive_time_ns else { return };
        ctx.set_timer(every_ns, ClientTimer::Ping);
        let now = ctx.now_mono_ns();
        if self.v.ping_since.is_some_and(|t| now >= t + self.cfg.keepalive_timeout_ns) {
            return self.reconnect(ctx, out, Gone::Silent, "keepalive ping unanswered");
        }
        self.ping_seq += 1;
        self.v.ping_since.get_or_insert(now);
        ctx.send(self.server(), Ping { seq: self.ping_seq });
    }

    fn on_pong(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, from: NodeId, pong: Pong) {
        if from != self.server() {
            return;
        }
        self.v.ping_since = None;
        match self.v.conn_incarnation {
            None => self.v.conn_incarnation = Some(pong.incarnation),
            Some(i) if i != pong.incarnation => {
                // The member restarted: this connection (and the watch on it) died with it.
                self.reconnect(ctx, out, Gone::Restarted, "member restarted");
                self.v.conn_incarnation = Some(pong.incarnation);
            }
            Some(_) => {}
        }
    }

    fn retry_later(&mut self, ctx: &mut Ctx<Etcd>, call: Call) {
        let id = call.id;
        self.v.call = Some(Call { retries: call.retries + 1, timer: None, sent: false, ..call });
        ctx.set_timer(RETRY_BACKOFF_NS, ClientTimer::Retry { id });
    }

    fn on_watch_event(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, from: NodeId, ev: WatchEvent) {
        // Acknowledge whatever arrives, so the member stops resending it.
        ctx.send(from, WatchAck { watch_id: ev.watch_id, seq: ev.seq });
        let Some(w) = self.v.watch.as_mut() else { return };
        if w.id != ev.watch_id || ev.seq <= w.last_seq {
            return;
        }
        w.last_seq = ev.seq;
        if !ev.deleted {
            return;
        }
        let Some(m) = &self.v.mutex else { return };
        if !matches!(&m.step, Step::Watching { key } if *key == ev.key) {
            return;
        }
        out.push(LockEvent::Notified { key: m.key });
        // waitDelete returns (its watch is cancelled); waitDeletes looks again.
        self.cancel_watch(ctx);
        self.wait_get(ctx);
    }
}

/// What a client keeps across a crash: its configuration, the members' ids and the counters
/// that number its requests, sessions and pings (see [`EtcdClient`]).
#[derive(Clone, Debug)]
pub struct ClientDisk {
    cfg: ClientConfig,
    index: usize,
    servers: Vec<NodeId>,
    next_id: u64,
    session_gen: u64,
    ping_seq: u64,
}

impl Durable for EtcdClient {
    type Disk = ClientDisk;
    fn into_disk(self, _crash: &Crash) -> ClientDisk {
        let EtcdClient { cfg, index, servers, next_id, session_gen, ping_seq, v: _ } = self;
        ClientDisk { cfg, index, servers, next_id, session_gen, ping_seq }
    }
    fn from_disk(disk: ClientDisk) -> Self {
        let ClientDisk { cfg, index, servers, next_id, session_gen, ping_seq } = disk;
        EtcdClient { cfg, index, servers, next_id, session_gen, ping_seq, v: Volatile::default() }
    }
}

impl LockClient<Etcd> for EtcdClient {
    fn on_start(&mut self, ctx: &mut Ctx<Etcd>, _out: &mut LockEvents) {
        if self.servers.is_empty() {
            self.servers =
                (0..self.cfg.servers).map(|i| ctx.node_named(&format!("server-{i}")).expect("etcd member")).collect();
        }
        self.v.endpoint = self.index % self.servers.len();
        self.v.next_pick = self.v.endpoint;
        self.v.not_ready_until = vec![0; self.servers.len()];
        self.v.conn_incarnation = None;
        self.v.ping_since = None;
        if let Some(every_ns) = self.cfg.keepalive_time_ns {
            ctx.set_timer(every_ns, ClientTimer::Ping);
        }
        self.open_session(ctx);
    }

    fn acquire(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, key: LockKey, mode: LockMode) {
        let cleaning = matches!(&self.v.call, Some(c) if matches!(c.purpose, Purpose::Cleanup { .. }));
        let step = if cleaning { Step::AfterCleanup } else { Step::Session };
        let prefix = format!("/lock/{key}/").into();
        let rw = self.cfg.rw_recipe.then_some(mode);
        self.v.mutex = Some(Mutex { key, prefix, my_key: "".into(), my_rev: 0, step, rw });
        if !cleaning {
            self.start_lock(ctx, out);
        }
    }

    fn release(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, key: LockKey) {
        let Some(m) = self.v.mutex.as_mut() else {
            out.push(LockEvent::Released { key });
            return;
        };
        m.step = Step::Unlocking;
        let op = Op::Delete { key: m.my_key.clone() };
        self.call(ctx, Purpose::Unlock, op, 0);
    }

    fn cancel(&mut self, ctx: &mut Ctx<Etcd>, _out: &mut LockEvents, _key: LockKey) {
        // The Lock's context is cancelled: a wait in progress deletes the own key; a transaction
        // in flight is abandoned as is (its key, if created, is found again by the next Lock).
        let cleanup =
            matches!(&self.v.mutex, Some(m) if matches!(m.step, Step::WaitGet | Step::Watching { .. } | Step::Recheck));
        self.cancel_watch(ctx);
        let mutex = self.v.mutex.take();
        // The session's grant and an earlier cleanup carry on; the Lock's own call is dropped.
        if matches!(&self.v.call, Some(c) if matches!(c.purpose, Purpose::Txn | Purpose::WaitGet | Purpose::Recheck)) {
            if let Some(t) = self.v.call.take().and_then(|c| c.timer) {
                ctx.cancel_timer(t);
            }
        }
        if let (true, Some(m)) = (cleanup, mutex) {
            self.call(ctx, Purpose::Cleanup { fail: None }, Op::Delete { key: m.my_key }, 0);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, from: NodeId, msg: EtcdMsg) {
        match msg {
            EtcdMsg::Response(r) => self.on_response(ctx, out, r),
            EtcdMsg::Pong(p) => self.on_pong(ctx, out, from, p),
            EtcdMsg::WatchEvent(ev) => self.on_watch_event(ctx, out, from, ev),
            EtcdMsg::WatchCreated(c) => {
                if let Some(w) = self.v.watch.as_mut().filter(|w| w.id == c.watch_id) {
                    w.created = true;
                }
            }
            EtcdMsg::Consensus(_)
            | EtcdMsg::Peer(_)
            | EtcdMsg::Request(_)
            | EtcdMsg::WatchAck(_)
            | EtcdMsg::StreamCancel(_)
            | EtcdMsg::Ping(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, _timer: TimerId, tag: EtcdTimer) {
        let EtcdTimer::Client(t) = tag else { return };
        match t {
            ClientTimer::KeepAliveSend { gen: g } => {
                if matches!(self.v.session, Session::Live { gen, .. } if gen == g) {
                    self.keepalive_send(ctx);
                }
            }
            ClientTimer::KeepAliveDeadline { gen: g } => {
                if matches!(self.v.session, Session::Live { gen, .. } if gen == g) {
                    self.deadline_check(ctx, out);
                }
            }
            ClientTimer::CallTimeout { id } => {
                if matches!(&self.v.call, Some(c) if c.id == id) {
                    let call = self.v.call.take().expect("checked");
                    self.call_failed(ctx, out, call, None);
                }
            }
            ClientTimer::Ping => self.ping(ctx, out),
            ClientTimer::SessionDone { gen } => {
                if self.v.done.as_ref().is_some_and(|d| d.gen == gen) {
                    self.deliver_done(ctx, out);
                }
            }
            ClientTimer::WatchResend { watch_id } => {
                if matches!(&self.v.watch, Some(w) if w.id == watch_id && !w.created) {
                    self.send_watch(ctx);
                }
            }
            ClientTimer::Retry { id } => {
                if matches!(&self.v.call, Some(c) if c.id == id) {
                    let call = self.v.call.take().expect("checked");
                    self.call(ctx, call.purpose, call.op, call.retries);
                }
            }
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, peer: NodeId) {
        // The member's process died (or refused a message: it is down, or it restarted after a
        // machine crash): gRPC sees the transport close and the balancer picks another endpoint;
        // the call in flight fails with `Unavailable`. Resets from a member already left behind
        // change nothing (several may arrive for one death).
        if self.servers.is_empty() {
            return;
        }
        if self.cfg.round_robin {
            let Some(m) = self.servers.iter().position(|&s| s == peer) else { return };
            if let Some(t) = self.v.not_ready_until.get_mut(m) {
                *t = ctx.now_mono_ns() + RECONNECT_BACKOFF_NS;
            }
            if m != self.v.endpoint && matches!(&self.v.call, Some(c) if c.sent && c.member == m) {
                let call = self.v.call.take().expect("checked");
                if let Some(t) = call.timer {
                    ctx.cancel_timer(t);
                }
                return self.handle_failed_call(ctx, out, call, Some(EtcdError::ConnectionClosed));
            }
        }
        if peer == self.server() {
            self.reconnect(ctx, out, Gone::Reset, "connection reset");
        }
    }

    /// Under `session_done = "goroutines"` the application's thread races clientv3's goroutines
    /// to its check ([`EtcdClient::race_to_the_check`]); under `"sync"` it checks nothing of its
    /// own (the session's end, delivered at once, has already stopped it).
    fn check_before_write(&mut self, ctx: &mut Ctx<Etcd>, out: &mut LockEvents, _key: LockKey) -> bool {
        match self.cfg.session_done.clone() {
            None => true,
            Some(race) => self.race_to_the_check(ctx, out, &race),
        }
    }

    /// waitDeletes watching its predecessor's key, no call of the Lock out: what clientv3 3.4
    /// returns from without looking at its own key (issue #11456) when that watch fires.
    fn blocked_on_service(&self) -> bool {
        matches!(&self.v.mutex, Some(m) if matches!(m.step, Step::Watching { .. })) && self.v.call.is_none()
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
