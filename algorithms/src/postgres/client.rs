//! The client library: one libpq connection and the application's advisory-lock calls.
//!
//! - Acquire: `pg_advisory_lock(k)` (blocks in the server), or `pg_try_advisory_lock(k)` asked
//!   again every `poll_ms` while false; with `scope = "transaction"` the same inside `BEGIN`
//!   (`pg_advisory_xact_lock`), a false `try` rolled back before the sleep. With
//!   `fence = "generation"` the grant is followed by the generation bump, whose value is the
//!   grant's token (in the lock's transaction for `scope = "transaction"`).
//! - Release: `pg_advisory_unlock(k)` (a false answer, the lock not held by this session, returns
//!   normally with a warning: the application moves on), or `COMMIT`.
//! - The library believes it has one session: behind PgBouncer in transaction mode it does not,
//!   and nothing tells it.
//! - A connection is up once the server's startup answer (`Ready`) arrives. Connecting tries the
//!   hosts in order (libpq's multi-host string with
//!   `target_session_attrs=read-write`): a read-only or starting server, or a reset, moves to the
//!   next; when every host refused, it waits a second and starts again. A connection that breaks
//!   once established (a reset, the server's FATAL, an unknown connection) fails the call in
//!   progress and every lock the session held is gone: reported lost, not honoured (the
//!   application learns it only from its next statement, and a plain advisory-lock user has
//!   none in its critical section).
//! - An acquire timeout during a blocking call closes the connection (`PQcancel` is not
//!   modelled); during a `try` loop it stops the loop, releasing a grant that arrives late.
//! - The node's kernel answers keepalive probes.

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_SEC};

use super::locks::ConnId;
use super::protocol::{ClientTimer, Outcome, PgMsg, PgTimer, Stmt};
use super::{Acquire, Config, Postgres, Scope};

mod fingerprint;

/// After every host refused a connection, the library waits this long before trying again.
pub const RECONNECT_BACKOFF_NS: Nanos = NS_PER_SEC;

/// One library step (one statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Attempt {
        key: LockKey,
    },
    Bump {
        key: LockKey,
    },
    /// Ends the transaction a `try` opened and found the lock taken.
    Rollback {
        key: LockKey,
    },
    /// `silent`: cleaning up after a cancelled acquisition (no `Released` owed).
    Release {
        key: LockKey,
        silent: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct Inflight {
    op: Op,
    id: u64,
}

#[derive(Clone, Copy, Debug)]
struct Conn {
    to: NodeId,
    conn: ConnId,
    established: bool,
    next_id: u64,
}

#[derive(Clone, Debug, Default)]
struct KeyState {
    acquiring: bool,
    cancelled: bool,
    poll: Option<TimerId>,
    held: bool,
    lost: bool,
}

/// What a crash wipes: everything.
#[derive(Clone, Debug, Default)]
struct Volatile {
    hosts: Vec<NodeId>,
    /// The host the next connection goes to.
    host: usize,
    /// Hosts that refused in a row.
    refusals: usize,
    conn: Option<Conn>,
    inflight: Option<Inflight>,
    queue: VecDeque<Op>,
    keys: BTreeMap<LockKey, KeyState>,
    reconnect: Option<TimerId>,
}

/// The postgres client library.
#[derive(Clone, Debug)]
pub struct PgClient {
    cfg: Config,
    index: usize,
    v: Volatile,
}

impl PgClient {
    /// The library of client `index`.
    pub fn new(cfg: Config, index: usize) -> PgClient {
        PgClient::from_disk((cfg, index))
    }

    fn stmt_for(&self, op: Op) -> Stmt {
        match (op, self.cfg.scope, self.cfg.acquire) {
            (Op::Attempt { key }, Scope::Session, Acquire::Wait) => Stmt::Lock { key },
            (Op::Attempt { key }, Scope::Session, Acquire::Try) => Stmt::TryLock { key },
            (Op::Attempt { key }, Scope::Transaction, Acquire::Wait) => Stmt::XactLock { key },
            (Op::Attempt { key }, Scope::Transaction, Acquire::Try) => Stmt::TryXactLock { key },
            (Op::Bump { key }, ..) => Stmt::Bump { key },
            (Op::Rollback { .. }, ..) => Stmt::Rollback,
            (Op::Release { key, .. }, Scope::Session, _) => Stmt::Unlock { key },
            (Op::Release { .. }, Scope::Transaction, _) => Stmt::Commit,
        }
    }

    fn pump(&mut self, ctx: &mut Ctx<Postgres>) {
        if self.v.inflight.is_some() || self.v.reconnect.is_some() || self.v.hosts.is_empty() {
            return;
        }
        let Some(op) = self.v.queue.pop_front() else { return };
        let stmt = self.stmt_for(op);
        let c = match self.v.conn {
            Some(c) => c,
            None => {
                let conn = ((self.index as u64 + 1) << 32) | ctx.rng().gen::<u32>() as u64;
                let to = self.v.hosts[self.v.host % self.v.hosts.len()];
                Conn { to, conn, established: false, next_id: 1 }
            }
        };
        let id = c.next_id;
        ctx.send(c.to, PgMsg::Query { conn: c.conn, first: !c.established, id, stmt });
        self.v.conn = Some(Conn { next_id: id + 1, ..c });
        self.v.inflight = Some(Inflight { op, id });
    }

    /// The connection failed. A fresh one (refused: read-only, starting, reset) moves to the next
    /// host and the statement is sent again there; an established one loses its session.
    fn connection_failed(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, close: bool) {
        let Some(c) = self.v.conn.take() else { return };
        if close {
            ctx.send(c.to, PgMsg::Close { conn: c.conn });
        }
        if !c.established {
            if let Some(inf) = self.v.inflight.take() {
                self.v.queue.push_front(inf.op);
            }
            self.v.host += 1;
            self.v.refusals += 1;
            if self.v.refusals >= self.v.hosts.len() {
                self.v.refusals = 0;
                self.v.host = 0;
                self.v.reconnect = Some(ctx.set_timer(RECONNECT_BACKOFF_NS, ClientTimer::Reconnect));
            }
            return;
        }
        self.v.host = 0;
        self.lose_held(out);
        if let Some(inf) = self.v.inflight.take() {
            self.fail_op(ctx, out, inf.op);
        }
    }

    /// The session is gone, and every lock it held with it.
    fn lose_held(&mut self, out: &mut LockEvents) {
        for (&key, ks) in self.v.keys.iter_mut() {
            if ks.held && !ks.lost {
                ks.lost = true;
                out.push(LockEvent::Lost { key, honour: false });
            }
        }
    }

    fn fail_op(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, op: Op) {
        match op {
            Op::Attempt { key } | Op::Bump { key } | Op::Rollback { key } => {
                let ks = self.v.keys.entry(key).or_default();
                ks.acquiring = false;
                if std::mem::take(&mut ks.cancelled) {
                    return;
                }
                out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
            }
            Op::Release { key, silent } => {
                if !silent {
                    ctx.note(|| format!("release of k{key} failed: the connection broke"));
                    out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Unavailable });
                }
            }
        }
    }

    /// The lock call returned the lock.
    fn locked(&mut self, out: &mut LockEvents, key: LockKey) {
        if self.v.keys.get(&key).is_some_and(|ks| ks.cancelled) {
            self.abandon(key);
        } else if self.cfg.fence {
            self.v.queue.push_front(Op::Bump { key });
        } else {
            self.grant(out, key, None);
        }
    }

    /// A late grant after the application gave up: release it quietly.
    fn abandon(&mut self, key: LockKey) {
        let ks = self.v.keys.entry(key).or_default();
        ks.cancelled = false;
        ks.acquiring = false;
        self.v.queue.push_front(Op::Release { key, silent: true });
    }

    fn grant(&mut self, out: &mut LockEvents, key: LockKey, token: Option<u64>) {
        let ks = self.v.keys.entry(key).or_default();
        ks.acquiring = false;
        ks.held = true;
        ks.lost = false;
        out.push(LockEvent::Granted { key, token });
    }

    fn refused(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Refused { key });
        let ks = self.v.keys.entry(key).or_default();
        if std::mem::take(&mut ks.cancelled) {
            ks.acquiring = false;
            return;
        }
        ks.poll = Some(ctx.set_timer(self.cfg.poll_ns, ClientTimer::Poll { key }));
    }

    fn on_reply(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, conn: ConnId, id: u64, outcome: Outcome) {
        let ours = self.v.conn.is_some_and(|c| c.conn == conn) && self.v.inflight.is_some_and(|i| i.id == id);
        if !ours {
            return;
        }
        if matches!(outcome, Outcome::ReadOnly | Outcome::Starting | Outcome::Gone) {
            let name = ctx.name_of(self.v.conn.expect("conn").to);
            ctx.note(|| format!("{name}: {outcome:?}"));
            self.connection_failed(ctx, out, true);
            self.pump(ctx);
            return;
        }
        let inf = self.v.inflight.take().expect("ours");
        match (inf.op, outcome) {
            (Op::Attempt { key }, Outcome::Done | Outcome::Bool(true)) => self.locked(out, key),
            (Op::Attempt { key }, Outcome::Bool(false)) => {
                if self.cfg.scope == Scope::Transaction {
                    self.v.queue.push_front(Op::Rollback { key });
                } else {
                    self.refused(ctx, out, key);
                }
            }
            (Op::Rollback { key }, _) => self.refused(ctx, out, key),
            (Op::Bump { key }, Outcome::Generation(generation)) => {
                if self.v.keys.get(&key).is_some_and(|ks| ks.cancelled) {
                    self.abandon(key);
                } else {
                    self.grant(out, key, Some(generation));
                }
            }
            (Op::Release { key, silent }, outcome) => {
                if outcome == Outcome::Bool(false) {
                    ctx.note(|| format!("pg_advisory_unlock(k{key}) returned false: this session did not hold it"));
                }
                if let Some(ks) = self.v.keys.get_mut(&key) {
                    ks.held = false;
                }
                if !silent {
                    out.push(LockEvent::Released { key });
                }
            }
            (op, other) => {
                ctx.note(|| format!("unexpected answer {other:?} to {op:?}"));
                self.fail_op(ctx, out, op);
            }
        }
        self.pump(ctx);
    }
}

impl Durable for PgClient {
    /// A client library keeps only its configuration and index.
    type Disk = (Config, usize);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.index)
    }
    fn from_disk((cfg, index): Self::Disk) -> Self {
        PgClient { cfg, index, v: Volatile::default() }
    }
}

impl LockClient<Postgres> for PgClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Postgres>, _out: &mut LockEvents) {
        let hosts: Vec<NodeId> = match self.cfg.bouncer_name() {
            Some(bouncer) => vec![ctx.node_named(bouncer).expect("pgbouncer exists")],
            None if self.cfg.standby => ["server-0", "server-1"].iter().filter_map(|n| ctx.node_named(n)).collect(),
            None => vec![ctx.node_named("server-0").expect("server-0 exists")],
        };
        self.v = Volatile { hosts, ..Volatile::default() };
    }

    fn acquire(&mut self, ctx: &mut Ctx<Postgres>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        let ks = self.v.keys.entry(key).or_default();
        ks.acquiring = true;
        ks.cancelled = false;
        self.v.queue.push_back(Op::Attempt { key });
        self.pump(ctx);
    }

    fn release(&mut self, ctx: &mut Ctx<Postgres>, _out: &mut LockEvents, key: LockKey) {
        self.v.queue.push_back(Op::Release { key, silent: false });
        self.pump(ctx);
    }

    fn cancel(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, key: LockKey) {
        self.v.queue.retain(|op| *op != Op::Attempt { key });
        let inflight = self.v.inflight.map(|i| i.op);
        let ks = self.v.keys.entry(key).or_default();
        if let Some(t) = ks.poll.take() {
            ctx.cancel_timer(t);
        }
        match inflight {
            Some(Op::Attempt { key: k }) if k == key && self.cfg.acquire == Acquire::Wait => {
                // The call blocks in the server: the application gives up on the connection.
                ks.acquiring = false;
                ks.cancelled = false;
                ctx.note(|| format!("acquire of k{key} timed out while blocked: closing the connection"));
                self.v.inflight = None;
                if let Some(c) = self.v.conn.take() {
                    ctx.send(c.to, PgMsg::Close { conn: c.conn });
                }
                self.v.host = 0;
                self.lose_held(out);
                self.pump(ctx);
            }
            Some(Op::Attempt { key: k } | Op::Bump { key: k } | Op::Rollback { key: k }) if k == key => {
                ks.cancelled = true;
            }
            _ => {
                ks.acquiring = false;
                ks.cancelled = false;
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, from: NodeId, msg: PgMsg) {
        match msg {
            PgMsg::Reply { conn, id, outcome, .. } => self.on_reply(ctx, out, conn, id, outcome),
            PgMsg::Ready { conn } => {
                if let Some(c) = self.v.conn.as_mut().filter(|c| c.conn == conn) {
                    c.established = true;
                    self.v.refusals = 0;
                }
            }
            PgMsg::Probe { conn } => ctx.send(from, PgMsg::ProbeAck { conn }),
            PgMsg::Terminated { conn, why } if self.v.conn.is_some_and(|c| c.conn == conn) => {
                ctx.note(|| format!("server terminated the session: {why:?}"));
                self.connection_failed(ctx, out, false);
                self.pump(ctx);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Postgres>, _out: &mut LockEvents, timer: TimerId, tag: PgTimer) {
        let PgTimer::Client(t) = tag else { return };
        match t {
            ClientTimer::Poll { key } => {
                if let Some(ks) = self.v.keys.get_mut(&key).filter(|ks| ks.poll == Some(timer)) {
                    ks.poll = None;
                    if ks.acquiring && !ks.cancelled {
                        self.v.queue.push_back(Op::Attempt { key });
                    }
                }
            }
            ClientTimer::Reconnect if self.v.reconnect == Some(timer) => self.v.reconnect = None,
            ClientTimer::Reconnect => return,
        }
        self.pump(ctx);
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Postgres>, out: &mut LockEvents, peer: NodeId) {
        if self.v.conn.is_some_and(|c| c.to == peer) {
            let name = ctx.name_of(peer);
            ctx.note(|| format!("connection to {name} reset"));
            self.connection_failed(ctx, out, false);
            self.pump(ctx);
        }
    }
}
