//! The postgres model's protocol: statements and their results on a connection (the frontend/
//! backend protocol, client ↔ PgBouncer ↔ server alike), the kernel's TCP keepalive probes, WAL
//! shipping to the standby and the restart probe; and every timer. The `Debug` text is what the
//! trace prints, so a statement reads as its SQL.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::Protocol;

use super::locks::ConnId;
use super::Postgres;

impl Protocol for Postgres {
    type Msg = PgMsg;
    type Timer = PgTimer;
    fn msg_fingerprint(msg: &PgMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &PgTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

/// A statement (a simple-query message; the `BEGIN; …` ones are sent as one query string).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    /// `SELECT pg_advisory_lock(k)`: blocks until granted.
    Lock {
        /// The lock's key.
        key: LockKey,
    },
    /// `SELECT pg_try_advisory_lock(k)`: true or false at once.
    TryLock {
        /// The lock's key.
        key: LockKey,
    },
    /// `SELECT pg_advisory_unlock(k)`: true, or false with a warning when not held by the session.
    Unlock {
        /// The lock's key.
        key: LockKey,
    },
    /// `BEGIN; SELECT pg_advisory_xact_lock(k)`: blocks; the transaction stays open.
    XactLock {
        /// The lock's key.
        key: LockKey,
    },
    /// `BEGIN; SELECT pg_try_advisory_xact_lock(k)`: the transaction stays open either way.
    TryXactLock {
        /// The lock's key.
        key: LockKey,
    },
    /// `UPDATE lock_fence SET generation = generation + 1 WHERE key = k RETURNING generation`
    /// (in the open transaction if there is one, else committed at once).
    Bump {
        /// The lock's key.
        key: LockKey,
    },
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// `DISCARD ALL` (PgBouncer's `server_reset_query`): includes `pg_advisory_unlock_all()`.
    DiscardAll,
}

impl fmt::Debug for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stmt::Lock { key } => write!(f, "SELECT pg_advisory_lock({key})"),
            Stmt::TryLock { key } => write!(f, "SELECT pg_try_advisory_lock({key})"),
            Stmt::Unlock { key } => write!(f, "SELECT pg_advisory_unlock({key})"),
            Stmt::XactLock { key } => write!(f, "BEGIN; SELECT pg_advisory_xact_lock({key})"),
            Stmt::TryXactLock { key } => write!(f, "BEGIN; SELECT pg_try_advisory_xact_lock({key})"),
            Stmt::Bump { key } => write!(f, "UPDATE lock_fence SET generation + 1 WHERE key = {key}"),
            Stmt::Commit => write!(f, "COMMIT"),
            Stmt::Rollback => write!(f, "ROLLBACK"),
            Stmt::DiscardAll => write!(f, "DISCARD ALL"),
        }
    }
}

/// What a statement returned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A boolean result (`pg_try_advisory_lock`, `pg_advisory_unlock`).
    Bool(bool),
    /// A void result, or a command's completion (`COMMIT`, a granted blocking lock).
    Done,
    /// The generation `RETURNING` gave.
    Generation(u64),
    /// The server is a standby (or a demoted primary): `target_session_attrs=read-write` refuses it.
    ReadOnly,
    /// The server is starting up (57P03) and accepts nothing yet.
    Starting,
    /// The server does not know this connection (it restarted, or ended the session).
    Gone,
}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Bool(b) => write!(f, "{}", if *b { "t" } else { "f" }),
            Outcome::Done => write!(f, "OK"),
            Outcome::Generation(g) => write!(f, "generation {g}"),
            Outcome::ReadOnly => write!(f, "read-only (in recovery)"),
            Outcome::Starting => write!(f, "FATAL 57P03 the database system is starting up"),
            Outcome::Gone => write!(f, "connection unknown (server closed the connection)"),
        }
    }
}

/// Why the server ended a session and closed its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// `idle_session_timeout`.
    IdleSession,
    /// `idle_in_transaction_session_timeout`.
    IdleInTransaction,
    /// PgBouncer lost the server connection the client was using.
    ServerClosed,
}

/// One WAL record the standby applies: a committed generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalRecord {
    /// Position in the WAL, from 1.
    pub lsn: u64,
    /// The key whose generation was committed.
    pub key: LockKey,
    /// The committed value.
    pub generation: u64,
}

/// Every message of the model.
#[derive(Clone, PartialEq, Eq)]
pub enum PgMsg {
    /// A statement on a connection; `first` opens it (the startup packet), `id` numbers the
    /// statements on it.
    Query {
        /// The connection.
        conn: ConnId,
        /// Whether this statement opens the connection.
        first: bool,
        /// The statement's number on the connection.
        id: u64,
        /// The statement.
        stmt: Stmt,
    },
    /// The startup finished (`AuthenticationOk` … `ReadyForQuery`): the connection is up, before
    /// the first statement's answer.
    Ready {
        /// The connection.
        conn: ConnId,
    },
    /// The result and `ReadyForQuery`'s transaction status.
    Reply {
        /// The connection.
        conn: ConnId,
        /// The answered statement's number.
        id: u64,
        /// The result.
        outcome: Outcome,
        /// `ReadyForQuery` says `T` (in a transaction) rather than `I` (idle).
        in_txn: bool,
    },
    /// The client closes the connection (Terminate, then FIN): the session ends.
    Close {
        /// The connection.
        conn: ConnId,
    },
    /// The server terminated the session (FATAL, then FIN).
    Terminated {
        /// The connection.
        conn: ConnId,
        /// Which timeout.
        why: Termination,
    },
    /// A TCP keepalive probe (sent by the server's kernel on a silent connection).
    Probe {
        /// The connection.
        conn: ConnId,
    },
    /// The peer kernel's ACK of a probe.
    ProbeAck {
        /// The connection.
        conn: ConnId,
    },
    /// Primary → standby: WAL records, in order.
    Wal {
        /// The records.
        records: Vec<WalRecord>,
    },
    /// Primary → standby, every second: alive, on this timeline, WAL written up to `lsn`.
    WalKeepalive {
        /// The primary's timeline.
        timeline: u64,
        /// The last WAL position written.
        lsn: u64,
    },
    /// Standby → primary: resend from this position.
    WalResend {
        /// The first position the standby lacks.
        from: u64,
    },
    /// A restarted former primary asks the other server what it is.
    WhoIsPrimary,
    /// The answer.
    Role {
        /// The server answering is the primary.
        primary: bool,
        /// Its timeline.
        timeline: u64,
    },
}

impl fmt::Debug for PgMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgMsg::Query { conn, first, id, stmt } => {
                write!(f, "{stmt:?} [conn {conn:x}#{id}{}]", if *first { " connect" } else { "" })
            }
            PgMsg::Reply { conn, id, outcome, in_txn } => {
                write!(f, "{outcome:?} [conn {conn:x}#{id}{}]", if *in_txn { " in txn" } else { "" })
            }
            PgMsg::Ready { conn } => write!(f, "connected conn {conn:x}"),
            PgMsg::Close { conn } => write!(f, "close conn {conn:x}"),
            PgMsg::Terminated { conn, why } => write!(f, "FATAL terminating conn {conn:x}: {why:?}"),
            PgMsg::Probe { conn } => write!(f, "keepalive probe conn {conn:x}"),
            PgMsg::ProbeAck { conn } => write!(f, "keepalive ack conn {conn:x}"),
            PgMsg::Wal { records } => match records.as_slice() {
                [one] => write!(f, "WAL #{} k{}={}", one.lsn, one.key, one.generation),
                [first, .., last] => write!(f, "WAL #{}..#{}", first.lsn, last.lsn),
                [] => write!(f, "WAL (empty)"),
            },
            PgMsg::WalKeepalive { timeline, lsn } => write!(f, "WAL keepalive tl{timeline} at #{lsn}"),
            PgMsg::WalResend { from } => write!(f, "WAL resend from #{from}"),
            PgMsg::WhoIsPrimary => write!(f, "who is primary?"),
            PgMsg::Role { primary, timeline } => {
                write!(f, "{} tl{timeline}", if *primary { "primary" } else { "not primary" })
            }
        }
    }
}

/// A PostgreSQL server's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// Check `conn`'s keepalive: probe, or give up.
    Keepalive {
        /// The connection.
        conn: ConnId,
    },
    /// `conn` has been idle for its idle timeout.
    Idle {
        /// The connection.
        conn: ConnId,
    },
    /// The oldest queued WAL record is due at the standby.
    Ship,
    /// Primary: the next WAL keepalive; standby: the next check for a silent primary; a
    /// restarted former primary: ask again.
    Beat,
}

/// The client library's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The `poll_ms` sleep after a `try` that returned false is over.
    Poll {
        /// The lock to try again.
        key: LockKey,
    },
    /// Every host refused the connection: try them again.
    Reconnect,
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the model.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum PgTimer: Fingerprint {
        /// A PostgreSQL server's timer.
        Server(ServerTimer),
        /// The client library's timer.
        Client(ClientTimer),
    }
}
