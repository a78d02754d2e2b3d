//! A client node: the application, Consul's Go `api.Lock` and the node's agent, which answers
//! the servers' gossip probes (its `serfHealth`) and carries the api's HTTP calls to a server as
//! RPCs.
//!
//! `api.Lock` (consul `api/lock.go`, the 1.x line):
//! - `Lock()` creates a session (`createSession`: the session's TTL `DefaultLockSessionTTL`,
//!   15 s; no checks given, so the server binds it to the node's `serfHealth`; behaviour
//!   `release`; the HTTP endpoint's lock-delay, 15 s) and renews it every TTL/2
//!   (`RenewPeriodic`: after an error it tries again every second until a TTL has passed since
//!   the last success, and stops on a 404);
//! - then loops: a `GET` of the key (blocking on the last index when the key is held, with
//!   `DefaultLockWaitTime`, 15 s); a free key is taken with `?acquire=`; a refused acquire (a
//!   lock-delay in force) waits `DefaultLockRetryTime`, 5 s, before the next `GET`;
//! - once held, `monitorLock` runs a consistent blocking query on the key with no wait time of
//!   its own (the server's default, 5 min) and closes the lock channel when the key no longer
//!   names the session or the query fails (`MonitorRetries` 0): the application stops
//!   (`consul lock` kills its child) when it reads that channel;
//! - `Unlock()` releases the key (`?release=`; the answer's `false` is ignored) and destroys
//!   the session.
//!
//! The agent (consul `agent/consul/client.go`, `RPC`): a call that finds no leader is retried on
//! another server after a random stagger of `rpc_hold_timeout / 16` until `rpc_hold_timeout`
//! (7 s) has passed; any call gets no answer for `limits.rpc_client_timeout` (60 s) plus, for a
//! blocking query, its wait, it fails. Until then a call caught by a partition simply waits:
//! that is why a partitioned holder keeps running for minutes after its session was
//! invalidated (hashicorp/consul#18271).

use std::collections::BTreeMap;

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_SEC};

use super::protocol::{
    Ack, ClientTimer, ConsulError, ConsulMsg, ConsulTimer, Index, KvEntry, Op, ReadMode, Reply, Rpc, RpcReply,
    SessionId, SessionSpec,
};
use super::Consul;

mod fingerprint;

/// Which of the key's indices the application uses as its fencing token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// `LockIndex` (starts again at 1 when a `delete` session's key is recreated).
    LockIndex,
    /// `ModifyIndex` (the Raft index of the acquire: always grows).
    ModifyIndex,
}

/// The client's settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Service nodes `server-0 …`.
    pub servers: usize,
    /// The session `Lock()` creates (the node is filled in per client).
    pub session: SessionSpec,
    /// `DefaultLockWaitTime`.
    pub lock_wait_ns: Nanos,
    /// The monitor's wait: the server's default query time.
    pub monitor_wait_ns: Nanos,
    /// `DefaultLockRetryTime`.
    pub lock_retry_ns: Nanos,
    /// `limits.rpc_client_timeout`.
    pub rpc_timeout_ns: Nanos,
    /// `rpc_hold_timeout`.
    pub rpc_hold_ns: Nanos,
    /// The mode of `Lock()`'s `GET`.
    pub read_mode: ReadMode,
    /// The application stops its critical section when the lock channel closes.
    pub stop_on_lost: bool,
    /// The token handed with a grant.
    pub token: TokenKind,
}

/// What a call is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    CreateSession,
    Wait,
    Acquire,
    Monitor,
    Renew,
    Release,
    Destroy,
}

#[derive(Clone, Debug)]
struct Call {
    key: LockKey,
    purpose: Purpose,
    op: Op,
    first_sent_ns: Nanos,
    server: NodeId,
    timeout: Option<TimerId>,
    retry: Option<TimerId>,
}

/// How a call ended badly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallError {
    Server(ConsulError),
    Timeout,
    Reset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Acquiring,
    Held,
    Releasing,
}

#[derive(Clone, Debug)]
struct LockState {
    phase: Phase,
    session: Option<SessionId>,
    /// `qOpts.WaitIndex` of `Lock()`'s loop.
    wait_index: Option<Index>,
    retry_timer: Option<TimerId>,
    renew_timer: Option<TimerId>,
    last_renew_ns: Nanos,
}

#[derive(Clone, Debug, Default)]
struct Volatile {
    servers: Vec<NodeId>,
    target: usize,
    next_id: u64,
    calls: BTreeMap<u64, Call>,
    locks: BTreeMap<LockKey, LockState>,
}

/// One client node.
#[derive(Clone, Debug)]
pub struct ConsulClient {
    index: usize,
    cfg: ClientConfig,
    v: Volatile,
}

impl ConsulClient {
    /// Client `index` (node `client-<index>`).
    pub fn new(index: usize, cfg: ClientConfig) -> Self {
        ConsulClient::from_disk((index, cfg))
    }

    fn call(&mut self, ctx: &mut Ctx<Consul>, key: LockKey, purpose: Purpose, op: Op) -> u64 {
        self.v.next_id += 1;
        let id = self.v.next_id;
        let call = Call { key, purpose, op, first_sent_ns: ctx.now_mono_ns(), server: 0, timeout: None, retry: None };
        self.v.calls.insert(id, call);
        self.transmit(ctx, id);
        id
    }

    fn transmit(&mut self, ctx: &mut Ctx<Consul>, id: u64) {
        let server = self.v.servers[self.v.target % self.v.servers.len()];
        let Some(call) = self.v.calls.get_mut(&id) else { return };
        let wait = match call.op {
            Op::KvGet { wait_index: Some(_), wait_ns, .. } => wait_ns + wait_ns / 16,
            _ => 0,
        };
        call.server = server;
        let op = call.op.clone();
        if let Some(t) = call.timeout.take() {
            ctx.cancel_timer(t);
        }
        let timer = ctx.set_timer(self.cfg.rpc_timeout_ns + wait, ClientTimer::CallTimeout { id });
        self.v.calls.get_mut(&id).expect("present").timeout = Some(timer);
        ctx.send(server, Rpc { id, op });
    }

    fn finish(&mut self, ctx: &mut Ctx<Consul>, id: u64) -> Option<Call> {
        let call = self.v.calls.remove(&id)?;
        for t in [call.timeout, call.retry].into_iter().flatten() {
            ctx.cancel_timer(t);
        }
        Some(call)
    }

    fn on_reply(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, reply: RpcReply) {
        let Some(call) = self.v.calls.get(&reply.id) else { return };
        let now = ctx.now_mono_ns();
        match reply.result {
            Err(ConsulError::NotLeader { hint: Some(leader) }) => {
                // The server would forward it: send it on to the leader.
                if let Some(pos) = self.v.servers.iter().position(|s| *s == leader) {
                    self.v.target = pos;
                }
                self.transmit(ctx, reply.id);
            }
            Err(ConsulError::NotLeader { hint: None }) if now < call.first_sent_ns + self.cfg.rpc_hold_ns => {
                // "No cluster leader": the agent retries on another server after a stagger.
                let stagger = ctx.rng().gen_range(0..self.cfg.rpc_hold_ns / 16);
                self.v.target += 1;
                let id = reply.id;
                let call = self.v.calls.get_mut(&id).expect("present");
                if let Some(t) = call.timeout.take() {
                    ctx.cancel_timer(t);
                }
                call.retry = Some(ctx.set_timer(stagger, ClientTimer::CallRetry { id }));
            }
            result => {
                let call = self.finish(ctx, reply.id).expect("present");
                self.completed(ctx, out, call, result.map_err(CallError::Server));
            }
        }
    }

    /// A call ended: drive the lock that made it.
    fn completed(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, call: Call, result: Result<Reply, CallError>) {
        let key = call.key;
        let Some(lock) = self.v.locks.get(&key) else { return };
        let (phase, session) = (lock.phase, lock.session);
        match (call.purpose, result) {
            (Purpose::CreateSession, Ok(Reply::Session(s))) if phase == Phase::Acquiring => {
                let lock = self.v.locks.get_mut(&key).expect("present");
                lock.session = Some(s);
                lock.last_renew_ns = ctx.now_mono_ns();
                self.arm_renew(ctx, key, None);
                self.wait(ctx, key);
            }
            (Purpose::CreateSession, _) if phase == Phase::Acquiring => {
                self.fail(ctx, out, key, FailReason::Unavailable);
            }
            (Purpose::Wait, Ok(Reply::Kv(entry, index))) if phase == Phase::Acquiring => {
                match entry.and_then(|e| e.session) {
                    Some(_) => {
                        self.v.locks.get_mut(&key).expect("present").wait_index = Some(index);
                        if entry.and_then(|e| e.session) != session {
                            out.push(LockEvent::Refused { key });
                        }
                        self.wait(ctx, key);
                    }
                    None => {
                        let session = session.expect("a session before the first GET");
                        self.call(ctx, key, Purpose::Acquire, Op::KvAcquire { key, session });
                    }
                }
            }
            (Purpose::Acquire, Ok(Reply::Bool(true, Some(entry)))) if phase == Phase::Acquiring => {
                self.v.locks.get_mut(&key).expect("present").phase = Phase::Held;
                out.push(LockEvent::Granted { key, token: Some(self.token(&entry)) });
                let mode = ReadMode::Consistent;
                self.call(ctx, key, Purpose::Monitor, Op::KvGet { key, wait_index: None, wait_ns: 0, mode });
            }
            (Purpose::Acquire, Ok(Reply::Bool(..))) if phase == Phase::Acquiring => {
                // A lock-delay in force (or taken meanwhile): DefaultLockRetryTime, then GET again.
                out.push(LockEvent::Refused { key });
                let timer = ctx.set_timer(self.cfg.lock_retry_ns, ClientTimer::LockRetry { key });
                self.v.locks.get_mut(&key).expect("present").retry_timer = Some(timer);
            }
            (Purpose::Wait | Purpose::Acquire, _) if phase == Phase::Acquiring => {
                self.fail(ctx, out, key, FailReason::Unavailable);
            }
            (Purpose::Monitor, Ok(Reply::Kv(entry, index))) if phase == Phase::Held => {
                if entry.and_then(|e| e.session) == session {
                    let wait_ns = self.cfg.monitor_wait_ns;
                    let op = Op::KvGet { key, wait_index: Some(index), wait_ns, mode: ReadMode::Consistent };
                    self.call(ctx, key, Purpose::Monitor, op);
                } else {
                    ctx.note(|| format!("monitorLock: lock-{key} no longer names our session: lock channel closed"));
                    out.push(LockEvent::Lost { key, honour: self.cfg.stop_on_lost });
                }
            }
            (Purpose::Monitor, Err(e)) if phase == Phase::Held => {
                ctx.note(|| format!("monitorLock: query failed ({e:?}): lock channel closed"));
                out.push(LockEvent::Lost { key, honour: self.cfg.stop_on_lost });
            }
            (Purpose::Renew, Ok(_)) => {
                let now = ctx.now_mono_ns();
                self.v.locks.get_mut(&key).expect("present").last_renew_ns = now;
                self.arm_renew(ctx, key, None);
            }
            (Purpose::Renew, Err(CallError::Server(ConsulError::SessionNotFound))) => {
                ctx.note(|| format!("session renew: 404, renewals of lock-{key}'s session stop"));
            }
            (Purpose::Renew, Err(_)) => {
                let lock = &self.v.locks[&key];
                let ttl = self.cfg.session.ttl_ns.unwrap_or(0);
                if ctx.now_mono_ns() < lock.last_renew_ns + ttl {
                    self.arm_renew(ctx, key, Some(NS_PER_SEC));
                }
            }
            (Purpose::Release, result) if phase == Phase::Releasing => {
                match result {
                    Ok(_) => out.push(LockEvent::Released { key }),
                    Err(CallError::Timeout) => out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Timeout }),
                    Err(_) => out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable }),
                }
                self.drop_lock(ctx, key);
            }
            _ => {}
        }
    }

    fn token(&self, entry: &KvEntry) -> u64 {
        match self.cfg.token {
            TokenKind::LockIndex => entry.lock_index,
            TokenKind::ModifyIndex => entry.modify_index,
        }
    }

    /// `Lock()`'s `GET` of the key (blocking once a wait index is known).
    fn wait(&mut self, ctx: &mut Ctx<Consul>, key: LockKey) {
        let wait_index = self.v.locks[&key].wait_index;
        let op = Op::KvGet { key, wait_index, wait_ns: self.cfg.lock_wait_ns, mode: self.cfg.read_mode };
        self.call(ctx, key, Purpose::Wait, op);
    }

    fn arm_renew(&mut self, ctx: &mut Ctx<Consul>, key: LockKey, after_ns: Option<Nanos>) {
        let Some(ttl) = self.cfg.session.ttl_ns else { return };
        let timer = ctx.set_timer(after_ns.unwrap_or(ttl / 2), ClientTimer::Renew { key });
        if let Some(old) = self.v.locks.get_mut(&key).and_then(|l| l.renew_timer.replace(timer)) {
            ctx.cancel_timer(old);
        }
    }

    fn fail(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, key: LockKey, reason: FailReason) {
        out.push(LockEvent::Failed { key, reason });
        self.drop_lock(ctx, key);
    }

    /// Forgets the lock: its calls are abandoned, its timers cancelled, its session destroyed.
    fn drop_lock(&mut self, ctx: &mut Ctx<Consul>, key: LockKey) {
        let Some(lock) = self.v.locks.remove(&key) else { return };
        for t in [lock.retry_timer, lock.renew_timer].into_iter().flatten() {
            ctx.cancel_timer(t);
        }
        let ids: Vec<u64> = self.v.calls.iter().filter(|(_, c)| c.key == key).map(|(id, _)| *id).collect();
        for id in ids {
            self.finish(ctx, id);
        }
        if let Some(session) = lock.session {
            // The renew goroutine's done channel: destroy the session (its answer is not awaited).
            self.call(ctx, key, Purpose::Destroy, Op::SessionDestroy { session });
        }
    }
}

impl Durable for ConsulClient {
    /// A client library keeps only its index and configuration.
    type Disk = (usize, ClientConfig);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.index, self.cfg)
    }
    fn from_disk((index, cfg): Self::Disk) -> Self {
        ConsulClient { index, cfg, v: Volatile::default() }
    }
}

impl LockClient<Consul> for ConsulClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Consul>, _out: &mut LockEvents) {
        self.v.servers = (0..self.cfg.servers).filter_map(|i| ctx.node_named(&format!("server-{i}"))).collect();
        self.v.target = self.index;
    }

    fn acquire(&mut self, ctx: &mut Ctx<Consul>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        let lock = LockState {
            phase: Phase::Acquiring,
            session: None,
            wait_index: None,
            retry_timer: None,
            renew_timer: None,
            last_renew_ns: 0,
        };
        self.v.locks.insert(key, lock);
        let spec = SessionSpec { node: self.index as u32, ..self.cfg.session };
        self.call(ctx, key, Purpose::CreateSession, Op::SessionCreate(spec));
    }

    fn release(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, key: LockKey) {
        let Some(lock) = self.v.locks.get_mut(&key) else {
            out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused });
            return;
        };
        lock.phase = Phase::Releasing;
        let session = lock.session;
        // The monitor is no longer of interest.
        let monitors: Vec<u64> = self
            .v
            .calls
            .iter()
            .filter(|(_, c)| c.key == key && c.purpose == Purpose::Monitor)
            .map(|(id, _)| *id)
            .collect();
        for id in monitors {
            self.finish(ctx, id);
        }
        match session {
            Some(session) => {
                self.call(ctx, key, Purpose::Release, Op::KvRelease { key, session });
            }
            None => {
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused });
                self.drop_lock(ctx, key);
            }
        }
    }

    fn cancel(&mut self, ctx: &mut Ctx<Consul>, _out: &mut LockEvents, key: LockKey) {
        self.drop_lock(ctx, key);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, from: NodeId, msg: ConsulMsg) {
        match msg {
            ConsulMsg::Ping(p) => ctx.send(from, Ack { seq: p.seq }),
            ConsulMsg::RpcReply(r) => self.on_reply(ctx, out, r),
            ConsulMsg::Rpc(_) | ConsulMsg::Ack(_) | ConsulMsg::Consensus(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, timer: TimerId, tag: ConsulTimer) {
        match tag {
            ConsulTimer::Client(ClientTimer::CallTimeout { id }) => {
                if self.v.calls.get(&id).is_some_and(|c| c.timeout == Some(timer)) {
                    // The agent's server manager moves on from a server that failed a call.
                    self.v.target += 1;
                    let call = self.finish(ctx, id).expect("present");
                    self.completed(ctx, out, call, Err(CallError::Timeout));
                }
            }
            ConsulTimer::Client(ClientTimer::CallRetry { id }) => {
                if self.v.calls.get(&id).is_some_and(|c| c.retry == Some(timer)) {
                    self.v.calls.get_mut(&id).expect("present").retry = None;
                    self.transmit(ctx, id);
                }
            }
            ConsulTimer::Client(ClientTimer::LockRetry { key }) => {
                if self.v.locks.get(&key).is_some_and(|l| l.retry_timer == Some(timer)) {
                    self.v.locks.get_mut(&key).expect("present").retry_timer = None;
                    self.wait(ctx, key);
                }
            }
            ConsulTimer::Client(ClientTimer::Renew { key }) => {
                let Some(lock) = self.v.locks.get_mut(&key) else { return };
                if lock.renew_timer != Some(timer) {
                    return;
                }
                lock.renew_timer = None;
                if let Some(session) = lock.session {
                    self.call(ctx, key, Purpose::Renew, Op::SessionRenew { session });
                }
            }
            ConsulTimer::Server(_) | ConsulTimer::Consensus(_) => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Consul>, out: &mut LockEvents, peer: NodeId) {
        let ids: Vec<u64> = self.v.calls.iter().filter(|(_, c)| c.server == peer).map(|(id, _)| *id).collect();
        if !ids.is_empty() {
            self.v.target += 1;
        }
        for id in ids {
            if let Some(call) = self.finish(ctx, id) {
                self.completed(ctx, out, call, Err(CallError::Reset));
            }
        }
    }
}
