//! One MySQL server (`server-0` starts as the primary, `server-1` as its replica when replication
//! is on): executes the lock statements, runs the cleanup job, ships its binlog or applies the
//! primary's, and answers the failover manager.
//!
//! - A statement takes `service_ms` (a commit with its fsync) and takes effect when that time is
//!   over, in the order the commits finish; a crash before then loses it (the timer dies with the
//!   node). Each connection's statement ids are executed once (TCP delivers a segment once); a
//!   retransmitted id gets the stored result again.
//! - Durable across a crash (InnoDB, `sync_binlog = 1`, the configuration): the table with its
//!   auto-increment counter (MySQL 8.0; with `autoinc_persistent = false`, 5.7, the counter is
//!   recomputed as `MAX(id) + 1` at restart), the binlog, the role and failover epoch. Lost: sessions and their
//!   `GET_LOCK`s, statements not yet committed, the semisync state, what had not been shipped yet
//!   (a restarted primary ships it when the replica asks).
//! - Shipping: each binlog event leaves `replication_lag_ms` after its commit, in order; the
//!   replica applies what it receives in order (`log_replica_updates`: its binlog is the same
//!   sequence, so after a promotion it continues it), detects gaps from the positions and the
//!   once-a-second heartbeat, and asks for a resend.
//! - Semisync (`rpl_semi_sync_source_wait_point = AFTER_SYNC` as to durability; the row is
//!   visible to other sessions once committed here, which only changes when a concurrent INSERT is
//!   told "duplicate"): a changing statement's result waits for the replica's ack of its position.
//!   When the oldest waiting commit has waited `semisync_timeout_ms`, the primary switches to
//!   async and releases every waiter; it switches back when an ack shows the replica has caught up
//!   with the whole binlog (MySQL reference manual, "Semisynchronous Replication").
//! - `GET_LOCK` is not a write: it works on any server, read-only or not, and is never
//!   replicated. A session ends when its client closes the connection, or when the connection is
//!   reset (the client process was killed: [`Process::on_reset`]): MySQL then ends the session,
//!   releasing its `GET_LOCK`s and rolling back its open transaction (MySQL 8.0 reference
//!   manual, 14.14 "Locking Functions": a lock obtained with GET_LOCK() is released implicitly
//!   when the session terminates, "either normally or abnormally").

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_SEC};

use super::protocol::{
    BinlogEvent, DbMsg, DbTimer, Outcome, OwnerFmt, Role, ServerTimer, ShedTime, ShedUnlockTime, Stmt,
};
use super::shedlock::{ShedRow, ShedTable};
use locksim_simulator::history::LockKey;

use super::table::{Change, ConnId, LockTable, Owner, ReleaseOutcome, UserLocks};
use super::{Config, Db, Mode, Replication};
use crate::smallmap::SmallMap;

mod fingerprint;

/// The primary's binlog heartbeat to the replica (MySQL's `MASTER_HEARTBEAT_PERIOD`, shortened
/// from its 30 s default so a replica notices a gap within a second).
pub const BINLOG_HEARTBEAT_NS: Nanos = NS_PER_SEC;
/// A replica asks for a resend at most this often.
const RESYNC_EVERY_NS: Nanos = NS_PER_SEC / 2;

/// A client connection (session).
#[derive(Clone, Debug)]
struct Conn {
    /// The client node at the other end.
    client: NodeId,
    /// The last statement id accepted on it.
    last_id: u64,
    /// Its result, once there is one (resent to a retransmission).
    result: Option<Outcome>,
}

/// A statement between its arrival and its commit.
#[derive(Clone, Debug)]
struct Exec {
    client: NodeId,
    conn: ConnId,
    id: u64,
    stmt: Stmt,
}

/// A committed statement whose result waits for the semisync ack of `seq`.
#[derive(Clone, Debug)]
struct Parked {
    seq: u64,
    client: NodeId,
    conn: ConnId,
    id: u64,
    outcome: Outcome,
    since_ns: Nanos,
}

/// A locking read blocked on a row another transaction holds.
#[derive(Clone, Debug)]
struct RowWaiter {
    client: NodeId,
    conn: ConnId,
    id: u64,
    /// Its `innodb_lock_wait_timeout`.
    timer: TimerId,
}

/// One row's lock (`select_for_update` mode): the transaction holding it and the locking reads
/// waiting for it, in arrival order.
#[derive(Clone, Debug, Default)]
struct RowLock {
    holder: Option<ConnId>,
    waiters: VecDeque<RowWaiter>,
}

/// What a crash wipes.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// Server node ids by index.
    peers: Vec<NodeId>,
    manager: Option<NodeId>,
    conns: SmallMap<ConnId, Conn>,
    user_locks: UserLocks,
    /// `GET_LOCK` requests waiting in the server for a lock another session holds.
    user_lock_waits: BTreeMap<LockKey, VecDeque<RowWaiter>>,
    /// Row locks held by open transactions (in memory only, like every InnoDB lock).
    row_locks: BTreeMap<LockKey, RowLock>,
    exec: SmallMap<u64, Exec>,
    next_exec: u64,
    /// (due on the monotonic clock, binlog position) waiting to be shipped.
    ship_queue: VecDeque<(Nanos, u64)>,
    ship_timer: Option<TimerId>,
    /// Last position sent to the replica.
    shipped: u64,
    semisync_on: bool,
    acked: u64,
    parked: VecDeque<Parked>,
    semisync_timer: Option<TimerId>,
    last_resync_ns: Option<Nanos>,
    cleanup_timer: Option<TimerId>,
    beat_timer: Option<TimerId>,
}

/// A MySQL server.
#[derive(Clone, Debug)]
pub struct DbServer {
    cfg: Config,
    index: usize,
    // Durable.
    role: Role,
    epoch: u64,
    /// Who this server believes is the primary (told to clients in read-only errors).
    primary_hint: Option<NodeId>,
    table: LockTable,
    /// ShedLock's table (`mode = "shedlock"`; empty otherwise).
    shed: ShedTable,
    /// The binlog (primary) or the applied relay log (replica): position i + 1 at index i.
    binlog: Vec<BinlogEvent>,
    v: Volatile,
}

impl DbServer {
    /// Server `index` (`server-<index>`): 0 starts as the primary, 1 as its replica; epoch 1,
    /// empty table and binlog.
    pub fn new(cfg: Config, index: usize) -> DbServer {
        DbServer::from_disk(ServerDisk {
            cfg,
            index,
            role: if index == 0 { Role::Primary } else { Role::Replica },
            epoch: 1,
            primary_hint: None,
            table: LockTable::default(),
            shed: ShedTable::default(),
            binlog: Vec::new(),
        })
    }

    /// The server's current role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The server's lock table.
    pub fn table(&self) -> &LockTable {
        &self.table
    }

    /// The replica this server ships to: only the original primary has one (a promoted replica
    /// has no replica of its own; the old primary is retired, not rejoined).
    fn replica(&self) -> Option<NodeId> {
        if self.role == Role::Primary && self.index == 0 && self.cfg.replicated() {
            self.v.peers.get(1).copied()
        } else {
            None
        }
    }

    fn semisync_waits(&self) -> bool {
        self.cfg.replication == Replication::Semisync && self.v.semisync_on && self.replica().is_some()
    }

    fn start_primary_duties(&mut self, ctx: &mut Ctx<Db>) {
        if self.cfg.mode == Mode::Table && self.cfg.expire_ns > 0 && self.v.cleanup_timer.is_none() {
            // The job's phase against the run is arbitrary (cron started whenever): drawn.
            let first = ctx.rng().gen_range(1..=self.cfg.cleanup_every_ns.max(1));
            self.v.cleanup_timer = Some(ctx.set_timer(first, ServerTimer::Cleanup));
        }
        if self.replica().is_some() && self.v.beat_timer.is_none() {
            self.v.beat_timer = Some(ctx.set_timer(BINLOG_HEARTBEAT_NS, ServerTimer::BinlogHeartbeat));
        }
    }

    fn respond(&mut self, ctx: &mut Ctx<Db>, client: NodeId, conn: ConnId, id: u64, outcome: Outcome) {
        if let Some(c) = self.v.conns.get_mut(&conn) {
            if c.last_id == id {
                c.result = Some(outcome);
            }
        }
        ctx.send(client, DbMsg::Response { conn, id, outcome });
    }

    fn on_request(&mut self, ctx: &mut Ctx<Db>, from: NodeId, conn: ConnId, first: bool, id: u64, stmt: Stmt) {
        if stmt.is_write() && self.role != Role::Primary {
            let outcome = Outcome::ReadOnly { primary: self.primary_hint, epoch: self.epoch };
            ctx.send(from, DbMsg::Response { conn, id, outcome });
            return;
        }
        let c = match self.v.conns.get_mut(&conn) {
            Some(c) => c,
            None if first => self.v.conns.get_or_insert_with(conn, || Conn { client: from, last_id: 0, result: None }),
            None => {
                ctx.send(from, DbMsg::Response { conn, id, outcome: Outcome::Gone });
                return;
            }
        };
        if id < c.last_id {
            return;
        }
        if id == c.last_id {
            if let Some(outcome) = c.result {
                ctx.send(from, DbMsg::Response { conn, id, outcome });
            }
            return;
        }
        c.last_id = id;
        c.result = None;
        let n = self.v.next_exec;
        self.v.next_exec += 1;
        self.v.exec.insert(n, Exec { client: from, conn, id, stmt });
        let service_ns = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        ctx.set_timer(service_ns, ServerTimer::Commit { exec: n });
    }

    /// The commit point of statement `n`.
    fn execute(&mut self, ctx: &mut Ctx<Db>, n: u64) {
        let Some(e) = self.v.exec.remove(&n) else { return };
        if !self.v.conns.contains_key(&e.conn) {
            return; // the session ended (client closed the connection) before the commit
        }
        if e.stmt.is_write() && self.role != Role::Primary {
            let outcome = Outcome::ReadOnly { primary: self.primary_hint, epoch: self.epoch };
            self.respond(ctx, e.client, e.conn, e.id, outcome);
            return;
        }
        let now = ctx.now_wall_ns();
        let (outcome, changes): (Outcome, Vec<Change>) = match e.stmt {
            Stmt::Insert { key, owner } => match self.table.insert(key, owner, now) {
                Ok(ch) => (Outcome::Inserted { id: ch.1.map_or(0, |r| r.id) }, vec![ch]),
                Err(_) => (Outcome::Duplicate, vec![]),
            },
            Stmt::Reenter { key, owner } => match self.table.increment_if_owner(key, owner, now) {
                Some(ch) => {
                    let r = ch.1.expect("row after update");
                    (Outcome::Updated { rows: 1, id: r.id, count: r.count }, vec![ch])
                }
                None => (Outcome::Updated { rows: 0, id: 0, count: 0 }, vec![]),
            },
            Stmt::Claim { key, owner, stamp_ns, expired_before_ns } => {
                let before = self.table.row(key).copied();
                match self.table.claim(key, owner, stamp_ns, expired_before_ns) {
                    Ok(ch) => {
                        let r = ch.1.expect("row after claim");
                        if let Some(old) = before.filter(|old| old.owner != owner) {
                            ctx.note(|| {
                                format!(
                                    "k{key}: row of {} (time {:.3}s) taken over by {}: below {:.3}s on the acquirer's clock",
                                    OwnerFmt(old.owner),
                                    old.update_time_ns as f64 / 1e9,
                                    OwnerFmt(owner),
                                    expired_before_ns as f64 / 1e9
                                )
                            });
                        }
                        let outcome = match before {
                            Some(_) => Outcome::Updated { rows: 1, id: r.id, count: r.count },
                            None => Outcome::Inserted { id: r.id },
                        };
                        (outcome, vec![ch])
                    }
                    Err(_) => (Outcome::Duplicate, vec![]),
                }
            }
            Stmt::Touch { key, owner } => match self.table.touch(key, owner, now) {
                Some(ch) => {
                    let r = ch.1.expect("row after update");
                    (Outcome::Updated { rows: 1, id: r.id, count: r.count }, vec![ch])
                }
                None => (Outcome::Updated { rows: 0, id: 0, count: 0 }, vec![]),
            },
            Stmt::Release { key, owner } => {
                let (what, ch) = self.table.release(key, owner, self.cfg.reentrant, now);
                let left = match what {
                    ReleaseOutcome::NotOwner => None,
                    ReleaseOutcome::Decremented { count } => Some(count),
                    ReleaseOutcome::Deleted => Some(0),
                };
                (Outcome::Released { left }, ch.into_iter().collect())
            }
            Stmt::GetLock { key, wait_ns } => match self.v.user_locks.get(key, e.conn) {
                Some(n) => (Outcome::GetLock { got: Some(n) }, vec![]),
                None if wait_ns == 0 => (Outcome::GetLock { got: None }, vec![]),
                None => {
                    // Waits in the server until the lock is released or the timeout runs out.
                    let timer = ctx.set_timer(wait_ns, ServerTimer::LockWait { conn: e.conn, id: e.id });
                    let waiter = RowWaiter { client: e.client, conn: e.conn, id: e.id, timer };
                    self.v.user_lock_waits.entry(key).or_default().push_back(waiter);
                    return;
                }
            },
            Stmt::ReleaseLock { key } => {
                let result = self.v.user_locks.release(key, e.conn);
                self.grant_user_lock_waiter(ctx, key);
                (Outcome::ReleaseLock { result }, vec![])
            }
            Stmt::SelectForUpdate { key } => {
                let lock = self.v.row_locks.entry(key).or_default();
                match lock.holder {
                    None => {
                        lock.holder = Some(e.conn);
                        (Outcome::RowLocked, vec![])
                    }
                    Some(c) if c == e.conn => (Outcome::RowLocked, vec![]),
                    Some(_) => {
                        // Blocks until the holder's transaction ends or innodb_lock_wait_timeout.
                        let wait = ServerTimer::LockWait { conn: e.conn, id: e.id };
                        let timer = ctx.set_timer(self.cfg.lock_wait_timeout_ns, wait);
                        let waiter = RowWaiter { client: e.client, conn: e.conn, id: e.id, timer };
                        self.v.row_locks.get_mut(&key).expect("row lock").waiters.push_back(waiter);
                        return;
                    }
                }
            }
            Stmt::Commit { .. } => {
                let released = !self.end_transaction(ctx, e.conn).is_empty();
                (Outcome::Committed { released }, vec![])
            }
            Stmt::ShedLock { key, owner, insert, time } => (self.shed_lock(ctx, key, owner, insert, time, now), vec![]),
            Stmt::ShedUnlock { key, owner, by_owner, time } => {
                let matched = self.shed.unlock(key, owner, by_owner, |r| match time {
                    ShedUnlockTime::Node { unlock_ns } => unlock_ns,
                    ShedUnlockTime::Db { at_least_ns } => now.max(r.locked_at_ns.saturating_add(at_least_ns as i64)),
                });
                (Outcome::Updated { rows: matched as u32, id: 0, count: 0 }, vec![])
            }
        };
        let mut last_seq = 0;
        for ch in changes {
            last_seq = self.commit(ctx, ch);
        }
        if last_seq > 0 && self.semisync_waits() {
            self.park(
                ctx,
                Parked {
                    seq: last_seq,
                    client: e.client,
                    conn: e.conn,
                    id: e.id,
                    outcome,
                    since_ns: ctx.now_mono_ns(),
                },
            );
        } else {
            self.respond(ctx, e.client, e.conn, e.id, outcome);
        }
    }

    /// ShedLock's INSERT or lock UPDATE, at the server's wall clock `now` (which only
    /// `usingDbTime()` reads). Not replicated: `shedlock` runs on one server (see `validate`).
    fn shed_lock(
        &mut self,
        ctx: &mut Ctx<Db>,
        key: LockKey,
        owner: Owner,
        insert: bool,
        time: ShedTime,
        now: i64,
    ) -> Outcome {
        let (lock_until_ns, now_ns) = match time {
            ShedTime::Node { lock_until_ns, now_ns } => (lock_until_ns, now_ns),
            ShedTime::Db { at_most_ns } => (now.saturating_add(at_most_ns as i64), now),
        };
        let row = ShedRow { lock_until_ns, locked_at_ns: now_ns, locked_by: owner };
        if insert {
            return if self.shed.insert(key, row) { Outcome::Inserted { id: 0 } } else { Outcome::Duplicate };
        }
        let before = self.shed.row(key).copied();
        let matched = self.shed.update(key, now_ns, row);
        if let Some(old) = before.filter(|old| matched && old.locked_by != owner) {
            ctx.note(|| {
                format!(
                    "k{key}: lock of {} (lock_until {:.3}s) taken by {}: lock_until <= {:.3}s on the {} clock",
                    OwnerFmt(old.locked_by),
                    old.lock_until_ns as f64 / 1e9,
                    OwnerFmt(owner),
                    now_ns as f64 / 1e9,
                    if matches!(time, ShedTime::Db { .. }) { "database's" } else { "acquirer's" }
                )
            });
        }
        Outcome::Updated { rows: matched as u32, id: 0, count: matched as u32 }
    }

    /// Appends a change to the binlog and queues it for shipping. Returns its position.
    fn commit(&mut self, ctx: &mut Ctx<Db>, change: Change) -> u64 {
        let seq = self.binlog.len() as u64 + 1;
        self.binlog.push(BinlogEvent { seq, epoch: self.epoch, change });
        if self.replica().is_some() {
            let due = ctx.now_mono_ns() + self.cfg.replication_lag_ns;
            self.v.ship_queue.push_back((due, seq));
            if self.v.ship_timer.is_none() {
                self.v.ship_timer = Some(ctx.set_timer(self.cfg.replication_lag_ns, ServerTimer::Ship));
            }
        }
        seq
    }

    fn ship_due(&mut self, ctx: &mut Ctx<Db>) {
        self.v.ship_timer = None;
        let now = ctx.now_mono_ns();
        let mut events = Vec::new();
        while let Some(&(due, seq)) = self.v.ship_queue.front() {
            if due > now {
                break;
            }
            self.v.ship_queue.pop_front();
            if let Some(ev) = self.binlog.get(seq as usize - 1) {
                events.push(*ev);
                self.v.shipped = self.v.shipped.max(seq);
            }
        }
        if let (Some(replica), false) = (self.replica(), events.is_empty()) {
            ctx.send(replica, DbMsg::Binlog { events });
        }
        if let Some(&(due, _)) = self.v.ship_queue.front() {
            self.v.ship_timer = Some(ctx.set_timer(due.saturating_sub(now), ServerTimer::Ship));
        }
    }

    fn park(&mut self, ctx: &mut Ctx<Db>, p: Parked) {
        self.v.parked.push_back(p);
        if self.v.semisync_timer.is_none() {
            self.v.semisync_timer = Some(ctx.set_timer(self.cfg.semisync_timeout_ns, ServerTimer::SemisyncTimeout));
        }
    }

    fn rearm_semisync_timer(&mut self, ctx: &mut Ctx<Db>) {
        if let Some(t) = self.v.semisync_timer.take() {
            ctx.cancel_timer(t);
        }
        if let Some(front) = self.v.parked.front() {
            let deadline = front.since_ns + self.cfg.semisync_timeout_ns;
            let after = deadline.saturating_sub(ctx.now_mono_ns());
            self.v.semisync_timer = Some(ctx.set_timer(after, ServerTimer::SemisyncTimeout));
        }
    }

    fn release_parked_upto(&mut self, ctx: &mut Ctx<Db>, seq: u64) {
        while self.v.parked.front().is_some_and(|p| p.seq <= seq) {
            let p = self.v.parked.pop_front().expect("front exists");
            self.respond(ctx, p.client, p.conn, p.id, p.outcome);
        }
    }

    fn on_semisync_timeout(&mut self, ctx: &mut Ctx<Db>) {
        self.v.semisync_timer = None;
        let now = ctx.now_mono_ns();
        let expired = self.v.parked.front().is_some_and(|p| now >= p.since_ns + self.cfg.semisync_timeout_ns);
        if expired {
            self.v.semisync_on = false;
            let waiting = self.v.parked.len();
            ctx.note(|| {
                format!("semisync: no ack within the timeout, switching to async ({waiting} commits released)")
            });
            self.release_parked_upto(ctx, u64::MAX);
        } else {
            self.rearm_semisync_timer(ctx);
        }
    }

    fn on_ack(&mut self, ctx: &mut Ctx<Db>, seq: u64) {
        if self.role != Role::Primary {
            return;
        }
        self.v.acked = self.v.acked.max(seq);
        let acked = self.v.acked;
        self.release_parked_upto(ctx, acked);
        if self.cfg.replication == Replication::Semisync && !self.v.semisync_on && acked >= self.binlog.len() as u64 {
            self.v.semisync_on = true;
            ctx.note(|| format!("semisync: replica caught up at #{acked}, semisync on again"));
        }
        self.rearm_semisync_timer(ctx);
    }

    fn cleanup(&mut self, ctx: &mut Ctx<Db>) {
        self.v.cleanup_timer = Some(ctx.set_timer(self.cfg.cleanup_every_ns, ServerTimer::Cleanup));
        if self.role != Role::Primary {
            return;
        }
        let now = ctx.now_wall_ns();
        let gone = self.table.expire(now, self.cfg.expire_ns);
        for (key, row) in gone {
            ctx.note(|| {
                format!(
                    "cleanup: deleted k{key} id={} owner={} (update_time {:.1} ms ago)",
                    row.id,
                    OwnerFmt(row.owner),
                    (now - row.update_time_ns) as f64 / 1e6
                )
            });
            self.commit(ctx, (key, None));
        }
    }

    fn on_binlog(&mut self, ctx: &mut Ctx<Db>, from: NodeId, events: Vec<BinlogEvent>) {
        if self.role != Role::Replica {
            return; // promoted or retired: replication stopped (STOP REPLICA; RESET REPLICA ALL)
        }
        for ev in events {
            if ev.epoch < self.epoch {
                continue;
            }
            let have = self.binlog.len() as u64;
            if ev.seq <= have {
                continue;
            }
            if ev.seq > have + 1 {
                self.resync(ctx, from);
                break;
            }
            self.table.apply(&ev.change);
            self.binlog.push(ev);
        }
        if self.cfg.replication == Replication::Semisync {
            ctx.send(from, DbMsg::Ack { seq: self.binlog.len() as u64 });
        }
    }

    fn resync(&mut self, ctx: &mut Ctx<Db>, primary: NodeId) {
        let now = ctx.now_mono_ns();
        if self.v.last_resync_ns.is_some_and(|t| now < t + RESYNC_EVERY_NS) {
            return;
        }
        self.v.last_resync_ns = Some(now);
        ctx.send(primary, DbMsg::Resync { from: self.binlog.len() as u64 + 1 });
    }

    fn on_resync(&mut self, ctx: &mut Ctx<Db>, from_node: NodeId, from: u64) {
        let Some(replica) = self.replica() else { return };
        if replica != from_node || from == 0 {
            return;
        }
        let upto = self.v.shipped.min(self.binlog.len() as u64);
        if from > upto {
            return;
        }
        let events: Vec<BinlogEvent> = self.binlog[(from - 1) as usize..upto as usize].to_vec();
        ctx.send(replica, DbMsg::Binlog { events });
    }

    fn on_promote(&mut self, ctx: &mut Ctx<Db>, from: NodeId, epoch: u64) {
        if self.role == Role::Replica && epoch > self.epoch {
            self.role = Role::Primary;
            self.epoch = epoch;
            self.primary_hint = Some(ctx.me());
            self.v.shipped = self.binlog.len() as u64;
            let (applied, next_id) = (self.binlog.len(), self.table.next_id());
            ctx.note(|| format!("promoted to primary, epoch {epoch}: applied #{applied}, next id {next_id}"));
            self.start_primary_duties(ctx);
        }
        if self.role == Role::Primary && self.epoch == epoch {
            ctx.send(from, DbMsg::Promoted { epoch });
        }
    }

    /// Session `conn` is over (closed, or reset): its statements not yet committed are dropped
    /// and its open transaction rolled back (its row locks and lock waits go), and its
    /// `GET_LOCK`s are released.
    fn end_session(&mut self, ctx: &mut Ctx<Db>, conn: ConnId, how: &str) {
        self.v.conns.remove(&conn);
        let freed = self.v.user_locks.close(conn);
        if !freed.is_empty() {
            ctx.note(|| format!("session {conn:x} {how}: GET_LOCKs {freed:?} released"));
        }
        for waits in self.v.user_lock_waits.values_mut() {
            waits.retain(|w| {
                if w.conn == conn {
                    ctx.cancel_timer(w.timer);
                }
                w.conn != conn
            });
        }
        for key in freed {
            self.grant_user_lock_waiter(ctx, key);
        }
        for lock in self.v.row_locks.values_mut() {
            lock.waiters.retain(|w| {
                if w.conn == conn {
                    ctx.cancel_timer(w.timer);
                }
                w.conn != conn
            });
        }
        let rolled_back = self.end_transaction(ctx, conn);
        if !rolled_back.is_empty() {
            ctx.note(|| format!("session {conn:x} {how}: transaction rolled back, row locks {rolled_back:?} released"));
        }
    }

    /// `conn`'s transaction ends (COMMIT or rollback): each row it locked goes to the first
    /// locking read waiting for it. Returns the rows.
    fn end_transaction(&mut self, ctx: &mut Ctx<Db>, conn: ConnId) -> Vec<LockKey> {
        let keys: Vec<LockKey> =
            self.v.row_locks.iter().filter(|(_, l)| l.holder == Some(conn)).map(|(&k, _)| k).collect();
        for &key in &keys {
            let lock = self.v.row_locks.get_mut(&key).expect("row lock");
            lock.holder = None;
            if let Some(w) = lock.waiters.pop_front() {
                lock.holder = Some(w.conn);
                ctx.cancel_timer(w.timer);
                self.respond(ctx, w.client, w.conn, w.id, Outcome::RowLocked);
            }
        }
        keys
    }

    /// A locking read waited `innodb_lock_wait_timeout`: error 1205 (only the statement is rolled
    /// back, `innodb_rollback_on_timeout = OFF`; the transaction held nothing else).
    fn on_lock_wait_timeout(&mut self, ctx: &mut Ctx<Db>, conn: ConnId, id: u64) {
        for waits in self.v.user_lock_waits.values_mut() {
            if let Some(i) = waits.iter().position(|w| w.conn == conn && w.id == id) {
                let w = waits.remove(i).expect("found");
                // GET_LOCK returns 0 when its timeout runs out.
                self.respond(ctx, w.client, w.conn, w.id, Outcome::GetLock { got: None });
                return;
            }
        }
        let mut found = None;
        for lock in self.v.row_locks.values_mut() {
            if let Some(i) = lock.waiters.iter().position(|w| w.conn == conn && w.id == id) {
                found = lock.waiters.remove(i);
                break;
            }
        }
        if let Some(w) = found {
            self.respond(ctx, w.client, w.conn, w.id, Outcome::LockWaitTimeout);
        }
    }

    /// `key`'s user-level lock may be free: the first `GET_LOCK` waiting for it gets it.
    fn grant_user_lock_waiter(&mut self, ctx: &mut Ctx<Db>, key: LockKey) {
        if self.v.user_locks.holder(key).is_some() {
            return;
        }
        let Some(w) = self.v.user_lock_waits.get_mut(&key).and_then(|q| q.pop_front()) else { return };
        ctx.cancel_timer(w.timer);
        let got = self.v.user_locks.get(key, w.conn);
        self.respond(ctx, w.client, w.conn, w.id, Outcome::GetLock { got });
    }

    fn on_demote(&mut self, ctx: &mut Ctx<Db>, epoch: u64, primary: NodeId) {
        if epoch <= self.epoch || primary == ctx.me() {
            return;
        }
        let was = self.role;
        self.role = Role::Retired;
        self.epoch = epoch;
        self.primary_hint = Some(primary);
        // Commits waiting for an ack will never get one from a replica that is now the primary.
        self.v.parked.clear();
        self.v.ship_queue.clear();
        ctx.note(|| format!("demoted ({was:?} → read-only): node {primary} leads epoch {epoch}"));
    }
}

/// What a server keeps across a crash: the table, binlog, role and epoch are durable (InnoDB,
/// `sync_binlog = 1`); nothing else.
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: Config,
    index: usize,
    role: Role,
    epoch: u64,
    primary_hint: Option<NodeId>,
    table: LockTable,
    shed: ShedTable,
    binlog: Vec<BinlogEvent>,
}

impl Durable for DbServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let DbServer { cfg, index, role, epoch, primary_hint, mut table, shed, binlog, v: _ } = self;
        if !cfg.autoinc_persistent {
            // MySQL 5.7 keeps the counter in memory only and recomputes it when the table is
            // first opened after the restart.
            table.restart_counter_from_max();
        }
        ServerDisk { cfg, index, role, epoch, primary_hint, table, shed, binlog }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, index, role, epoch, primary_hint, table, shed, binlog } = disk;
        DbServer { cfg, index, role, epoch, primary_hint, table, shed, binlog, v: Volatile::default() }
    }
}

impl Process<Db> for DbServer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Db>) {
        let mut peers = vec![ctx.node_named("server-0").expect("server-0 exists")];
        if self.cfg.replicated() {
            peers.push(ctx.node_named("server-1").expect("server-1 exists"));
            self.v.manager = ctx.node_named("sentinel-0");
        }
        if self.primary_hint.is_none() {
            self.primary_hint = Some(peers[0]);
        }
        self.v.peers = peers;
        self.v.semisync_on = self.cfg.replication == Replication::Semisync;
        // Everything in the durable binlog counts as shipped: the replica pulls what it lacks.
        self.v.shipped = self.binlog.len() as u64;
        if self.role == Role::Primary {
            self.start_primary_duties(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Db>, from: NodeId, msg: DbMsg) {
        match msg {
            DbMsg::Request { conn, first, id, stmt } => self.on_request(ctx, from, conn, first, id, stmt),
            DbMsg::Close { conn } => {
                ctx.send(from, DbMsg::Closed { conn });
                self.end_session(ctx, conn, "closed");
            }
            DbMsg::Binlog { events } => self.on_binlog(ctx, from, events),
            DbMsg::BinlogHeartbeat { epoch, shipped }
                if self.role == Role::Replica && epoch >= self.epoch && shipped > self.binlog.len() as u64 =>
            {
                self.resync(ctx, from);
            }
            DbMsg::Resync { from: pos } => self.on_resync(ctx, from, pos),
            DbMsg::Ack { seq } => self.on_ack(ctx, seq),
            DbMsg::Ping { .. } => {
                let pong = DbMsg::Pong { role: self.role, epoch: self.epoch, applied: self.binlog.len() as u64 };
                ctx.send(from, pong);
            }
            DbMsg::Promote { epoch } => self.on_promote(ctx, from, epoch),
            DbMsg::Demote { epoch, primary } => self.on_demote(ctx, epoch, primary),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Db>, timer: TimerId, tag: DbTimer) {
        let DbTimer::Server(t) = tag else { return };
        match t {
            ServerTimer::Commit { exec } => self.execute(ctx, exec),
            ServerTimer::LockWait { conn, id } => self.on_lock_wait_timeout(ctx, conn, id),
            ServerTimer::Ship if self.v.ship_timer == Some(timer) => self.ship_due(ctx),
            ServerTimer::SemisyncTimeout if self.v.semisync_timer == Some(timer) => self.on_semisync_timeout(ctx),
            ServerTimer::Cleanup if self.v.cleanup_timer == Some(timer) => self.cleanup(ctx),
            ServerTimer::BinlogHeartbeat if self.v.beat_timer == Some(timer) => {
                self.v.beat_timer = None;
                if let Some(replica) = self.replica() {
                    ctx.send(replica, DbMsg::BinlogHeartbeat { epoch: self.epoch, shipped: self.v.shipped });
                    self.v.beat_timer = Some(ctx.set_timer(BINLOG_HEARTBEAT_NS, ServerTimer::BinlogHeartbeat));
                }
            }
            _ => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Db>, peer: NodeId) {
        // The client's process was killed (or refused our answer): its OS reset the connection,
        // and MySQL ends every session on it at once (no wait for wait_timeout).
        let ended: Vec<ConnId> = self.v.conns.iter().filter(|(_, c)| c.client == peer).map(|(&id, _)| id).collect();
        for conn in ended {
            self.end_session(ctx, conn, "reset");
        }
    }

    fn leadership(&self) -> Option<u64> {
        (self.role == Role::Primary).then_some(self.epoch)
    }
}
