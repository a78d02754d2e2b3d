//! The `postgres` model's statements on a real PostgreSQL server (or PgBouncer in front of it),
//! through the `postgres` crate (synchronous).
//!
//! Each model connection is one real connection run by its own thread, so a blocking
//! `pg_advisory_lock` holds up only its own connection, as in the model. Every statement goes as
//! a simple query (one `Query` message): the extended protocol's separate prepare would be one
//! transaction and its execution another, which PgBouncer's transaction pooling may send to two
//! server connections. Keys are integers, written into the text.
//!
//! | model statement | SQL | model answer |
//! |---|---|---|
//! | `Lock` | `SELECT pg_advisory_lock(k)` | `Done` |
//! | `TryLock` | `SELECT pg_try_advisory_lock(k)` | `Bool` |
//! | `Unlock` | `SELECT pg_advisory_unlock(k)` | `Bool` (false: the server's warning) |
//! | `XactLock` | `BEGIN; SELECT pg_advisory_xact_lock(k)` | `Done`, in a transaction |
//! | `TryXactLock` | `BEGIN; SELECT pg_try_advisory_xact_lock(k)` | `Bool`, in a transaction |
//! | `Bump` | `INSERT INTO lock_fence VALUES (k, 1) ON CONFLICT (key) DO UPDATE SET generation = lock_fence.generation + 1 RETURNING generation` | `Generation` |
//! | `Commit`, `Rollback` | `COMMIT`, `ROLLBACK` | `Done`, idle |
//!
//! The connection's startup answers `Ready`; a connection that fails (refused, reset, closed by
//! the server: a kill, `idle_session_timeout`'s FATAL) is an [`Inbound::Reset`], the library's
//! `on_reset`. TCP keepalive is the real kernels'; the model's probe messages never reach here.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use locksim_algorithms::postgres::locks::ConnId;
use locksim_algorithms::postgres::protocol::{Outcome, PgMsg, Stmt};
use locksim_simulator::process::NodeId;
use postgres::{Client, NoTls, SimpleQueryMessage};

use super::{deliver, reset, Adapter, Inbound};

/// The user and database the backend's throwaway cluster has (trust authentication, loopback).
pub const USER: &str = "postgres";

/// How the library connects to `addr` (`127.0.0.1:port`), with a 1 s connect timeout.
pub fn connect(addr: &str) -> Result<Client, String> {
    let (host, port) = addr.rsplit_once(':').ok_or_else(|| format!("bad address {addr}"))?;
    let mut config = postgres::Config::new();
    config.host(host).port(port.parse().map_err(|_| format!("bad port in {addr}"))?);
    config.user(USER).dbname(USER).connect_timeout(Duration::from_secs(1));
    config.connect(NoTls).map_err(|e| e.to_string())
}

/// The first column of the first row a simple query returned (`""` for a void result).
fn first_value(messages: &[SimpleQueryMessage]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => Some(row.get(0).unwrap_or("").to_string()),
        _ => None,
    })
}

/// Runs `stmt`; the answer and whether the session is left inside a transaction.
fn run(client: &mut Client, stmt: Stmt, in_txn: bool) -> Result<(Outcome, bool), postgres::Error> {
    let boolean = |v: Option<String>| Outcome::Bool(v.as_deref() == Some("t"));
    Ok(match stmt {
        Stmt::Lock { key } => {
            client.simple_query(&format!("SELECT pg_advisory_lock({key})"))?;
            (Outcome::Done, in_txn)
        }
        Stmt::TryLock { key } => {
            (boolean(first_value(&client.simple_query(&format!("SELECT pg_try_advisory_lock({key})"))?)), in_txn)
        }
        Stmt::Unlock { key } => {
            (boolean(first_value(&client.simple_query(&format!("SELECT pg_advisory_unlock({key})"))?)), in_txn)
        }
        Stmt::XactLock { key } => {
            client.simple_query(&format!("BEGIN; SELECT pg_advisory_xact_lock({key})"))?;
            (Outcome::Done, true)
        }
        Stmt::TryXactLock { key } => {
            let q = format!("BEGIN; SELECT pg_try_advisory_xact_lock({key})");
            (boolean(first_value(&client.simple_query(&q)?)), true)
        }
        Stmt::Bump { key } => {
            let q = format!(
                "INSERT INTO lock_fence VALUES ({key}, 1) ON CONFLICT (key) DO UPDATE SET generation = lock_fence.generation + 1 RETURNING generation"
            );
            let generation = first_value(&client.simple_query(&q)?).and_then(|v| v.parse().ok()).unwrap_or(0);
            (Outcome::Generation(generation), in_txn)
        }
        Stmt::Commit | Stmt::Rollback | Stmt::DiscardAll => {
            let q = match stmt {
                Stmt::Commit => "COMMIT",
                Stmt::Rollback => "ROLLBACK",
                _ => "DISCARD ALL",
            };
            client.simple_query(q)?;
            (Outcome::Done, false)
        }
    })
}

enum Job {
    Stmt { id: u64, stmt: Stmt },
    Close,
}

fn connection(peer: NodeId, addr: String, conn: ConnId, rx: Receiver<Job>, tx: Sender<Inbound<PgMsg>>) {
    let mut client = match connect(&addr) {
        Ok(c) => c,
        Err(_) => {
            reset(&tx, peer);
            return;
        }
    };
    deliver(&tx, peer, PgMsg::Ready { conn });
    let mut in_txn = false;
    for job in rx {
        let Job::Stmt { id, stmt } = job else { return };
        match run(&mut client, stmt, in_txn) {
            Ok((outcome, txn)) => {
                in_txn = txn;
                deliver(&tx, peer, PgMsg::Reply { conn, id, outcome, in_txn });
            }
            Err(e) if e.as_db_error().is_some() && !client.is_closed() => {
                // A server error the model has no answer for: as a lost session.
                eprintln!("postgres adapter: {stmt:?} on connection {conn:x}: {e}: answered as a lost session");
                deliver(&tx, peer, PgMsg::Reply { conn, id, outcome: Outcome::Gone, in_txn: false });
            }
            Err(_) => {
                // Refused, reset or closed by the server (a FATAL ends the session).
                reset(&tx, peer);
                return;
            }
        }
    }
}

/// The model's connections as real ones.
pub struct PgAdapter {
    servers: BTreeMap<NodeId, String>,
    links: BTreeMap<ConnId, Sender<Job>>,
    tx: Sender<Inbound<PgMsg>>,
    sent: u64,
}

impl PgAdapter {
    /// An adapter for a client whose servers are at these addresses.
    pub fn new(servers: &[(NodeId, String)], tx: &Sender<Inbound<PgMsg>>) -> PgAdapter {
        PgAdapter { servers: servers.iter().cloned().collect(), links: BTreeMap::new(), tx: tx.clone(), sent: 0 }
    }
}

impl Adapter<PgMsg> for PgAdapter {
    fn send(&mut self, to: NodeId, msg: PgMsg) {
        match msg {
            PgMsg::Query { conn, first, id, stmt } => {
                self.sent += 1;
                if let Some(jobs) = self.links.get(&conn) {
                    let _ = jobs.send(Job::Stmt { id, stmt });
                    return;
                }
                let Some(addr) = self.servers.get(&to).cloned() else { return };
                if !first {
                    reset(&self.tx, to); // a connection this process never opened
                    return;
                }
                let (jobs, rx) = mpsc::channel();
                let t = self.tx.clone();
                std::thread::spawn(move || connection(to, addr, conn, rx, t));
                let _ = jobs.send(Job::Stmt { id, stmt });
                self.links.insert(conn, jobs);
            }
            PgMsg::Close { conn } => {
                if let Some(jobs) = self.links.remove(&conn) {
                    let _ = jobs.send(Job::Close);
                }
            }
            // Keepalive is the kernels' job here; nothing else goes from a client to a server.
            _ => {}
        }
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}
