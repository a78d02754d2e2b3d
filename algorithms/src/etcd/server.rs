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
//! - watches live on the member the client talks to and fire when that member applies the change;
//!   their events are resent until acknowledged (standing in for the TCP stream, which the
//!   simulator's message loss would otherwise break silently).
//!
//! Durable across a crash: the Raft state, the store and the leases (etcd's WAL and backend);
//! lost: watches, waiting requests, lease expiry times. The transport answers the client's gRPC
//! keepalive pings with the member's incarnation, so a client learns that a restart dropped its
//! connection (and its watch).

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::dist::Dist;
use locksim_simulator::process::{downcast, Ctx, Msg, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::lessor::{Lessor, Renewal};
use super::mvcc::Store;
use super::protocol::{
    Cmd, CmdKind, EtcdError, LeaseId, Op, Origin, Peer, Ping, Pong, Reply, Request, Response, Revision, WatchAck,
    WatchCreated, WatchEvent,
};
use crate::consensus::{Committed, ConsensusMsg, Replica};
use crate::smallmap::SmallMap;

/// The lessor's check timer.
const TAG_LEASE_CHECK: u64 = 1;
/// The watch streams' retransmission timer.
const TAG_RETRANSMIT: u64 = 2;
/// TCP's minimum retransmission timeout (Linux `TCP_RTO_MIN`, 200 ms).
pub const RETRANSMIT_NS: Nanos = 200_000_000;

/// A member's settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub service_ms: Dist,
    pub lease_check_ns: Nanos,
    /// The election timeout: how far a new leader extends every lease.
    pub election_ns: Nanos,
    /// etcd's minimum lease TTL (1.5 election timeouts in whole seconds, rounded up).
    pub min_ttl_ns: Nanos,
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
pub struct EtcdServer {
    cfg: ServerConfig,
    replica: Replica<Cmd>,
    // Durable.
    store: Store,
    lessor: Lessor,
    /// Bumped at every crash, so request tags never repeat across restarts.
    incarnation: u64,
    /// Origins of the entries applied so far (replicated state): an entry proposed twice (the
    /// network duplicated the forwarded proposal) takes effect once, as a request sent once over
    /// TCP would.
    applied_origins: BTreeSet<Origin>,
    // Volatile.
    me: NodeId,
    /// Request ids seen per client on this connection: a request the network duplicated is
    /// handled once (TCP never delivers twice).
    seen: BTreeMap<NodeId, BTreeSet<u64>>,
    next_tag: u64,
    /// Proposals this member made for a client: tag → (client, request id).
    waiting: SmallMap<u64, (NodeId, u64)>,
    next_rid: u64,
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
    watchers: Vec<Watcher>,
    check_timer: Option<TimerId>,
    retransmit_timer: Option<TimerId>,
    /// The batch `settle` is applying (kept to reuse its allocation).
    committed: Vec<Committed<Cmd>>,
}

impl EtcdServer {
    pub fn new(index: usize, members: Vec<String>, cfg: ServerConfig, raft: crate::consensus::Config) -> Self {
        EtcdServer {
            cfg,
            // The cluster has been running with server-0 as leader (the scenario format's
            // convention for models with a leader).
            replica: Replica::new(index, members, raft).with_initial_leader(0),
            store: Store::new(),
            lessor: Lessor::default(),
            incarnation: 0,
            applied_origins: BTreeSet::new(),
            me: 0,
            seen: BTreeMap::new(),
            next_tag: 0,
            waiting: SmallMap::new(),
            next_rid: 0,
            reads: SmallMap::new(),
            indexed_reads: Vec::new(),
            peer_reads: SmallMap::new(),
            renewals: SmallMap::new(),
            parked: BTreeMap::new(),
            watchers: Vec::new(),
            check_timer: None,
            retransmit_timer: None,
            committed: Vec::new(),
        }
    }

    /// The store (for tests).
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn service_ns(&self, ctx: &mut Ctx) -> Nanos {
        ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()))
    }

    fn respond(&mut self, ctx: &mut Ctx, client: NodeId, id: u64, result: Result<Reply, EtcdError>) {
        let after = self.service_ns(ctx);
        let header_rev = self.store.rev();
        ctx.send_after(after, client, Response { id, header_rev, result });
    }

    fn fresh_tag(&mut self) -> u64 {
        self.next_tag += 1;
        (self.incarnation << 40) | self.next_tag
    }

    fn fresh_rid(&mut self) -> u64 {
        self.next_rid += 1;
        self.next_rid
    }

    // ----- client calls -----

    fn on_request(&mut self, ctx: &mut Ctx, client: NodeId, req: Request) {
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
                if self.watchers.iter().any(|w| w.client == client && w.watch_id == watch_id) {
                    return; // a resent request: already registered
                }
                // Catch up from the history first, then follow applied changes.
                let past = self.store.events_since(&key, start_rev);
                let key = key.to_string();
                self.watchers.push(Watcher { client, watch_id, key, start_rev, next_seq: 0, unacked: Vec::new() });
                let w = self.watchers.len() - 1;
                for (rev, deleted) in past {
                    self.push_event(ctx, w, rev, deleted);
                }
            }
            Op::WatchCancel { watch_id } => {
                self.watchers.retain(|w| !(w.client == client && w.watch_id == watch_id));
            }
        }
    }

    fn propose(&mut self, ctx: &mut Ctx, client: NodeId, id: u64, kind: CmdKind) {
        let tag = self.fresh_tag();
        let cmd = Cmd { origin: Some(Origin { server: self.me, tag }), kind };
        if self.replica.is_leader() {
            match self.replica.propose(ctx, cmd) {
                Ok(_) => {
                    self.waiting.insert(tag, (client, id));
                }
                Err(_) => self.respond(ctx, client, id, Err(EtcdError::NoLeader)),
            }
        } else if let Some(leader) = self.replica.leader_hint() {
            self.waiting.insert(tag, (client, id));
            ctx.send(leader, Peer::Propose(cmd));
        } else {
            self.respond(ctx, client, id, Err(EtcdError::NoLeader));
        }
    }

    fn read(&mut self, ctx: &mut Ctx, client: NodeId, req: Request) {
        let rid = self.fresh_rid();
        if self.replica.is_leader() {
            match self.replica.read_index(ctx, rid) {
                Ok(()) => {
                    self.reads.insert(rid, (client, req));
                }
                Err(_) => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
            }
        } else if let Some(leader) = self.replica.leader_hint() {
            self.reads.insert(rid, (client, req));
            ctx.send(leader, Peer::ReadIndex { rid });
        } else {
            self.respond(ctx, client, req.id, Err(EtcdError::NoLeader));
        }
    }

    fn serve_read(&mut self, ctx: &mut Ctx, client: NodeId, req: Request) {
        let kv = match &req.op {
            Op::Get { key } => self.store.get(key),
            Op::LastCreateBelow { prefix, max_create_rev } => self.store.last_create_below(prefix, *max_create_rev),
            _ => None,
        };
        self.respond(ctx, client, req.id, Ok(Reply::Range { kv }));
    }

    fn keep_alive(&mut self, ctx: &mut Ctx, who: RenewFor, lease: LeaseId) {
        if self.replica.is_leader() {
            let now = ctx.now_mono_ns();
            match self.lessor.renew(lease, now) {
                Renewal::Renewed(ttl_ns) => self.answer_renewal(ctx, who, lease, ttl_ns),
                Renewal::NotFound => self.answer_renewal(ctx, who, lease, 0),
                Renewal::Expired => self.parked.entry(lease).or_default().push(who),
                // A leader that has not applied its first entry yet: not primary; the client
                // sends the next keep-alive 500 ms later.
                Renewal::NotPrimary => {}
            }
        } else if let RenewFor::Client { client, id } = who {
            if let Some(leader) = self.replica.leader_hint() {
                let rid = self.fresh_rid();
                self.renewals.insert(rid, (client, id));
                ctx.send(leader, Peer::Renew { rid, lease });
            }
        }
    }

    fn answer_renewal(&mut self, ctx: &mut Ctx, who: RenewFor, lease: LeaseId, ttl_ns: Nanos) {
        match who {
            RenewFor::Client { client, id } => self.respond(ctx, client, id, Ok(Reply::KeepAlive { lease, ttl_ns })),
            RenewFor::Peer { peer, rid } => ctx.send(peer, Peer::RenewReply { rid, lease, ttl_ns }),
        }
    }

    // ----- members -----

    fn on_peer(&mut self, ctx: &mut Ctx, from: NodeId, msg: Peer) {
        match msg {
            Peer::Propose(cmd) => {
                // Not the leader any more: raft drops it; the proposer's client times out.
                let _ = self.replica.propose(ctx, cmd);
            }
            Peer::ReadIndex { rid } => {
                let lrid = self.fresh_rid();
                match self.replica.read_index(ctx, lrid) {
                    Ok(()) => {
                        self.peer_reads.insert(lrid, (from, rid));
                    }
                    Err(_) => ctx.send(from, Peer::ReadIndexReply { rid, index: None }),
                }
            }
            Peer::ReadIndexReply { rid, index } => {
                if let Some((client, req)) = self.reads.remove(&rid) {
                    match index {
                        Some(ix) => self.indexed_reads.push((ix, client, req)),
                        None => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
                    }
                }
            }
            Peer::Renew { rid, lease } => self.keep_alive(ctx, RenewFor::Peer { peer: from, rid }, lease),
            Peer::RenewReply { rid, lease, ttl_ns } => {
                if let Some((client, id)) = self.renewals.remove(&rid) {
                    self.respond(ctx, client, id, Ok(Reply::KeepAlive { lease, ttl_ns }));
                }
            }
        }
    }

    // ----- applying the log -----

    fn apply(&mut self, ctx: &mut Ctx, entry: Committed<Cmd>) {
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
                for who in self.parked.remove(&lease).unwrap_or_default() {
                    self.answer_renewal(ctx, who, lease, 0);
                }
                Ok(Reply::Deleted { count })
            }
            CmdKind::MutexTxn { my_key, prefix, lease } => match self.store.get(&my_key) {
                None => {
                    // A put under a lease the member no longer has fails the whole transaction.
                    if self.lessor.get(lease).is_none() {
                        Err(EtcdError::LeaseNotFound)
                    } else {
                        let rev = self.store.put(&my_key, lease);
                        self.lessor.attach(lease, &my_key);
                        self.notify(ctx, &my_key, rev, false);
                        let owner = self.store.first_create(&prefix);
                        Ok(Reply::Txn { succeeded: true, my_create_rev: rev, owner })
                    }
                }
                Some(kv) => {
                    let owner = self.store.first_create(&prefix);
                    Ok(Reply::Txn { succeeded: false, my_create_rev: kv.create_rev, owner })
                }
            },
            CmdKind::Delete { key } => {
                let n = self.delete_keys(ctx, &[key.to_string()]);
                Ok(Reply::Deleted { count: n })
            }
        };
        if let Some(o) = cmd.origin {
            if o.server == self.me {
                if let Some((client, id)) = self.waiting.remove(&o.tag) {
                    self.respond(ctx, client, id, result);
                }
            }
        }
    }

    /// Deletes keys in one revision, detaches them from their leases and fires the watches.
    fn delete_keys(&mut self, ctx: &mut Ctx, keys: &[String]) -> u64 {
        let (gone, rev) = self.store.delete(keys);
        for kv in &gone {
            self.lessor.detach(kv.lease, &kv.key);
            self.notify(ctx, &kv.key, rev, true);
        }
        gone.len() as u64
    }

    fn notify(&mut self, ctx: &mut Ctx, key: &str, rev: Revision, deleted: bool) {
        for w in 0..self.watchers.len() {
            if self.watchers[w].key == key && self.watchers[w].start_rev <= rev {
                self.push_event(ctx, w, rev, deleted);
            }
        }
    }

    /// Sends watcher `w` an event and keeps it until acknowledged.
    fn push_event(&mut self, ctx: &mut Ctx, w: usize, rev: Revision, deleted: bool) {
        let after = self.service_ns(ctx);
        let now = ctx.now_mono_ns();
        let watcher = &mut self.watchers[w];
        watcher.next_seq += 1;
        let ev =
            WatchEvent { watch_id: watcher.watch_id, seq: watcher.next_seq, key: watcher.key.clone(), rev, deleted };
        ctx.send_after(after, watcher.client, ev.clone());
        watcher.unacked.push((ev, now + after));
        if self.retransmit_timer.is_none() {
            self.retransmit_timer = Some(ctx.set_timer(RETRANSMIT_NS, TAG_RETRANSMIT));
        }
    }

    /// Resends events unacknowledged for a retransmission timeout.
    fn retransmit(&mut self, ctx: &mut Ctx) {
        self.retransmit_timer = None;
        let now = ctx.now_mono_ns();
        let mut pending = false;
        for w in self.watchers.iter_mut() {
            for (ev, sent) in w.unacked.iter_mut() {
                if now >= *sent + RETRANSMIT_NS {
                    ctx.send(w.client, ev.clone());
                    *sent = now;
                }
                pending = true;
            }
        }
        if pending {
            self.retransmit_timer = Some(ctx.set_timer(RETRANSMIT_NS, TAG_RETRANSMIT));
        }
    }

    /// After any handler: apply what committed, finish reads, follow leadership changes.
    fn settle(&mut self, ctx: &mut Ctx) {
        let mut committed = std::mem::take(&mut self.committed);
        self.replica.take_committed_entries_into(&mut committed);
        for entry in committed.drain(..) {
            self.apply(ctx, entry);
        }
        self.committed = committed;
        for (rid, r) in self.replica.take_reads() {
            if let Some((client, req)) = self.reads.remove(&rid) {
                match r {
                    Ok(ix) => self.indexed_reads.push((ix, client, req)),
                    Err(_) => self.respond(ctx, client, req.id, Err(EtcdError::NoLeader)),
                }
            } else if let Some((peer, prid)) = self.peer_reads.remove(&rid) {
                ctx.send(peer, Peer::ReadIndexReply { rid: prid, index: r.ok() });
            }
        }
        let applied = self.replica.core().map(|c| c.applied_index()).unwrap_or(0);
        if self.indexed_reads.iter().any(|(ix, _, _)| *ix <= applied) {
            let (ready, later): (Vec<_>, Vec<_>) =
                std::mem::take(&mut self.indexed_reads).into_iter().partition(|(ix, _, _)| *ix <= applied);
            self.indexed_reads = later;
            for (_, client, req) in ready {
                self.serve_read(ctx, client, req);
            }
        }
        if self.lessor.is_primary() && !self.replica.is_leader() {
            self.lessor.demote();
            self.parked.clear();
            ctx.note(|| "lessor demoted".to_string());
        }
    }

    fn arm_check(&mut self, ctx: &mut Ctx) {
        self.check_timer = Some(ctx.set_timer(self.cfg.lease_check_ns, TAG_LEASE_CHECK));
    }
}

impl Process for EtcdServer {
    fn on_start(&mut self, ctx: &mut Ctx) {
        self.me = ctx.me();
        self.replica.on_start(ctx);
        self.arm_check(ctx);
        self.settle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Msg) {
        let msg = match downcast::<ConsensusMsg<Cmd>>(msg) {
            Ok(m) => {
                self.replica.on_message(ctx, from, *m);
                return self.settle(ctx);
            }
            Err(msg) => msg,
        };
        let msg = match downcast::<Request>(msg) {
            Ok(r) => {
                self.on_request(ctx, from, *r);
                return self.settle(ctx);
            }
            Err(msg) => msg,
        };
        let msg = match downcast::<Peer>(msg) {
            Ok(p) => {
                self.on_peer(ctx, from, *p);
                return self.settle(ctx);
            }
            Err(msg) => msg,
        };
        let msg = match downcast::<WatchAck>(msg) {
            Ok(a) => {
                if let Some(w) = self.watchers.iter_mut().find(|w| w.client == from && w.watch_id == a.watch_id) {
                    w.unacked.retain(|(ev, _)| ev.seq > a.seq);
                }
                return;
            }
            Err(msg) => msg,
        };
        if let Ok(p) = downcast::<Ping>(msg) {
            // Answered by the transport, with no processing time.
            ctx.send(from, Pong { seq: p.seq, incarnation: self.incarnation });
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx, timer: TimerId, tag: u64) {
        if self.replica.on_timer(ctx, tag) {
            return self.settle(ctx);
        }
        if tag == TAG_RETRANSMIT && self.retransmit_timer == Some(timer) {
            return self.retransmit(ctx);
        }
        if tag == TAG_LEASE_CHECK && self.check_timer == Some(timer) {
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
    }

    fn on_crash(&mut self) {
        self.replica.on_crash();
        self.lessor.crash();
        self.incarnation += 1;
        self.next_tag = 0;
        self.waiting.clear();
        self.reads.clear();
        self.indexed_reads.clear();
        self.peer_reads.clear();
        self.renewals.clear();
        self.parked.clear();
        self.watchers.clear();
        self.check_timer = None;
        self.retransmit_timer = None;
    }

    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }
}
