//! The `db` model's library recipes on a real PostgreSQL 15 server (`database = "postgres"`):
//! Spring Integration's `JdbcLockRegistry` and ShedLock, each with the SQL its library sends to
//! PostgreSQL, through the `postgres` crate. The connection handling (one real connection per
//! model connection, its own thread, retransmissions left to TCP) is [`super::db`]'s; this module
//! is the [`Session`] that runs a statement.
//!
//! | model statement | SQL on PostgreSQL | model answer |
//! |---|---|---|
//! | `Claim` (`spring_jdbc`) | `BEGIN; UPDATE int_lock SET CLIENT_ID = ?, CREATED_DATE = ? WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? AND (CLIENT_ID = ? OR CREATED_DATE < ?)`, then `COMMIT`, or the `INSERT INTO int_lock (…) VALUES (…)` and `COMMIT` | `Updated { rows: 1 }` / `Inserted`; SQLSTATE 23505 (the row exists): `ROLLBACK`, `Duplicate`; 40001 / 40P01: `ROLLBACK`, `LockWaitTimeout` |
//! | `Release` (`spring_jdbc`) | `DELETE FROM int_lock WHERE REGION = 'DEFAULT' AND LOCK_KEY = ? AND CLIENT_ID = ?` | `Released { left: Some(0) }` or `None` |
//! | `ShedLock`, node time, first try | `INSERT INTO shedlock (name, lock_until, locked_at, locked_by) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET lock_until = ?, locked_at = ?, locked_by = ? WHERE shedlock.lock_until <= ?` | 1 row: `Inserted`; 0: `Duplicate` |
//! | `ShedLock`, node time | `UPDATE shedlock SET lock_until = ?, locked_at = ?, locked_by = ? WHERE name = ? AND lock_until <= ?` | `Updated { rows }` |
//! | `ShedLock`, `usingDbTime()` | the same two with `timezone('utc', CURRENT_TIMESTAMP)` for `:now` and that + `lockAtMostFor` for `:lockUntil` | the same |
//! | `ShedUnlock` | `UPDATE shedlock SET lock_until = ? WHERE name = ? [AND locked_by = ?]`; with `usingDbTime()`, `lock_until = CASE WHEN locked_at + lockAtLeastFor > now THEN locked_at + lockAtLeastFor ELSE now END` | `Updated { rows }` |
//!
//! Sources. Spring Integration's `DefaultLockRepository` has one set of statements for every
//! database (its `UPDATE … WHERE … AND (CLIENT_ID=? OR CREATED_DATE<?)` then `INSERT`, in a
//! READ_COMMITTED transaction: `DefaultLockRepository.java:113-115, 359, 399-414 @v6.5.0`, as
//! docs/models.md cites); what differs on PostgreSQL is the server: a duplicate-key `INSERT`
//! aborts the transaction, Spring catches the `DataIntegrityViolationException` (`false`) and
//! the transaction ends in a rollback, as here. ShedLock chooses its statements per database
//! (`SqlStatementsSource.create`, lukas-krecan/ShedLock `providers/sql/shedlock-sql-support/
//! src/main/java/net/javacrumbs/shedlock/provider/sql/`, 7.x): for PostgreSQL with the node's
//! time `PostgresSqlStatementsSource.getInsertStatement` (the base INSERT plus `ON CONFLICT (name)
//! DO UPDATE … WHERE shedlock.lock_until <= :now`), the base `UPDATE` and unlock; with
//! `usingDbTime()` `PostgresSqlServerTimeStatementsSource` (`now = timezone('utc',
//! CURRENT_TIMESTAMP)`, `lockAtMostFor` as `now + make_interval(secs => …)`, the same upsert and
//! update on that clock, and the unlock's `CASE WHEN locked_at + lockAtLeastFor > now …`).
//!
//! The tables are those of [`super::db`] with PostgreSQL types (`CLIENT_ID` and `locked_by` as
//! text, as in the libraries' schemas); the time columns hold the model's nanoseconds as `bigint`
//! (the libraries use `TIMESTAMP`), so the comparisons are exact and free of the session time
//! zone; the server's clock enters as `extract(epoch from timezone('utc', CURRENT_TIMESTAMP))` in
//! nanoseconds (microsecond resolution). `CURRENT_TIMESTAMP` is the transaction's start: each
//! ShedLock statement is its own transaction, as under JDBC's autocommit. Statements go as simple
//! queries with the values written in (integers, and names and owners the model makes): one round
//! trip each, as pgjdbc's Parse/Bind/Execute/Sync in one exchange is.

use locksim_algorithms::db::protocol::{Outcome, ShedTime, ShedUnlockTime, Stmt};
use locksim_algorithms::db::table::Owner;
use postgres::{Client, SimpleQueryMessage};

use super::db::{lock_name, Failure, Recipe, Session};
use super::postgres::connect;

/// The tables the recipes use, created by the backend before the run (idempotent).
pub const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS int_lock (\
lock_key varchar(64) NOT NULL, region varchar(100) NOT NULL, client_id varchar(36) NOT NULL, \
created_date bigint NOT NULL, PRIMARY KEY (lock_key, region)); \
CREATE TABLE IF NOT EXISTS shedlock (\
name varchar(64) NOT NULL PRIMARY KEY, lock_until bigint NOT NULL, locked_at bigint NOT NULL, \
locked_by varchar(255) NOT NULL)";

/// The server's clock in nanoseconds since the Unix epoch (`usingDbTime()`'s now: ShedLock's
/// `timezone('utc', CURRENT_TIMESTAMP)`).
const DB_NOW_NS: &str = "(extract(epoch from timezone('utc', CURRENT_TIMESTAMP)) * 1000000000)::bigint";

/// SQLSTATE 23505, `unique_violation`: the row exists.
const UNIQUE_VIOLATION: &str = "23505";
/// SQLSTATE 40001 `serialization_failure` and 40P01 `deadlock_detected`: the transaction was
/// rolled back for a conflict; Spring retries both as transient, as it does MariaDB's 1213.
const CONFLICTS: [&str; 2] = ["40001", "40P01"];

/// A PostgreSQL connection of the `postgres` crate.
pub struct PgSession(Client);

/// How a failed statement reads: a server error with its SQLSTATE on a live connection, or the
/// connection gone.
fn sqlstate(client: &Client, e: &postgres::Error) -> Result<String, Failure> {
    match e.as_db_error() {
        Some(db) if !client.is_closed() => Ok(db.code().code().to_string()),
        _ => Err(Failure::Connection),
    }
}

/// The rows the last statement of `messages` matched (`CommandComplete`).
fn rows(messages: &[SimpleQueryMessage]) -> u64 {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(0)
}

/// An owner id as the text column holds it.
fn owner_text(owner: Owner) -> String {
    format!("'{owner}'")
}

/// An UPDATE's answer: the rows it matched (PostgreSQL counts a matched row even when nothing
/// in it changes, as `CLIENT_FOUND_ROWS` does on MariaDB).
fn updated(rows: u64) -> Outcome {
    let rows = rows.min(1) as u32;
    Outcome::Updated { rows, id: 0, count: rows }
}

impl PgSession {
    /// One simple query; a server error is [`Failure::Unexpected`] unless the caller reads it.
    fn query(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Failure> {
        self.0.simple_query(sql).map_err(|e| match sqlstate(&self.0, &e) {
            Ok(code) => Failure::Unexpected(format!("SQLSTATE {code}: {e}")),
            Err(f) => f,
        })
    }

    /// Spring's acquire transaction: the UPDATE, and the INSERT when it matched nothing.
    fn claim(&mut self, name: &str, owner: Owner, stamp_ns: i64, expired_before_ns: i64) -> Result<Outcome, Failure> {
        let who = owner_text(owner);
        let update = format!(
            "BEGIN; UPDATE int_lock SET client_id = {who}, created_date = {stamp_ns} WHERE region = 'DEFAULT' \
AND lock_key = '{name}' AND (client_id = {who} OR created_date < {expired_before_ns})"
        );
        let insert = format!(
            "INSERT INTO int_lock (lock_key, region, client_id, created_date) VALUES ('{name}', 'DEFAULT', {who}, {stamp_ns})"
        );
        let outcome = match self.0.simple_query(&update) {
            Ok(m) if rows(&m) > 0 => Outcome::Updated { rows: 1, id: 0, count: 1 },
            Ok(_) => match self.0.simple_query(&insert) {
                Ok(_) => Outcome::Inserted { id: 0 },
                Err(e) => return self.end_failed(e),
            },
            Err(e) => return self.end_failed(e),
        };
        self.query("COMMIT")?;
        Ok(outcome)
    }

    /// The acquire transaction failed on `e`: roll it back and answer the conflict it was.
    fn end_failed(&mut self, e: postgres::Error) -> Result<Outcome, Failure> {
        let code = sqlstate(&self.0, &e)?;
        self.query("ROLLBACK")?;
        if code == UNIQUE_VIOLATION {
            Ok(Outcome::Duplicate)
        } else if CONFLICTS.contains(&code.as_str()) {
            Ok(Outcome::LockWaitTimeout)
        } else {
            Err(Failure::Unexpected(format!("SQLSTATE {code}: {e}")))
        }
    }

    /// ShedLock's lock statement on PostgreSQL: the upsert (a process's first try) or the UPDATE.
    fn shed_lock(&mut self, name: &str, owner: Owner, insert: bool, time: ShedTime) -> Result<Outcome, Failure> {
        let who = owner_text(owner);
        let (until, now) = match time {
            ShedTime::Node { lock_until_ns, now_ns } => (lock_until_ns.to_string(), now_ns.to_string()),
            ShedTime::Db { at_most_ns } => (format!("{DB_NOW_NS} + {at_most_ns}"), DB_NOW_NS.to_string()),
        };
        let set = format!("SET lock_until = {until}, locked_at = {now}, locked_by = {who}");
        if insert {
            let sql = format!(
                "INSERT INTO shedlock (name, lock_until, locked_at, locked_by) VALUES ('{name}', {until}, {now}, {who}) \
ON CONFLICT (name) DO UPDATE {set} WHERE shedlock.name = '{name}' AND shedlock.lock_until <= {now}"
            );
            let matched = rows(&self.query(&sql)?) > 0;
            return Ok(if matched { Outcome::Inserted { id: 0 } } else { Outcome::Duplicate });
        }
        let sql = format!("UPDATE shedlock {set} WHERE name = '{name}' AND lock_until <= {now}");
        Ok(updated(rows(&self.query(&sql)?)))
    }

    /// ShedLock's unlock: `lock_until` to the node's time, or the server's `max(locked_at +
    /// lockAtLeastFor, now)`, on the caller's row (7.0) or the name's.
    fn shed_unlock(
        &mut self,
        name: &str,
        owner: Owner,
        by_owner: bool,
        time: ShedUnlockTime,
    ) -> Result<Outcome, Failure> {
        let until = match time {
            ShedUnlockTime::Node { unlock_ns } => unlock_ns.to_string(),
            ShedUnlockTime::Db { at_least_ns } => format!(
                "CASE WHEN locked_at + {at_least_ns} > {DB_NOW_NS} THEN locked_at + {at_least_ns} ELSE {DB_NOW_NS} END"
            ),
        };
        let cond = if by_owner { format!(" AND locked_by = {}", owner_text(owner)) } else { String::new() };
        let sql = format!("UPDATE shedlock SET lock_until = {until} WHERE name = '{name}'{cond}");
        Ok(updated(rows(&self.query(&sql)?)))
    }
}

impl Session for PgSession {
    fn open(addr: &str) -> Result<Self, String> {
        connect(addr).map(PgSession)
    }

    fn run(&mut self, stmt: Stmt, _reentrant: bool, recipe: Recipe) -> Result<Outcome, Failure> {
        match stmt {
            Stmt::Claim { key, owner, stamp_ns, expired_before_ns } => {
                self.claim(&lock_name(key), owner, stamp_ns, expired_before_ns)
            }
            Stmt::Release { key, owner } if recipe == Recipe::SpringJdbc => {
                let sql = format!(
                    "DELETE FROM int_lock WHERE region = 'DEFAULT' AND lock_key = '{}' AND client_id = {}",
                    lock_name(key),
                    owner_text(owner)
                );
                let deleted = rows(&self.query(&sql)?) > 0;
                Ok(Outcome::Released { left: deleted.then_some(0) })
            }
            Stmt::ShedLock { key, owner, insert, time } => self.shed_lock(&lock_name(key), owner, insert, time),
            Stmt::ShedUnlock { key, owner, by_owner, time } => self.shed_unlock(&lock_name(key), owner, by_owner, time),
            // The model refuses database = "postgres" for these modes (they are MySQL's).
            other => Err(Failure::Unexpected(format!("{other:?} is not run on PostgreSQL"))),
        }
    }
}
