//! The client's session and connection: ZooKeeper's `ClientCnxn` under Curator's
//! `ConnectionStateManager`. It connects to one server of the ensemble at a time, keeps the
//! session alive with pings, notices a dead connection by its read timeout, moves to another
//! server, and reports Curator's connection states; the recipes above it only issue operations
//! and get replies, failures and watch events back.
//!
//! What it follows:
//! - `ClientCnxn`: the server list is shuffled once (`StaticHostProvider`); a ping goes out when
//!   nothing was sent for a third of the negotiated timeout; no reply for 2/3 of it loses the
//!   connection; each connect attempt gets `timeout / servers`; after a failure the client sleeps
//!   a random 0–1000 ms before the next attempt and 1 s more after trying every server
//!   (`spinDelay`); outstanding requests fail with CONNECTIONLOSS when the connection goes; a
//!   reconnect presents the session id and the last zxid seen, and learns only then that the
//!   session expired (the server answers with timeout 0).
//! - Curator `ConnectionStateManager`: SUSPENDED when the connection is lost, RECONNECTED when a
//!   connection is re-established, LOST when the server says the session expired or when
//!   SUSPENDED has lasted a whole negotiated timeout (`checkSessionExpiration` injects an
//!   expiration); after LOST a new ZooKeeper handle opens a new session.
//! - Curator's `RetryLoop`: an operation issued while disconnected waits for the connection up
//!   to `connectionTimeoutMs` (15 s by default) and then fails with connection loss; the caller's
//!   retry policy decides what next.
//!
//! Links are TCP connections: the model declares ordered links, and the server answers a
//! request on a connection it does not know (it restarted, or closed it) with a disconnect, as
//! a reset connection would. A server whose process is killed resets the connection (the
//! engine's `on_reset`): the client drops it at once and reconnects elsewhere. A server whose
//! host is lost or frozen sends nothing: the client notices through its read timeout. The simulated network may drop a single message,
//! which TCP never lets through silently: both ends number their messages on a connection and a
//! gap breaks the connection (noticed at the next message, a ping at the latest), where real
//! TCP would usually retransmit within a fraction of a second.

use crate::smallmap::SmallMap;

use rand::Rng;

use locksim_simulator::process::{Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_MS};

use super::protocol::{
    ConnTimer, ConnectRequest, ConnectResponse, ErrCode, Op, Outcome, Request, Response, SessionId, WatchEvent, ZkMsg,
    Zxid,
};
use super::session::ClientTiming;
use super::ZooKeeper;

mod fingerprint;

/// Curator's `connectionTimeoutMs` default: how long an operation waits for a connection (the
/// `connection_timeout_ms` parameter's default).
pub const CONNECTION_TIMEOUT_MS: u64 = 15_000;
/// `ClientCnxn`: the random sleep before a reconnect attempt is below this (ZooKeeper 3.8
/// `ClientCnxn.SendThread.startConnect`: `if (!isFirstConnect) Thread.sleep(
/// ThreadLocalRandom.current().nextLong(1000))`; releases before 3.6 wrote `r.nextInt(1000)`).
const RECONNECT_SLEEP_MAX_MS: u64 = 1000;
/// `StaticHostProvider`'s spin delay after every server has been tried once.
const SPIN_DELAY_MS: u64 = 1000;

/// Who an operation's answer goes to (opaque to this layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tag(pub u64);

/// Why an operation failed without an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The connection went (or none came within the connection timeout) before the answer.
    ConnectionLoss,
    /// The session is gone.
    SessionExpired,
}

/// What the layer tells the recipes.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnEvent {
    /// An operation's answer.
    Reply {
        /// The operation's tag.
        tag: Tag,
        /// What it got.
        outcome: Outcome,
    },
    /// An operation failed without an answer.
    Failed {
        /// The operation's tag.
        tag: Tag,
        /// Why.
        err: CallError,
    },
    /// A watch fired.
    Watch(WatchEvent),
    /// The ZooKeeper connection dropped (every watcher gets a `Disconnected` state event).
    Disconnected,
    /// Curator SUSPENDED.
    Suspended,
    /// Curator CONNECTED (first session) or RECONNECTED; `new_session` after LOST or expiry.
    Connected {
        /// Whether the session is a new one.
        new_session: bool,
    },
    /// Curator LOST: the session is gone (or given up on).
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// Not connected; a reconnect timer may be armed.
    Down,
    Connecting {
        server: usize,
    },
    Up {
        server: usize,
    },
}

/// Curator's connection state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuratorState {
    /// Not connected yet: before the first connection.
    Latent,
    /// CONNECTED or RECONNECTED.
    Connected,
    /// SUSPENDED: the connection is lost; the session may still live.
    Suspended,
    /// LOST: the session expired or was given up on (a new one is being opened).
    Lost,
}

/// The client's ZooKeeper handle and Curator connection state.
#[derive(Clone, Debug)]
pub struct Connection {
    server_names: Vec<String>,
    servers: Vec<NodeId>,
    requested_timeout_ms: u64,
    /// How long an operation issued while disconnected waits for a connection.
    connection_timeout_ms: u64,
    timing: ClientTiming,
    /// Index into `servers` of the current or last server.
    cur: usize,
    /// Servers tried since the last successful connection (for the spin delay).
    tried: usize,
    link: Link,
    session: SessionId,
    last_zxid: Zxid,
    attempt: u64,
    last_send_ns: Nanos,
    last_recv_ns: Nanos,
    next_xid: u64,
    /// Messages sent / received on the current connection (see [`Request`]).
    send_seq: u64,
    recv_seq: u64,
    inflight: SmallMap<u64, Tag>,
    /// Operations waiting for a connection: (serial, tag, op).
    queued: Vec<(u64, Tag, Op)>,
    next_serial: u64,
    curator: CuratorState,
    suspended_gen: u64,
    conn_timer: Option<(TimerId, Nanos)>,
    /// `ClientCnxnSocketNIO.cleanup()`'s sleep after a lost connection, before the next connect
    /// (0: none).
    cleanup_sleep_ms: u64,
}

impl Connection {
    /// A handle on the ensemble `server_names` asking for a session timeout of
    /// `requested_timeout_ms`, whose operations wait up to `connection_timeout_ms` for a
    /// connection; it connects at [`Connection::start`].
    pub fn new(server_names: Vec<String>, requested_timeout_ms: u64, connection_timeout_ms: u64) -> Self {
        Connection {
            server_names,
            servers: Vec::new(),
            requested_timeout_ms,
            connection_timeout_ms,
            timing: ClientTiming::new(requested_timeout_ms),
            cur: 0,
            tried: 0,
            link: Link::Down,
            session: 0,
            last_zxid: 0,
            attempt: 0,
            last_send_ns: 0,
            last_recv_ns: 0,
            next_xid: 1,
            send_seq: 0,
            recv_seq: 0,
            inflight: SmallMap::new(),
            queued: Vec::new(),
            next_serial: 0,
            curator: CuratorState::Latent,
            suspended_gen: 0,
            conn_timer: None,
            cleanup_sleep_ms: 0,
        }
    }

    /// The ZooKeeper Java client's cleanup sleep: after a lost connection
    /// `ClientCnxnSocketNIO.cleanup()` closes the socket and sleeps 100 ms
    /// (`ClientCnxnSocketNIO.java:213-217 @release-3.7.1`, the same in 3.8.0) before the
    /// SendThread's loop tries the next server (`ClientCnxn.java:1303, 1328-1331`).
    pub fn with_cleanup_sleep_ms(mut self, ms: u64) -> Self {
        self.cleanup_sleep_ms = ms;
        self
    }

    /// The current session (0 before the first one and after one is lost).
    pub fn session(&self) -> SessionId {
        self.session
    }
    /// The Curator connection state.
    pub fn curator_state(&self) -> CuratorState {
        self.curator
    }
    /// Whether a connection is up.
    pub fn is_connected(&self) -> bool {
        matches!(self.link, Link::Up { .. })
    }
    /// The timing of the negotiated session timeout (of the requested one before the first
    /// connection).
    pub fn timing(&self) -> ClientTiming {
        self.timing
    }
    /// The server this client is connected to, if any.
    pub fn server(&self) -> Option<NodeId> {
        match self.link {
            Link::Up { server } => Some(self.servers[server]),
            _ => None,
        }
    }

    /// The client starts: shuffle the servers (`StaticHostProvider`) and connect to the first.
    pub fn start(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        self.servers = self
            .server_names
            .iter()
            .map(|n| ctx.node_named(n).unwrap_or_else(|| panic!("no node named {n}")))
            .collect();
        // Fisher-Yates with the node's own stream.
        for i in (1..self.servers.len()).rev() {
            let j = ctx.rng().gen_range(0..=i);
            self.servers.swap(i, j);
        }
        self.cur = 0;
        self.tried = 0;
        self.connect(ctx);
    }

    /// Issues an operation: sent now if connected, else it waits for a connection (up to
    /// Curator's connection timeout).
    pub fn call(&mut self, ctx: &mut Ctx<ZooKeeper>, tag: Tag, op: Op) {
        if self.is_connected() {
            self.send_request(ctx, tag, op);
        } else {
            let serial = self.next_serial;
            self.next_serial += 1;
            self.queued.push((serial, tag, op));
            ctx.set_timer(self.connection_timeout_ms * NS_PER_MS, ConnTimer::QueueDeadline { serial });
        }
    }

    fn send_request(&mut self, ctx: &mut Ctx<ZooKeeper>, tag: Tag, op: Op) {
        let Link::Up { server } = self.link else { unreachable!("send while not connected") };
        let xid = self.next_xid;
        self.next_xid += 1;
        self.inflight.insert(xid, tag);
        self.last_send_ns = ctx.now_mono_ns();
        self.send_seq += 1;
        ctx.send(self.servers[server], Request { session: self.session, xid, seq: self.send_seq, op });
    }

    /// Accepts the next message of the current connection by its number: a duplicate is
    /// dropped (false); a gap means a message was lost, which on a TCP connection means the
    /// connection broke.
    fn in_sequence(&mut self, ctx: &mut Ctx<ZooKeeper>, seq: u64, ev: &mut Vec<ConnEvent>) -> bool {
        if seq <= self.recv_seq {
            return false;
        }
        if seq > self.recv_seq + 1 {
            self.lose_connection(ctx, "a message on the connection was lost", ev);
            return false;
        }
        self.recv_seq = seq;
        true
    }

    fn connect(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        self.attempt += 1;
        let server = self.cur;
        self.link = Link::Connecting { server };
        self.tried += 1;
        let req = ConnectRequest {
            session: self.session,
            timeout_ms: self.requested_timeout_ms,
            last_zxid: self.last_zxid,
            attempt: self.attempt,
        };
        self.last_send_ns = ctx.now_mono_ns();
        ctx.send(self.servers[server], req);
        let budget = self.timing.connect_timeout_ns(self.servers.len());
        ctx.set_timer(budget, ConnTimer::ConnectTimeout { attempt: self.attempt });
    }

    /// After a failed attempt or a lost connection: sleep, then try the next server.
    fn schedule_reconnect(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        self.attempt += 1;
        self.link = Link::Down;
        self.cur = (self.cur + 1) % self.servers.len();
        let mut sleep_ms = self.cleanup_sleep_ms + ctx.rng().gen_range(0..RECONNECT_SLEEP_MAX_MS);
        if self.tried >= self.servers.len() {
            sleep_ms += SPIN_DELAY_MS;
            self.tried = 0;
        }
        ctx.note(|| format!("zk: reconnect in {sleep_ms} ms"));
        ctx.set_timer(sleep_ms * NS_PER_MS, ConnTimer::Reconnect { attempt: self.attempt });
    }

    fn arm_conn_check(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        let due =
            (self.last_send_ns + self.timing.ping_after_ns()).min(self.last_recv_ns + self.timing.read_timeout_ns());
        if let Some((_, at)) = self.conn_timer {
            if at <= due {
                return;
            }
        }
        if let Some((id, _)) = self.conn_timer.take() {
            ctx.cancel_timer(id);
        }
        let now = ctx.now_mono_ns();
        let id = ctx.set_timer(due.saturating_sub(now), ConnTimer::Check { attempt: self.attempt });
        self.conn_timer = Some((id, due));
    }

    /// The connection is gone (read timeout, a disconnect from the server, a refused or timed
    /// out connect): fail what was in flight, tell the watchers, go SUSPENDED, reconnect.
    fn lose_connection(&mut self, ctx: &mut Ctx<ZooKeeper>, why: &str, ev: &mut Vec<ConnEvent>) {
        let was_up = self.is_connected();
        if let Some((id, _)) = self.conn_timer.take() {
            ctx.cancel_timer(id);
        }
        ctx.note(|| format!("zk: connection lost ({why}), session {:x}", self.session));
        for (_, tag) in std::mem::take(&mut self.inflight) {
            ev.push(ConnEvent::Failed { tag, err: CallError::ConnectionLoss });
        }
        if was_up {
            ev.push(ConnEvent::Disconnected);
        }
        if self.curator == CuratorState::Connected {
            self.curator = CuratorState::Suspended;
            self.suspended_gen += 1;
            ev.push(ConnEvent::Suspended);
            ctx.note(|| "curator: SUSPENDED".to_string());
            ctx.set_timer(self.timing.lost_after_suspended_ns(), ConnTimer::Lost { suspended_gen: self.suspended_gen });
        }
        self.schedule_reconnect(ctx);
    }

    /// The session is gone (the server said so, or Curator gave up on it): LOST, and a new
    /// handle opens a new session.
    fn session_gone(&mut self, ctx: &mut Ctx<ZooKeeper>, ev: &mut Vec<ConnEvent>) {
        ctx.note(|| format!("zk: session {:x} expired", self.session));
        for (_, tag) in std::mem::take(&mut self.inflight) {
            ev.push(ConnEvent::Failed { tag, err: CallError::SessionExpired });
        }
        for (_, tag, _) in std::mem::take(&mut self.queued) {
            ev.push(ConnEvent::Failed { tag, err: CallError::SessionExpired });
        }
        if self.curator != CuratorState::Lost {
            self.curator = CuratorState::Lost;
            self.suspended_gen += 1;
            ev.push(ConnEvent::Lost);
            ctx.note(|| "curator: LOST".to_string());
        }
        if let Some((id, _)) = self.conn_timer.take() {
            ctx.cancel_timer(id);
        }
        // A new ZooKeeper handle: no session, no zxid history, connects at once.
        self.session = 0;
        self.last_zxid = 0;
        self.tried = 0;
        self.connect(ctx);
    }

    /// The TCP connection to `peer` was reset (the server's process was killed, or it refused
    /// our message while down or after a restart). `ClientCnxn.SendThread.run`'s read gets the
    /// end of stream at once, `cleanup()` fails what was outstanding with CONNECTIONLOSS, the
    /// watchers get `Disconnected` (Curator: SUSPENDED), and the next server is tried after the
    /// random back-off of `startConnect`. Resets from a server the client is not using (an
    /// earlier connection, a repeat) change nothing.
    pub fn on_reset(&mut self, ctx: &mut Ctx<ZooKeeper>, peer: NodeId, ev: &mut Vec<ConnEvent>) {
        let current = match self.link {
            Link::Up { server } | Link::Connecting { server } => self.servers.get(server) == Some(&peer),
            Link::Down => false,
        };
        if current {
            self.lose_connection(ctx, "connection reset", ev);
        }
    }

    /// A message from a server (those meant for servers are ignored).
    pub fn on_message(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, msg: ZkMsg, ev: &mut Vec<ConnEvent>) {
        match msg {
            ZkMsg::Response(r) => self.on_response(ctx, from, r, ev),
            ZkMsg::WatchEvent(w) => {
                if self.server() == Some(from) && self.in_sequence(ctx, w.seq, ev) {
                    self.last_recv_ns = ctx.now_mono_ns();
                    ev.push(ConnEvent::Watch(w));
                }
            }
            ZkMsg::ConnectResponse(r) => self.on_connect_response(ctx, from, r, ev),
            ZkMsg::Disconnect(d) => {
                let current = match self.link {
                    Link::Up { server } | Link::Connecting { server } => self.servers[server] == from,
                    Link::Down => false,
                };
                if current && d.session == self.session {
                    self.lose_connection(ctx, "closed by server", ev);
                }
            }
            ZkMsg::Consensus(_)
            | ZkMsg::Request(_)
            | ZkMsg::ConnectRequest(_)
            | ZkMsg::Revalidate(_)
            | ZkMsg::RevalidateReply(_)
            | ZkMsg::LeaderPing(_)
            | ZkMsg::PingTouches(_)
            | ZkMsg::Resync(_)
            | ZkMsg::Forward(_) => {}
        }
    }

    fn on_response(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, r: Response, ev: &mut Vec<ConnEvent>) {
        if self.server() != Some(from) {
            return; // an answer on a connection the client has given up on
        }
        if !self.in_sequence(ctx, r.seq, ev) {
            return;
        }
        self.last_recv_ns = ctx.now_mono_ns();
        self.last_zxid = self.last_zxid.max(r.zxid);
        let Some(tag) = self.inflight.remove(&r.xid) else { return };
        match r.outcome {
            Outcome::Pong => {}
            Outcome::Err(ErrCode::SessionExpired) => {
                ev.push(ConnEvent::Failed { tag, err: CallError::SessionExpired });
            }
            outcome => ev.push(ConnEvent::Reply { tag, outcome }),
        }
        self.arm_conn_check(ctx);
    }

    fn on_connect_response(
        &mut self,
        ctx: &mut Ctx<ZooKeeper>,
        from: NodeId,
        r: ConnectResponse,
        ev: &mut Vec<ConnEvent>,
    ) {
        let Link::Connecting { server } = self.link else { return };
        if self.servers[server] != from {
            return;
        }
        match r {
            ConnectResponse::Connected { session, timeout_ms, attempt } if attempt == self.attempt => {
                let new_session = session != self.session;
                self.session = session;
                self.timing = ClientTiming::new(timeout_ms);
                self.link = Link::Up { server };
                self.tried = 0;
                self.send_seq = 0;
                self.recv_seq = 0;
                let now = ctx.now_mono_ns();
                self.last_recv_ns = now;
                self.last_send_ns = now;
                let name = ctx.name_of(from);
                ctx.note(|| format!("zk: connected to {name} session {session:x} timeout {timeout_ms} ms"));
                if self.curator != CuratorState::Connected {
                    self.curator = CuratorState::Connected;
                    self.suspended_gen += 1; // cancels a pending LOST
                    ev.push(ConnEvent::Connected { new_session });
                }
                for (_, tag, op) in std::mem::take(&mut self.queued) {
                    self.send_request(ctx, tag, op);
                }
                self.arm_conn_check(ctx);
            }
            ConnectResponse::Expired { session, attempt } if attempt == self.attempt && session == self.session => {
                self.session_gone(ctx, ev);
            }
            ConnectResponse::Refused { attempt } if attempt == self.attempt => {
                self.lose_connection(ctx, "connection refused", ev);
            }
            _ => {}
        }
    }

    /// The connection looks at its clock now, as `ClientCnxn`'s SendThread does whenever it runs:
    /// nothing heard for the read timeout loses the connection (SUSPENDED). A pause defers the
    /// timer that would make this look; the application's check before a write makes it first.
    pub fn catch_up(&mut self, ctx: &mut Ctx<ZooKeeper>, ev: &mut Vec<ConnEvent>) {
        if self.is_connected() && ctx.now_mono_ns() >= self.last_recv_ns + self.timing.read_timeout_ns() {
            self.lose_connection(ctx, "read timeout", ev);
        }
    }

    /// Whether the read timeout has passed without the connection noticing: only after a pause,
    /// since the connection's own timer notices it in time otherwise.
    pub fn read_timeout_overdue(&self, now_ns: Nanos) -> bool {
        self.is_connected() && now_ns >= self.last_recv_ns + self.timing.read_timeout_ns()
    }

    /// A timer of this layer fired.
    pub fn on_timer(&mut self, ctx: &mut Ctx<ZooKeeper>, timer: ConnTimer, ev: &mut Vec<ConnEvent>) {
        let now = ctx.now_mono_ns();
        match timer {
            ConnTimer::Check { attempt } => {
                if attempt != self.attempt || !self.is_connected() {
                    return;
                }
                self.conn_timer = None;
                if now >= self.last_recv_ns + self.timing.read_timeout_ns() {
                    return self.lose_connection(ctx, "read timeout", ev);
                }
                if now >= self.last_send_ns + self.timing.ping_after_ns() {
                    let Link::Up { server } = self.link else { unreachable!() };
                    let xid = self.next_xid;
                    self.next_xid += 1;
                    self.last_send_ns = now;
                    self.send_seq += 1;
                    // Nobody waits on a ping's answer: it only counts as something received.
                    let req = Request { session: self.session, xid, seq: self.send_seq, op: Op::Ping };
                    ctx.send(self.servers[server], req);
                }
                self.arm_conn_check(ctx);
            }
            ConnTimer::ConnectTimeout { attempt } => {
                if attempt == self.attempt && matches!(self.link, Link::Connecting { .. }) {
                    self.lose_connection(ctx, "connect timeout", ev);
                }
            }
            ConnTimer::Reconnect { attempt } => {
                if attempt == self.attempt && self.link == Link::Down {
                    self.connect(ctx);
                }
            }
            ConnTimer::Lost { suspended_gen } => {
                if suspended_gen == self.suspended_gen && self.curator == CuratorState::Suspended {
                    ctx.note(|| "curator: session timeout elapsed while SUSPENDED".to_string());
                    self.session_gone(ctx, ev);
                }
            }
            ConnTimer::QueueDeadline { serial } => {
                if let Some(pos) = self.queued.iter().position(|(s, _, _)| *s == serial) {
                    let (_, tag, _) = self.queued.remove(pos);
                    ev.push(ConnEvent::Failed { tag, err: CallError::ConnectionLoss });
                }
            }
        }
    }
}
