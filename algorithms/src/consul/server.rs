//! One Consul server (`server-i`): a member of the Raft group ([`crate::consensus`]), the state
//! store every member applies the log to, and what only the leader runs:
//! - the session TTL timers (consul `agent/consul/session_ttl.go`: `resetSessionTimer` arms
//!   `TTL × SessionTTLMultiplier` (2); a new leader re-arms every TTL session at that length,
//!   `initializeSessionTimers`; a renew on the leader re-arms it; when it fires the leader
//!   applies a destroy, `invalidateSession`);
//! - the node failure detector behind `serfHealth` (memberlist's probe: a probe unanswered
//!   within the probe timeout makes the node suspect, and the suspicion times out into failed;
//!   the leader's `reconcileMember` then registers `serfHealth` critical through Raft, which
//!   invalidates the node's sessions; an alive member is registered passing again);
//! - the KV endpoint's lock-delay check (`agent/consul/kvs_endpoint.go`, `Apply`: a `KVLock` on
//!   a key whose delay has not expired answers `false` without going through Raft; the delay is
//!   set on every server when it applies an invalidation, on its own clock, in memory only:
//!   `state/delay.go`).
//!
//! Reads are answered by the leader (Consul forwards default and consistent reads to it): the
//! default mode from its own state at once, `consistent` after a read-index round. A blocking
//! query (`?index=`) waits on the server until the key's index passes the one given or its wait
//! (plus up to 1/16 of it at random, `lib.RandomStagger(wait / JitterFraction)`) runs out.
//!
//! Where it departs from Consul: a non-leader answers "not leader" with a hint and the agent
//! sends the call there (Consul's server forwards it: one hop either way); memberlist's gossip
//! is the leader probing every node each interval (in memberlist each member probes one random
//! member per interval and suspicion is confirmed by others, Lifeguard stretching the timeout
//! from 6× down to 1× as confirmations come in); the suspicion timeout is the small-cluster
//! minimum, `serf_suspicion_ms`.

use std::collections::BTreeMap;

use rand::Rng;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::protocol::{
    Cmd, CmdKind, ConsulError, ConsulMsg, ConsulTimer, Index, Ping, ReadMode, Reply, Rpc, RpcReply, ServerTimer,
    SessionId,
};
use super::state::State;
use super::Consul;
use crate::consensus::{Committed, LogIndex, NotLeader, Replica, ReplicaDisk};

mod fingerprint;

/// A server's settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Processing time per call.
    pub service_ms: Dist,
    /// How many client nodes (agents `client-0 …`) the cluster has.
    pub clients: usize,
    /// memberlist `ProbeInterval`.
    pub probe_interval_ns: Nanos,
    /// memberlist `ProbeTimeout`.
    pub probe_timeout_ns: Nanos,
    /// The suspicion timeout before a suspect node is declared failed.
    pub suspicion_ns: Nanos,
}

/// `structs.SessionTTLMultiplier`: the server waits twice the TTL before invalidating.
pub const SESSION_TTL_MULTIPLIER: u64 = 2;

/// The leader's view of one node's agent.
#[derive(Clone, Debug, Default)]
struct Member {
    /// When the oldest unanswered probe went out.
    probe_sent_ns: Option<Nanos>,
    /// Since when the node is suspect.
    suspect_since_ns: Option<Nanos>,
    /// The health last proposed for it (critical = `true`) this leadership.
    proposed: Option<bool>,
}

/// A query parked until its key changes or its wait ends.
#[derive(Clone, Debug)]
struct Blocked {
    client: NodeId,
    id: u64,
    key: LockKey,
    wait_index: Index,
    mode: ReadMode,
    timer: TimerId,
}

/// What a server forgets in a crash.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// Proposals waiting to apply: tag → (client, call id).
    waiting: BTreeMap<u64, (NodeId, u64)>,
    /// Consistent reads waiting for their read index: rid → (client, call id, key).
    reads: BTreeMap<u64, (NodeId, u64, LockKey)>,
    /// Reads with their index, waiting for it to apply.
    indexed_reads: Vec<(LogIndex, NodeId, u64, LockKey)>,
    /// Blocking queries by id.
    blocked: BTreeMap<u64, Blocked>,
    /// Lock-delay ends (monotonic), per key (`state.Delay`, not persisted).
    lock_delay: BTreeMap<LockKey, Nanos>,
    /// The leader's session TTL timers.
    ttl_timers: BTreeMap<SessionId, TimerId>,
    /// The leader's failure detector, per client node.
    members: Vec<Member>,
    /// The client nodes' ids, looked up at start.
    agents: Vec<NodeId>,
    probe_timer: Option<TimerId>,
    /// Whether this server acted as leader at the last settle.
    leading: bool,
    next_tag: u64,
    next_seq: u64,
    next_qid: u64,
}

/// One Consul server.
#[derive(Clone, Debug)]
pub struct ConsulServer {
    cfg: ServerConfig,
    me: NodeId,
    replica: Replica<Cmd>,
    /// Durable: the state store (rebuilt from the log and snapshot on restart; the replica keeps
    /// the applied mark, so it is kept as it is).
    state: State,
    /// Durable: counts restarts, so tags of different incarnations differ.
    incarnation: u64,
    v: Volatile,
    committed: Vec<Committed<Cmd>>,
    finished_reads: Vec<(u64, Result<LogIndex, NotLeader>)>,
}

impl ConsulServer {
    /// Member `index` of the group named `members`, which starts with member 0 leading term 1.
    pub fn new(index: usize, members: Vec<String>, cfg: ServerConfig, raft: crate::consensus::Config) -> Self {
        ConsulServer::from_disk(ServerDisk {
            cfg,
            me: 0,
            replica: Replica::new(index, members, raft).with_initial_leader(0).into_disk(),
            state: State::default(),
            incarnation: 0,
        })
    }

    /// The state store (for tests).
    pub fn state(&self) -> &State {
        &self.state
    }

    fn respond(&mut self, ctx: &mut Ctx<Consul>, client: NodeId, id: u64, result: Result<Reply, ConsulError>) {
        let after = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        ctx.send_after(after, client, RpcReply { id, result });
    }

    fn not_leader(&self) -> ConsulError {
        ConsulError::NotLeader { hint: self.replica.leader_hint().filter(|l| *l != self.me) }
    }

    fn propose(&mut self, ctx: &mut Ctx<Consul>, client: Option<(NodeId, u64)>, kind: CmdKind) {
        self.v.next_tag += 1;
        let tag = (self.incarnation << 40) | self.v.next_tag;
        let cmd = Cmd { origin: client.map(|_| (self.me, tag)), kind };
        match self.replica.propose(ctx, cmd) {
            Ok(_) => {
                if let Some(c) = client {
                    self.v.waiting.insert(tag, c);
                }
            }
            Err(_) => {
                if let Some((client, id)) = client {
                    let e = self.not_leader();
                    self.respond(ctx, client, id, Err(e));
                }
            }
        }
    }

    fn on_rpc(&mut self, ctx: &mut Ctx<Consul>, client: NodeId, rpc: Rpc) {
        if !self.replica.is_leader() {
            let e = self.not_leader();
            return self.respond(ctx, client, rpc.id, Err(e));
        }
        let now = ctx.now_mono_ns();
        match rpc.op {
            super::protocol::Op::SessionCreate(spec) => {
                self.propose(ctx, Some((client, rpc.id)), CmdKind::SessionCreate(spec))
            }
            super::protocol::Op::SessionDestroy { session } => {
                self.propose(ctx, Some((client, rpc.id)), CmdKind::SessionDestroy { session })
            }
            super::protocol::Op::SessionRenew { session } => {
                let result = match self.state.session(session).copied() {
                    Some(spec) => {
                        if let Some(ttl) = spec.ttl_ns {
                            self.arm_ttl(ctx, session, ttl);
                        }
                        Ok(Reply::Done)
                    }
                    None => Err(ConsulError::SessionNotFound),
                };
                self.respond(ctx, client, rpc.id, result);
            }
            super::protocol::Op::KvAcquire { key, session } => {
                if self.v.lock_delay.get(&key).is_some_and(|until| *until > now) {
                    let left = (self.v.lock_delay[&key] - now) / 1_000_000;
                    ctx.note(|| format!("rejecting lock of lock-{key} due to lock-delay ({left} ms left)"));
                    let entry = self.state.kv(key);
                    return self.respond(ctx, client, rpc.id, Ok(Reply::Bool(false, entry)));
                }
                self.propose(ctx, Some((client, rpc.id)), CmdKind::Acquire { key, session })
            }
            super::protocol::Op::KvRelease { key, session } => {
                self.propose(ctx, Some((client, rpc.id)), CmdKind::Release { key, session })
            }
            super::protocol::Op::KvGet { key, wait_index, wait_ns, mode } => match wait_index {
                Some(wait_index) if self.state.kv_index(key) <= wait_index => {
                    let jitter = if wait_ns >= 16 { ctx.rng().gen_range(0..wait_ns / 16) } else { 0 };
                    self.v.next_qid += 1;
                    let qid = self.v.next_qid;
                    let timer = ctx.set_timer(wait_ns + jitter, ServerTimer::QueryWait { qid });
                    self.v.blocked.insert(qid, Blocked { client, id: rpc.id, key, wait_index, mode, timer });
                }
                _ => self.answer_query(ctx, client, rpc.id, key, mode),
            },
        }
    }

    fn answer_query(&mut self, ctx: &mut Ctx<Consul>, client: NodeId, id: u64, key: LockKey, mode: ReadMode) {
        match mode {
            ReadMode::Default => {
                let result = Ok(Reply::Kv(self.state.kv(key), self.state.kv_index(key)));
                self.respond(ctx, client, id, result);
            }
            ReadMode::Consistent => {
                self.v.next_qid += 1;
                let rid = self.v.next_qid;
                match self.replica.read_index(ctx, rid) {
                    Ok(()) => {
                        self.v.reads.insert(rid, (client, id, key));
                    }
                    Err(_) => {
                        let e = self.not_leader();
                        self.respond(ctx, client, id, Err(e));
                    }
                }
            }
        }
    }

    fn arm_ttl(&mut self, ctx: &mut Ctx<Consul>, session: SessionId, ttl_ns: Nanos) {
        if let Some(old) = self.v.ttl_timers.remove(&session) {
            ctx.cancel_timer(old);
        }
        let timer = ctx.set_timer(ttl_ns * SESSION_TTL_MULTIPLIER, ServerTimer::SessionTtl { session });
        self.v.ttl_timers.insert(session, timer);
    }

    fn apply(&mut self, ctx: &mut Ctx<Consul>, entry: Committed<Cmd>) {
        let Some(cmd) = entry.cmd else { return };
        let applied = self.state.apply(entry.index, &cmd.kind);
        let now = ctx.now_mono_ns();
        for (key, delay) in &applied.delayed {
            let until = self.v.lock_delay.entry(*key).or_insert(0);
            *until = (*until).max(now + delay);
            let (key, ms) = (*key, delay / 1_000_000);
            ctx.note(|| format!("lock-{key} released by invalidation: lock-delay {ms} ms"));
        }
        if self.v.leading {
            if let Some((session, spec)) = applied.created {
                if let Some(ttl) = spec.ttl_ns {
                    self.arm_ttl(ctx, session, ttl);
                }
            }
            for session in &applied.destroyed {
                if let Some(t) = self.v.ttl_timers.remove(session) {
                    ctx.cancel_timer(t);
                }
            }
        }
        if let (Some((server, tag)), Some(result)) = (cmd.origin, applied.result) {
            if server == self.me {
                if let Some((client, id)) = self.v.waiting.remove(&tag) {
                    self.respond(ctx, client, id, result);
                }
            }
        }
    }

    /// After any handler: apply what committed, finish reads, follow leadership, wake queries.
    fn settle(&mut self, ctx: &mut Ctx<Consul>) {
        let mut committed = std::mem::take(&mut self.committed);
        self.replica.take_committed_entries_into(&mut committed);
        for entry in committed.drain(..) {
            self.apply(ctx, entry);
        }
        self.committed = committed;
        let mut finished = std::mem::take(&mut self.finished_reads);
        self.replica.take_reads_into(&mut finished);
        for (rid, r) in finished.drain(..) {
            if let Some((client, id, key)) = self.v.reads.remove(&rid) {
                match r {
                    Ok(ix) => self.v.indexed_reads.push((ix, client, id, key)),
                    Err(_) => {
                        let e = self.not_leader();
                        self.respond(ctx, client, id, Err(e));
                    }
                }
            }
        }
        self.finished_reads = finished;
        let applied = self.replica.core().map(|c| c.applied_index()).unwrap_or(0);
        if self.v.indexed_reads.iter().any(|(ix, ..)| *ix <= applied) {
            let ready: Vec<_> = self.v.indexed_reads.extract_if(.., |(ix, ..)| *ix <= applied).collect();
            for (_, client, id, key) in ready {
                let result = Ok(Reply::Kv(self.state.kv(key), self.state.kv_index(key)));
                self.respond(ctx, client, id, result);
            }
        }
        self.follow_leadership(ctx);
        let woken: Vec<u64> = self
            .v
            .blocked
            .iter()
            .filter(|(_, b)| self.state.kv_index(b.key) > b.wait_index)
            .map(|(qid, _)| *qid)
            .collect();
        for qid in woken {
            let b = self.v.blocked.remove(&qid).expect("listed above");
            ctx.cancel_timer(b.timer);
            self.answer_query(ctx, b.client, b.id, b.key, b.mode);
        }
    }

    fn follow_leadership(&mut self, ctx: &mut Ctx<Consul>) {
        let leads = self.replica.is_leader();
        if leads && !self.v.leading {
            self.v.leading = true;
            // initializeSessionTimers: every TTL session gets a full 2 × TTL from now.
            let sessions: Vec<(SessionId, Nanos)> = self.state.ttl_sessions().collect();
            for (session, ttl) in sessions {
                self.arm_ttl(ctx, session, ttl);
            }
            self.v.members = vec![Member::default(); self.v.agents.len()];
            self.v.probe_timer = Some(ctx.set_timer(self.cfg.probe_interval_ns, ServerTimer::Probe));
            ctx.note(|| "leader: session TTL timers armed, probing the agents".to_string());
        } else if !leads && self.v.leading {
            self.v.leading = false;
            for (_, t) in std::mem::take(&mut self.v.ttl_timers) {
                ctx.cancel_timer(t);
            }
            if let Some(t) = self.v.probe_timer.take() {
                ctx.cancel_timer(t);
            }
            self.v.members.clear();
            for (_, (client, id)) in std::mem::take(&mut self.v.waiting) {
                self.respond(ctx, client, id, Err(ConsulError::LeadershipLost));
            }
        }
    }

    /// One probe round of the leader's failure detector.
    fn probe(&mut self, ctx: &mut Ctx<Consul>) {
        let now = ctx.now_mono_ns();
        for i in 0..self.v.agents.len() {
            let m = &mut self.v.members[i];
            if let Some(sent) = m.probe_sent_ns {
                if now >= sent + self.cfg.probe_timeout_ns && m.suspect_since_ns.is_none() {
                    m.suspect_since_ns = Some(sent + self.cfg.probe_timeout_ns);
                }
            }
            let failed = m.suspect_since_ns.is_some_and(|s| now >= s + self.cfg.suspicion_ns);
            if failed && !self.state.is_critical(i as u32) && m.proposed != Some(true) {
                m.proposed = Some(true);
                ctx.note(|| format!("client-{i} failed (no ack): serfHealth critical"));
                self.propose(ctx, None, CmdKind::NodeHealth { node: i as u32, critical: true });
            }
            let m = &mut self.v.members[i];
            m.probe_sent_ns.get_or_insert(now);
            self.v.next_seq += 1;
            ctx.send(self.v.agents[i], Ping { seq: self.v.next_seq });
        }
        self.v.probe_timer = Some(ctx.set_timer(self.cfg.probe_interval_ns, ServerTimer::Probe));
    }

    fn on_ack(&mut self, ctx: &mut Ctx<Consul>, from: NodeId) {
        let Some(i) = self.v.agents.iter().position(|a| *a == from) else { return };
        let Some(m) = self.v.members.get_mut(i) else { return };
        m.probe_sent_ns = None;
        m.suspect_since_ns = None;
        if self.state.is_critical(i as u32) && m.proposed != Some(false) {
            m.proposed = Some(false);
            ctx.note(|| format!("client-{i} alive again: serfHealth passing"));
            self.propose(ctx, None, CmdKind::NodeHealth { node: i as u32, critical: false });
        }
    }
}

/// What a server keeps across a crash: its configuration and id, the replica's disk (Raft log
/// and snapshot), the state store and the incarnation count.
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: ServerConfig,
    me: NodeId,
    replica: ReplicaDisk<Cmd>,
    state: State,
    incarnation: u64,
}

impl Durable for ConsulServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let ConsulServer { cfg, me, replica, state, incarnation, .. } = self;
        // The incarnation counts restarts, so tags of different incarnations differ.
        ServerDisk { cfg, me, replica: replica.into_disk(), state, incarnation: incarnation + 1 }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, me, replica, state, incarnation } = disk;
        ConsulServer {
            cfg,
            me,
            replica: Replica::from_disk(replica),
            state,
            incarnation,
            v: Volatile::default(),
            committed: Vec::new(),
            finished_reads: Vec::new(),
        }
    }
}

impl Process<Consul> for ConsulServer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Consul>) {
        self.me = ctx.me();
        self.v.agents = (0..self.cfg.clients).filter_map(|i| ctx.node_named(&format!("client-{i}"))).collect();
        self.replica.on_start(ctx);
        self.settle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Consul>, from: NodeId, msg: ConsulMsg) {
        match msg {
            ConsulMsg::Consensus(m) => self.replica.on_message(ctx, from, m),
            ConsulMsg::Rpc(rpc) => self.on_rpc(ctx, from, rpc),
            ConsulMsg::Ack(_) => self.on_ack(ctx, from),
            ConsulMsg::RpcReply(_) | ConsulMsg::Ping(_) => {}
        }
        self.settle(ctx);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Consul>, timer: TimerId, tag: ConsulTimer) {
        match tag {
            ConsulTimer::Consensus(_) => self.replica.on_timer(ctx),
            ConsulTimer::Server(ServerTimer::Probe) if self.v.probe_timer == Some(timer) => self.probe(ctx),
            ConsulTimer::Server(ServerTimer::SessionTtl { session }) => {
                if self.v.ttl_timers.get(&session) == Some(&timer) {
                    self.v.ttl_timers.remove(&session);
                    ctx.note(|| format!("session s{session} TTL expired: invalidating"));
                    self.propose(ctx, None, CmdKind::SessionDestroy { session });
                }
            }
            ConsulTimer::Server(ServerTimer::QueryWait { qid }) => {
                if let Some(b) = self.v.blocked.remove(&qid) {
                    self.answer_query(ctx, b.client, b.id, b.key, b.mode);
                }
            }
            ConsulTimer::Server(_) | ConsulTimer::Client(_) => {}
        }
        self.settle(ctx);
    }

    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }
}
