//! The `db` model's statements on a real MariaDB server, through the `mysql` crate (pure Rust,
//! synchronous: one `mysql::Conn` is one TCP connection whose statements go out and come back in
//! order, as a JDBC connection's do).
//!
//! The model's client library manages its own connections: it numbers them ([`ConnId`]), opens a
//! new one after a failure, numbers the statements on each, retransmits an unanswered one and
//! closes a connection it gives up on. Here each model connection is one real connection, opened
//! (the handshake) by its first statement and run by its own thread, so a statement that blocks in
//! the server (`GET_LOCK` with a timeout, a locking read) holds up only its own connection, as
//! in the model. What the model does at the TCP layer the kernel does here: a retransmitted
//! statement id is not sent again (the real socket already carries it once), and a close is
//! answered `Closed` once the real connection is shut (`COM_QUIT`).
//!
//! Each statement is the SQL the model says it stands for ([`Stmt`]'s documentation), on the
//! table `locksim.locks` that [`crate::backends::db`] creates at every start (the model's schema,
//! `algorithms/src/db/table.rs`):
//!
//! | model statement | SQL | model answer |
//! |---|---|---|
//! | `Insert` | `INSERT INTO locks (name, owner, count) VALUES (?, ?, 1)` | `Inserted { id: LAST_INSERT_ID() }`; error 1062: `Duplicate`; error 1213: `LockWaitTimeout` |
//! | `Reenter` | in one transaction: `UPDATE locks SET count = count + 1 WHERE name = ? AND owner = ?`, then `SELECT id, count` of that row | `Updated { rows, id, count }`; error 1213: `LockWaitTimeout` |
//! | `Touch` | in one transaction: `UPDATE locks SET update_time = NOW(6) WHERE name = ? AND owner = ?`, then `SELECT id, count` | `Updated { rows, id, count }` |
//! | `Release` (reentrant) | in one transaction: `SELECT count … FOR UPDATE`, `DELETE … AND count <= 1`, `UPDATE … SET count = count - 1 … AND count > 1` | `Released { left }` |
//! | `Release` (not reentrant) | `DELETE FROM locks WHERE name = ? AND owner = ?` | `Released { left: Some(0) }` or `None` |
//! | `GetLock` | `SELECT GET_LOCK(?, timeout_s)` | `GetLock { got }` |
//! | `ReleaseLock` | `SELECT RELEASE_LOCK(?)` | `ReleaseLock { result }` (1, 0, NULL) |
//! | `SelectForUpdate` | `BEGIN`, `SELECT id FROM locks WHERE name = ? FOR UPDATE` | `RowLocked`; error 1205: `LockWaitTimeout` (then `ROLLBACK`) |
//! | `Commit` | `SELECT trx_rows_locked` of this session's transaction, `COMMIT` | `Committed { released }` |
//! | `Claim` (`spring_jdbc`) | in one transaction: `UPDATE int_lock SET CLIENT_ID = ?, CREATED_DATE = ? WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? AND (CLIENT_ID = ? OR CREATED_DATE < ?)`, then, when it matched nothing, `INSERT INTO int_lock (LOCK_KEY, REGION, CLIENT_ID, CREATED_DATE) VALUES (?, 'DEFAULT', ?, ?)` (Spring Integration `DefaultLockRepository.acquire`) | `Updated { rows: 1 }` or `Inserted`; error 1062: `Duplicate`; error 1213: `LockWaitTimeout` |
//! | `Release` (`spring_jdbc`) | `DELETE FROM int_lock WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? AND CLIENT_ID = ?` | `Released { left: Some(0) }` or `None` |
//! | `ShedLock`, node time | `INSERT INTO shedlock (name, lock_until, locked_at, locked_by) VALUES (?, ?, ?, ?)` or `UPDATE shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?` (ShedLock `SqlStatementsSource`) | `Inserted` / `Duplicate`, `Updated { rows }` |
//! | `ShedLock`, `usingDbTime()` | the same with the server's `NOW(6)` for `:now` and `NOW(6)` + `lockAtMostFor` for `:lockUntil`; the INSERT is `INSERT IGNORE` (`MySqlServerTimeStatementsSource`) | the same |
//! | `ShedUnlock` | `UPDATE shedlock SET lock_until = ? WHERE name = ? [AND locked_by = ?]`; with `usingDbTime()`, `lock_until = GREATEST(locked_at + lockAtLeastFor, NOW(6))` | `Updated { rows }` |
//!
//! The `int_lock` and `shedlock` tables hold the model's times as `BIGINT` nanoseconds (the
//! client's wall clock as the model reads it, or the server's `NOW(6)` in nanoseconds), where
//! Spring and ShedLock use `TIMESTAMP` columns: the comparisons are the libraries', exact to the
//! nanosecond the model computes with and free of the session time zone.
//!
//! The cleanup job (the expiry) is not a client statement: it is a MariaDB event inside the
//! server ([`crate::backends::db`]). A connection that fails (refused, reset, closed: the server
//! was killed or is down) is an [`Inbound::Reset`], the library's `on_reset`, as Connector/J's
//! `CommunicationsException` is; a statement on a connection already failed gets the same.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use locksim_algorithms::db::protocol::{DbMsg, Outcome, ShedTime, ShedUnlockTime, Stmt};
use locksim_algorithms::db::table::{ConnId, Owner};
use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, TxOpts};

use super::{deliver, reset, Adapter, Inbound};

/// The database the backend creates (`locksim`).
pub const DATABASE: &str = "locksim";

/// Error 1062, `ER_DUP_ENTRY`: the unique name is taken.
const ER_DUP_ENTRY: u16 = 1062;
/// Error 1205, `ER_LOCK_WAIT_TIMEOUT`: `innodb_lock_wait_timeout` ran out.
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// Error 1213, `ER_LOCK_DEADLOCK`: InnoDB chose this transaction as a deadlock victim and rolled
/// it back.
const ER_LOCK_DEADLOCK: u16 = 1213;

/// An acquisition statement (`Insert`, `Reenter`) that InnoDB rolled back as a deadlock victim.
///
/// The model has no deadlocks, but InnoDB has one in this very pattern: when the holder DELETEs
/// the row, the INSERTs that were waiting on its duplicate-key check each hold a shared lock on
/// the deleted record and each need an insert-intention lock the others' shared locks block; all
/// but one are rolled back with error 1213 (MySQL reference manual, 17.7.3 "Locks Set by
/// Different SQL Statements in InnoDB", the INSERT of a duplicate key). It is answered as the
/// model's other lock-conflict error, 1205 (`LockWaitTimeout`): both roll the attempt back, both
/// are `PessimisticLockingFailureException`s, transient, that Spring's `JdbcLock.lock()` catches
/// and tries again, which is what the library does with 1205 (sleep `poll_ms`, try again).
fn deadlock_is_a_conflict(r: mysql::Result<Outcome>) -> Result<Outcome, Failure> {
    match r {
        Err(e) if code(&e) == Some(ER_LOCK_DEADLOCK) => Ok(Outcome::LockWaitTimeout),
        other => other.map_err(failure),
    }
}

/// The lock row's `name` is this prefix and the key's number (`k0`, `k1`, …).
pub const NAME_PREFIX: &str = "k";

/// `select_for_update` locks rows that exist beforehand (the model's `mod.rs`): the backend's
/// init file creates the rows of keys `0..FOR_UPDATE_ROWS` in that mode.
pub const FOR_UPDATE_ROWS: u32 = 1024;

/// The lock row's `name` (and, after `locksim.`, the `GET_LOCK` name) for a lock key.
pub fn lock_name(key: LockKey) -> String {
    format!("{NAME_PREFIX}{key}")
}

/// How the library connects: TCP to `addr` as `root` (the throwaway instance's passwordless
/// account), the `locksim` database, and `CLIENT_FOUND_ROWS`, so an UPDATE reports the rows it
/// matched rather than the rows it changed: Connector/J's default (`useAffectedRows=false`),
/// which Spring's `JdbcLockRegistry` runs on.
pub fn connect_opts(addr: &str) -> Result<OptsBuilder, String> {
    let (host, port) = addr.rsplit_once(':').ok_or_else(|| format!("bad address {addr}"))?;
    let port: u16 = port.parse().map_err(|_| format!("bad port in {addr}"))?;
    Ok(OptsBuilder::new()
        .ip_or_hostname(Some(host))
        .tcp_port(port)
        .user(Some("root"))
        .db_name(Some(DATABASE))
        // Stay on the TCP connection: by default the crate switches to the server's Unix socket
        // when it finds the server on this host.
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(1)))
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS))
}

/// How a statement failed.
pub enum Failure {
    /// The connection is gone (refused, reset, closed, a protocol error): a reset.
    Connection,
    /// A server error the model has no answer for (a deadlock victim, …): reported on stderr,
    /// and answered as a lost session (`Gone`), so the library drops the connection.
    Unexpected(String),
}

fn failure(e: mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(m) => Failure::Unexpected(format!("server error {}: {}", m.code, m.message)),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) | mysql::Error::DriverError(_) => Failure::Connection,
        other => Failure::Unexpected(other.to_string()),
    }
}

/// The server error code, if `e` is a server error.
fn code(e: &mysql::Error) -> Option<u16> {
    match e {
        mysql::Error::MySqlError(m) => Some(m.code),
        _ => None,
    }
}

/// `SELECT id, count` of the owner's row inside the transaction `tx` (after its UPDATE).
fn id_and_count(tx: &mut mysql::Transaction, name: &str, owner: Owner) -> mysql::Result<(u64, u32)> {
    let row: Option<(u64, u32)> =
        tx.exec_first("SELECT id, count FROM locks WHERE name = ? AND owner = ?", (name, owner))?;
    Ok(row.unwrap_or((0, 0)))
}

/// An UPDATE of the owner's row and the row it left, in one transaction: `Updated`.
fn update_owned(con: &mut Conn, set: &str, name: &str, owner: Owner) -> mysql::Result<Outcome> {
    let mut tx = con.start_transaction(TxOpts::default())?;
    tx.exec_drop(format!("UPDATE locks SET {set} WHERE name = ? AND owner = ?"), (name, owner))?;
    let rows = tx.affected_rows() as u32;
    let (id, count) = if rows > 0 { id_and_count(&mut tx, name, owner)? } else { (0, 0) };
    tx.commit()?;
    Ok(Outcome::Updated { rows, id, count })
}

/// The server's clock in nanoseconds since the Unix epoch, as SQL (`usingDbTime()`'s `now`).
const DB_NOW_NS: &str = "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED)";

/// Spring Integration's acquire transaction (`DefaultLockRepository.acquire`): the UPDATE that
/// takes the row over when it is this client's or its time is below `expired_before_ns`, then
/// the INSERT when it matched nothing.
fn claim(con: &mut Conn, name: &str, owner: Owner, stamp_ns: i64, expired_before_ns: i64) -> mysql::Result<Outcome> {
    let mut tx = con.start_transaction(TxOpts::default())?;
    tx.exec_drop(
        "UPDATE int_lock SET CLIENT_ID = ?, CREATED_DATE = ? WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? \
AND (CLIENT_ID = ? OR CREATED_DATE < ?)",
        (owner, stamp_ns, name, owner, expired_before_ns),
    )?;
    if tx.affected_rows() > 0 {
        tx.commit()?;
        return Ok(Outcome::Updated { rows: 1, id: 0, count: 1 });
    }
    let r = tx.exec_drop(
        "INSERT INTO int_lock (LOCK_KEY, REGION, CLIENT_ID, CREATED_DATE) VALUES (?, 'DEFAULT', ?, ?)",
        (name, owner, stamp_ns),
    );
    match r {
        Ok(()) => {
            tx.commit()?;
            Ok(Outcome::Inserted { id: 0 })
        }
        Err(e) if code(&e) == Some(ER_DUP_ENTRY) => {
            tx.rollback()?;
            Ok(Outcome::Duplicate)
        }
        Err(e) => Err(e),
    }
}

/// ShedLock's lock statement: the INSERT (a process's first try) or the UPDATE, with the node's
/// times or the server's (`usingDbTime()`).
fn shed_lock(con: &mut Conn, name: &str, owner: Owner, insert: bool, time: ShedTime) -> mysql::Result<Outcome> {
    let matched = match (insert, time) {
        (true, ShedTime::Node { lock_until_ns, now_ns }) => {
            let r = con.exec_drop(
                "INSERT INTO shedlock (name, lock_until, locked_at, locked_by) VALUES (?, ?, ?, ?)",
                (name, lock_until_ns, now_ns, owner),
            );
            match r {
                Ok(()) => true,
                Err(e) if code(&e) == Some(ER_DUP_ENTRY) => false,
                Err(e) => return Err(e),
            }
        }
        (true, ShedTime::Db { at_most_ns }) => {
            con.exec_drop(
                format!(
                    "INSERT IGNORE INTO shedlock (name, lock_until, locked_at, locked_by) \
VALUES (?, {DB_NOW_NS} + ?, {DB_NOW_NS}, ?)"
                ),
                (name, at_most_ns, owner),
            )?;
            con.affected_rows() > 0
        }
        (false, ShedTime::Node { lock_until_ns, now_ns }) => {
            con.exec_drop(
                "UPDATE shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?",
                (lock_until_ns, now_ns, owner, name, now_ns),
            )?;
            return Ok(updated(con.affected_rows()));
        }
        (false, ShedTime::Db { at_most_ns }) => {
            con.exec_drop(
                format!(
                    "UPDATE shedlock SET lock_until = {DB_NOW_NS} + ?, locked_at = {DB_NOW_NS}, locked_by = ? \
WHERE name = ? AND lock_until <= {DB_NOW_NS}"
                ),
                (at_most_ns, owner, name),
            )?;
            return Ok(updated(con.affected_rows()));
        }
    };
    Ok(if matched { Outcome::Inserted { id: 0 } } else { Outcome::Duplicate })
}

/// ShedLock's unlock: `lock_until` to the node's time or the server's `max(locked_at +
/// lockAtLeastFor, now)`, on the caller's row (7.0) or the name's.
fn shed_unlock(
    con: &mut Conn,
    name: &str,
    owner: Owner,
    by_owner: bool,
    time: ShedUnlockTime,
) -> mysql::Result<Outcome> {
    let cond = if by_owner { " AND locked_by = ?" } else { "" };
    let (set, value) = match time {
        ShedUnlockTime::Node { unlock_ns } => ("?".to_string(), unlock_ns),
        ShedUnlockTime::Db { at_least_ns } => (format!("GREATEST(locked_at + ?, {DB_NOW_NS})"), at_least_ns as i64),
    };
    let sql = format!("UPDATE shedlock SET lock_until = {set} WHERE name = ?{cond}");
    if by_owner {
        con.exec_drop(sql, (value, name, owner))?;
    } else {
        con.exec_drop(sql, (value, name))?;
    }
    Ok(updated(con.affected_rows()))
}

/// An UPDATE's answer: the rows it matched (`CLIENT_FOUND_ROWS`).
fn updated(rows: u64) -> Outcome {
    let rows = rows.min(1) as u32;
    Outcome::Updated { rows, id: 0, count: rows }
}

/// Which table a row's recipe keeps its locks in (the release statement differs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recipe {
    /// `locks` (table, get_lock, select_for_update) or `shedlock` (its own statements).
    Locks,
    /// Spring Integration's `int_lock`: the release is a DELETE there.
    SpringJdbc,
}

/// Runs one statement and reads its result back as the model's answer.
fn run(con: &mut Conn, stmt: Stmt, reentrant: bool, recipe: Recipe) -> Result<Outcome, Failure> {
    match stmt {
        Stmt::Insert { key, owner } => {
            let r = con.exec_drop("INSERT INTO locks (name, owner, count) VALUES (?, ?, 1)", (lock_name(key), owner));
            deadlock_is_a_conflict(match r {
                Ok(()) => Ok(Outcome::Inserted { id: con.last_insert_id() }),
                Err(e) if code(&e) == Some(ER_DUP_ENTRY) => Ok(Outcome::Duplicate),
                Err(e) => Err(e),
            })
        }
        Stmt::Reenter { key, owner } => {
            deadlock_is_a_conflict(update_owned(con, "count = count + 1", &lock_name(key), owner))
        }
        Stmt::Touch { key, owner } => {
            update_owned(con, "update_time = NOW(6)", &lock_name(key), owner).map_err(failure)
        }
        Stmt::Release { key, owner } if recipe == Recipe::SpringJdbc => {
            con.exec_drop(
                "DELETE FROM int_lock WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? AND CLIENT_ID = ?",
                (lock_name(key), owner),
            )
            .map_err(failure)?;
            Ok(Outcome::Released { left: (con.affected_rows() > 0).then_some(0) })
        }
        Stmt::Release { key, owner } => release(con, &lock_name(key), owner, reentrant).map_err(failure),
        Stmt::GetLock { key, wait_ns } => {
            // MariaDB takes a fractional timeout in seconds.
            let timeout_s = wait_ns as f64 / 1e9;
            let got: Option<Option<i64>> = con
                .exec_first("SELECT GET_LOCK(?, ?)", (format!("locksim.{}", lock_name(key)), timeout_s))
                .map_err(failure)?;
            match got.flatten() {
                // MariaDB does not report the session's nesting count; the library reads only
                // whether it got the lock.
                Some(1) => Ok(Outcome::GetLock { got: Some(1) }),
                Some(_) => Ok(Outcome::GetLock { got: None }),
                None => Err(Failure::Unexpected("GET_LOCK returned NULL".to_string())),
            }
        }
        Stmt::ReleaseLock { key } => {
            let r: Option<Option<i64>> =
                con.exec_first("SELECT RELEASE_LOCK(?)", (format!("locksim.{}", lock_name(key)),)).map_err(failure)?;
            Ok(Outcome::ReleaseLock { result: r.flatten().map(|v| v == 1) })
        }
        Stmt::SelectForUpdate { key } => {
            con.query_drop("BEGIN").map_err(failure)?;
            match con.exec_first::<u64, _, _>("SELECT id FROM locks WHERE name = ? FOR UPDATE", (lock_name(key),)) {
                Ok(Some(_)) => Ok(Outcome::RowLocked),
                Ok(None) => {
                    let _ = con.query_drop("ROLLBACK");
                    Err(Failure::Unexpected(format!(
                        "no row {} in locks: select_for_update's rows are created for keys 0..{}",
                        lock_name(key),
                        FOR_UPDATE_ROWS
                    )))
                }
                Err(e) if code(&e) == Some(ER_LOCK_WAIT_TIMEOUT) => {
                    // InnoDB rolled back the statement, not the transaction (innodb_rollback_on_timeout
                    // is off): end it, as a JDBC caller does on the exception.
                    con.query_drop("ROLLBACK").map_err(failure)?;
                    Ok(Outcome::LockWaitTimeout)
                }
                Err(e) => Err(failure(e)),
            }
        }
        Stmt::Claim { key, owner, stamp_ns, expired_before_ns } => {
            deadlock_is_a_conflict(claim(con, &lock_name(key), owner, stamp_ns, expired_before_ns))
        }
        Stmt::ShedLock { key, owner, insert, time } => {
            shed_lock(con, &lock_name(key), owner, insert, time).map_err(failure)
        }
        Stmt::ShedUnlock { key, owner, by_owner, time } => {
            shed_unlock(con, &lock_name(key), owner, by_owner, time).map_err(failure)
        }
        Stmt::Commit { .. } => {
            let locked: Option<u64> = con
                .query_first(
                    "SELECT trx_rows_locked FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()",
                )
                .map_err(failure)?;
            con.query_drop("COMMIT").map_err(failure)?;
            Ok(Outcome::Committed { released: locked.unwrap_or(0) > 0 })
        }
    }
}

/// The release transaction (`table.rs`, `LockTable::release`): reentrant, the count is read
/// under the row's lock and the row decremented or deleted; not reentrant, the DELETE alone.
fn release(con: &mut Conn, name: &str, owner: Owner, reentrant: bool) -> mysql::Result<Outcome> {
    if !reentrant {
        con.exec_drop("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))?;
        let left = (con.affected_rows() > 0).then_some(0);
        return Ok(Outcome::Released { left });
    }
    let mut tx = con.start_transaction(TxOpts::default())?;
    let count: Option<u32> =
        tx.exec_first("SELECT count FROM locks WHERE name = ? AND owner = ? FOR UPDATE", (name, owner))?;
    let left = match count {
        None => None,
        Some(n) if n <= 1 => {
            tx.exec_drop("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))?;
            Some(0)
        }
        Some(n) => {
            tx.exec_drop("UPDATE locks SET count = count - 1 WHERE name = ? AND owner = ?", (name, owner))?;
            Some(n - 1)
        }
    };
    tx.commit()?;
    Ok(Outcome::Released { left })
}

/// One real connection of a database the `db` model's statements run on: MariaDB here,
/// PostgreSQL in [`super::postgres_db`] (a row's `database`).
pub trait Session: Sized + 'static {
    /// Opens a connection to `addr` (`127.0.0.1:port`); an error is a refused or cut handshake.
    fn open(addr: &str) -> Result<Self, String>;
    /// Runs one statement and reads its result back as the model's answer.
    fn run(&mut self, stmt: Stmt, reentrant: bool, recipe: Recipe) -> Result<Outcome, Failure>;
}

/// A MariaDB connection of the `mysql` crate.
pub struct MariaDb(Conn);

impl Session for MariaDb {
    fn open(addr: &str) -> Result<Self, String> {
        connect_opts(addr).and_then(|o| Conn::new(o).map(MariaDb).map_err(|e| e.to_string()))
    }

    fn run(&mut self, stmt: Stmt, reentrant: bool, recipe: Recipe) -> Result<Outcome, Failure> {
        run(&mut self.0, stmt, reentrant, recipe)
    }
}

/// What a connection's thread is asked to do.
enum Job {
    /// Run statement `id`.
    Stmt { id: u64, stmt: Stmt },
    /// Close the connection (`COM_QUIT`) and acknowledge.
    Close,
}

/// One model connection: a real connection, opened by its first statement, run by this thread.
fn connection<S: Session>(
    peer: NodeId,
    addr: String,
    conn: ConnId,
    reentrant: bool,
    recipe: Recipe,
    rx: Receiver<Job>,
    tx: Sender<Inbound<DbMsg>>,
) {
    let mut con: Option<S> = None;
    // Once the connection failed, every later statement on it fails the same way.
    let mut failed = false;
    for job in rx {
        let (id, stmt) = match job {
            Job::Close => {
                drop(con.take());
                deliver(&tx, peer, DbMsg::Closed { conn });
                return;
            }
            Job::Stmt { id, stmt } => (id, stmt),
        };
        if failed {
            reset(&tx, peer);
            continue;
        }
        if con.is_none() {
            match S::open(&addr) {
                Ok(c) => con = Some(c),
                Err(_) => {
                    // Refused (the server is down) or cut during the handshake.
                    failed = true;
                    reset(&tx, peer);
                    continue;
                }
            }
        }
        let c = con.as_mut().expect("connected above");
        match c.run(stmt, reentrant, recipe) {
            Ok(outcome) => deliver(&tx, peer, DbMsg::Response { conn, id, outcome }),
            Err(Failure::Connection) => {
                con = None;
                failed = true;
                reset(&tx, peer);
            }
            Err(Failure::Unexpected(why)) => {
                eprintln!("db adapter: {stmt:?} on connection {conn:x}: {why}: answered as a lost session");
                deliver(&tx, peer, DbMsg::Response { conn, id, outcome: Outcome::Gone });
            }
        }
    }
}

/// A model connection as the adapter knows it.
struct Link {
    /// The highest statement id put on it (a lower or equal one is a retransmission).
    last_id: u64,
    jobs: Sender<Job>,
}

/// The adapter: one real connection of `S` per model connection.
pub struct DbAdapter<S: Session> {
    servers: BTreeMap<NodeId, String>,
    links: BTreeMap<ConnId, Link>,
    reentrant: bool,
    recipe: Recipe,
    tx: Sender<Inbound<DbMsg>>,
    sent: u64,
    session: PhantomData<fn() -> S>,
}

impl<S: Session> DbAdapter<S> {
    /// Connections to `servers` (node id and `127.0.0.1:port`), answering into `tx`;
    /// `reentrant` is the model's parameter and `recipe` its table (which release statement to
    /// run).
    pub fn new(servers: &[(NodeId, String)], tx: &Sender<Inbound<DbMsg>>, reentrant: bool, recipe: Recipe) -> Self {
        DbAdapter {
            servers: servers.iter().cloned().collect(),
            links: BTreeMap::new(),
            reentrant,
            recipe,
            tx: tx.clone(),
            sent: 0,
            session: PhantomData,
        }
    }
}

impl<S: Session> Adapter<DbMsg> for DbAdapter<S> {
    fn send(&mut self, to: NodeId, msg: DbMsg) {
        match msg {
            DbMsg::Request { conn, first, id, stmt } => {
                if let Some(link) = self.links.get_mut(&conn) {
                    if id <= link.last_id {
                        return; // a retransmission: the kernel's TCP already carries the statement
                    }
                    link.last_id = id;
                    self.sent += 1;
                    let _ = link.jobs.send(Job::Stmt { id, stmt });
                    return;
                }
                let Some(addr) = self.servers.get(&to).cloned() else { return };
                if !first {
                    // A connection this process never opened: as a closed socket.
                    reset(&self.tx, to);
                    return;
                }
                let (jobs, rx) = mpsc::channel();
                let (t, r, recipe) = (self.tx.clone(), self.reentrant, self.recipe);
                std::thread::spawn(move || connection::<S>(to, addr, conn, r, recipe, rx, t));
                self.sent += 1;
                let _ = jobs.send(Job::Stmt { id, stmt });
                self.links.insert(conn, Link { last_id: id, jobs });
            }
            DbMsg::Close { conn } => match self.links.remove(&conn) {
                Some(link) => {
                    let _ = link.jobs.send(Job::Close);
                }
                // Never opened here (its first statement was refused): nothing to shut.
                None => deliver(&self.tx, to, DbMsg::Closed { conn }),
            },
            // Replication and the failover manager are refused before a live run starts.
            _ => {}
        }
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}
