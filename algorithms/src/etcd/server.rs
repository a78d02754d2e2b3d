//! One etcd member: a Raft replica ([`crate::consensus`]) under an MVCC store ([`super::mvcc`])
//! and a lessor ([`super::lessor`]), serving the client calls the Session and the Mutex make.
//!
//! What it follows (etcd 3.4 `etcdserver`):
//! - writes (lease grant, the mutex transaction, delete, lease revoke) are proposed to Raft; a
//!   follower hands its proposal to the leader and answers its client when it applies the entry
//!   itself (the entry carries the proposer's request id, as etcd's wait registry does); with no
//!   known leader the proposal is dropped and the client gets "no leader";
//! - linearizable reads use the read index: the leader confirms its leadership with a heartbeat
//!   round, a follower asks the leader for the index and serves from its own store once it has
//!   applied that far;
//! - keep-alives are served by the leader's primary lessor (a follower forwards them); a renewal
//!   of an expired lease waits for the revocation and then reports TTL 0;
//! - the primary lessor checks for expired leases every `lease_check_ms` and proposes their
//!   revocation; applying it deletes the lease's keys in one revision;
//! - the lessor is promoted (every lease extended by the election timeout) when the leader applies
//!   the empty entry of its term (`applyEntryNormal`), demoted when leadership is lost;
//! - a request's handler starts once the member has read what is waiting on its connections
//!   (grpc-go's reader loop hands each stream to a goroutine): a client's `RST_STREAM`
//!   ([`super::protocol::StreamCancel`]) read by then drops the request, so a write the client gave up on while
//!   this member was frozen never runs when it wakes;
//! - watches live on the member the client talks to and fire when that member applies the change;
//!   their events are resent until acknowledged (standing in for the TCP stream, which the
//!   simulator's message loss would otherwise break silently).
//!
//! Durable across a crash: the Raft state, the store and the leases (etcd's WAL and backend);
//! lost: watches, waiting requests, lease expiry times ([`Volatile`], replaced whole at a crash).
//! The transport answers the client's gRPC keepalive pings with the member's incarnation, so a
//! client learns that a restart dropped its connection (and its watch).

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::applied::AppliedOrigins;
use super::lessor::{Lessor, Renewal};
use super::mvcc::Store;
use super::protocol::{
    Cmd, CmdKind, EtcdError, EtcdMsg, EtcdTimer, LeaseId, Op, Origin, Peer, Pong, Reply, Request, Response, Revision,
    ServerTimer, WatchCreated, WatchEvent,
};
use super::Etcd;
use crate::consensus::{Committed, LogIndex, NotLeader, Replica, ReplicaDisk};
use crate::smallmap::SmallMap;

mod fingerprint;

/// TCP's minimum retransmission timeout (Linux `TCP_RTO_MIN`, 200 ms).
pub const RETRANSMIT_NS: Nanos = 200_000_000;

/// A member's settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Time to serve a call, milliseconds (`service_ms`): answers and watch events leave this
    /// long after the member handles them.
    pub service_ms: Dist,
    /// How often the primary lessor looks for expired leases (`lease_check_ms`).
    pub lease_check_ns: Nanos,
    /// The election timeout: how far a new leader extends every lease.
    pub election_ns: Nanos,
    /// etcd's minimum lease TTL (1.5 election timeouts in whole seconds, rounded up).
    pub min_ttl_ns: Nanos,
    /// The member's `ReqTimeout` (5 s + 2 × election timeout, `etcdserver/config.go:286-289
    /// @v3.4.23`), after which a proposal or read it made for a client is answered
    /// `ErrTimeout` (`etcdserver/v3_server.go:671`); `None` when the clients keep the deadline
    /// themselves (`call_deadline = "req_timeout"`, the model before presets).
    pub req_timeout_ns: Option<Nanos>,
}

#[derive(Clone, Debug)]
struct Watcher {
    client: NodeId,
    watch_id: u64,
    key: String,
    start_rev: Revision,
    next_seq: u64,
    /// Events sent and not acknowledged: (event, when last sent).
    unacked: Vec<(WatchEvent, Nanos)>,
}

#[derive(Clone, Copy, Debug)]
enum RenewFor {
    Client { client: NodeId, id: u64 },
    Peer { peer: NodeId, rid: u64 },
}

/// An etcd member.
#[derive(Clone, Debug)]
pub struct EtcdServer {
    cfg: ServerConfig,
    /// This member's node id (learned at the first start; a restart keeps it).
    me: NodeId,
    // Durable.
    /// The Raft replica; its disk keeps what etcd's WAL and HardState keep.
    replica: Replica<Cmd>,
    store: Store,
    /// The leases and their keys survive a crash; their expiry times do not (a crash demotes it).
    lessor: Lessor,
    /// Bumped at every crash, so request tags never repeat across restarts.
    incarnation: u64,
    /// Origins of the entries applied so far (replicated state): an entry proposed twice (the
    /// network duplicated the forwarded proposal) takes effect once, as a request sent once over
    /// TCP would.
    applied_origins: AppliedOrigins,
    // Kept across a crash though not etcd state: they keep a restarted member from taking a
    // message meant for its previous incarnation as one of its own (a TCP connection dies with
    // its process, so nothing sent on the old one reaches the new one).
    /// Request ids seen per client: a request the network duplicated is handled once (TCP never
    /// delivers twice), even when the copy arrives after a restart.
    seen: BTreeMap<NodeId, BTreeSet<u64>>,
    /// The last read-index or renewal id this member used (never reused, so a late answer to a
    /// previous incarnation's request matches nothing).
    next_rid: u64,
    /// Everything else, built afresh at a restart ([`Durable::from_disk`]).
    v: Volatile,
    /// The batch `settle` is applying (scratch, always drained: kept to reuse its allocation).
    committed: Vec<Committed<Cmd>>,
    /// The reads `settle` is finishing (scratch, as `committed`).
    finished_reads: Vec<(u64, Result<LogIndex, NotLeader>)>,
    /// The indexed reads `settle` serves now (scratch, as `committed`).
    ready_reads: Vec<(u64, NodeId, Request)>,
}

/// What a member loses in a crash.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The last proposal tag of this incarnation (a tag also carries the incarnation).
    next_tag: u64,
    /// Proposals this member made for a client: tag → (client, request id).
    waiting: SmallMap<u64, (NodeId, u64)>,
    /// This member's reads waiting for a read index: rid → (client, request).
    reads: SmallMap<u64, (NodeId, Request)>,
    /// Reads with a read index, waiting for this member to apply that far.
    indexed_reads: Vec<(u64, NodeId, Request)>,
    /// At the leader: read indexes asked by followers: rid → (follower, its rid).
    peer_reads: SmallMap<u64, (NodeId, u64)>,
    /// Keep-alives forwarded to the leader: rid → (client, request id).
    renewals: SmallMap<u64, (NodeId, u64)>,
    /// Renewals of expired leases, answered when the revocation applies.
    parked: BTreeMap<LeaseId, Vec<RenewFor>>,
    /// Watches on this member's connections (they die with the process).
    watchers: Vec<Watcher>,
    check_timer: Option<TimerId>,
    retransmit_timer: Option<TimerId>,
    /// Requests read from the connections whose handlers have not started yet (see
    /// `dispatch_timer`); a [`StreamCancel`] arriving meanwhile removes its request.
    inbox: Vec<(NodeId, Request)>,
    /// Set while `inbox` is not empty: it fires once the messages delivered at this instant are
    /// read, as grpc-go's reader loop (`http2Server.HandleStreams`) reads every frame available
    /// and hands each new stream to a handler goroutine (`Server.handleStream`, started with
    /// `go`). After a pause the request and the client's later `RST_STREAM` are both waiting on
    /// the socket: the cancel is read before the handler runs, and the handler sees a cancelled
    /// context and never proposes the write.
    dispatch_timer: Option<TimerId>,
}

impl EtcdServer {
    /// Member `index` of the group named `members`, which starts with member 0 leading term 1.
    pub fn new(index: usize, members: Vec<String>, cfg: ServerConfig, raft: crate::consensus::Config) -> Self {
        EtcdServer::from_disk(ServerDisk {
            cfg,
            me: 0,
            // The cluster has been running with server-0 as leader (the scenario format's
            // convention for models with a leader).
            replica: Replica::new(index, members, raft).with_initial_leader(0).into_disk(),
            store: Store::new(),
            leases: BTreeMap::new(),
            incarnation: 0,
            applied_origins: AppliedOrigins::default(),
            seen: BTreeMap::new(),
            next_rid: 0,
        })
    }

    /// The store (for tests).
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn service_ns(&self, ctx: &mut Ctx<Etcd>) -> Nanos {
        ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()))
    }

    /// With a server-side `ReqTimeout`: the timer that answers a request still waiting then.
    fn arm_req_timeout(&mut self, ctx: &mut Ctx<Etcd>, timer: ServerTimer) {
        if let Some(after) = self.cfg.req_timeout_ns {
            ctx.set_timer(after, timer);
        }
    }

    fn respond(&mut self, ctx: &mut Ctx<Etcd>, client: NodeId, id: u64, result: Result<Reply, EtcdError>) {
        let after = self.service_ns(ctx);
        let header_rev = self.store.rev();
        ctx.send_after(after, client, Response { id, header_rev, result });
    }

    fn fresh_tag(&mut self) -> u64 {
        self.v.next_tag += 1;
        (self.incarnation << 40) | self.v.next_tag
    }

    fn fresh_rid(&mut self) -> u64 {
        self.next_rid += 1;
        self.next_rid
    }

    // ----- client calls -----

    fn on_request(&mut self, ctx: &mut Ctx<Etcd>, client: NodeId, req: Request) {
        // Keep-alives and watch requests are idempotent and may be sent again on purpose.
        if !matches!(req.op, Op::KeepAlive { .. } | Op::Watch { .. })
            && !self.seen.entry(client).or_default().insert(req.id)
        {
            return;
        }
        match req.op.clone() {
            Op::LeaseGrant { ttl_ns } => self.propose(ctx, client, req.id, CmdKind::LeaseGrant { ttl_ns }),
            Op::MutexTxn { my_key, prefix, lease } => {
                self.propose(ctx, client, req.id, CmdKind::MutexTxn { my_key, prefix, lease })
            }
            Op::Delete { key } => self.propose(ctx, client, req.id, CmdKind::Delete { key }),
            Op::Get { .. } | Op::LastCreateBelow { .. } => self.read(ctx, client, req),
            Op::KeepAlive { lease } => self.keep_alive(ctx, RenewFor::Client { client, id: req.id }, lease),
            Op::Watch { watch_id, key, start_rev } => {
                let after = self.service_ns(ctx);
                ctx.send_after(after, client, WatchCreated { watch_id });
                if self.v.watchers.iter().any(|w| w.client == client && w.watch_id == watch_id) {
                    return; // a resent request: already registered
                }
                // Catch up from the history first, then follow applied changes.
                let past = self.store.events_since(&key, start_rev);
                let key = key.to_string();
                self.v.watchers.push(Watcher { client, watch_id, key, start_rev, next_seq: 0, unacked: Vec::new() });
                let w = self.v.watchers.len() - 1;
                for (rev, deleted) in past {
                    self.push_event(ctx, w, rev, deleted);
                }
            }
            Op::WatchCancel { watch_id } => {
                self.v.watchers.retain(|w| !(w.client == client && w.watch_id == watch_id));
            }
        }
    }

    fn propose(&mut self, ctx: &mut Ctx<Etcd>, client: NodeId, id: u64, kind: CmdKind) {
        let tag = self.fresh_tag();
        let cmd = Cmd { origin: Some(Origin { server: self.me, tag }), kind };
        if self.replica.is_leader() {
            match self.replica.propose(ctx, cmd) {
                Ok(_) => {
                    self.v.waiting.insert(tag, (client, id));
                    self.arm_req_timeout(ctx, ServerTimer::ReqTimeout { tag });
                }
                Err(_) => self.respond(ctx, client, id, Err(EtcdError::NoLeader)),
            }
        } else if let Some(leader) = self.replica.leader_hint() {
            self.v.waiting.insert(tag, (client, id));
            self.arm_req_timeout(ctx, ServerTimer::ReqTimeout { tag });
            ctx.send(leader, Peer::Propose(cmd));
        } else {
            self.respond(ctx, client, id, Err(EtcdError::NoLeader));
        }
    }

    fn read(&mut self, ctx: &mut Ctx<Etcd>, client: NodeId, req: Request) {
        let rid = self.fresh_rid();
        if self.replica.is_leader() {
            match self.replica.read_index(ctx, rid) {
                Ok(()) => {
                    self.v.reads.insert(rid, (client, req));
                    self.arm_req_timeout(ctx, ServerTimer::ReadTimeout { rid });
                }
                Err(_) => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
            }
        } else if let Some(leader) = self.replica.leader_hint() {
            self.v.reads.insert(rid, (client, req));
            self.arm_req_timeout(ctx, ServerTimer::ReadTimeout { rid });
            ctx.send(leader, Peer::ReadIndex { rid });
        } else {
            self.respond(ctx, client, req.id, Err(EtcdError::NoLeader));
        }
    }

    fn serve_read(&mut self, ctx: &mut Ctx<Etcd>, client: NodeId, req: Request) {
        let kv = match &req.op {
            Op::Get { key } => self.store.get(key),
            Op::LastCreateBelow { prefix, max_create_rev } => self.store.last_create_below(prefix, *max_create_rev),
            _ => None,
        };
        self.respond(ctx, client, req.id, Ok(Reply::Range { kv }));
    }

    fn keep_alive(&mut self, ctx: &mut Ctx<Etcd>, who: RenewFor, lease: LeaseId) {
        if self.replica.is_leader() {
            let now = ctx.now_mono_ns();
            match self.lessor.renew(lease, now) {
                Renewal::Renewed(ttl_ns) => self.answer_renewal(ctx, who, lease, ttl_ns),
                Renewal::NotFound => self.answer_renewal(ctx, who, lease, 0),
                Renewal::Expired => self.v.parked.entry(lease).or_default().push(who),
                // A leader that has not applied its first entry yet: not primary; the client
                // sends the next keep-alive 500 ms later.
                Renewal::NotPrimary => {}
            }
        } else if let RenewFor::Client { client, id } = who {
            if let Some(leader) = self.replica.leader_hint() {
                let rid = self.fresh_rid();
                self.v.renewals.insert(rid, (client, id));
                ctx.send(leader, Peer::Renew { rid, lease });
            }
        }
    }

    fn answer_renewal(&mut self, ctx: &mut Ctx<Etcd>, who: RenewFor, lease: LeaseId, ttl_ns: Nanos) {
        match who {
            RenewFor::Client { client, id } => self.respond(ctx, client, id, Ok(Reply::KeepAlive { lease, ttl_ns })),
            RenewFor::Peer { peer, rid } => ctx.send(peer, Peer::RenewReply { rid, lease, ttl_ns }),
        }
    }

    // ----- members -----

    fn on_peer(&mut self, ctx: &mut Ctx<Etcd>, from: NodeId, msg: Peer) {
        match msg {
            Peer::Propose(cmd) => {
                // Not the leader any more: raft drops it; the proposer's client times out.
                let _ = self.replica.propose(ctx, cmd);
            }
            Peer::ReadIndex { rid } => {
                let lrid = self.fresh_rid();
                match self.replica.read_index(ctx, lrid) {
                    Ok(()) => {
                        self.v.peer_reads.insert(lrid, (from, rid));
                    }
                    Err(_) => ctx.send(from, Peer::ReadIndexReply { rid, index: None }),
                }
            }
            Peer::ReadIndexReply { rid, index } => {
                if let Some((client, req)) = self.v.reads.remove(&rid) {
                    match index {
                        Some(ix) => self.v.indexed_reads.push((ix, client, req)),
                        None => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
                    }
                }
            }
            Peer::Renew { rid, lease } => self.keep_alive(ctx, RenewFor::Peer { peer: from, rid }, lease),
            Peer::RenewReply { rid, lease, ttl_ns } => {
                if let Some((client, id)) = self.v.renewals.remove(&rid) {
                    self.respond(ctx, client, id, Ok(Reply::KeepAlive { lease, ttl_ns }));
                }
            }
        }
    }

    // ----- applying the log -----

    fn apply(&mut self, ctx: &mut Ctx<Etcd>, entry: Committed<Cmd>) {
        let now = ctx.now_mono_ns();
        let Some(cmd) = entry.cmd else {
            // The leader's own empty entry: promote the lessor (etcd applyEntryNormal).
            if self.replica.is_leader() && entry.term == self.replica.term() {
                self.lessor.promote(now, self.cfg.election_ns);
                ctx.note(|| format!("lessor promoted: {} leases extended", self.lessor.len()));
            }
            return;
        };
        if let Some(o) = cmd.origin {
            if !self.applied_origins.insert(o) {
                return;
            }
        }
        // Every member applies the entry; only the one that proposed it, for a client still
        // waiting, answers, so only that one works out the answer's read-only parts.
        let waiter = cmd.origin.filter(|o| o.server == self.me).and_then(|o| self.v.waiting.remove(&o.tag));
        let answers = waiter.is_some();
        let result = match cmd.kind {
            CmdKind::LeaseGrant { ttl_ns } => {
                let ttl_ns = ttl_ns.max(self.cfg.min_ttl_ns);
                self.lessor.grant(entry.index, ttl_ns, now);
                Ok(Reply::LeaseGranted { lease: entry.index, ttl_ns })
            }
            CmdKind::LeaseRevoke { lease } => {
                let count = match self.lessor.revoke(lease) {
                    Some(l) => {
                        let keys: Vec<String> = l.keys.into_iter().collect();
                        let n = self.delete_keys(ctx, &keys);
                        ctx.note(|| format!("lease {lease} revoked: {n} keys deleted"));
                        n
                    }
                    None => 0,
                };
                for who in self.v.parked.remove(&lease).unwrap_or_default() {
                    self.answer_renewal(ctx, who, lease, 0);
                }
                Ok(Reply::Deleted { count })
            }
            CmdKind::MutexTxn { my_key, prefix, lease } => match self.store.create_rev(&my_key) {
                None => {
                    // A put under a lease the member no longer has fails the whole transaction.
                    if self.lessor.get(lease).is_none() {
                        Err(EtcdError::LeaseNotFound)
                    } else {
                        let rev = self.store.put(&my_key, lease);
                        self.lessor.attach(lease, &my_key);
                        self.notify(ctx, &my_key, rev, false);
                        let owner = if answers { self.store.first_create(&prefix) } else { None };
                        Ok(Reply::Txn { succeeded: true, my_create_rev: rev, owner })
                    }
                }
                Some(create_rev) => {
                    let owner = if answers { self.store.first_create(&prefix) } else { None };
                    Ok(Reply::Txn { succeeded: false, my_create_rev: create_rev, owner })
                }
            },
            CmdKind::Delete { key } => {
                let n = self.delete_keys(ctx, std::slice::from_ref(&key));
                Ok(Reply::Deleted { count: n })
            }
        };
        if let Some((client, id)) = waiter {
            self.respond(ctx, client, id, result);
        }
    }

    /// Deletes keys in one revision, detaches them from their leases and fires the watches.
    fn delete_keys<K: AsRef<str>>(&mut self, ctx: &mut Ctx<Etcd>, keys: &[K]) -> u64 {
        let (gone, rev) = self.store.delete(keys);
        for kv in &gone {
            self.lessor.detach(kv.lease, &kv.key);
            self.notify(ctx, &kv.key, rev, true);
        }
        gone.len() as u64
    }

    fn notify(&mut self, ctx: &mut Ctx<Etcd>, key: &str, rev: Revision, deleted: bool) {
        for w in 0..self.v.watchers.len() {
            if self.v.watchers[w].key == key && self.v.watchers[w].start_rev <= rev {
                self.push_event(ctx, w, rev, deleted);
            }
        }
    }

    /// Sends watcher `w` an event and keeps it until acknowledged.
    fn push_event(&mut self, ctx: &mut Ctx<Etcd>, w: usize, rev: Revision, deleted: bool) {
        let after = self.service_ns(ctx);
        let now = ctx.now_mono_ns();
        let watcher = &mut self.v.watchers[w];
        watcher.next_seq += 1;
        let ev =
            WatchEvent { watch_id: watcher.watch_id, seq: watcher.next_seq, key: watcher.key.clone(), rev, deleted };
        ctx.send_after(after, watcher.client, ev.clone());
        watcher.unacked.push((ev, now + after));
        if self.v.retransmit_timer.is_none() {
            self.v.retransmit_timer = Some(ctx.set_timer(RETRANSMIT_NS, ServerTimer::Retransmit));
        }
    }

    /// Resends events unacknowledged for a retransmission timeout.
    fn retransmit(&mut self, ctx: &mut Ctx<Etcd>) {
        self.v.retransmit_timer = None;
        let now = ctx.now_mono_ns();
        let mut pending = false;
        for w in self.v.watchers.iter_mut() {
            for (ev, sent) in w.unacked.iter_mut() {
                if now >= *sent + RETRANSMIT_NS {
                    ctx.send(w.client, ev.clone());
                    *sent = now;
                }
                pending = true;
            }
        }
        if pending {
            self.v.retransmit_timer = Some(ctx.set_timer(RETRANSMIT_NS, ServerTimer::Retransmit));
        }
    }

    /// After any handler: apply what committed, finish reads, follow leadership changes.
    fn settle(&mut self, ctx: &mut Ctx<Etcd>) {
        let mut committed = std::mem::take(&mut self.committed);
        self.replica.take_committed_entries_into(&mut committed);
        for entry in committed.drain(..) {
            self.apply(ctx, entry);
        }
        self.committed = committed;
        let mut finished = std::mem::take(&mut self.finished_reads);
        self.replica.take_reads_into(&mut finished);
        for (rid, r) in finished.drain(..) {
            if let Some((client, req)) = self.v.reads.remove(&rid) {
                match r {
                    Ok(ix) => self.v.indexed_reads.push((ix, client, req)),
                    Err(_) => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
                }
            } else if let Some((peer, prid)) = self.v.peer_reads.remove(&rid) {
                ctx.send(peer, Peer::ReadIndexReply { rid: prid, index: r.ok() });
            }
        }
        self.finished_reads = finished;
        let applied = self.replica.core().map(|c| c.applied_index()).unwrap_or(0);
        if self.v.indexed_reads.iter().any(|(ix, _, _)| *ix <= applied) {
            // The reads now applied, in arrival order, out of the waiting list (the others keep
            // their order).
            let mut ready = std::mem::take(&mut self.ready_reads);
            ready.extend(self.v.indexed_reads.extract_if(.., |(ix, _, _)| *ix <= applied));
            for (_, client, req) in ready.drain(..) {
                self.serve_read(ctx, client, req);
            }
            self.ready_reads = ready;
        }
        if self.lessor.is_primary() && !self.replica.is_leader() {
            self.lessor.demote();
            self.v.parked.clear();
            ctx.note(|| "lessor demoted".to_string());
        }
    }

    fn arm_check(&mut self, ctx: &mut Ctx<Etcd>) {
        self.v.check_timer = Some(ctx.set_timer(self.cfg.lease_check_ns, ServerTimer::LeaseCheck));
    }
}

/// What a member keeps across a crash (etcd's data dir: the WAL, the backend with its leases),
/// and the counters kept so nothing meant for its previous life matches the new one.
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: ServerConfig,
    me: NodeId,
    replica: ReplicaDisk<Cmd>,
    store: Store,
    leases: BTreeMap<LeaseId, (Nanos, BTreeSet<String>)>,
    incarnation: u64,
    applied_origins: AppliedOrigins,
    seen: BTreeMap<NodeId, BTreeSet<u64>>,
    next_rid: u64,
}

impl Durable for EtcdServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let EtcdServer { cfg, me, replica, store, lessor, incarnation, applied_origins, seen, next_rid, .. } = self;
        ServerDisk {
            cfg,
            me,
            replica: replica.into_disk(),
            store,
            leases: lessor.into_disk(),
            // Bumped at every crash, so request tags never repeat across restarts.
            incarnation: incarnation + 1,
            applied_origins,
            seen,
            next_rid,
        }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, me, replica, store, leases, incarnation, applied_origins, seen, next_rid } = disk;
        EtcdServer {
            cfg,
            me,
            replica: Replica::from_disk(replica),
            store,
            lessor: Lessor::from_disk(leases),
            incarnation,
            applied_origins,
            seen,
            next_rid,
            v: Volatile::default(),
            committed: Vec::new(),
            finished_reads: Vec::new(),
            ready_reads: Vec::new(),
        }
    }
}

impl Process<Etcd> for EtcdServer {
    fn on_start(&mut self, ctx: &mut Ctx<Etcd>) {
        self.me = ctx.me();
        self.replica.on_start(ctx);
        self.arm_check(ctx);
        self.settle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Etcd>, from: NodeId, msg: EtcdMsg) {
        match msg {
            EtcdMsg::Consensus(m) => {
                self.replica.on_message(ctx, from, m);
                self.settle(ctx);
            }
            EtcdMsg::Request(r) => {
                self.v.inbox.push((from, r));
                if self.v.dispatch_timer.is_none() {
                    self.v.dispatch_timer = Some(ctx.set_timer(0, ServerTimer::Dispatch));
                }
            }
            EtcdMsg::StreamCancel(c) => {
                let before = self.v.inbox.len();
                self.v.inbox.retain(|(client, r)| !(*client == from && r.id == c.id));
                if self.v.inbox.len() < before {
                    ctx.note(|| format!("req#{} cancelled by the client before its handler started: dropped", c.id));
                }
            }
            EtcdMsg::Peer(p) => {
                self.on_peer(ctx, from, p);
                self.settle(ctx);
            }
            EtcdMsg::WatchAck(a) => {
                if let Some(w) = self.v.watchers.iter_mut().find(|w| w.client == from && w.watch_id == a.watch_id) {
                    w.unacked.retain(|(ev, _)| ev.seq > a.seq);
                }
            }
            EtcdMsg::Ping(p) => {
                // Answered by the transport, with no processing time.
                ctx.send(from, Pong { seq: p.seq, incarnation: self.incarnation });
            }
            EtcdMsg::Response(_) | EtcdMsg::WatchEvent(_) | EtcdMsg::WatchCreated(_) | EtcdMsg::Pong(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Etcd>, timer: TimerId, tag: EtcdTimer) {
        match tag {
            EtcdTimer::Consensus(_) => {
                self.replica.on_timer(ctx);
                self.settle(ctx);
            }
            EtcdTimer::Server(ServerTimer::Retransmit) if self.v.retransmit_timer == Some(timer) => {
                self.retransmit(ctx);
            }
            EtcdTimer::Server(ServerTimer::Dispatch) if self.v.dispatch_timer == Some(timer) => {
                self.v.dispatch_timer = None;
                let mut inbox = std::mem::take(&mut self.v.inbox);
                for (client, req) in inbox.drain(..) {
                    self.on_request(ctx, client, req);
                }
                // The emptied buffer goes back, so the next request does not allocate a new one.
                if self.v.inbox.is_empty() {
                    self.v.inbox = inbox;
                }
                self.settle(ctx);
            }
            EtcdTimer::Server(ServerTimer::LeaseCheck) if self.v.check_timer == Some(timer) => {
                if self.replica.is_leader() {
                    let now = ctx.now_mono_ns();
                    for lease in self.lessor.expired(now) {
                        ctx.note(|| format!("lease {lease} expired: proposing revoke"));
                        let _ = self.replica.propose(ctx, Cmd { origin: None, kind: CmdKind::LeaseRevoke { lease } });
                    }
                }
                self.arm_check(ctx);
                self.settle(ctx);
            }
            EtcdTimer::Server(ServerTimer::ReqTimeout { tag }) => {
                if let Some((client, id)) = self.v.waiting.remove(&tag) {
                    ctx.note(|| format!("request {id} timed out (ReqTimeout)"));
                    self.respond(ctx, client, id, Err(EtcdError::Timeout));
                }
            }
            EtcdTimer::Server(ServerTimer::ReadTimeout { rid }) => {
                if let Some((client, req)) = self.v.reads.remove(&rid) {
                    ctx.note(|| format!("read {} timed out (ReqTimeout)", req.id));
                    self.respond(ctx, client, req.id, Err(EtcdError::Timeout));
                }
            }
            EtcdTimer::Server(_) | EtcdTimer::Client(_) => {}
        }
    }

    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
