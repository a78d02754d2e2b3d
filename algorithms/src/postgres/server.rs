//! One PostgreSQL server: `server-0` starts as the primary, `server-1` (with `standby = true`) as
//! its streaming standby.
//!
//! - One session per connection. A statement runs when it arrives and its answer leaves after
//!   `service_ms`; a blocking lock call answers when the lock is granted.
//! - A session ends on the client's close, on a reset from the client's node (its process was
//!   killed: the backend sees the broken socket at once), on `idle_session_timeout` /
//!   `idle_in_transaction_session_timeout` (the server sends FATAL and closes), or when the
//!   kernel's keepalive gives up: the connection silent for `tcp_keepalives_idle`, then
//!   `tcp_keepalives_count` probes `tcp_keepalives_interval` apart with no answer. Only packets
//!   received count as a sign of life (a real kernel would also give up on unacknowledged data
//!   after `tcp_retries2`, ~15 min; here the server sends nothing to a silent holder anyway). A
//!   session's end rolls its transaction back and releases every advisory lock it held.
//! - Durable (WAL, `fsync = on`, `synchronous_commit = on`): the `lock_fence` generations, the
//!   WAL, the role and timeline. Lost in a crash: sessions and every advisory lock (they live in
//!   shared memory and are never WAL-logged).
//! - Replication: each committed generation goes to the standby `replication_lag_ms` after its
//!   commit; the primary sends a keepalive every second. The standby promotes itself (a new
//!   timeline) after `failover_after_ms` without hearing from the primary, starting with an empty
//!   lock table. A restarted former primary asks `server-1` what it is before it accepts
//!   anything (57P03 meanwhile) and stays read-only if `server-1` was promoted.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};

use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::locks::{AdvisoryLocks, ConnId, Generations, LockScope, Waiter};
use super::protocol::{Outcome, PgMsg, PgTimer, ServerTimer, Stmt, Termination, WalRecord};
use super::{Config, Postgres, PRIMARY_BEAT_NS};

mod fingerprint;

/// The server's role. Durable (it is the server's configuration: `standby.signal`, the timeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Accepts writes and advisory locks.
    Primary,
    /// Replays the primary's WAL; refuses clients (`target_session_attrs=read-write`).
    Standby,
    /// A former primary that found `server-1` promoted: read-only, not replicating.
    Retired,
}

/// One backend: a client connection and its session.
#[derive(Clone, Debug)]
struct Session {
    client: NodeId,
    last_id: u64,
    in_txn: bool,
    /// Generations bumped inside the open transaction: committed with it, lost with it.
    pending: Vec<(LockKey, u64)>,
    /// A lock call of this session waits in the lock queue.
    blocked: bool,
    /// The last packet received on the connection (the keepalive's reference).
    last_heard_ns: Nanos,
    /// Keepalive probes sent since then and not answered.
    probes: u32,
    keepalive: Option<TimerId>,
    idle: Option<TimerId>,
}

/// What a crash wipes.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The other PostgreSQL server, with `standby = true`.
    peer: Option<NodeId>,
    sessions: BTreeMap<ConnId, Session>,
    locks: AdvisoryLocks,
    /// (due on the monotonic clock, WAL position) waiting to reach the standby.
    ship_queue: VecDeque<(Nanos, u64)>,
    ship_timer: Option<TimerId>,
    beat: Option<TimerId>,
    /// Standby: when the primary was last heard from.
    primary_heard_ns: Nanos,
    /// A restarted former primary that has not yet heard what `server-1` is.
    probing: bool,
}

/// A PostgreSQL server.
#[derive(Clone, Debug)]
pub struct PgServer {
    cfg: Config,
    index: usize,
    // Durable.
    role: Role,
    timeline: u64,
    wal: Vec<WalRecord>,
    generations: Generations,
    v: Volatile,
}

impl PgServer {
    /// Server `index`: 0 starts as the primary, 1 as its standby; timeline 1.
    pub fn new(cfg: Config, index: usize) -> PgServer {
        let role = if index == 0 { Role::Primary } else { Role::Standby };
        PgServer::from_disk(ServerDisk {
            cfg,
            index,
            role,
            timeline: 1,
            wal: Vec::new(),
            generations: Generations::default(),
        })
    }

    /// The server's role.
    pub fn role(&self) -> Role {
        self.role
    }

    fn serving(&self) -> bool {
        self.role == Role::Primary && !self.v.probing
    }

    /// The standby this server streams to: only the original primary has one.
    fn standby(&self) -> Option<NodeId> {
        (self.role == Role::Primary && self.index == 0).then_some(self.v.peer).flatten()
    }

    fn arm_beat(&mut self, ctx: &mut Ctx<Postgres>) {
        if let Some(t) = self.v.beat.take() {
            ctx.cancel_timer(t);
        }
        self.v.beat = Some(ctx.set_timer(PRIMARY_BEAT_NS, ServerTimer::Beat));
    }

    fn on_beat(&mut self, ctx: &mut Ctx<Postgres>) {
        self.v.beat = None;
        let Some(peer) = self.v.peer else { return };
        if self.v.probing {
            ctx.send(peer, PgMsg::WhoIsPrimary);
        } else if self.role == Role::Primary {
            if self.standby().is_none() {
                return; // a promoted standby streams to nobody
            }
            ctx.send(peer, PgMsg::WalKeepalive { timeline: self.timeline, lsn: self.wal.len() as u64 });
        } else if self.role == Role::Standby {
            let silent_ns = ctx.now_mono_ns().saturating_sub(self.v.primary_heard_ns);
            if silent_ns >= self.cfg.failover_after_ns {
                self.timeline += 1;
                self.role = Role::Primary;
                let (tl, lsn) = (self.timeline, self.wal.len());
                ctx.note(|| {
                    format!(
                        "promoted: primary silent {:.1} s; timeline {tl}, WAL at #{lsn}, no advisory locks",
                        silent_ns as f64 / 1e9
                    )
                });
                return;
            }
        } else {
            return;
        }
        self.arm_beat(ctx);
    }

    // ---- sessions ----

    /// A packet arrived on `conn`: the keepalive starts over.
    fn heard(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId) {
        let now = ctx.now_mono_ns();
        let idle_ns = self.cfg.keepalive_idle_ns;
        let Some(s) = self.v.sessions.get_mut(&conn) else { return };
        s.last_heard_ns = now;
        s.probes = 0;
        if s.keepalive.is_none() {
            s.keepalive = Some(ctx.set_timer(idle_ns, ServerTimer::Keepalive { conn }));
        }
    }

    fn on_keepalive(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId) {
        let now = ctx.now_mono_ns();
        let (idle_ns, interval_ns, count) =
            (self.cfg.keepalive_idle_ns, self.cfg.keepalive_interval_ns, self.cfg.keepalive_count);
        let Some(s) = self.v.sessions.get_mut(&conn) else { return };
        s.keepalive = None;
        let silent_ns = now.saturating_sub(s.last_heard_ns);
        if s.probes == 0 && silent_ns < idle_ns {
            s.keepalive = Some(ctx.set_timer(idle_ns - silent_ns, ServerTimer::Keepalive { conn }));
        } else if s.probes >= count {
            ctx.note(|| format!("conn {conn:x}: {count} keepalive probes unanswered: connection timed out"));
            self.end_session(ctx, conn, "timed out (keepalive)");
        } else {
            s.probes += 1;
            let client = s.client;
            s.keepalive = Some(ctx.set_timer(interval_ns, ServerTimer::Keepalive { conn }));
            ctx.send(client, PgMsg::Probe { conn });
        }
    }

    fn arm_idle(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId) {
        let Some(s) = self.v.sessions.get_mut(&conn) else { return };
        if let Some(t) = s.idle.take() {
            ctx.cancel_timer(t);
        }
        let after_ns =
            if s.in_txn { self.cfg.idle_in_transaction_timeout_ns } else { self.cfg.idle_session_timeout_ns };
        if after_ns > 0 && !s.blocked {
            s.idle = Some(ctx.set_timer(after_ns, ServerTimer::Idle { conn }));
        }
    }

    fn on_idle(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId, timer: TimerId) {
        let Some(s) = self.v.sessions.get(&conn).filter(|s| s.idle == Some(timer)) else { return };
        let why = if s.in_txn { Termination::IdleInTransaction } else { Termination::IdleSession };
        ctx.send(s.client, PgMsg::Terminated { conn, why });
        self.end_session(ctx, conn, "terminated (idle timeout)");
    }

    /// Session `conn` is over: its transaction rolls back, its locks and lock waits go.
    fn end_session(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId, how: &str) {
        let Some(s) = self.v.sessions.remove(&conn) else { return };
        for t in [s.keepalive, s.idle].into_iter().flatten() {
            ctx.cancel_timer(t);
        }
        let (freed, granted) = self.v.locks.release_all(conn, true);
        if !freed.is_empty() {
            ctx.note(|| format!("session {conn:x} {how}: advisory locks {freed:?} released"));
        }
        self.answer_granted(ctx, granted);
    }

    fn answer_granted(&mut self, ctx: &mut Ctx<Postgres>, granted: Vec<(LockKey, Waiter)>) {
        for (key, w) in granted {
            if let Some(s) = self.v.sessions.get_mut(&w.session) {
                s.blocked = false;
            }
            ctx.note(|| format!("k{key} granted to waiting session {:x}", w.session));
            self.reply(ctx, w.session, w.id, Outcome::Done);
        }
    }

    fn reply(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId, id: u64, outcome: Outcome) {
        let Some(s) = self.v.sessions.get(&conn) else { return };
        let (client, in_txn) = (s.client, s.in_txn);
        let service_ns = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        ctx.send_after(service_ns, client, PgMsg::Reply { conn, id, outcome, in_txn });
        self.arm_idle(ctx, conn);
    }

    fn commit_generation(&mut self, ctx: &mut Ctx<Postgres>, key: LockKey, generation: u64) {
        self.generations.set(key, generation);
        let lsn = self.wal.len() as u64 + 1;
        self.wal.push(WalRecord { lsn, key, generation });
        if self.standby().is_some() {
            let due = ctx.now_mono_ns() + self.cfg.replication_lag_ns;
            self.v.ship_queue.push_back((due, lsn));
            if self.v.ship_timer.is_none() {
                self.v.ship_timer = Some(ctx.set_timer(self.cfg.replication_lag_ns, ServerTimer::Ship));
            }
        }
    }

    fn ship_due(&mut self, ctx: &mut Ctx<Postgres>) {
        self.v.ship_timer = None;
        let now = ctx.now_mono_ns();
        let mut records = Vec::new();
        while let Some(&(due, lsn)) = self.v.ship_queue.front().filter(|(due, _)| *due <= now) {
            let _ = due;
            self.v.ship_queue.pop_front();
            records.push(self.wal[lsn as usize - 1]);
        }
        if let (Some(standby), false) = (self.standby(), records.is_empty()) {
            ctx.send(standby, PgMsg::Wal { records });
        }
        if let Some(&(due, _)) = self.v.ship_queue.front() {
            self.v.ship_timer = Some(ctx.set_timer(due.saturating_sub(now), ServerTimer::Ship));
        }
    }

    fn apply_wal(&mut self, ctx: &mut Ctx<Postgres>, from: NodeId, records: Vec<WalRecord>) {
        if self.role != Role::Standby {
            return;
        }
        self.v.primary_heard_ns = ctx.now_mono_ns();
        for r in records {
            let have = self.wal.len() as u64;
            if r.lsn <= have {
                continue;
            }
            if r.lsn > have + 1 {
                ctx.send(from, PgMsg::WalResend { from: have + 1 });
                return;
            }
            self.generations.set(r.key, r.generation);
            self.wal.push(r);
        }
    }

    fn on_query(&mut self, ctx: &mut Ctx<Postgres>, from: NodeId, conn: ConnId, first: bool, id: u64, stmt: Stmt) {
        if !self.serving() {
            let outcome = if self.v.probing { Outcome::Starting } else { Outcome::ReadOnly };
            ctx.send(from, PgMsg::Reply { conn, id, outcome, in_txn: false });
            return;
        }
        if let Entry::Vacant(vacant) = self.v.sessions.entry(conn) {
            if !first {
                ctx.send(from, PgMsg::Reply { conn, id, outcome: Outcome::Gone, in_txn: false });
                return;
            }
            vacant.insert(Session {
                client: from,
                last_id: 0,
                in_txn: false,
                pending: Vec::new(),
                blocked: false,
                last_heard_ns: 0,
                probes: 0,
                keepalive: None,
                idle: None,
            });
            ctx.send(from, PgMsg::Ready { conn });
        }
        self.heard(ctx, conn);
        let s = self.v.sessions.get_mut(&conn).expect("session");
        if id <= s.last_id {
            return;
        }
        s.last_id = id;
        if let Some(t) = s.idle.take() {
            ctx.cancel_timer(t);
        }
        let outcome = match stmt {
            Stmt::Lock { key } | Stmt::XactLock { key } => {
                let scope = if matches!(stmt, Stmt::Lock { .. }) {
                    LockScope::Session
                } else {
                    s.in_txn = true;
                    LockScope::Xact
                };
                if self.v.locks.try_lock(key, conn, scope) {
                    Outcome::Done
                } else {
                    s.blocked = true;
                    self.v.locks.enqueue(key, Waiter { session: conn, id, scope });
                    return;
                }
            }
            Stmt::TryLock { key } => Outcome::Bool(self.v.locks.try_lock(key, conn, LockScope::Session)),
            Stmt::TryXactLock { key } => {
                s.in_txn = true;
                Outcome::Bool(self.v.locks.try_lock(key, conn, LockScope::Xact))
            }
            Stmt::Unlock { key } => {
                let (held, granted) = self.v.locks.unlock(key, conn);
                if !held {
                    ctx.note(|| format!("WARNING: you don't own a lock of type ExclusiveLock (k{key}, conn {conn:x})"));
                }
                self.answer_granted(ctx, granted);
                Outcome::Bool(held)
            }
            Stmt::Bump { key } => {
                let pending = s.pending.iter().filter(|(k, _)| *k == key).map(|&(_, g)| g).max();
                let generation = pending.unwrap_or(self.generations.get(key)) + 1;
                if s.in_txn {
                    s.pending.push((key, generation));
                } else {
                    self.commit_generation(ctx, key, generation);
                }
                Outcome::Generation(generation)
            }
            Stmt::Commit | Stmt::Rollback => {
                s.in_txn = false;
                let pending = std::mem::take(&mut s.pending);
                if stmt == Stmt::Commit {
                    for (key, generation) in pending {
                        self.commit_generation(ctx, key, generation);
                    }
                }
                let (_, granted) = self.v.locks.release_all(conn, false);
                self.answer_granted(ctx, granted);
                Outcome::Done
            }
            Stmt::DiscardAll => {
                let granted = self.v.locks.unlock_all_session(conn);
                self.answer_granted(ctx, granted);
                Outcome::Done
            }
        };
        self.reply(ctx, conn, id, outcome);
    }

    fn on_role(&mut self, ctx: &mut Ctx<Postgres>, primary: bool, timeline: u64) {
        if !self.v.probing {
            return;
        }
        self.v.probing = false;
        if primary && timeline > self.timeline {
            self.role = Role::Retired;
            self.timeline = timeline;
            ctx.note(|| format!("server-1 was promoted (timeline {timeline}): staying read-only"));
        } else {
            ctx.note(|| "server-1 is not primary: resuming as primary".to_string());
            self.arm_beat(ctx);
        }
    }
}

/// What a server keeps across a crash: generations, WAL, role and timeline are on disk
/// (fsynced at commit); sessions and advisory locks are not.
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: Config,
    index: usize,
    role: Role,
    timeline: u64,
    wal: Vec<WalRecord>,
    generations: Generations,
}

impl Durable for PgServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let PgServer { cfg, index, role, timeline, wal, generations, v: _ } = self;
        ServerDisk { cfg, index, role, timeline, wal, generations }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, index, role, timeline, wal, generations } = disk;
        PgServer { cfg, index, role, timeline, wal, generations, v: Volatile::default() }
    }
}

impl Process<Postgres> for PgServer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Postgres>) {
        if self.cfg.standby {
            let other = if self.index == 0 { "server-1" } else { "server-0" };
            self.v.peer = ctx.node_named(other);
        }
        self.v.primary_heard_ns = ctx.now_mono_ns();
        if self.v.peer.is_some() && (self.role == Role::Standby || self.standby().is_some()) {
            self.arm_beat(ctx);
        }
    }

    fn on_restart(&mut self, ctx: &mut Ctx<Postgres>) {
        self.on_start(ctx);
        if self.role == Role::Primary && self.index == 0 && self.v.peer.is_some() {
            // It may have been replaced while it was down: ask before accepting anything.
            self.v.probing = true;
            if let Some(peer) = self.v.peer {
                ctx.send(peer, PgMsg::WhoIsPrimary);
            }
            self.arm_beat(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Postgres>, from: NodeId, msg: PgMsg) {
        match msg {
            PgMsg::Query { conn, first, id, stmt } => self.on_query(ctx, from, conn, first, id, stmt),
            PgMsg::Close { conn } => self.end_session(ctx, conn, "closed by the client"),
            PgMsg::ProbeAck { conn } => self.heard(ctx, conn),
            PgMsg::Wal { records } => self.apply_wal(ctx, from, records),
            PgMsg::WalKeepalive { lsn, timeline } if self.role == Role::Standby && timeline >= self.timeline => {
                self.v.primary_heard_ns = ctx.now_mono_ns();
                if lsn > self.wal.len() as u64 {
                    ctx.send(from, PgMsg::WalResend { from: self.wal.len() as u64 + 1 });
                }
            }
            PgMsg::WalResend { from: lsn } => {
                if let (Some(standby), true) = (self.standby(), lsn >= 1) {
                    let records: Vec<WalRecord> = self.wal.iter().skip(lsn as usize - 1).copied().collect();
                    if !records.is_empty() {
                        ctx.send(standby, PgMsg::Wal { records });
                    }
                }
            }
            PgMsg::WhoIsPrimary => {
                let role = PgMsg::Role { primary: self.serving(), timeline: self.timeline };
                ctx.send(from, role);
            }
            PgMsg::Role { primary, timeline } => self.on_role(ctx, primary, timeline),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Postgres>, timer: TimerId, tag: PgTimer) {
        let PgTimer::Server(t) = tag else { return };
        match t {
            ServerTimer::Keepalive { conn }
                if self.v.sessions.get(&conn).is_some_and(|s| s.keepalive == Some(timer)) =>
            {
                self.on_keepalive(ctx, conn)
            }
            ServerTimer::Idle { conn } => self.on_idle(ctx, conn, timer),
            ServerTimer::Ship if self.v.ship_timer == Some(timer) => self.ship_due(ctx),
            ServerTimer::Beat if self.v.beat == Some(timer) => self.on_beat(ctx),
            _ => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Postgres>, peer: NodeId) {
        // The client's process was killed: the backend reads EOF/ECONNRESET and exits.
        let ended: Vec<ConnId> = self.v.sessions.iter().filter(|(_, s)| s.client == peer).map(|(&c, _)| c).collect();
        for conn in ended {
            self.end_session(ctx, conn, "reset by the client");
        }
    }

    fn leadership(&self) -> Option<u64> {
        self.serving().then_some(self.timeline)
    }
}
