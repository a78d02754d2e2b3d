//! One CP member (`server-i`) of the CP group that holds the `FencedLock`s and CP sessions: a
//! Raft member ([`crate::consensus`]), the replicated [`State`], and on the leader the
//! expired-session check (Hazelcast 5.x `RaftSessionService`: every second,
//! `CHECK_EXPIRED_SESSIONS_TASK_PERIOD_IN_MILLIS`, the leader commits an `ExpireSessionsOp` for
//! the sessions whose expiration time has passed on its clock).
//!
//! An invocation reaching a follower is answered `NotLeaderException` with the leader's address
//! (the client retries there). The leader proposes every op; when it applies one, it answers
//! the invocations the command completed that it received itself: the caller's own op, or a
//! waiter the op handed the lock to. A waiting `LockOp` stays registered on the leader that
//! received it; a leader that steps down answers its registrations `NotLeaderException` and the
//! clients invoke again with the same uid (idempotent in [`State`]).
//!
//! A new leader moves every session's expiration to at least now + one session heartbeat
//! interval (`RaftSessionService.onTermChange` → `shiftExpirationTimes`), so that clients have
//! time to find it. Not modelled: CP membership changes, CP group creation (the group exists from the start,
//! led by `server-0`), snapshots.

use std::collections::BTreeMap;

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::protocol::{CmdKind, HazelcastMsg, HazelcastTimer, HzError, Invocation, Response, ServerTimer};
use super::state::State;
use super::Hazelcast;
use crate::consensus::{Committed, Replica, ReplicaDisk};

mod fingerprint;

/// A CP member's settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Processing time per invocation.
    pub service_ms: Dist,
    /// Client nodes (`client-0 …`).
    pub clients: usize,
    /// `session-time-to-live-seconds`.
    pub session_ttl_ns: Nanos,
    /// `session-heartbeat-interval-seconds` (a new leader's grace).
    pub heartbeat_ns: Nanos,
    /// `FencedLockConfig.lockAcquireLimit` (0: no limit).
    pub acquire_limit: u32,
}

/// `CHECK_EXPIRED_SESSIONS_TASK_PERIOD_IN_MILLIS`.
pub const EXPIRY_CHECK_NS: Nanos = 1_000_000_000;

#[derive(Clone, Debug, Default)]
struct Volatile {
    /// Invocations registered on this member: (client index, uid) → client node.
    pending: BTreeMap<(u32, u64), NodeId>,
    clients: Vec<NodeId>,
    check_timer: Option<TimerId>,
    leading: bool,
}

/// One CP member.
#[derive(Clone, Debug)]
pub struct HazelcastServer {
    cfg: ServerConfig,
    me: NodeId,
    replica: Replica<CmdKind>,
    /// Durable (CP members persist nothing by default, but the group's state is what the other
    /// members keep; the replica keeps the applied mark, so the state stays with it).
    state: State,
    v: Volatile,
    committed: Vec<Committed<CmdKind>>,
}

impl HazelcastServer {
    /// Member `index` of the group named `members`, led by member 0 at the start.
    pub fn new(index: usize, members: Vec<String>, cfg: ServerConfig, raft: crate::consensus::Config) -> Self {
        HazelcastServer::from_disk(ServerDisk {
            cfg,
            me: 0,
            replica: Replica::new(index, members, raft).with_initial_leader(0).into_disk(),
            state: State::default(),
        })
    }

    /// The replicated state (for tests).
    pub fn state(&self) -> &State {
        &self.state
    }

    fn respond(
        &mut self,
        ctx: &mut Ctx<Hazelcast>,
        client: NodeId,
        uid: u64,
        result: Result<super::protocol::Reply, HzError>,
    ) {
        let after = ms_to_ns(self.cfg.service_ms.sample_non_negative(ctx.rng()));
        ctx.send_after(after, client, Response { uid, result });
    }

    fn not_leader(&self) -> HzError {
        HzError::NotLeader { hint: self.replica.leader_hint().filter(|l| *l != self.me) }
    }

    fn on_invocation(&mut self, ctx: &mut Ctx<Hazelcast>, from: NodeId, inv: Invocation) {
        let Some(client) = self.v.clients.iter().position(|c| *c == from) else { return };
        if !self.replica.is_leader() {
            let e = self.not_leader();
            return self.respond(ctx, from, inv.uid, Err(e));
        }
        let cmd = CmdKind::Invoke { client: client as u32, uid: inv.uid, op: inv.op };
        match self.replica.propose(ctx, cmd) {
            Ok(_) => {
                self.v.pending.insert((client as u32, inv.uid), from);
            }
            Err(_) => {
                let e = self.not_leader();
                self.respond(ctx, from, inv.uid, Err(e));
            }
        }
    }

    fn settle(&mut self, ctx: &mut Ctx<Hazelcast>) {
        let mut committed = std::mem::take(&mut self.committed);
        self.replica.take_committed_entries_into(&mut committed);
        let now = ctx.now_mono_ns();
        for entry in committed.drain(..) {
            let Some(cmd) = entry.cmd else { continue };
            if let CmdKind::ExpireSessions { sessions } = &cmd {
                let ids: Vec<u64> = sessions.iter().map(|s| s.0).collect();
                ctx.note(|| format!("sessions {ids:?} expired: their locks are released"));
            }
            let answers = self.state.apply(entry.index, &cmd, now, self.cfg.session_ttl_ns, self.cfg.acquire_limit);
            for (client, uid, result) in answers {
                if let Some(node) = self.v.pending.remove(&(client, uid)) {
                    self.respond(ctx, node, uid, result);
                }
            }
        }
        self.committed = committed;
        let leads = self.replica.is_leader();
        if leads && !self.v.leading {
            self.v.leading = true;
            self.state.shift_expirations(now + self.cfg.heartbeat_ns);
            self.v.check_timer = Some(ctx.set_timer(EXPIRY_CHECK_NS, ServerTimer::ExpiryCheck));
        } else if !leads && self.v.leading {
            self.v.leading = false;
            if let Some(t) = self.v.check_timer.take() {
                ctx.cancel_timer(t);
            }
            let e = self.not_leader();
            for ((_, uid), node) in std::mem::take(&mut self.v.pending) {
                self.respond(ctx, node, uid, Err(e));
            }
        }
    }
}

/// What a CP member keeps across a crash: its configuration and id, the replica's disk and the
/// group's state (see [`HazelcastServer`]'s `state`).
#[derive(Clone, Debug)]
pub struct ServerDisk {
    cfg: ServerConfig,
    me: NodeId,
    replica: ReplicaDisk<CmdKind>,
    state: State,
}

impl Durable for HazelcastServer {
    type Disk = ServerDisk;
    fn into_disk(self, _crash: &Crash) -> ServerDisk {
        let HazelcastServer { cfg, me, replica, state, .. } = self;
        ServerDisk { cfg, me, replica: replica.into_disk(), state }
    }
    fn from_disk(disk: ServerDisk) -> Self {
        let ServerDisk { cfg, me, replica, state } = disk;
        HazelcastServer {
            cfg,
            me,
            replica: Replica::from_disk(replica),
            state,
            v: Volatile::default(),
            committed: Vec::new(),
        }
    }
}

impl Process<Hazelcast> for HazelcastServer {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Hazelcast>) {
        self.me = ctx.me();
        self.v.clients = (0..self.cfg.clients).filter_map(|i| ctx.node_named(&format!("client-{i}"))).collect();
        self.replica.on_start(ctx);
        self.settle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Hazelcast>, from: NodeId, msg: HazelcastMsg) {
        match msg {
            HazelcastMsg::Consensus(m) => self.replica.on_message(ctx, from, m),
            HazelcastMsg::Invocation(inv) => self.on_invocation(ctx, from, inv),
            HazelcastMsg::Response(_) | HazelcastMsg::Ilock(_) => {}
        }
        self.settle(ctx);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Hazelcast>, timer: TimerId, tag: HazelcastTimer) {
        match tag {
            HazelcastTimer::Consensus(_) => self.replica.on_timer(ctx),
            HazelcastTimer::Server(ServerTimer::ExpiryCheck) if self.v.check_timer == Some(timer) => {
                let expired = self.state.expired(ctx.now_mono_ns());
                if !expired.is_empty() {
                    let _ = self.replica.propose(ctx, CmdKind::ExpireSessions { sessions: expired });
                }
                self.v.check_timer = Some(ctx.set_timer(EXPIRY_CHECK_NS, ServerTimer::ExpiryCheck));
            }
            HazelcastTimer::Server(_) | HazelcastTimer::Client(_) | HazelcastTimer::Ilock(_) => {}
        }
        self.settle(ctx);
    }

    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }
}
