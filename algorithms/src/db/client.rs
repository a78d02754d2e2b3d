//! The db client library: `lock()` / `unlock()` over one JDBC-style connection to the primary.
//!
//! - Acquire: `INSERT`; on duplicate key, when reentrant, `UPDATE … count + 1 WHERE owner`; when
//!   that matches nothing either, the attempt is refused (a `Refused` event) and the library
//!   sleeps `poll_ms` before the next one (no notifications; Spring Integration's
//!   `JdbcLockRegistry` loops the same way on `idleBetweenTries`). `get_lock` mode sends
//!   `GET_LOCK(name, 0)` instead and polls on 0 (with `get_lock_timeout_s > 0`,
//!   `GET_LOCK(name, timeout)`, which the server answers when the lock is free or the timeout
//!   runs out). `select_for_update` mode sends
//!   `BEGIN; SELECT … FOR UPDATE`, which the server answers only once the row is free (error 1205
//!   after `innodb_lock_wait_timeout`: tried again after `poll_ms`); release is `COMMIT`, and
//!   nested acquisitions are counted here, inside the one transaction.
//! - `spring_jdbc` mode (Spring Integration's `JdbcLockRegistry`): acquire is one statement
//!   standing for the library's transaction, `UPDATE … WHERE CLIENT_ID = ? OR CREATED_DATE < ?`
//!   then `INSERT` ([`Stmt::Claim`]), its times read from this client's wall clock when the
//!   statement is sent (6.x: now written, now − ttl compared; 7.0 `EXPIRED_AFTER`: now + ttl
//!   written, now compared), so a client whose clock runs ahead takes rows that are still held.
//!   Taken: sleep `poll_ms` (`idleBetweenTries`). A nested acquisition sends the acquire again
//!   (the JVM's `ReentrantLock` counts, `doLock` runs again and refreshes the row); only the
//!   outermost release sends `DELETE … WHERE CLIENT_ID = ?`. No token.
//! - `shedlock` mode (ShedLock's `StorageBasedLockProvider` over `JdbcTemplateStorageAccessor`,
//!   [`super::shedlock`]): acquire takes `createdAt` from this client's wall clock when it is
//!   called (the `LockConfiguration` is built as the scheduled method is entered), then sends
//!   `INSERT` on this process's first try of the name (the `LockRecordRegistry`, in memory) and
//!   `UPDATE … WHERE lock_until <= :now` otherwise or after a duplicate key; `lock_until` is
//!   `createdAt + lockAtMostFor` and `:now` the clock as the statement is sent (or the
//!   database's, `usingDbTime()`). 0 rows: `Refused` then `Failed { Refused }`: the run is
//!   skipped, no poll. Release sends the unlock (`lock_until = max(now, createdAt +
//!   lockAtLeastFor)`), answered `Released` whatever it matched (ShedLock's unlock returns
//!   nothing). Not reentrant here; no token.
//! - Release: the decrement-or-delete transaction (or `RELEASE_LOCK`); the call returns whatever
//!   the server answers (a row already gone is not an error). A release whose statement fails
//!   (the connection was reset, the statement timed out, the server went read-only) is sent
//!   again `release_retry` times (0 by default: Spring Integration 5.5
//!   `JdbcLockRegistry.JdbcLock.unlock()` retries only transient errors and throws
//!   `DataAccessResourceFailureException` for a lost connection), then the call reports the
//!   error (`ReleaseFailed`): the row, if the server still has it, stays. With
//!   `release_missing = "error"` (Spring Integration 6.4 and later) a release that found no row
//!   of its owner is `ReleaseFailed` too.
//! - Owner id (`owner_scope`): drawn once per process start (`process`, Spring's
//!   `DefaultLockRepository` id, a UUID per repository) or afresh per acquisition (`acquire`).
//!   With `process`, a client whose release failed finds its own row still there at its next
//!   acquisition and re-enters it (same id, count one higher): the row never returns to 0 and
//!   the lock leaks to that client while the others wait.
//! - Heartbeat (`heartbeat_ms` > 0, table mode): while held, `UPDATE update_time = NOW()` at a
//!   fixed rate; an update that matches no row means the row expired or was lost: the library
//!   reports the lock lost (`honour = false`: nothing in the pattern stops the application).
//! - One statement at a time on the connection, in order. An unanswered statement is
//!   retransmitted (RTO 200 ms, doubling, as TCP does; the server executes an id once) and
//!   abandoned after `STATEMENT_TIMEOUT_NS` (a pool's `socketTimeout`; Connector/J's default is
//!   none, which would hang forever). A timeout, a "gone away" or a read-only error breaks the
//!   connection: the library closes it, opens a new one, and the call in progress fails (acquire:
//!   `Failed { Unavailable }`, release: `ReleaseFailed` after its retries). A reset of the
//!   connection (the server process was killed, or refused a statement while down:
//!   [`LockClient::on_reset`]) fails the statement on it at once, as Connector/J's
//!   `CommunicationsException` does.
//! - With a failover manager, the library learns the primary from it (the address a VIP or
//!   proxy resolves to), follows `NewPrimary` notices, and asks again after a timeout. A changed
//!   primary is a new connection, so in `get_lock` mode every lock it held is gone: reported lost.
//! - Closing a connection sends a close (the FIN), retransmitted until the server acknowledges
//!   it (8 retries, doubling from 200 ms, as Linux does for an orphaned FIN), so a lost packet
//!   does not leave a session, and its `GET_LOCK`s, behind.
//! - A crash loses everything. A killed client process has its connections reset by its OS (the
//!   engine tells the server, which ends the session and frees its `GET_LOCK`s); a lost client
//!   machine tells nobody, so its session stays. The owner id is drawn afresh at each start (a
//!   UUID per process), so a restarted client never re-enters its old row.

use std::collections::{BTreeMap, VecDeque};

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_MS, NS_PER_SEC};

use super::protocol::{ClientTimer, DbMsg, DbTimer, Outcome, ShedTime, ShedUnlockTime, Stmt};
use super::table::{ConnId, Owner};
use super::{Config, Db, Expiry, Mode, OwnerScope};

mod fingerprint;

/// A statement with no answer for this long fails and its connection is dropped.
pub const STATEMENT_TIMEOUT_NS: Nanos = 30 * NS_PER_SEC;
/// First retransmission of an unanswered statement (Linux's minimum TCP RTO), doubling after.
pub const RTO_MIN_NS: Nanos = 200 * NS_PER_MS;
/// How often the library asks the manager for the primary while it does not know it.
pub const WHO_RETRY_NS: Nanos = NS_PER_SEC;
/// A close (FIN) is retransmitted until acknowledged, at most this many times (Linux
/// `tcp_orphan_retries` 0 means 8), doubling from `RTO_MIN_NS`: about 100 s in all.
pub const CLOSE_RETRIES: u32 = 8;

/// One library operation (one or two statements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Attempt {
        key: LockKey,
    },
    /// `silent`: cleaning up after a cancelled acquisition (no `Released` event owed). `owner`:
    /// the hold's owner id; `retries_left`: how many more times a failed statement is resent.
    Release {
        key: LockKey,
        silent: bool,
        owner: Owner,
        retries_left: u32,
    },
    Heartbeat {
        key: LockKey,
    },
}

/// The statement on the wire.
#[derive(Clone, Debug)]
struct Inflight {
    op: Op,
    stmt: Stmt,
    id: u64,
    to: NodeId,
    first: bool,
    rto_ns: Nanos,
    retx: TimerId,
    timeout: TimerId,
}

#[derive(Clone, Debug, Default)]
struct KeyState {
    acquiring: bool,
    /// The workload gave up while an attempt was on the wire.
    cancelled: bool,
    poll: Option<TimerId>,
    /// Grants not yet released (nesting depth as the library counts it).
    held: u32,
    beat: Option<TimerId>,
    beat_queued: bool,
    /// `Lost` already reported for the current hold.
    lost: bool,
    /// The owner id of the current (or last) acquisition.
    owner: Owner,
    /// `shedlock`: the current acquisition's `createdAt` on this client's wall clock.
    created_ns: i64,
    /// `shedlock`: the row exists (the `LockRecordRegistry`): lock with the UPDATE, no INSERT.
    row_known: bool,
}

/// What a crash wipes: everything the library knows (rebuilt whole at each start).
#[derive(Clone, Debug, Default)]
struct Volatile {
    manager: Option<NodeId>,
    owner: Owner,
    primary: Option<NodeId>,
    epoch: u64,
    conn: ConnId,
    /// The server has answered on this connection (the handshake is done).
    established: bool,
    next_id: u64,
    inflight: Option<Inflight>,
    queue: VecDeque<Op>,
    keys: BTreeMap<LockKey, KeyState>,
    who: Option<TimerId>,
    /// The connection in use and its server, once a statement was sent on it.
    open_conn: Option<(NodeId, ConnId)>,
    /// Closes not yet acknowledged: connection → (server, retries left, its RTO, timer).
    closing: BTreeMap<ConnId, Closing>,
}

/// A connection being closed: its FIN is retransmitted until the server acknowledges it, so a
/// session does not outlive its client because one packet was lost.
#[derive(Clone, Copy, Debug)]
struct Closing {
    server: NodeId,
    retries_left: u32,
    rto_ns: Nanos,
    timer: TimerId,
}

/// The db client library.
#[derive(Clone, Debug)]
pub struct DbClient {
    cfg: Config,
    index: usize,
    v: Volatile,
}

impl DbClient {
    /// The library of client `index`; it draws its owner id and opens its connection at start.
    pub fn new(cfg: Config, index: usize) -> DbClient {
        DbClient::from_disk((cfg, index))
    }

    fn new_connection(&mut self, ctx: &mut Ctx<Db>) {
        self.v.conn = ((self.index as u64 + 1) << 32) | ctx.rng().gen::<u32>() as u64;
        self.v.established = false;
        self.v.next_id = 1;
    }

    /// The owner id of the current acquisition of `key`.
    fn owner_of(&self, key: LockKey) -> Owner {
        self.v.keys.get(&key).map_or(self.v.owner, |ks| ks.owner)
    }

    /// The statement for `op`; `now_wall_ns` is this client's wall clock as it is sent (only
    /// `spring_jdbc` puts it into the statement).
    fn stmt_for(&self, op: Op, now_wall_ns: i64) -> Stmt {
        match (op, self.cfg.mode) {
            (Op::Attempt { key }, Mode::Table) => Stmt::Insert { key, owner: self.owner_of(key) },
            (Op::Attempt { key }, Mode::SpringJdbc) => {
                let ttl_ns = self.cfg.ttl_ns as i64;
                let (stamp_ns, expired_before_ns) = match self.cfg.expiry {
                    Expiry::CreatedDate => (now_wall_ns, now_wall_ns - ttl_ns),
                    Expiry::ExpiredAfter => (now_wall_ns + ttl_ns, now_wall_ns),
                };
                Stmt::Claim { key, owner: self.owner_of(key), stamp_ns, expired_before_ns }
            }
            (Op::Release { key, owner, .. }, Mode::SpringJdbc) => Stmt::Release { key, owner },
            (Op::Attempt { key }, Mode::GetLock) => Stmt::GetLock { key, wait_ns: self.cfg.get_lock_timeout_ns },
            (Op::Release { key, owner, .. }, Mode::Table) => Stmt::Release { key, owner },
            (Op::Release { key, .. }, Mode::GetLock) => Stmt::ReleaseLock { key },
            (Op::Attempt { key }, Mode::SelectForUpdate) => Stmt::SelectForUpdate { key },
            (Op::Release { key, .. }, Mode::SelectForUpdate) => Stmt::Commit { key },
            (Op::Attempt { key }, Mode::ShedLock) => {
                let ks = self.v.keys.get(&key).cloned().unwrap_or_default();
                let time = if self.cfg.db_time {
                    ShedTime::Db { at_most_ns: self.cfg.lock_at_most_for_ns }
                } else {
                    let lock_until_ns = ks.created_ns.saturating_add(self.cfg.lock_at_most_for_ns as i64);
                    ShedTime::Node { lock_until_ns, now_ns: now_wall_ns }
                };
                Stmt::ShedLock { key, owner: self.shed_owner(), insert: !ks.row_known, time }
            }
            (Op::Release { key, .. }, Mode::ShedLock) => {
                let created_ns = self.v.keys.get(&key).map_or(now_wall_ns, |ks| ks.created_ns);
                let time = if self.cfg.db_time {
                    ShedUnlockTime::Db { at_least_ns: self.cfg.lock_at_least_for_ns }
                } else {
                    let at_least_until = created_ns.saturating_add(self.cfg.lock_at_least_for_ns as i64);
                    ShedUnlockTime::Node { unlock_ns: at_least_until.max(now_wall_ns) }
                };
                Stmt::ShedUnlock { key, owner: self.shed_owner(), by_owner: self.cfg.unlock_by_owner, time }
            }
            (Op::Heartbeat { key }, _) => Stmt::Touch { key, owner: self.owner_of(key) },
        }
    }

    /// ShedLock's `locked_by`: the host name, the same for every start of the process.
    fn shed_owner(&self) -> Owner {
        (self.index as Owner) << 32
    }

    /// Starts the next queued operation if the connection is free.
    fn pump(&mut self, ctx: &mut Ctx<Db>) {
        if self.v.inflight.is_some() {
            return;
        }
        if self.v.primary.is_none() {
            self.ask_who(ctx);
            return;
        }
        if let Some(op) = self.v.queue.pop_front() {
            if let Op::Heartbeat { key } = op {
                self.v.keys.entry(key).or_default().beat_queued = false;
            }
            let stmt = self.stmt_for(op, ctx.now_wall_ns());
            self.issue(ctx, op, stmt);
        }
    }

    fn issue(&mut self, ctx: &mut Ctx<Db>, op: Op, stmt: Stmt) {
        let to = self.v.primary.expect("issue needs a primary");
        let id = self.v.next_id;
        self.v.next_id += 1;
        let first = !self.v.established;
        let conn = self.v.conn;
        ctx.send(to, DbMsg::Request { conn, first, id, stmt });
        self.v.open_conn = Some((to, conn));
        let retx = ctx.set_timer(RTO_MIN_NS, ClientTimer::Retransmit);
        // A locking read may wait innodb_lock_wait_timeout in the server before it answers.
        let wait_ns = match stmt {
            Stmt::SelectForUpdate { .. } => self.cfg.lock_wait_timeout_ns,
            Stmt::GetLock { wait_ns, .. } => wait_ns,
            _ => 0,
        };
        let timeout = ctx.set_timer(STATEMENT_TIMEOUT_NS + wait_ns, ClientTimer::StatementTimeout);
        self.v.inflight = Some(Inflight { op, stmt, id, to, first, rto_ns: RTO_MIN_NS, retx, timeout });
    }

    fn take_inflight(&mut self, ctx: &mut Ctx<Db>) -> Option<Inflight> {
        let inf = self.v.inflight.take()?;
        ctx.cancel_timer(inf.retx);
        ctx.cancel_timer(inf.timeout);
        Some(inf)
    }

    fn ask_who(&mut self, ctx: &mut Ctx<Db>) {
        let Some(manager) = self.v.manager else { return };
        if self.v.who.is_some() {
            return;
        }
        ctx.send(manager, DbMsg::WhoIsPrimary);
        self.v.who = Some(ctx.set_timer(WHO_RETRY_NS, ClientTimer::AskPrimary));
    }

    /// The connection is broken (timeout, gone away, read-only, a new primary, a reset): close
    /// it (unless the reset already did), open a new one, fail the call in progress with
    /// `reason`. `GET_LOCK`s die with the session.
    fn drop_connection(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, reason: FailReason, reset: bool) {
        if let Some((server, conn)) = self.v.open_conn.take() {
            if !reset {
                ctx.send(server, DbMsg::Close { conn });
                let timer = ctx.set_timer(RTO_MIN_NS, ClientTimer::CloseRetransmit { conn });
                let closing = Closing { server, retries_left: CLOSE_RETRIES, rto_ns: RTO_MIN_NS, timer };
                self.v.closing.insert(conn, closing);
            }
        }
        if self.cfg.session_scoped() {
            for (&key, ks) in self.v.keys.iter_mut() {
                if ks.held > 0 && !ks.lost {
                    ks.lost = true;
                    out.push(LockEvent::Lost { key, honour: false });
                }
            }
        }
        self.new_connection(ctx);
        if let Some(inf) = self.take_inflight(ctx) {
            self.fail_op(ctx, out, inf.op, reason);
        }
    }

    /// The statement of `op` failed with an error: an acquisition fails, a release is sent again
    /// while it has retries left and then reports the error.
    fn fail_op(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, op: Op, reason: FailReason) {
        match op {
            Op::Attempt { key } => {
                let ks = self.v.keys.entry(key).or_default();
                ks.acquiring = false;
                if ks.cancelled {
                    ks.cancelled = false;
                } else {
                    out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                }
            }
            Op::Release { key, silent, owner, retries_left } => {
                if retries_left > 0 {
                    ctx.note(|| format!("release of k{key} failed ({reason:?}): retrying ({retries_left} left)"));
                    self.v.queue.push_front(Op::Release { key, silent, owner, retries_left: retries_left - 1 });
                } else if !silent {
                    ctx.note(|| format!("release of k{key} failed ({reason:?}): unlock reports the error"));
                    out.push(LockEvent::ReleaseFailed { key, reason });
                }
            }
            Op::Heartbeat { .. } => {}
        }
    }

    fn switch_primary(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, primary: NodeId, epoch: u64) {
        if let Some(id) = self.v.who.take() {
            ctx.cancel_timer(id);
        }
        if self.v.primary == Some(primary) && self.v.epoch >= epoch {
            return;
        }
        let moved = self.v.primary.is_some_and(|p| p != primary);
        let was = self.v.primary.unwrap_or(primary);
        self.v.primary = Some(primary);
        self.v.epoch = self.v.epoch.max(epoch);
        if moved {
            let (from, to) = (ctx.name_of(was), ctx.name_of(primary));
            ctx.note(|| format!("primary moved from {from} to {to} (epoch {epoch}): reconnecting"));
            self.drop_connection(ctx, out, FailReason::Unavailable, false);
        }
    }

    fn granted(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey, token: Option<u64>) {
        let ks = self.v.keys.entry(key).or_default();
        ks.acquiring = false;
        if ks.cancelled {
            ks.cancelled = false;
            let (owner, retries_left) = (ks.owner, self.cfg.release_retry);
            self.v.queue.push_back(Op::Release { key, silent: true, owner, retries_left });
            return;
        }
        ks.held += 1;
        if ks.held == 1 {
            ks.lost = false;
        }
        out.push(LockEvent::Granted { key, token });
        let want_beat = self.cfg.mode == Mode::Table && self.cfg.heartbeat_ns > 0 && ks.beat.is_none();
        if want_beat {
            let beat = ctx.set_timer(self.cfg.heartbeat_ns, ClientTimer::Heartbeat { key });
            self.v.keys.get_mut(&key).expect("key state").beat = Some(beat);
        }
    }

    fn refused(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Refused { key });
        let ks = self.v.keys.entry(key).or_default();
        if ks.cancelled {
            ks.cancelled = false;
            ks.acquiring = false;
            return;
        }
        if self.cfg.mode == Mode::ShedLock {
            // `lock()` returns empty: the task is not executed ("Not executing … It's locked").
            ks.acquiring = false;
            out.push(LockEvent::Failed { key, reason: FailReason::Refused });
            return;
        }
        let poll = ctx.set_timer(self.cfg.poll_ns, ClientTimer::Poll { key });
        self.v.keys.get_mut(&key).expect("key state").poll = Some(poll);
    }

    fn stop_beat(&mut self, ctx: &mut Ctx<Db>, key: LockKey) {
        if let Some(ks) = self.v.keys.get_mut(&key) {
            if let Some(id) = ks.beat.take() {
                ctx.cancel_timer(id);
            }
        }
    }

    fn on_response(
        &mut self,
        ctx: &mut Ctx<Db>,
        out: &mut LockEvents,
        from: NodeId,
        conn: ConnId,
        id: u64,
        outcome: Outcome,
    ) {
        let matches = self.v.inflight.as_ref().is_some_and(|inf| inf.id == id && inf.to == from) && conn == self.v.conn;
        if !matches {
            return; // a stale or duplicated answer, or one on a connection already closed
        }
        match outcome {
            // A read-only server that knows a newer primary: follow it (a new connection, so the
            // statement in progress fails).
            Outcome::ReadOnly { primary: Some(p), epoch } if epoch > self.v.epoch && p != from => {
                self.switch_primary(ctx, out, p, epoch);
                if let Some(inf) = self.take_inflight(ctx) {
                    self.fail_op(ctx, out, inf.op, FailReason::Unavailable);
                }
                self.pump(ctx);
                return;
            }
            Outcome::ReadOnly { .. } | Outcome::Gone => {
                self.drop_connection(ctx, out, FailReason::Unavailable, false);
                if matches!(outcome, Outcome::ReadOnly { .. }) {
                    self.ask_who(ctx);
                }
                self.pump(ctx);
                return;
            }
            _ => {}
        }
        let inf = self.take_inflight(ctx).expect("matched");
        self.v.established = true;
        // Spring's INT_LOCK has no id column: its grants carry no token.
        let token = |id: u64| (self.cfg.mode == Mode::Table).then_some(id);
        match (inf.op, outcome) {
            (Op::Attempt { key }, Outcome::Inserted { id }) => {
                self.v.keys.entry(key).or_default().row_known = true;
                self.granted(ctx, out, key, token(id))
            }
            (Op::Attempt { key }, Outcome::Duplicate) if self.cfg.mode == Mode::ShedLock => {
                // The row exists: remember it and lock with the UPDATE, same createdAt.
                self.v.keys.entry(key).or_default().row_known = true;
                let stmt = self.stmt_for(inf.op, ctx.now_wall_ns());
                self.issue(ctx, inf.op, stmt);
                return;
            }
            (Op::Attempt { key }, Outcome::Duplicate) => {
                if self.cfg.reentrant && self.cfg.mode == Mode::Table {
                    let owner = self.owner_of(key);
                    self.issue(ctx, inf.op, Stmt::Reenter { key, owner });
                    return;
                }
                self.refused(ctx, out, key);
            }
            (Op::Attempt { key }, Outcome::Updated { rows, id, .. }) => {
                if rows > 0 {
                    self.granted(ctx, out, key, token(id));
                } else {
                    self.refused(ctx, out, key);
                }
            }
            (Op::Attempt { key }, Outcome::RowLocked) => self.granted(ctx, out, key, None),
            // Error 1205: a transient error (Spring: CannotAcquireLockException); try again.
            (Op::Attempt { key }, Outcome::LockWaitTimeout) => self.refused(ctx, out, key),
            (Op::Attempt { key }, Outcome::GetLock { got }) => {
                if got.is_some() {
                    self.granted(ctx, out, key, None);
                } else {
                    self.refused(ctx, out, key);
                }
            }
            (Op::Release { key, silent: false, .. }, Outcome::Released { left: None })
                if self.cfg.release_missing_fails =>
            {
                // Spring Integration 6.4+: "Lock was released in the store due to expiration".
                ctx.note(|| format!("release of k{key}: 0 rows deleted: unlock reports the error"));
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused });
            }
            (Op::Release { key, silent, .. }, _) => {
                if !silent {
                    out.push(LockEvent::Released { key });
                }
            }
            (Op::Heartbeat { key }, Outcome::Updated { rows: 0, .. }) => {
                let ks = self.v.keys.entry(key).or_default();
                if ks.held > 0 && !ks.lost {
                    ks.lost = true;
                    out.push(LockEvent::Lost { key, honour: false });
                    ctx.note(|| format!("heartbeat on k{key} matched no row: the lock row is gone"));
                }
                self.stop_beat(ctx, key);
            }
            (op, other) => {
                ctx.note(|| format!("unexpected answer {other:?} to {op:?}"));
                self.fail_op(ctx, out, op, FailReason::Unavailable);
            }
        }
        self.pump(ctx);
    }
}

impl Durable for DbClient {
    /// A client library keeps only its configuration and index: its connections die with the
    /// process (the engine resets them on the server's side for a killed process; a lost
    /// machine tells nobody).
    type Disk = (Config, usize);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.index)
    }
    fn from_disk((cfg, index): Self::Disk) -> Self {
        DbClient { cfg, index, v: Volatile::default() }
    }
}

impl LockClient<Db> for DbClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Db>, _out: &mut LockEvents) {
        let server0 = ctx.node_named("server-0").expect("server-0 exists");
        let manager = if self.cfg.replicated() { ctx.node_named("sentinel-0") } else { None };
        let owner = ((self.index as u64) << 32) | ctx.rng().gen::<u32>() as u64;
        // With a manager the address is resolved through it (the VIP or proxy); without, it is
        // the one server.
        let primary = if manager.is_some() { None } else { Some(server0) };
        self.v = Volatile { manager, owner, primary, epoch: 1, ..Volatile::default() };
        self.new_connection(ctx);
        if primary.is_none() {
            self.ask_who(ctx);
        }
    }

    fn acquire(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        if self.cfg.mode == Mode::SelectForUpdate && self.v.keys.get(&key).is_some_and(|ks| ks.held > 0) {
            // Nested: the transaction already holds the row; the library counts the depth.
            self.granted(ctx, out, key, None);
            return;
        }
        let fresh = match self.cfg.owner_scope {
            OwnerScope::Process => self.v.owner,
            OwnerScope::Acquire => ((self.index as u64) << 32) | ctx.rng().gen::<u32>() as u64,
        };
        let now_wall_ns = ctx.now_wall_ns();
        let ks = self.v.keys.entry(key).or_default();
        if ks.held == 0 {
            // A new acquisition (not a nested one): its owner id, and ShedLock's createdAt.
            ks.owner = fresh;
            ks.created_ns = now_wall_ns;
        }
        ks.acquiring = true;
        ks.cancelled = false;
        self.v.queue.push_back(Op::Attempt { key });
        self.pump(ctx);
    }

    fn release(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey) {
        let ks = self.v.keys.entry(key).or_default();
        ks.held = ks.held.saturating_sub(1);
        if matches!(self.cfg.mode, Mode::SelectForUpdate | Mode::SpringJdbc) && ks.held > 0 {
            // An inner level: the transaction stays open until the outermost release commits;
            // Spring's `ReentrantLock` counts it in the JVM (`getHoldCount() > 1`: no DELETE).
            out.push(LockEvent::Released { key });
            return;
        }
        let owner = ks.owner;
        if ks.held == 0 {
            self.stop_beat(ctx, key);
        }
        let retries_left = self.cfg.release_retry;
        self.v.queue.push_back(Op::Release { key, silent: false, owner, retries_left });
        self.pump(ctx);
    }

    fn cancel(&mut self, ctx: &mut Ctx<Db>, _out: &mut LockEvents, key: LockKey) {
        let on_wire = self.v.inflight.as_ref().is_some_and(|inf| inf.op == Op::Attempt { key });
        self.v.queue.retain(|op| *op != Op::Attempt { key });
        let ks = self.v.keys.entry(key).or_default();
        if let Some(id) = ks.poll.take() {
            ctx.cancel_timer(id);
        }
        if on_wire {
            ks.cancelled = true;
        } else {
            ks.acquiring = false;
            ks.cancelled = false;
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, from: NodeId, msg: DbMsg) {
        match msg {
            DbMsg::Response { conn, id, outcome } => self.on_response(ctx, out, from, conn, id, outcome),
            DbMsg::Closed { conn } => {
                if let Some(c) = self.v.closing.remove(&conn) {
                    ctx.cancel_timer(c.timer);
                }
            }
            DbMsg::NewPrimary { primary, epoch } => {
                if Some(from) != self.v.manager {
                    return;
                }
                if epoch >= self.v.epoch || self.v.primary.is_none() {
                    self.switch_primary(ctx, out, primary, epoch);
                }
                self.pump(ctx);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, timer: TimerId, tag: DbTimer) {
        let DbTimer::Client(t) = tag else { return };
        match t {
            ClientTimer::Poll { key } => {
                if let Some(ks) = self.v.keys.get_mut(&key).filter(|ks| ks.poll == Some(timer)) {
                    ks.poll = None;
                    if ks.acquiring && !ks.cancelled {
                        self.v.queue.push_back(Op::Attempt { key });
                    }
                }
                self.pump(ctx);
            }
            ClientTimer::Heartbeat { key } => {
                if self.v.keys.get(&key).is_some_and(|ks| ks.beat == Some(timer)) {
                    let next = ctx.set_timer(self.cfg.heartbeat_ns, ClientTimer::Heartbeat { key });
                    let ks = self.v.keys.get_mut(&key).expect("key state");
                    ks.beat = None;
                    if ks.held == 0 || ks.lost {
                        ctx.cancel_timer(next);
                    } else {
                        ks.beat = Some(next);
                        if !ks.beat_queued {
                            ks.beat_queued = true;
                            self.v.queue.push_back(Op::Heartbeat { key });
                        }
                    }
                }
                self.pump(ctx);
            }
            ClientTimer::Retransmit => {
                let Some(inf) = self.v.inflight.as_mut() else { return };
                if inf.retx != timer {
                    return;
                }
                let (to, id, first, stmt) = (inf.to, inf.id, inf.first, inf.stmt);
                inf.rto_ns *= 2;
                let rto = inf.rto_ns;
                let conn = self.v.conn;
                ctx.send(to, DbMsg::Request { conn, first, id, stmt });
                inf.retx = ctx.set_timer(rto, ClientTimer::Retransmit);
            }
            ClientTimer::StatementTimeout if self.v.inflight.as_ref().is_some_and(|inf| inf.timeout == timer) => {
                ctx.note(|| "statement timed out: dropping the connection".to_string());
                self.drop_connection(ctx, out, FailReason::Timeout, false);
                self.ask_who(ctx);
                self.pump(ctx);
            }
            ClientTimer::CloseRetransmit { conn } => {
                let Some(&c) = self.v.closing.get(&conn).filter(|c| c.timer == timer) else { return };
                if c.retries_left == 0 {
                    self.v.closing.remove(&conn);
                    return;
                }
                ctx.send(c.server, DbMsg::Close { conn });
                let rto_ns = c.rto_ns * 2;
                let timer = ctx.set_timer(rto_ns, ClientTimer::CloseRetransmit { conn });
                self.v.closing.insert(conn, Closing { retries_left: c.retries_left - 1, rto_ns, timer, ..c });
            }
            ClientTimer::AskPrimary if self.v.who == Some(timer) => {
                self.v.who = None;
                self.ask_who(ctx);
            }
            _ => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, peer: NodeId) {
        // Closes under way to that server are moot: the connection is gone.
        let moot: Vec<ConnId> = self.v.closing.iter().filter(|(_, c)| c.server == peer).map(|(&id, _)| id).collect();
        for conn in moot {
            if let Some(c) = self.v.closing.remove(&conn) {
                ctx.cancel_timer(c.timer);
            }
        }
        // Idempotent: only a connection in use to `peer` breaks (a second reset for the same
        // loss finds the new connection not yet used, or used on another server).
        let on_peer = self.v.open_conn.is_some_and(|(server, _)| server == peer)
            || self.v.inflight.as_ref().is_some_and(|inf| inf.to == peer);
        if !on_peer {
            return;
        }
        let name = ctx.name_of(peer);
        ctx.note(|| format!("connection to {name} reset: communications failure"));
        self.drop_connection(ctx, out, FailReason::Unavailable, true);
        self.pump(ctx);
    }

    fn reentrant(&self) -> bool {
        // ShedLock re-enters only within one thread (`alreadyLockedBy`), which a scheduled job
        // never asks for: not modelled.
        self.cfg.reentrant && self.cfg.mode != Mode::ShedLock
    }
}
