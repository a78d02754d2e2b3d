//! PgBouncer 1.18 between the clients and the primary (doc/config.md of tag pgbouncer_1_18_0).
//!
//! - `pool_mode = session` (line 90): a client connection gets a server connection at its first
//!   statement and keeps it until it disconnects; then `server_reset_query` (`DISCARD ALL`,
//!   which runs `pg_advisory_unlock_all()`) cleans it and it goes back to the pool.
//! - `pool_mode = transaction` (line 94): a client connection gets a server connection for one
//!   transaction (one statement in autocommit) and gives it back when `ReadyForQuery` says idle.
//!   No reset query runs (`server_reset_query_always = 0`, line 442), so a session-level advisory
//!   lock stays on the server connection, whichever client gets it next.
//! - Idle server connections are reused last-in first-out (`server_round_robin = 0`, line 192);
//!   up to `default_pool_size` (20, line 127) are opened as needed; a client that finds none
//!   free waits in line.
//! - A client that disconnects while its server connection is inside a transaction or running a
//!   statement has that server connection closed (it is not clean); the server's session ends.
//! - PgBouncer answers keepalive probes; it runs no keepalive of its own towards the clients
//!   (`tcp_keepalive = 1` with the OS defaults would give up after 2 h 11 min, and in transaction
//!   mode a client's death frees nothing on the server anyway).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};

use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};

use super::locks::ConnId;
use super::protocol::{Outcome, PgMsg, PgTimer, Stmt, Termination};
use super::{Config, Pooler, Postgres};

mod fingerprint;

/// The high bits of PgBouncer's own server connection ids (clients use their index + 1).
const BOUNCER_CONN_BASE: ConnId = 0xb0b0 << 32;

/// A client connection.
#[derive(Clone, Debug)]
struct ClientConn {
    node: NodeId,
    /// The server connection (pool slot) it holds now.
    linked: Option<usize>,
    /// The statement waiting for a server connection.
    pending: Option<(u64, Stmt)>,
}

/// What a server connection is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Running {
    /// A client's statement: the client connection and its statement number.
    Client { conn: ConnId, id: u64 },
    /// The reset query, before the connection goes back to the pool.
    Reset,
}

/// A server connection of the pool.
#[derive(Clone, Debug)]
struct ServerConn {
    conn: ConnId,
    next_id: u64,
    established: bool,
    client: Option<ConnId>,
    running: Option<Running>,
    in_txn: bool,
}

/// What a crash wipes (everything: PgBouncer keeps nothing on disk).
#[derive(Clone, Debug, Default)]
struct Volatile {
    server: Option<NodeId>,
    clients: BTreeMap<ConnId, ClientConn>,
    pool: Vec<Option<ServerConn>>,
    /// Idle pool slots, the most recently released last (taken from the end: LIFO).
    idle: Vec<usize>,
    /// Client connections waiting for a server connection, in arrival order.
    waiting: VecDeque<ConnId>,
    next_seq: u64,
}

/// PgBouncer.
#[derive(Clone, Debug)]
pub struct Bouncer {
    cfg: Config,
    v: Volatile,
}

impl Bouncer {
    /// PgBouncer in front of `server-0`.
    pub fn new(cfg: Config) -> Bouncer {
        Bouncer::from_disk(cfg)
    }

    fn live_slots(&self) -> usize {
        self.v.pool.iter().filter(|s| s.is_some()).count()
    }

    /// An idle server connection (LIFO), a new one, or none.
    fn take_server(&mut self) -> Option<usize> {
        if let Some(slot) = self.v.idle.pop() {
            return Some(slot);
        }
        if self.live_slots() >= self.cfg.pool_size {
            return None;
        }
        self.v.next_seq += 1;
        let conn = BOUNCER_CONN_BASE | self.v.next_seq;
        let sc = ServerConn { conn, next_id: 1, established: false, client: None, running: None, in_txn: false };
        match self.v.pool.iter().position(|s| s.is_none()) {
            Some(slot) => {
                self.v.pool[slot] = Some(sc);
                Some(slot)
            }
            None => {
                self.v.pool.push(Some(sc));
                Some(self.v.pool.len() - 1)
            }
        }
    }

    fn dispatch(&mut self, ctx: &mut Ctx<Postgres>, cconn: ConnId) {
        let Some(c) = self.v.clients.get(&cconn) else { return };
        if c.pending.is_none() {
            return;
        }
        let slot = match c.linked {
            Some(slot) => slot,
            None => match self.take_server() {
                Some(slot) => slot,
                None => {
                    if !self.v.waiting.contains(&cconn) {
                        self.v.waiting.push_back(cconn);
                    }
                    return;
                }
            },
        };
        let Some(server) = self.v.server else { return };
        let c = self.v.clients.get_mut(&cconn).expect("client");
        let (id, stmt) = c.pending.take().expect("pending");
        c.linked = Some(slot);
        let s = self.v.pool[slot].as_mut().expect("live slot");
        s.client = Some(cconn);
        s.running = Some(Running::Client { conn: cconn, id });
        let (conn, sid, first) = (s.conn, s.next_id, !s.established);
        s.next_id += 1;
        ctx.note(|| format!("client conn {cconn:x} → server conn {conn:x}"));
        ctx.send(server, PgMsg::Query { conn, first, id: sid, stmt });
    }

    /// Serves the clients waiting for a server connection while there are free ones.
    fn serve_waiting(&mut self, ctx: &mut Ctx<Postgres>) {
        while !self.v.waiting.is_empty() && (!self.v.idle.is_empty() || self.live_slots() < self.cfg.pool_size) {
            let cconn = self.v.waiting.pop_front().expect("non-empty");
            self.dispatch(ctx, cconn);
        }
    }

    fn back_to_pool(&mut self, ctx: &mut Ctx<Postgres>, slot: usize) {
        if let Some(s) = self.v.pool[slot].as_mut() {
            s.client = None;
            self.v.idle.push(slot);
        }
        self.serve_waiting(ctx);
    }

    /// Server connection `slot` is gone: tell its client, whose transaction went with it.
    fn drop_server(&mut self, ctx: &mut Ctx<Postgres>, slot: usize) {
        let Some(s) = self.v.pool[slot].take() else { return };
        self.v.idle.retain(|&i| i != slot);
        if let Some(cconn) = s.client {
            if let Some(c) = self.v.clients.remove(&cconn) {
                ctx.send(c.node, PgMsg::Terminated { conn: cconn, why: Termination::ServerClosed });
            }
        }
    }

    fn on_reply(&mut self, ctx: &mut Ctx<Postgres>, conn: ConnId, outcome: Outcome, in_txn: bool) {
        let Some(slot) = self.v.pool.iter().position(|s| s.as_ref().is_some_and(|s| s.conn == conn)) else { return };
        let s = self.v.pool[slot].as_mut().expect("live slot");
        s.established = true;
        s.in_txn = in_txn;
        let running = s.running.take();
        if matches!(outcome, Outcome::Gone | Outcome::ReadOnly | Outcome::Starting) {
            self.drop_server(ctx, slot);
            self.serve_waiting(ctx);
            return;
        }
        match running {
            Some(Running::Client { conn: cconn, id }) => {
                if let Some(c) = self.v.clients.get(&cconn) {
                    ctx.send(c.node, PgMsg::Reply { conn: cconn, id, outcome, in_txn });
                }
                let release = self.cfg.pooler == Pooler::Transaction && !in_txn;
                if release {
                    if let Some(c) = self.v.clients.get_mut(&cconn) {
                        c.linked = None;
                    }
                    self.back_to_pool(ctx, slot);
                }
                self.dispatch(ctx, cconn);
            }
            Some(Running::Reset) => self.back_to_pool(ctx, slot),
            None => {}
        }
    }

    /// Client connection `cconn` is gone (closed or reset).
    fn client_gone(&mut self, ctx: &mut Ctx<Postgres>, cconn: ConnId) {
        let Some(c) = self.v.clients.remove(&cconn) else { return };
        self.v.waiting.retain(|&w| w != cconn);
        let Some(slot) = c.linked else { return };
        let Some(server) = self.v.server else { return };
        let s = self.v.pool[slot].as_mut().expect("live slot");
        if s.running.is_some() || s.in_txn {
            // Not clean: close it, and the server rolls its transaction back.
            let conn = s.conn;
            self.v.pool[slot] = None;
            ctx.send(server, PgMsg::Close { conn });
            ctx.note(|| format!("client conn {cconn:x} left mid-transaction: server conn {conn:x} closed"));
            self.serve_waiting(ctx);
        } else if self.cfg.pooler == Pooler::Session {
            s.client = None;
            s.running = Some(Running::Reset);
            let (conn, id) = (s.conn, s.next_id);
            s.next_id += 1;
            ctx.send(server, PgMsg::Query { conn, first: false, id, stmt: Stmt::DiscardAll });
        } else {
            self.back_to_pool(ctx, slot);
        }
    }
}

impl Durable for Bouncer {
    /// PgBouncer keeps nothing on disk but its configuration.
    type Disk = Config;
    fn into_disk(self, _crash: &Crash) -> Config {
        self.cfg
    }
    fn from_disk(cfg: Config) -> Self {
        Bouncer { cfg, v: Volatile::default() }
    }
}

impl Process<Postgres> for Bouncer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Postgres>) {
        self.v.server = ctx.node_named("server-0");
    }

    fn on_message(&mut self, ctx: &mut Ctx<Postgres>, from: NodeId, msg: PgMsg) {
        match msg {
            PgMsg::Query { conn, first, id, stmt } => {
                match self.v.clients.entry(conn) {
                    Entry::Occupied(mut c) => c.get_mut().pending = Some((id, stmt)),
                    Entry::Vacant(_) if !first => {
                        ctx.send(from, PgMsg::Reply { conn, id, outcome: Outcome::Gone, in_txn: false });
                        return;
                    }
                    Entry::Vacant(v) => {
                        v.insert(ClientConn { node: from, linked: None, pending: Some((id, stmt)) });
                        // PgBouncer authenticates the client itself, before any server connection.
                        ctx.send(from, PgMsg::Ready { conn });
                    }
                }
                self.dispatch(ctx, conn);
            }
            PgMsg::Reply { conn, outcome, in_txn, .. } => self.on_reply(ctx, conn, outcome, in_txn),
            PgMsg::Ready { conn } => {
                if let Some(s) = self.v.pool.iter_mut().flatten().find(|s| s.conn == conn) {
                    s.established = true;
                }
            }
            PgMsg::Close { conn } => self.client_gone(ctx, conn),
            PgMsg::Terminated { conn, .. } => {
                if let Some(slot) = self.v.pool.iter().position(|s| s.as_ref().is_some_and(|s| s.conn == conn)) {
                    self.drop_server(ctx, slot);
                    self.serve_waiting(ctx);
                }
            }
            PgMsg::Probe { conn } => ctx.send(from, PgMsg::ProbeAck { conn }),
            _ => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<Postgres>, _timer: TimerId, _tag: PgTimer) {}

    fn on_reset(&mut self, ctx: &mut Ctx<Postgres>, peer: NodeId) {
        if Some(peer) == self.v.server {
            // The server's process died: every server connection with it.
            for slot in 0..self.v.pool.len() {
                self.drop_server(ctx, slot);
            }
            self.v.pool.clear();
            self.v.idle.clear();
            return;
        }
        let gone: Vec<ConnId> = self.v.clients.iter().filter(|(_, c)| c.node == peer).map(|(&id, _)| id).collect();
        for cconn in gone {
            self.client_gone(ctx, cconn);
        }
    }
}
