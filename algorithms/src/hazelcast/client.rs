//! A Hazelcast client with a `FencedLock` proxy and the CP session manager behind it (Hazelcast
//! 5.x `client/cp/internal/datastructures/proxy/ClientFencedLockProxy` via
//! `cp/internal/datastructures/lock/proxy/AbstractFencedLockProxy`, and
//! `cp/internal/session/AbstractProxySessionManager`).
//!
//! - `lockAndGetFence()` gets the client's CP session (creating it with `CreateSessionOp` if
//!   there is none) and invokes `LockOp` on the group; the call returns when the group grants
//!   the lock (it waits in the group while another holds it). A `SessionExpiredException`
//!   invalidates the session and the loop tries again with a new one, unless this thread
//!   already held the lock (then `LockOwnershipLostException`).
//! - The session manager heartbeats every session in use (acquire count above 0) every
//!   `session-heartbeat-interval-seconds` (5 s) with `HeartbeatSessionOp`; an answer
//!   `SessionExpiredException` invalidates the session. The application is not told: its next
//!   call on the lock throws `LockOwnershipLostException` (the model reports a `Lost` notice
//!   without stopping the section: `FencedLock`'s answer to a holder that outlived its session is
//!   the fence, not a callback).
//! - `unlock()` invokes `UnlockOp`; `IllegalMonitorStateException` or a session gone fails it.
//! - An invocation goes to the leader the client last heard of; `NotLeaderException` sends it to
//!   the named leader, another failure retries it on the next member after
//!   `hazelcast.client.invocation.retry.pause.millis` (1 s); an invocation other than a waiting
//!   `LockOp` gives up after `hazelcast.client.invocation.timeout.seconds` (120 s).

use std::collections::BTreeMap;

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::Nanos;

use super::protocol::{ClientTimer, HazelcastMsg, HazelcastTimer, HzError, Invocation, Op, Reply, Response, SessionId};
use super::Hazelcast;

mod fingerprint;

/// The client's settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// CP members `server-0 …`.
    pub servers: usize,
    /// `session-heartbeat-interval-seconds`.
    pub heartbeat_ns: Nanos,
    /// `hazelcast.client.invocation.timeout.seconds`.
    pub invocation_timeout_ns: Nanos,
    /// `hazelcast.client.invocation.retry.pause.millis`.
    pub retry_pause_ns: Nanos,
}

#[derive(Clone, Debug)]
struct Call {
    key: Option<LockKey>,
    op: Op,
    server: NodeId,
    timeout: Option<TimerId>,
    retry: Option<TimerId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for a session before the `LockOp`.
    NeedsSession,
    Locking,
    Held,
    Unlocking,
}

#[derive(Clone, Debug, Default)]
struct Volatile {
    servers: Vec<NodeId>,
    target: usize,
    /// Drawn at start: the high half of every invocation uid.
    epoch: u64,
    next: u64,
    calls: BTreeMap<u64, Call>,
    session: Option<SessionId>,
    creating: bool,
    heartbeat: Option<TimerId>,
    /// Per key: the phase and the nesting count.
    locks: BTreeMap<LockKey, (Phase, u32)>,
}

/// One Hazelcast client.
#[derive(Clone, Debug)]
pub struct HazelcastClient {
    cfg: ClientConfig,
    v: Volatile,
}

impl HazelcastClient {
    /// A client.
    pub fn new(cfg: ClientConfig) -> Self {
        HazelcastClient::from_disk(cfg)
    }

    fn invoke(&mut self, ctx: &mut Ctx<Hazelcast>, key: Option<LockKey>, op: Op) {
        self.v.next += 1;
        let uid = (self.v.epoch << 32) | self.v.next;
        self.v.calls.insert(uid, Call { key, op, server: 0, timeout: None, retry: None });
        self.send(ctx, uid);
    }

    fn send(&mut self, ctx: &mut Ctx<Hazelcast>, uid: u64) {
        let server = self.v.servers[self.v.target % self.v.servers.len()];
        let Some(call) = self.v.calls.get_mut(&uid) else { return };
        call.server = server;
        if let Some(t) = call.timeout.take() {
            ctx.cancel_timer(t);
        }
        let op = call.op;
        if !matches!(op, Op::Lock { .. }) {
            let t = ctx.set_timer(self.cfg.invocation_timeout_ns, ClientTimer::CallTimeout { uid });
            self.v.calls.get_mut(&uid).expect("present").timeout = Some(t);
        }
        ctx.send(server, Invocation { uid, op });
    }

    fn finish(&mut self, ctx: &mut Ctx<Hazelcast>, uid: u64) -> Option<Call> {
        let call = self.v.calls.remove(&uid)?;
        for t in [call.timeout, call.retry].into_iter().flatten() {
            ctx.cancel_timer(t);
        }
        Some(call)
    }

    fn retry_later(&mut self, ctx: &mut Ctx<Hazelcast>, uid: u64) {
        self.v.target += 1;
        let Some(call) = self.v.calls.get_mut(&uid) else { return };
        if let Some(t) = call.timeout.take() {
            ctx.cancel_timer(t);
        }
        call.retry = Some(ctx.set_timer(self.cfg.retry_pause_ns, ClientTimer::CallRetry { uid }));
    }

    /// Whether any lock is being acquired or held (the session's acquire count is above 0).
    fn in_use(&self) -> bool {
        !self.v.locks.is_empty()
    }

    fn ensure_session(&mut self, ctx: &mut Ctx<Hazelcast>) {
        if self.v.session.is_none() && !self.v.creating {
            self.v.creating = true;
            self.invoke(ctx, None, Op::CreateSession);
        }
    }

    fn lock_op(&mut self, ctx: &mut Ctx<Hazelcast>, key: LockKey) {
        match self.v.session {
            Some(session) => {
                self.v.locks.entry(key).or_insert((Phase::Locking, 0)).0 = Phase::Locking;
                self.invoke(ctx, Some(key), Op::Lock { key, session });
            }
            None => {
                self.v.locks.entry(key).or_insert((Phase::NeedsSession, 0)).0 = Phase::NeedsSession;
                self.ensure_session(ctx);
            }
        }
    }

    fn arm_heartbeat(&mut self, ctx: &mut Ctx<Hazelcast>) {
        if self.v.heartbeat.is_none() {
            self.v.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat_ns, ClientTimer::Heartbeat));
        }
    }

    fn session_lost(&mut self, ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, session: SessionId) {
        if self.v.session != Some(session) {
            return;
        }
        self.v.session = None;
        ctx.note(|| format!("session s{session} expired: invalidated"));
        for (key, (phase, _)) in &self.v.locks {
            if *phase == Phase::Held {
                out.push(LockEvent::Lost { key: *key, honour: false });
            }
        }
    }

    fn completed(
        &mut self,
        ctx: &mut Ctx<Hazelcast>,
        out: &mut LockEvents,
        call: Call,
        result: Result<Reply, HzError>,
    ) {
        match (call.op, result) {
            (Op::CreateSession, r) => {
                self.v.creating = false;
                match r {
                    Ok(Reply::Session(s)) => {
                        self.v.session = Some(s);
                        self.arm_heartbeat(ctx);
                        let waiting: Vec<LockKey> = self
                            .v
                            .locks
                            .iter()
                            .filter(|(_, (p, _))| *p == Phase::NeedsSession)
                            .map(|(k, _)| *k)
                            .collect();
                        for key in waiting {
                            self.lock_op(ctx, key);
                        }
                    }
                    _ => {
                        let waiting: Vec<LockKey> = self
                            .v
                            .locks
                            .iter()
                            .filter(|(_, (p, _))| *p == Phase::NeedsSession)
                            .map(|(k, _)| *k)
                            .collect();
                        for key in waiting {
                            self.v.locks.remove(&key);
                            out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                        }
                    }
                }
            }
            (Op::Heartbeat { session }, Err(HzError::SessionExpired)) => self.session_lost(ctx, out, session),
            (Op::Heartbeat { .. }, _) => {}
            (Op::Lock { key, session }, r) => {
                let Some(&(phase, count)) = self.v.locks.get(&key) else { return };
                if phase != Phase::Locking {
                    return;
                }
                match r {
                    Ok(Reply::Fence(fence)) => {
                        self.v.locks.insert(key, (Phase::Held, count + 1));
                        out.push(LockEvent::Granted { key, token: Some(fence) });
                    }
                    Err(HzError::SessionExpired) if count == 0 => {
                        // A new session, and the lock loop again.
                        if self.v.session == Some(session) {
                            self.v.session = None;
                        }
                        self.lock_op(ctx, key);
                    }
                    Err(_) => {
                        if count == 0 {
                            self.v.locks.remove(&key);
                        } else {
                            self.v.locks.insert(key, (Phase::Held, count));
                        }
                        out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                    }
                    Ok(_) => {}
                }
            }
            (Op::Unlock { key, .. }, r) => {
                let Some(&(_, count)) = self.v.locks.get(&key) else { return };
                match r {
                    Ok(_) => out.push(LockEvent::Released { key }),
                    Err(HzError::SessionExpired | HzError::NotOwner) => {
                        out.push(LockEvent::ReleaseFailed { key, reason: FailReason::SessionLost })
                    }
                    Err(_) => out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable }),
                }
                if count <= 1 {
                    self.v.locks.remove(&key);
                } else {
                    self.v.locks.insert(key, (Phase::Held, count - 1));
                }
            }
        }
    }
}

impl Durable for HazelcastClient {
    /// A client library keeps only its configuration.
    type Disk = ClientConfig;
    fn into_disk(self, _crash: &Crash) -> ClientConfig {
        self.cfg
    }
    fn from_disk(cfg: ClientConfig) -> Self {
        HazelcastClient { cfg, v: Volatile::default() }
    }
}

impl LockClient<Hazelcast> for HazelcastClient {
    /// The epoch drawn at start, the high half of every invocation uid: members and the CP state
    /// only compare uids for equality (`State::apply`'s idempotent invocations and lock owner,
    /// `HazelcastServer`'s `pending` lookups), and the client orders its own calls by uid, which
    /// for one epoch is by `next`. The client index the member derives from the sender's
    /// position is hashed through `Renaming::client_index`.
    fn identity_values(&self, out: &mut Vec<u64>) {
        out.push(locksim_simulator::fingerprint::identity_hash(&self.v.epoch));
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents) {
        self.v.servers = (0..self.cfg.servers).filter_map(|i| ctx.node_named(&format!("server-{i}"))).collect();
        self.v.epoch = ctx.rng().gen_range(1..u32::MAX as u64);
    }

    fn acquire(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        self.lock_op(ctx, key);
    }

    fn release(&mut self, ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, key: LockKey) {
        match (self.v.locks.get_mut(&key), self.v.session) {
            (Some(l), Some(session)) => {
                l.0 = Phase::Unlocking;
                self.invoke(ctx, Some(key), Op::Unlock { key, session });
            }
            (Some(&mut (_, count)), None) => {
                // No session: LockOwnershipLostException before any call.
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::SessionLost });
                if count <= 1 {
                    self.v.locks.remove(&key);
                } else {
                    self.v.locks.insert(key, (Phase::Held, count - 1));
                }
            }
            (None, _) => out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused }),
        }
    }

    fn cancel(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, key: LockKey) {
        // tryLock's timeout: the wait is abandoned here (the group's wait key is not removed).
        let Some(&(_, count)) = self.v.locks.get(&key) else { return };
        let uids: Vec<u64> = self
            .v
            .calls
            .iter()
            .filter(|(_, c)| c.key == Some(key) && matches!(c.op, Op::Lock { .. }))
            .map(|(u, _)| *u)
            .collect();
        for uid in uids {
            self.finish(ctx, uid);
        }
        if count == 0 {
            self.v.locks.remove(&key);
        } else {
            self.v.locks.insert(key, (Phase::Held, count));
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, _from: NodeId, msg: HazelcastMsg) {
        let HazelcastMsg::Response(Response { uid, result }) = msg else { return };
        if !self.v.calls.contains_key(&uid) {
            return;
        }
        match result {
            Err(HzError::NotLeader { hint: Some(leader) }) => {
                if let Some(pos) = self.v.servers.iter().position(|s| *s == leader) {
                    self.v.target = pos;
                }
                self.send(ctx, uid);
            }
            Err(HzError::NotLeader { hint: None }) => self.retry_later(ctx, uid),
            result => {
                let call = self.finish(ctx, uid).expect("present");
                self.completed(ctx, out, call, result);
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, timer: TimerId, tag: HazelcastTimer) {
        match tag {
            HazelcastTimer::Client(ClientTimer::Heartbeat) if self.v.heartbeat == Some(timer) => {
                self.v.heartbeat = None;
                if let Some(session) = self.v.session {
                    if self.in_use() {
                        self.invoke(ctx, None, Op::Heartbeat { session });
                    }
                    self.arm_heartbeat(ctx);
                }
            }
            HazelcastTimer::Client(ClientTimer::CallTimeout { uid })
                if self.v.calls.get(&uid).is_some_and(|c| c.timeout == Some(timer)) =>
            {
                self.v.target += 1;
                let call = self.finish(ctx, uid).expect("present");
                self.completed(ctx, out, call, Err(HzError::NotLeader { hint: None }));
            }
            HazelcastTimer::Client(ClientTimer::CallRetry { uid })
                if self.v.calls.get(&uid).is_some_and(|c| c.retry == Some(timer)) =>
            {
                self.v.calls.get_mut(&uid).expect("present").retry = None;
                self.send(ctx, uid);
            }
            _ => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, peer: NodeId) {
        let uids: Vec<u64> = self.v.calls.iter().filter(|(_, c)| c.server == peer).map(|(u, _)| *u).collect();
        for uid in uids {
            self.retry_later(ctx, uid);
        }
    }

    fn reentrant(&self) -> bool {
        true
    }
}
