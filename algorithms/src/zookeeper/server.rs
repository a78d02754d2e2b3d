//! One ensemble server: the replicated log (the shared Raft in [`crate::consensus`], standing in
//! for ZAB: a leader, quorum commit with ZAB's proposal / ack / commit messages, a new leader
//! when the leader is lost), the data tree it applies, and the per-server parts of ZooKeeper
//! that are not replicated: client connections, watches, the follower's session touch table
//! and, on the leader, the session tracker.
//!
//! What it follows:
//! - Writes (create, delete, createSession, closeSession) are proposed by the leader; a follower
//!   forwards its clients' writes to the leader and answers the client once it has applied the
//!   transaction itself (ZooKeeper's `FollowerRequestProcessor` / `CommitProcessor`). Reads
//!   (`getChildren`, `getData`, `exists`) are answered by the connected server from what it has
//!   applied, in order behind that session's pending writes; they are not linearizable.
//! - Watches are kept by the server the client is connected to and fire once, when that server
//!   applies the change.
//! - Sessions: the leader's [`SessionTracker`] expires sessions in `tick_ms` buckets on the
//!   leader's monotonic clock and proposes `closeSession`, whose application deletes the
//!   session's ephemeral nodes. Followers collect the sessions their clients touched and hand
//!   them to the leader in answer to its ping every `tick_ms / 2` (`LearnerSessionTracker`
//!   touch table, `Leader.lead`'s ping loop). That ping and its answer are also the log's only
//!   traffic when idle: they restart the follower's `syncLimit` wait and count as the
//!   follower heard for the leader's quorum check (`LearnerHandler.ping`, `Learner.ping`). A new leader tracks every open session afresh
//!   with its full timeout (`SessionTrackerImpl` is rebuilt from the data tree). A reconnecting
//!   client's session is revalidated by the leader (`REVALIDATE`).
//! - A server serves clients only while it leads or follows a known leader; when that changes
//!   (it lost the leader, a new one was elected) it closes every client connection and every
//!   handshake in progress, as a ZooKeeper server does when it goes back to LOOKING. A server
//!   also refuses a client that has seen a later zxid than it has applied.
//! - Links are TCP: a gap in a client connection's numbered requests closes that connection;
//!   a follower numbers the writes it forwards and reports the count with each ping, and a
//!   leader that misses one tells the follower its link broke (the follower drops its clients,
//!   as one whose learner connection failed).
//! - Replies and watch events leave after `service_ms` of processing time.
//!
//! Durable across a crash: the data tree and sessions (ZooKeeper's snapshot plus transaction
//! log) and the log's own durable state. Connections, watches, the touch table and the
//! tracker are volatile.
//!
//! Not modelled: ZAB's own election and synchronisation phases (the Raft log's election with
//! `election_ms` stands for them, including the time to notice a lost leader, which ZooKeeper
//! bounds by `syncLimit` ticks); local sessions; child watches (no recipe here uses them);
//! `sync`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rand::Rng;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_MS};

use super::protocol::{
    Command, ConnectRequest, ConnectResponse, Disconnect, EventType, Forward, LeaderPing, Op, Origin, Outcome,
    PingTouches, Request, Response, Resync, Revalidate, RevalidateReply, ServerTimer, SessionId, Stat, Txn, WatchEvent,
    ZPath, ZkMsg, ZkTimer,
};
use super::session::{negotiate_timeout_ms, SessionTracker};
use super::tree::{Applied, DataTree};
use super::ZooKeeper;
use crate::consensus::{Committed, Config, Pattern, Replica, ReplicaDisk, Role, Term};
use crate::smallmap::SmallMap;

mod fingerprint;

/// How an ensemble server is set up.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// This server's position in `members`.
    pub index: usize,
    /// Every server's name, in the same order on every server.
    pub members: Vec<String>,
    /// ZooKeeper's `tickTime`, milliseconds: the session tracker's bucket width and the unit of
    /// the negotiated timeout's bounds (`tick_ms`).
    pub tick_ms: u64,
    /// The replicated log's election timeout, milliseconds (`election_ms`): how long an
    /// election takes once a server looks for a leader (randomised in [1, 2) × it).
    pub election_ms: f64,
    /// ZooKeeper's `syncLimit`, in ticks (`sync_limit`): a follower that has not heard from its
    /// leader for `sync_limit × tick_ms` goes LOOKING, and a leader without a quorum of
    /// followers heard from within as long gives up leadership.
    pub sync_limit: u64,
    /// Processing time of each reply or watch event (`service_ms`).
    pub service_ms: Dist,
    /// Time a follower's txn log takes to sync a proposal before it acks (`fsync_ms`).
    pub fsync_ms: Dist,
}

#[derive(Clone, Copy, Debug)]
struct Conn {
    client: NodeId,
    timeout_ms: u64,
    /// Messages received from / sent to the client on this connection (see `Request`).
    recv_seq: u64,
    send_seq: u64,
}

impl Conn {
    fn new(client: NodeId, timeout_ms: u64) -> Self {
        Conn { client, timeout_ms, recv_seq: 0, send_seq: 0 }
    }
}

/// A request of one session, answered in order.
#[derive(Clone, Debug)]
enum Queued {
    Write { ticket: u64, xid: u64, outcome: Option<Outcome> },
    Read { xid: u64, op: Op },
}

/// What a ticket stands for.
#[derive(Clone, Copy, Debug)]
enum Ticket {
    /// A new session being created for this client's connect attempt.
    NewSession { client: NodeId, attempt: u64 },
    /// A reconnect waiting for the leader's revalidation.
    Revalidating { client: NodeId, attempt: u64, session: SessionId, timeout_ms: u64 },
    /// A session's write.
    Write { session: SessionId },
}

/// An ensemble server.
#[derive(Clone, Debug)]
pub struct ZkServer {
    cfg: ServerConfig,
    /// Durable: the log's term, vote, log and commit index (the replica's own volatile part is
    /// rebuilt at a restart).
    replica: Replica<Command>,
    /// Durable: the applied tree and sessions.
    tree: DataTree,
    v: Volatile,
}

/// What a server loses in a crash: connections, watches, the touch table, the tracker and its
/// handles on requests in progress.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// Drawn at each start (see [`Origin`]).
    incarnation: u32,
    next_ticket: u64,
    tickets: SmallMap<u64, Ticket>,
    /// The (term, leader) this server serves clients under; `None`: not serving.
    serving: Option<(Term, NodeId)>,
    conns: SmallMap<SessionId, Conn>,
    queues: SmallMap<SessionId, VecDeque<Queued>>,
    data_watches: BTreeMap<ZPath, BTreeSet<SessionId>>,
    exist_watches: BTreeMap<ZPath, BTreeSet<SessionId>>,
    /// Leader only, once its leadership is established.
    tracker: Option<SessionTracker>,
    /// Follower: sessions touched since the leader's last ping.
    touches: SmallMap<SessionId, u64>,
    /// Generation of the leader's timers (bumped when leadership starts or ends).
    leader_gen: u64,
    expiry_timer: Option<TimerId>,
    peers: Vec<NodeId>,
    /// Follower: this server's current link to the leader (incarnation high, counter low) and
    /// the writes forwarded on it.
    fwd_stream: u64,
    fwd_seq: u64,
    /// Leader: per follower, the link being received and the last forward number on it
    /// (`u64::MAX`: broken, waiting for a new link).
    fwd_in: BTreeMap<NodeId, (u64, u64)>,
    /// The batch `settle` is applying (kept to reuse its allocation).
    committed: Vec<Committed<Command>>,
}

impl ZkServer {
    /// Server `cfg.index` of the ensemble, with ZooKeeper's failure detector on its log.
    pub fn new(cfg: ServerConfig) -> Self {
        let election_ns = (cfg.election_ms * NS_PER_MS as f64).round() as Nanos;
        let tick_ns = cfg.tick_ms * NS_PER_MS;
        // The leader pings its learners every half tick (`Leader.lead`: `wait(self.tickTime /
        // 2)` between `learnerHandler.ping()` rounds): that ping is this server's `LeaderPing`,
        // and the log's heartbeat round keeps the same period but sends nothing of its own
        // (ZAB's pattern: proposal, ack, commit; see `consensus::core::zab`). A follower's
        // socket to the leader times out after `tickTime * syncLimit`
        // (`Learner.connectToLeader`: `sock.setSoTimeout(self.tickTime * self.syncLimit)`), and
        // the leader counts a learner synced while its last ack is under `syncLimit` ticks old.
        let mut config = Config::new((tick_ns / 2).max(1), election_ns.max(1));
        config.leader_timeout_ns = Some((tick_ns * cfg.sync_limit).max(1));
        config.pattern = Pattern::Zab;
        config.fsync_ms = cfg.fsync_ms.clone();
        let replica = Replica::new(cfg.index, cfg.members.clone(), config);
        ZkServer::from_disk(ServerDisk { cfg, replica: replica.into_disk(), tree: DataTree::new() })
    }

    /// The applied tree (for tests).
    pub fn tree(&self) -> &DataTree {
        &self.tree
    }

    fn to_client(&self, ctx: &mut Ctx<ZooKeeper>, client: NodeId, msg: impl Into<ZkMsg>) {
        let service_ns = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        // Links are ordered, so a shorter processing time never overtakes an earlier reply.
        ctx.send_after(service_ns, client, msg);
    }

    fn ticket(&mut self, t: Ticket) -> u64 {
        self.v.next_ticket += 1;
        self.v.tickets.insert(self.v.next_ticket, t);
        self.v.next_ticket
    }

    fn origin(&self, ctx: &Ctx<ZooKeeper>, ticket: u64) -> Origin {
        Origin { server: ctx.me(), incarnation: self.v.incarnation, ticket }
    }

    /// Proposes (leader) or forwards to the leader (follower).
    fn submit(&mut self, ctx: &mut Ctx<ZooKeeper>, command: Command) {
        if self.replica.is_leader() {
            let _ = self.replica.propose(ctx, command);
        } else if let Some((_, leader)) = self.v.serving {
            self.v.fwd_seq += 1;
            ctx.send(leader, Forward { command, stream: self.v.fwd_stream, seq: self.v.fwd_seq });
        }
    }

    /// A new link to the leader (after the old one broke or the leader changed).
    fn new_link(&mut self) {
        self.v.fwd_stream = ((self.v.fwd_stream & 0xFFFF_FFFF) + 1) | ((self.v.incarnation as u64) << 32);
        self.v.fwd_seq = 0;
    }

    /// Leader: whether forward `seq` on `stream` from `from` is the next one; on a gap the
    /// follower is told its link broke.
    fn accept_forward(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, stream: u64, seq: u64) -> bool {
        let (known, last) = self.v.fwd_in.get(&from).copied().unwrap_or((u64::MAX, 0));
        let last = if known == stream { last } else { 0 };
        if last == u64::MAX || (known == stream && seq <= last) {
            return false; // a broken link's leftovers, or a duplicate
        }
        if seq != last + 1 {
            ctx.note(|| format!("zk: forward link from node {from} lost a message: resync"));
            self.v.fwd_in.insert(from, (stream, u64::MAX));
            ctx.send(from, Resync { stream });
            return false;
        }
        self.v.fwd_in.insert(from, (stream, seq));
        true
    }

    /// After anything the log did: apply what committed, then re-check serving and leadership.
    fn settle(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        let mut committed = std::mem::take(&mut self.v.committed);
        self.replica.take_committed_entries_into(&mut committed);
        for c in committed.drain(..) {
            if let Some(cmd) = c.cmd {
                // ZAB's zxid: epoch high, counter low.
                let zxid = (c.term << 32) | (c.index & 0xFFFF_FFFF);
                self.apply(ctx, zxid, cmd);
            }
        }
        self.v.committed = committed;
        let now_serving = if self.replica.is_leader() {
            Some((self.replica.term(), ctx.me()))
        } else if self.replica.role() == Role::Follower {
            self.replica.leader_hint().map(|l| (self.replica.term(), l))
        } else {
            None
        };
        if now_serving != self.v.serving {
            if self.v.serving.is_some() {
                ctx.note(|| {
                    format!("zk: leader changed ({:?} → {:?}): closing client connections", self.v.serving, now_serving)
                });
                self.close_all_connections(ctx);
            }
            self.v.serving = now_serving;
            self.new_link();
            self.v.fwd_in.clear();
        }
        let established = self.replica.is_leader() && self.replica.committed_in_term();
        if established && self.v.tracker.is_none() {
            let now = ctx.now_mono_ns();
            let mut tracker = SessionTracker::new(self.cfg.tick_ms, now);
            for (s, t) in self.tree.sessions() {
                tracker.add(s, t, now);
            }
            ctx.note(|| format!("zk: leading, tracking {} sessions", self.tree.sessions().len()));
            self.v.tracker = Some(tracker);
            self.v.leader_gen += 1;
            self.arm_expiry(ctx);
            ctx.set_timer(self.cfg.tick_ms * NS_PER_MS / 2, ServerTimer::LeaderPing { leader_gen: self.v.leader_gen });
        } else if !self.replica.is_leader() && self.v.tracker.is_some() {
            self.v.tracker = None;
            self.v.leader_gen += 1;
            if let Some(t) = self.v.expiry_timer.take() {
                ctx.cancel_timer(t);
            }
        }
    }

    fn arm_expiry(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        let Some(tracker) = self.v.tracker.as_ref() else { return };
        let wait = tracker.wait_ns(ctx.now_mono_ns());
        let id = ctx.set_timer(wait, ServerTimer::SessionExpiry { leader_gen: self.v.leader_gen });
        self.v.expiry_timer = Some(id);
    }

    fn close_all_connections(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        for (session, conn) in std::mem::take(&mut self.v.conns) {
            self.to_client(ctx, conn.client, Disconnect { session });
        }
        self.v.queues.clear();
        self.v.data_watches.clear();
        self.v.exist_watches.clear();
        self.v.touches.clear();
        // Handshakes in progress are closed too; writes in progress get no answer (their
        // clients' connections were closed above).
        for (_, t) in std::mem::take(&mut self.v.tickets) {
            match t {
                Ticket::NewSession { client, attempt } | Ticket::Revalidating { client, attempt, .. } => {
                    self.to_client(ctx, client, ConnectResponse::Refused { attempt });
                }
                Ticket::Write { .. } => {}
            }
        }
        self.new_link();
    }

    fn close_connection(&mut self, ctx: &mut Ctx<ZooKeeper>, session: SessionId) {
        if let Some(conn) = self.v.conns.remove(&session) {
            self.to_client(ctx, conn.client, Disconnect { session });
        }
        self.v.queues.remove(&session);
        self.drop_watches(session);
    }

    fn drop_watches(&mut self, session: SessionId) {
        for map in [&mut self.v.data_watches, &mut self.v.exist_watches] {
            map.retain(|_, set| {
                set.remove(&session);
                !set.is_empty()
            });
        }
    }

    fn apply(&mut self, ctx: &mut Ctx<ZooKeeper>, zxid: u64, cmd: Command) {
        let applied = self.tree.apply(zxid, &cmd.txn);
        for (path, kind) in applied.triggers() {
            self.fire(ctx, path, kind);
        }
        let now = ctx.now_mono_ns();
        match &applied {
            Applied::SessionCreated { session, timeout_ms } => {
                if let Some(t) = self.v.tracker.as_mut() {
                    t.add(*session, *timeout_ms, now);
                }
            }
            Applied::SessionClosed { session, .. } => {
                if let Some(t) = self.v.tracker.as_mut() {
                    t.remove(*session);
                }
                self.v.touches.remove(session);
                // The server holding the session's connection closes it; the client learns of
                // the expiry when it reconnects.
                self.close_connection(ctx, *session);
            }
            _ => {}
        }
        let Some(origin) = cmd.origin else { return };
        if origin.server != ctx.me() || origin.incarnation != self.v.incarnation {
            return;
        }
        match self.v.tickets.remove(&origin.ticket) {
            Some(Ticket::NewSession { client, attempt }) => {
                if let Applied::SessionCreated { session, timeout_ms } = applied {
                    if self.v.serving.is_some() {
                        self.v.conns.insert(session, Conn::new(client, timeout_ms));
                        self.touch(ctx, session);
                        self.to_client(ctx, client, ConnectResponse::Connected { session, timeout_ms, attempt });
                    }
                }
            }
            Some(Ticket::Write { session }) => {
                let outcome = match applied {
                    Applied::Created { path, czxid } => Outcome::Created { path, czxid },
                    Applied::Deleted { .. } => Outcome::Deleted,
                    Applied::Failed(code) => Outcome::Err(code),
                    other => {
                        ctx.note(|| format!("zk: unexpected result {other:?} for a write"));
                        return;
                    }
                };
                if let Some(q) = self.v.queues.get_mut(&session) {
                    for item in q.iter_mut() {
                        if let Queued::Write { ticket, outcome: o, .. } = item {
                            if *ticket == origin.ticket {
                                *o = Some(outcome);
                                break;
                            }
                        }
                    }
                }
                self.flush_queue(ctx, session);
            }
            other => {
                if let Some(t) = other {
                    self.v.tickets.insert(origin.ticket, t);
                }
            }
        }
    }

    /// Fires the one-shot watches this change triggers on this server.
    fn fire(&mut self, ctx: &mut Ctx<ZooKeeper>, path: ZPath, kind: EventType) {
        let mut sessions = self.v.exist_watches.remove(&path).unwrap_or_default();
        if kind == EventType::NodeDeleted {
            sessions.extend(self.v.data_watches.remove(&path).unwrap_or_default());
        }
        for s in sessions {
            if let Some(conn) = self.v.conns.get_mut(&s) {
                conn.send_seq += 1;
                let (client, seq) = (conn.client, conn.send_seq);
                self.to_client(ctx, client, WatchEvent { path, kind, seq });
            }
        }
    }

    fn touch(&mut self, ctx: &mut Ctx<ZooKeeper>, session: SessionId) {
        if let Some(t) = self.v.tracker.as_mut() {
            t.touch(session, ctx.now_mono_ns());
        } else if let Some(conn) = self.v.conns.get(&session) {
            self.v.touches.insert(session, conn.timeout_ms);
        }
    }

    fn respond(&mut self, ctx: &mut Ctx<ZooKeeper>, session: SessionId, xid: u64, outcome: Outcome) {
        if let Some(conn) = self.v.conns.get_mut(&session) {
            conn.send_seq += 1;
            let (client, seq) = (conn.client, conn.send_seq);
            let zxid = self.tree.last_zxid();
            self.to_client(ctx, client, Response { xid, zxid, seq, outcome });
        }
    }

    fn read(&mut self, session: SessionId, op: Op) -> Outcome {
        match op {
            Op::GetChildren(key) => Outcome::Children(self.tree.children(key)),
            Op::GetData { path, watch } => match self.tree.node(&path) {
                Some(node) => {
                    if watch {
                        self.v.data_watches.entry(path).or_default().insert(session);
                    }
                    Outcome::Stat(Some(Stat { czxid: node.czxid, owner: node.owner }))
                }
                None => Outcome::Err(super::protocol::ErrCode::NoNode),
            },
            Op::Exists { path, watch } => {
                let node = self.tree.node(&path);
                if watch {
                    let map = if node.is_some() { &mut self.v.data_watches } else { &mut self.v.exist_watches };
                    map.entry(path).or_default().insert(session);
                }
                Outcome::Stat(node.map(|n| Stat { czxid: n.czxid, owner: n.owner }))
            }
            Op::Ping => Outcome::Pong,
            Op::Create(_) | Op::Delete(_) => unreachable!("writes are not reads"),
        }
    }

    /// Answers the session's requests that are ready, in order.
    fn flush_queue(&mut self, ctx: &mut Ctx<ZooKeeper>, session: SessionId) {
        loop {
            let Some(q) = self.v.queues.get_mut(&session) else { return };
            let ready = matches!(q.front(), Some(Queued::Write { outcome: Some(_), .. }) | Some(Queued::Read { .. }));
            if !ready {
                if q.is_empty() {
                    self.v.queues.remove(&session);
                }
                return;
            }
            match q.pop_front().expect("front checked") {
                Queued::Write { xid, outcome: Some(o), .. } => self.respond(ctx, session, xid, o),
                Queued::Read { xid, op } => {
                    let o = self.read(session, op);
                    self.respond(ctx, session, xid, o);
                }
                Queued::Write { outcome: None, .. } => unreachable!(),
            }
        }
    }

    fn on_connect(&mut self, ctx: &mut Ctx<ZooKeeper>, client: NodeId, req: ConnectRequest) {
        let refuse = ConnectResponse::Refused { attempt: req.attempt };
        if self.v.serving.is_none() || req.last_zxid > self.tree.last_zxid() {
            ctx.note(|| {
                format!(
                    "zk: refusing connect (serving {:?}, zxid {:x} < {:x})",
                    self.v.serving,
                    self.tree.last_zxid(),
                    req.last_zxid
                )
            });
            return self.to_client(ctx, client, refuse);
        }
        if req.session == 0 {
            let timeout_ms = negotiate_timeout_ms(req.timeout_ms, self.cfg.tick_ms);
            let ticket = self.ticket(Ticket::NewSession { client, attempt: req.attempt });
            let origin = self.origin(ctx, ticket);
            return self.submit(ctx, Command { txn: Txn::CreateSession { timeout_ms }, origin: Some(origin) });
        }
        // A reconnect: only the leader's session tracker knows whether the session lives (a
        // follower may not even have applied its creation yet), so a follower asks it.
        let timeout_ms = negotiate_timeout_ms(req.timeout_ms, self.cfg.tick_ms);
        if self.replica.is_leader() {
            match self.v.tracker.as_mut() {
                None => self.to_client(ctx, client, refuse),
                Some(t) => {
                    let valid = t.touch(req.session, ctx.now_mono_ns());
                    self.finish_reconnect(ctx, client, req.attempt, req.session, timeout_ms, valid);
                }
            }
        } else if let Some((_, leader)) = self.v.serving {
            let ticket =
                self.ticket(Ticket::Revalidating { client, attempt: req.attempt, session: req.session, timeout_ms });
            ctx.send(leader, Revalidate { session: req.session, timeout_ms: req.timeout_ms, ticket });
        }
    }

    fn finish_reconnect(
        &mut self,
        ctx: &mut Ctx<ZooKeeper>,
        client: NodeId,
        attempt: u64,
        session: SessionId,
        timeout_ms: u64,
        valid: bool,
    ) {
        if !valid {
            return self.to_client(ctx, client, ConnectResponse::Expired { session, attempt });
        }
        // A new connection for the session: whatever its old one here left is gone.
        self.v.queues.remove(&session);
        self.drop_watches(session);
        self.v.conns.insert(session, Conn::new(client, timeout_ms));
        self.touch(ctx, session);
        self.to_client(ctx, client, ConnectResponse::Connected { session, timeout_ms, attempt });
    }

    fn on_request(&mut self, ctx: &mut Ctx<ZooKeeper>, client: NodeId, req: Request) {
        let known = self.v.conns.get(&req.session).is_some_and(|c| c.client == client);
        if !known || self.v.serving.is_none() {
            // No such connection here (this server restarted or closed it): a reset.
            return self.to_client(ctx, client, Disconnect { session: req.session });
        }
        let conn = self.v.conns.get_mut(&req.session).expect("known");
        if req.seq <= conn.recv_seq {
            return; // a duplicate: TCP would not deliver it twice
        }
        if req.seq > conn.recv_seq + 1 {
            // A message on the connection was lost: the connection is broken.
            ctx.note(|| format!("zk: connection of session {:x} lost a message", req.session));
            return self.close_connection(ctx, req.session);
        }
        conn.recv_seq = req.seq;
        self.touch(ctx, req.session);
        let session = req.session;
        match req.op {
            Op::Ping => self.respond(ctx, session, req.xid, Outcome::Pong),
            op if op.is_write() => {
                let txn = match op {
                    Op::Create(spec) => Txn::Create { session, spec },
                    Op::Delete(path) => Txn::Delete { session, path },
                    _ => unreachable!(),
                };
                let ticket = self.ticket(Ticket::Write { session });
                self.v.queues.get_or_default(session).push_back(Queued::Write { ticket, xid: req.xid, outcome: None });
                let origin = self.origin(ctx, ticket);
                self.submit(ctx, Command { txn, origin: Some(origin) });
            }
            op => {
                if self.v.queues.get(&session).is_some_and(|q| !q.is_empty()) {
                    self.v.queues.get_or_default(session).push_back(Queued::Read { xid: req.xid, op });
                } else {
                    let o = self.read(session, op);
                    self.respond(ctx, session, req.xid, o);
                }
            }
        }
    }
}

impl ZkServer {
    /// Leader: a follower's write to propose, if its link delivered it in order.
    fn on_forward(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, f: Forward) {
        if self.replica.is_leader() && self.accept_forward(ctx, from, f.stream, f.seq) {
            let _ = self.replica.propose(ctx, f.command);
            self.settle(ctx);
        }
    }

    /// Leader: a follower asks whether a reconnecting client's session lives.
    fn on_revalidate(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, r: Revalidate) {
        let valid = self.v.tracker.as_mut().map(|t| t.touch(r.session, ctx.now_mono_ns()));
        // Not (yet) an established leader: no answer; the client's connect times out.
        if let Some(valid) = valid {
            ctx.send(from, RevalidateReply { session: r.session, ticket: r.ticket, valid });
        }
    }

    /// Follower: the leader's answer to a revalidation this server asked for.
    fn on_revalidate_reply(&mut self, ctx: &mut Ctx<ZooKeeper>, r: RevalidateReply) {
        if let Some(Ticket::Revalidating { client, attempt, session, timeout_ms }) = self.v.tickets.remove(&r.ticket) {
            if session == r.session && self.v.serving.is_some() {
                self.finish_reconnect(ctx, client, attempt, session, timeout_ms, r.valid);
            }
        }
    }

    /// Follower: the leader's ping; answer with the sessions touched since the last one.
    fn on_leader_ping(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, p: LeaderPing) {
        // The ping is also the log's sign of life from its leader (ZAB sends no heartbeat of
        // its own): it restarts the follower's `syncLimit` wait, or makes a server that does
        // not know this leader yet (it restarted) follow it.
        self.replica.leader_ping(ctx, from, p.term);
        self.settle(ctx);
        if self.v.serving.is_some_and(|(_, l)| l == from) {
            let touches: Vec<(SessionId, u64)> = std::mem::take(&mut self.v.touches).into_iter().collect();
            let (stream, forwarded) = (self.v.fwd_stream, self.v.fwd_seq);
            ctx.send(from, PingTouches { term: p.term, touches, stream, forwarded });
        }
    }

    /// Follower: the leader says this server's link to it lost a forward.
    fn on_resync(&mut self, ctx: &mut Ctx<ZooKeeper>, r: Resync) {
        if r.stream == self.v.fwd_stream && self.v.serving.is_some() {
            ctx.note(|| "zk: link to the leader broke: closing client connections".to_string());
            self.close_all_connections(ctx);
        }
    }

    /// Leader: a follower's answer to the ping, with its clients' session touches.
    fn on_ping_touches(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, p: PingTouches) {
        // The answer is the follower's sign of life for the leader's quorum check.
        self.replica.ping_answered(ctx, from, p.term);
        if let Some(t) = self.v.tracker.as_mut() {
            let now = ctx.now_mono_ns();
            for (s, _) in &p.touches {
                t.touch(*s, now);
            }
            // Forwards the follower sent that never arrived: its link is broken.
            let (known, last) = self.v.fwd_in.get(&from).copied().unwrap_or((u64::MAX, 0));
            let last = if known == p.stream { last } else { 0 };
            if last != u64::MAX && p.forwarded > last {
                self.accept_forward(ctx, from, p.stream, p.forwarded + 1);
            }
        }
    }

    /// Whether this server still leads with a tracker under the leadership generation a timer
    /// was set in.
    fn leads_as(&self, leader_gen: u64) -> bool {
        leader_gen == self.v.leader_gen && self.v.tracker.is_some()
    }

    /// Leader: expire the sessions whose bucket is due and propose their `closeSession`.
    fn on_expiry(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        self.v.expiry_timer = None;
        let now = ctx.now_mono_ns();
        let mut expired = Vec::new();
        let tracker = self.v.tracker.as_mut().expect("checked");
        // A leader that was paused catches up bucket by bucket, as the expirer thread would.
        while tracker.wait_ns(now) == 0 {
            expired.extend(tracker.expire_due(now));
        }
        for session in expired {
            ctx.note(|| format!("zk: session {session:x} expired"));
            self.submit(ctx, Command { txn: Txn::CloseSession { session }, origin: None });
        }
        self.arm_expiry(ctx);
        self.settle(ctx);
    }

    /// Leader: ping every follower (they answer with their touch tables).
    fn ping_followers(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        let term = self.replica.term();
        for &p in &self.v.peers {
            ctx.send(p, LeaderPing { term });
        }
        ctx.set_timer(self.cfg.tick_ms * NS_PER_MS / 2, ServerTimer::LeaderPing { leader_gen: self.v.leader_gen });
    }
}

/// What a server keeps across a crash: ZooKeeper's snapshot and transaction log (the applied
/// tree and the replica's disk), and its configuration. Everything else goes, including timers
/// (the engine discards them) and their generations.
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: ServerConfig,
    replica: ReplicaDisk<Command>,
    tree: DataTree,
}

impl Durable for ZkServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let ZkServer { cfg, replica, tree, v: _ } = self;
        ServerDisk { cfg, replica: replica.into_disk(), tree }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, replica, tree } = disk;
        ZkServer { cfg, replica: Replica::from_disk(replica), tree, v: Volatile::default() }
    }
}

impl Process<ZooKeeper> for ZkServer {
    fn on_start(&mut self, ctx: &mut Ctx<ZooKeeper>) {
        self.v.incarnation = ctx.rng().gen();
        self.v.peers = self.cfg.members.iter().filter_map(|n| ctx.node_named(n)).filter(|id| *id != ctx.me()).collect();
        self.replica.on_start(ctx);
        self.settle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<ZooKeeper>, from: NodeId, msg: ZkMsg) {
        match msg {
            ZkMsg::Consensus(m) => {
                self.replica.on_message(ctx, from, m);
                self.settle(ctx);
            }
            ZkMsg::Request(r) => self.on_request(ctx, from, r),
            ZkMsg::ConnectRequest(r) => self.on_connect(ctx, from, r),
            ZkMsg::Forward(f) => self.on_forward(ctx, from, f),
            ZkMsg::Revalidate(r) => self.on_revalidate(ctx, from, r),
            ZkMsg::RevalidateReply(r) => self.on_revalidate_reply(ctx, r),
            ZkMsg::LeaderPing(p) => self.on_leader_ping(ctx, from, p),
            ZkMsg::Resync(r) => self.on_resync(ctx, r),
            ZkMsg::PingTouches(p) => self.on_ping_touches(ctx, from, p),
            // What servers send to clients.
            ZkMsg::Response(_) | ZkMsg::WatchEvent(_) | ZkMsg::ConnectResponse(_) | ZkMsg::Disconnect(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<ZooKeeper>, _timer: TimerId, tag: ZkTimer) {
        let ZkTimer::Server(timer) = tag else { return };
        match timer {
            ServerTimer::Consensus(_) => {
                self.replica.on_timer(ctx);
                self.settle(ctx);
            }
            ServerTimer::SessionExpiry { leader_gen } if self.leads_as(leader_gen) => self.on_expiry(ctx),
            ServerTimer::LeaderPing { leader_gen } if self.leads_as(leader_gen) => self.ping_followers(ctx),
            // Set under an earlier leadership: nothing to do.
            ServerTimer::SessionExpiry { .. } | ServerTimer::LeaderPing { .. } => {}
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<ZooKeeper>, peer: NodeId) {
        if self.v.peers.contains(&peer) {
            // The leader's process died (or it restarted and refused our old connection): a
            // follower reading from its socket gets the end of stream at once and goes LOOKING
            // (`Follower.followLeader` catches the `IOException` and returns to
            // `QuorumPeer.run`, which starts `FastLeaderElection.lookForLeader`). A leader
            // resends to that follower at its next round what the broken link may have lost.
            self.replica.peer_reset(ctx, peer);
            return self.settle(ctx);
        }
        // A client's connection closed (its process died): `NIOServerCnxn.close` drops the
        // connection and its watches, but the session lives on until it expires by timeout
        // (`SessionTrackerImpl`) or is closed by a `closeSession`.
        let sessions: Vec<SessionId> = self.v.conns.iter().filter(|(_, c)| c.client == peer).map(|(s, _)| *s).collect();
        for session in sessions {
            ctx.note(|| format!("zk: connection of session {session:x} reset by its client"));
            self.v.conns.remove(&session);
            self.v.queues.remove(&session);
            self.drop_watches(session);
        }
    }

    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
