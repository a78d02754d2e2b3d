//! The db model's protocol: every message (client statements and their results, the MySQL client
//! protocol over a TCP connection; binlog shipping and semisync acknowledgements between primary
//! and replica; the failover manager's probes and orders) and every timer (one enum per process
//! kind, wrapped in [`DbTimer`]). The `Debug` text is what the trace prints, so a message reads
//! like the SQL it stands for.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::{NodeId, Protocol};
use locksim_simulator::time::Nanos;

use super::table::{Change, ConnId, Owner};
use super::Db;

impl Protocol for Db {
    type Msg = DbMsg;
    type Timer = DbTimer;
    fn msg_fingerprint(msg: &DbMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &DbTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

/// A statement a client library sends on its connection.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    /// `INSERT INTO locks (name, owner, count) VALUES (?, ?, 1)`
    Insert {
        /// The lock's name.
        key: LockKey,
        /// The library's owner id, written to the row.
        owner: Owner,
    },
    /// `UPDATE locks SET count = count + 1 WHERE name = ? AND owner = ?`
    Reenter {
        /// The lock's name.
        key: LockKey,
        /// The library's owner id; only its own row matches.
        owner: Owner,
    },
    /// Decrement, or `DELETE … WHERE name = ? AND owner = ?` at 1.
    Release {
        /// The lock's name.
        key: LockKey,
        /// The library's owner id; only its own row matches.
        owner: Owner,
    },
    /// `UPDATE locks SET update_time = NOW() WHERE name = ? AND owner = ?`
    Touch {
        /// The lock's name.
        key: LockKey,
        /// The library's owner id; only its own row matches.
        owner: Owner,
    },
    /// Spring Integration's acquire transaction: `UPDATE INT_LOCK SET CLIENT_ID = ?, CREATED_DATE
    /// = ? WHERE … AND (CLIENT_ID = ? OR CREATED_DATE < ?)`, then `INSERT` when no row matched
    /// (7.0: `EXPIRED_AFTER`). The times are the client's ([`super::table::LockTable::claim`]).
    Claim {
        /// The lock's name (`LOCK_KEY`).
        key: LockKey,
        /// The library's `CLIENT_ID`.
        owner: Owner,
        /// The time it writes, from its own wall clock.
        stamp_ns: i64,
        /// A row whose time column is below this, on the client's clock, is taken over.
        expired_before_ns: i64,
    },
    /// `SELECT GET_LOCK(name, timeout)`: waits in the server up to `wait_ns` for the lock.
    GetLock {
        /// The lock's name.
        key: LockKey,
        /// The timeout argument (0: answer at once).
        wait_ns: Nanos,
    },
    /// `SELECT RELEASE_LOCK(name)`
    ReleaseLock {
        /// The lock's name.
        key: LockKey,
    },
    /// `BEGIN; SELECT … FROM locks WHERE name = ? FOR UPDATE` on a row that exists beforehand:
    /// blocks in the server while another transaction holds the row.
    SelectForUpdate {
        /// The lock's name.
        key: LockKey,
    },
    /// `COMMIT`: ends the transaction and releases its row locks.
    Commit {
        /// The lock's name (for the trace; the commit releases every row the transaction locked).
        key: LockKey,
    },
    /// ShedLock's lock: `INSERT INTO shedlock …` (`insert`, a process's first try) or `UPDATE
    /// shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <=
    /// ?` ([`super::shedlock`]).
    ShedLock {
        /// The lock's name.
        key: LockKey,
        /// `locked_by`.
        owner: Owner,
        /// The INSERT (else the UPDATE).
        insert: bool,
        /// Whose clock the times are.
        time: ShedTime,
    },
    /// ShedLock's unlock: `UPDATE shedlock SET lock_until = ? WHERE name = ? [AND locked_by = ?]`.
    ShedUnlock {
        /// The lock's name.
        key: LockKey,
        /// `locked_by`.
        owner: Owner,
        /// The `AND locked_by = ?` condition (ShedLock 7.0 and later).
        by_owner: bool,
        /// Whose clock the new `lock_until` is.
        time: ShedUnlockTime,
    },
}

/// The times of ShedLock's lock statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShedTime {
    /// The node's wall clock: `:lockUntil` (createdAt + lockAtMostFor) and `:now`.
    Node {
        /// `lock_until` to write.
        lock_until_ns: i64,
        /// `:now`: written as `locked_at` and compared with the row's `lock_until`.
        now_ns: i64,
    },
    /// `usingDbTime()`: the server's clock for now, plus `lockAtMostFor`.
    Db {
        /// `lockAtMostFor`.
        at_most_ns: Nanos,
    },
}

/// The new `lock_until` of ShedLock's unlock statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShedUnlockTime {
    /// The node's `max(now, createdAt + lockAtLeastFor)`.
    Node {
        /// The time to write.
        unlock_ns: i64,
    },
    /// `usingDbTime()`: `IF(locked_at + lockAtLeastFor > NOW, locked_at + lockAtLeastFor, NOW)`
    /// on the server's clock.
    Db {
        /// `lockAtLeastFor`.
        at_least_ns: Nanos,
    },
}

impl Stmt {
    /// The lock the statement is about.
    pub fn key(&self) -> LockKey {
        match *self {
            Stmt::Insert { key, .. }
            | Stmt::Reenter { key, .. }
            | Stmt::Release { key, .. }
            | Stmt::Touch { key, .. }
            | Stmt::Claim { key, .. }
            | Stmt::GetLock { key, .. }
            | Stmt::ReleaseLock { key }
            | Stmt::SelectForUpdate { key }
            | Stmt::Commit { key }
            | Stmt::ShedLock { key, .. }
            | Stmt::ShedUnlock { key, .. } => key,
        }
    }

    /// Whether the statement writes (and so needs the primary): user-level locks and locking
    /// reads do not write, and work on a read-only server too.
    pub fn is_write(&self) -> bool {
        !matches!(
            self,
            Stmt::GetLock { .. } | Stmt::ReleaseLock { .. } | Stmt::SelectForUpdate { .. } | Stmt::Commit { .. }
        )
    }
}

/// An owner id as `c3.9f2a` (client index, random part).
pub struct OwnerFmt(pub Owner);

impl fmt::Display for OwnerFmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}.{:04x}", self.0 >> 32, self.0 & 0xffff)
    }
}

impl fmt::Debug for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stmt::Insert { key, owner } => write!(f, "INSERT k{key} owner={}", OwnerFmt(owner)),
            Stmt::Reenter { key, owner } => write!(f, "UPDATE k{key} count+1 owner={}", OwnerFmt(owner)),
            Stmt::Release { key, owner } => write!(f, "RELEASE k{key} owner={}", OwnerFmt(owner)),
            Stmt::Touch { key, owner } => write!(f, "UPDATE k{key} update_time owner={}", OwnerFmt(owner)),
            Stmt::Claim { key, owner, stamp_ns, expired_before_ns } => write!(
                f,
                "UPDATE k{key} client={} time={:.3}s WHERE own OR time < {:.3}s, else INSERT",
                OwnerFmt(owner),
                stamp_ns as f64 / 1e9,
                expired_before_ns as f64 / 1e9
            ),
            Stmt::GetLock { key, wait_ns } => write!(f, "GET_LOCK(k{key}, {})", wait_ns as f64 / 1e9),
            Stmt::ReleaseLock { key } => write!(f, "RELEASE_LOCK(k{key})"),
            Stmt::SelectForUpdate { key } => write!(f, "BEGIN; SELECT k{key} FOR UPDATE"),
            Stmt::Commit { key } => write!(f, "COMMIT (k{key})"),
            Stmt::ShedLock { key, owner, insert, time } => {
                let by = OwnerFmt(owner);
                let (until, now) = match time {
                    ShedTime::Node { lock_until_ns, now_ns } => {
                        (format!("{:.3}s", lock_until_ns as f64 / 1e9), format!("{:.3}s", now_ns as f64 / 1e9))
                    }
                    ShedTime::Db { at_most_ns } => (format!("NOW()+{:.3}s", at_most_ns as f64 / 1e9), "NOW()".into()),
                };
                if insert {
                    write!(f, "INSERT shedlock k{key} lock_until={until} locked_at={now} by={by}")
                } else {
                    write!(
                        f,
                        "UPDATE shedlock k{key} lock_until={until} locked_at={now} by={by} WHERE lock_until <= {now}"
                    )
                }
            }
            Stmt::ShedUnlock { key, owner, by_owner, time } => {
                let until = match time {
                    ShedUnlockTime::Node { unlock_ns } => format!("{:.3}s", unlock_ns as f64 / 1e9),
                    ShedUnlockTime::Db { at_least_ns } => {
                        format!("GREATEST(locked_at+{:.3}s, NOW())", at_least_ns as f64 / 1e9)
                    }
                };
                let cond = if by_owner { format!(" AND locked_by={}", OwnerFmt(owner)) } else { String::new() };
                write!(f, "UPDATE shedlock k{key} lock_until={until} WHERE name{cond}")
            }
        }
    }
}

/// What a statement returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The INSERT made a row with this auto-increment id.
    Inserted {
        /// The new row's auto-increment id: the fencing token.
        id: u64,
    },
    /// Error 1062, duplicate entry for the unique name.
    Duplicate,
    /// An UPDATE: rows affected, and the row's id and count when it matched.
    Updated {
        /// Rows matched and changed: 1, or 0 when no row of this owner exists.
        rows: u32,
        /// The row's id (0 when no row matched).
        id: u64,
        /// The row's count after the update (0 when no row matched).
        count: u32,
    },
    /// A release: the count left (0: deleted), or `None` when no row of this owner existed.
    Released {
        /// The count left (0: the row was deleted); `None`: no row of this owner.
        left: Option<u32>,
    },
    /// `GET_LOCK`: 1 (with this session's count) or 0.
    GetLock {
        /// `Some(count)`: this session holds the lock, `count` times; `None`: another session does.
        got: Option<u32>,
    },
    /// `RELEASE_LOCK`: 1, 0 or NULL.
    ReleaseLock {
        /// `Some(true)` (1): released one level; `Some(false)` (0): another session holds it;
        /// `None` (NULL): nobody holds it.
        result: Option<bool>,
    },
    /// Error 1290, the server runs with `--read-only` (a replica, or a demoted primary); it says
    /// which server it believes is the primary.
    ReadOnly {
        /// The server this one believes is the primary, if it knows one.
        primary: Option<NodeId>,
        /// The server's failover epoch; a client follows `primary` only if it is newer than its
        /// own.
        epoch: u64,
    },
    /// The server does not know this connection (it restarted): "MySQL server has gone away".
    Gone,
    /// The locking read returned the row: the transaction holds its lock.
    RowLocked,
    /// Error 1205, "Lock wait timeout exceeded" (`innodb_lock_wait_timeout`).
    LockWaitTimeout,
    /// `COMMIT` done; `released`: it released a row lock.
    Committed {
        /// Whether the transaction held a row lock.
        released: bool,
    },
}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Outcome::Inserted { id } => write!(f, "OK id={id}"),
            Outcome::Duplicate => write!(f, "ERROR 1062 duplicate"),
            Outcome::Updated { rows, id, count } => {
                if rows == 0 {
                    write!(f, "0 rows")
                } else {
                    write!(f, "{rows} row id={id} count={count}")
                }
            }
            Outcome::Released { left: None } => write!(f, "0 rows (not owner)"),
            Outcome::Released { left: Some(0) } => write!(f, "deleted"),
            Outcome::Released { left: Some(n) } => write!(f, "count={n}"),
            Outcome::GetLock { got: Some(n) } => write!(f, "1 (count {n})"),
            Outcome::GetLock { got: None } => write!(f, "0"),
            Outcome::ReleaseLock { result: Some(true) } => write!(f, "1"),
            Outcome::ReleaseLock { result: Some(false) } => write!(f, "0"),
            Outcome::ReleaseLock { result: None } => write!(f, "NULL"),
            Outcome::ReadOnly { epoch, .. } => write!(f, "ERROR 1290 read-only (epoch {epoch})"),
            Outcome::Gone => write!(f, "ERROR 2006 gone away"),
            Outcome::RowLocked => write!(f, "1 row (locked)"),
            Outcome::LockWaitTimeout => write!(f, "ERROR 1205 lock wait timeout"),
            Outcome::Committed { released } => write!(f, "COMMIT ok (row lock released: {released})"),
        }
    }
}

/// The server's role. Durable: it is configuration (`read_only`) and replication state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Takes writes, runs the cleanup job and ships its binlog (`server-0` at the start).
    Primary,
    /// Read-only: applies the primary's binlog; the failover manager may promote it.
    Replica,
    /// A primary the failover manager demoted (set read-only) after promoting another; not
    /// rejoined as a replica (orchestrator and MHA leave that to an operator).
    Retired,
}

/// One binlog record: the row change and its position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BinlogEvent {
    /// Position in the binlog, from 1.
    pub seq: u64,
    /// The failover epoch of the primary that wrote it.
    pub epoch: u64,
    /// The row change: the key and the row's after image (`None`: deleted).
    pub change: Change,
}

impl fmt::Debug for BinlogEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.change {
            (k, Some(r)) => write!(f, "#{} k{k}=id{}/{}", self.seq, r.id, r.count),
            (k, None) => write!(f, "#{} k{k} deleted", self.seq),
        }
    }
}

/// Every message of the model.
#[derive(Clone, PartialEq, Eq)]
pub enum DbMsg {
    /// Client → server: a statement on a connection. `first` opens the connection (the
    /// handshake), `id` numbers the statements on it (a retransmission repeats the id).
    Request {
        /// The connection (session) the statement is on.
        conn: ConnId,
        /// Whether this statement opens the connection.
        first: bool,
        /// The statement's number on the connection.
        id: u64,
        /// The statement.
        stmt: Stmt,
    },
    /// Server → client.
    Response {
        /// The connection the answered statement was on.
        conn: ConnId,
        /// The answered statement's number on the connection.
        id: u64,
        /// What the statement returned.
        outcome: Outcome,
    },
    /// Client → server: the connection is closed (FIN), ending its session.
    Close {
        /// The connection being closed.
        conn: ConnId,
    },
    /// Server → client: the close arrived (the FIN's ACK).
    Closed {
        /// The connection whose close arrived.
        conn: ConnId,
    },
    /// Primary → replica: binlog events, in order.
    Binlog {
        /// The events, in position order.
        events: Vec<BinlogEvent>,
    },
    /// Primary → replica, every second: the last position shipped (MASTER_HEARTBEAT_PERIOD).
    BinlogHeartbeat {
        /// The primary's failover epoch.
        epoch: u64,
        /// The last binlog position sent; a replica that has less asks for a resend.
        shipped: u64,
    },
    /// Replica → primary: resend from this position (reconnect with auto-positioning).
    Resync {
        /// The first binlog position the replica lacks.
        from: u64,
    },
    /// Replica → primary (semisync): the relay log holds everything up to `seq`.
    Ack {
        /// The replica's last binlog position.
        seq: u64,
    },
    /// Manager → server: health probe.
    Ping {
        /// The manager's current failover epoch.
        epoch: u64,
    },
    /// Server → manager.
    Pong {
        /// The server's role.
        role: Role,
        /// The server's failover epoch.
        epoch: u64,
        /// The server's last binlog position (written as primary, applied as replica).
        applied: u64,
    },
    /// Manager → replica: become primary for `epoch`.
    Promote {
        /// The new epoch, one above the manager's current one.
        epoch: u64,
    },
    /// Replica → manager: done.
    Promoted {
        /// The epoch the server now leads.
        epoch: u64,
    },
    /// Manager → old primary: set read-only; `primary` now leads `epoch`.
    Demote {
        /// The new primary's epoch.
        epoch: u64,
        /// The new primary.
        primary: NodeId,
    },
    /// Client → manager: where is the primary (the address a VIP or proxy resolves to)?
    WhoIsPrimary,
    /// Manager → clients: the primary for `epoch` (after a failover, or as an answer).
    NewPrimary {
        /// The primary.
        primary: NodeId,
        /// The epoch it leads.
        epoch: u64,
    },
}

impl fmt::Debug for DbMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbMsg::Request { conn, first, id, stmt } => {
                write!(f, "{stmt:?} [conn {conn:x}#{id}{}]", if *first { " connect" } else { "" })
            }
            DbMsg::Response { conn, id, outcome } => write!(f, "{outcome:?} [conn {conn:x}#{id}]"),
            DbMsg::Close { conn } => write!(f, "close conn {conn:x}"),
            DbMsg::Closed { conn } => write!(f, "conn {conn:x} closed"),
            DbMsg::Binlog { events } => match events.as_slice() {
                [one] => write!(f, "binlog {one:?}"),
                [first, .., last] => write!(f, "binlog #{}..#{} ({} events)", first.seq, last.seq, events.len()),
                [] => write!(f, "binlog (empty)"),
            },
            DbMsg::BinlogHeartbeat { epoch, shipped } => write!(f, "binlog heartbeat e{epoch} at #{shipped}"),
            DbMsg::Resync { from } => write!(f, "resync from #{from}"),
            DbMsg::Ack { seq } => write!(f, "semisync ack #{seq}"),
            DbMsg::Ping { epoch } => write!(f, "ping e{epoch}"),
            DbMsg::Pong { role, epoch, applied } => write!(f, "pong {role:?} e{epoch} at #{applied}"),
            DbMsg::Promote { epoch } => write!(f, "promote to primary e{epoch}"),
            DbMsg::Promoted { epoch } => write!(f, "promoted e{epoch}"),
            DbMsg::Demote { epoch, primary } => write!(f, "demote: node {primary} leads e{epoch}"),
            DbMsg::WhoIsPrimary => write!(f, "who is primary?"),
            DbMsg::NewPrimary { primary, epoch } => write!(f, "primary is node {primary} (e{epoch})"),
        }
    }
}

/// A MySQL server's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// Statement `exec` (a key of the server's statements in progress) reaches its commit point.
    Commit {
        /// The statement's key in the server's statements in progress.
        exec: u64,
    },
    /// The oldest queued binlog event is due to leave for the replica.
    Ship,
    /// The oldest commit waiting for a semisync ack may have waited `semisync_timeout_ms`.
    SemisyncTimeout,
    /// The cleanup job's next run.
    Cleanup,
    /// The primary's next binlog heartbeat to the replica.
    BinlogHeartbeat,
    /// The locking read or `GET_LOCK` `id` on `conn` has waited its timeout.
    LockWait {
        /// The waiting statement's connection.
        conn: ConnId,
        /// The waiting statement's number on it.
        id: u64,
    },
}

/// The client library's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The sleep of `poll_ms` before the next attempt at `key` is over.
    Poll {
        /// The lock to try again.
        key: LockKey,
    },
    /// Time to refresh `key`'s `update_time`.
    Heartbeat {
        /// The held lock whose row to refresh.
        key: LockKey,
    },
    /// The statement on the wire is still unanswered after its RTO: send it again.
    Retransmit,
    /// The statement on the wire is abandoned (`STATEMENT_TIMEOUT_NS`).
    StatementTimeout,
    /// Ask the manager for the primary again.
    AskPrimary,
    /// The close of `conn` is still unacknowledged after its RTO: send it again.
    CloseRetransmit {
        /// The connection being closed.
        conn: ConnId,
    },
}

/// The failover manager's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagerTimer {
    /// The next round of pings (and failover decision).
    Probe,
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the model: one variant per process kind.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum DbTimer: Fingerprint {
        /// A MySQL server's timer.
        Server(ServerTimer),
        /// The client library's timer.
        Client(ClientTimer),
        /// The failover manager's timer.
        Manager(ManagerTimer),
    }
}
