//! The replicated log that the ZooKeeper and etcd models share: Raft (as etcd's `raft` package
//! runs it), embedded in a server [`Process`](locksim_simulator::process::Process) that owns it.
//!
//! # API summary (stable: extend, do not change)
//!
//! ```text
//! let mut r = Replica::<Cmd>::new(me_index, vec!["server-0".into(), "server-1".into(), …],
//!                                 Config::new(heartbeat_ns, election_ns));
//! // in the server's Process:
//! on_start / on_restart(ctx)   -> r.on_start(ctx)            (resolves member names to node ids)
//! on_message(ctx, from, msg)   -> match msg { YourMsg::Consensus(m) => r.on_message(ctx, from, m), … }
//! on_timer(ctx, _, tag)        -> match tag { YourTimer::Consensus(_) => r.on_timer(ctx), … }
//! Durable::into_disk(self, _)  -> disk.replica = r.into_disk() (keeps term, vote, log, commit)
//! Durable::from_disk(disk)     -> Replica::from_disk(disk.replica) (everything else rebuilt)
//! leadership()                 -> r.leadership()              (Some(term) while leading)
//! r.leader_lost(ctx, peer)     -> a follower whose leader's connection was reset campaigns soon
//!                                 (opt-in, with Config::leader_timeout_ns: ZooKeeper's detector)
//! r.peer_reset(ctx, peer)      -> the same; a Pattern::Zab leader stops sending to that follower
//!                                 until it answers the next round's resend (as it does to one
//!                                 silent for Config::leader_timeout_ns)
//! r.leader_ping(ctx, from, term)   -> Pattern::Zab follower: the owner got its leader's ping
//! r.ping_answered(ctx, from, term) -> Pattern::Zab leader: a follower answered the owner's ping
//! r.propose(ctx, cmd)          -> Ok(index) | Err(NotLeader { leader_hint })
//! r.take_committed()           -> Vec<(LogIndex, Cmd)>, in log order, each once
//! r.take_committed_entries()   -> the same with the leaders' empty entries (`cmd: None`) and terms
//! r.take_committed_entries_into(&mut buf)  -> the same, appended to a buffer the owner reuses
//! r.read_index(ctx, id)        -> Ok(()) | Err(NotLeader); later r.take_reads_into(&mut buf)
//!                                 appends (id, Ok(read_index)) once applied ≥ read_index, or
//!                                 (id, Err(..))
//! r.is_leader(), r.term(), r.leader_hint(), r.role(), r.commit_index(), r.core()
//! Replica::new(..).with_initial_leader(0)   (optional: the group starts with member 0 leading
//!                                 term 1, as a cluster that had already elected it)
//! ```
//!
//! After any call that may commit (on_message, on_timer, propose), drain `take_committed*()` and
//! apply the commands, then drain `take_reads_into()` (a read is reported only once the entries
//! it must see have been handed out). Use either `take_committed` or `take_committed_entries`,
//! not both: they drain the same queue.
//!
//! Disk: with `Config::fsync_ms` set, a follower that appended entries from an AppendEntries
//! sends nothing more until its disk has synced them (one sync after another, each drawn from
//! `fsync_ms`): its acknowledgement, and anything it sends meanwhile, leave when the sync is
//! done. That is etcd's follower (`etcdserver/raft.go`, `raftNode.start`: a follower sends a
//! `Ready`'s messages only after `r.storage.Save` has written and fsynced its entries) and
//! ZooKeeper's (`SyncRequestProcessor` flushes the txn log before `SendAckRequestProcessor`
//! acks the proposal). A leader's own write is not charged: etcd 3.4/3.5's leader counts its
//! entries as matched on append and writes its WAL in parallel with replication, and a ZooKeeper
//! leader's own sync runs alongside its followers'. A vote is not charged either.
//!
//! Durability: [`Replica::into_disk`] keeps what etcd's WAL and HardState keep (term, vote, log,
//! commit index) and the applied mark, so entries already handed out are not handed out again: the owner keeps
//! its applied state across a crash (etcd's backend, ZooKeeper's snapshot plus log replay give the
//! same). An owner that rebuilds its state from scratch calls `replay_from_start()` on restart.
//! Everything else (role, leader, votes, progress, pending reads, the timer) is volatile.
//!
//! Types: the owner's protocol carries the replica's messages and its one timer, so its message
//! enum implements `From<ConsensusMsg<Cmd>>` and its timer enum `From<ConsensusTimer>`. The
//! replica arms one timer at a time on the node's monotonic clock. It does not need ordered links
//! (it tolerates loss, duplication and reordering), so the owner's topology is its own choice.
//!
//! Modules:
//! - [`msg`]: the messages and the log entry
//! - [`core`]: the pure Raft state machine (time, randomness and outbox passed in), for harnesses
//!
//! The protocol itself is described in [`core`]'s header, with what it follows from etcd's raft.
//! `Config::pattern` chooses the normal-case messages: Raft's (etcd, the default) or ZAB's
//! (ZooKeeper: proposal, ack, commit, and no heartbeat of the log's own; the owner's ping keeps
//! the failure detector fed through `leader_ping` / `ping_answered`).

pub mod core;
mod fingerprint;
pub mod msg;

use std::fmt::Debug;

use locksim_simulator::dist::Dist;
use locksim_simulator::process::{Ctx, NodeId, Protocol, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos};

pub use self::core::{Committed, Config, Core, CoreDisk, NotLeader, Outbox, Pattern, Role};
pub use self::msg::{ConsensusMsg, Entry, LogIndex, Term};

/// The one timer a [`Replica`] sets (its next election or heartbeat deadline). The owner's timer
/// enum wraps it and routes it back to [`Replica::on_timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsensusTimer;

/// What a protocol that embeds a replica of commands `C` must carry.
pub trait Carries<C>: Protocol<Msg: From<ConsensusMsg<C>>, Timer: From<ConsensusTimer>> {}
impl<C, P: Protocol<Msg: From<ConsensusMsg<C>>, Timer: From<ConsensusTimer>>> Carries<C> for P {}

/// What a [`Replica`] keeps across a crash: its place in the group, its configuration and its
/// core's disk (see [`Replica::into_disk`]).
#[derive(Clone, Debug)]
pub struct ReplicaDisk<C> {
    me_index: usize,
    member_names: Vec<String>,
    config: Config,
    core: Option<CoreDisk<C>>,
    initial_leader: Option<usize>,
}

/// A Raft replica embedded in a server process.
#[derive(Clone, Debug)]
pub struct Replica<C> {
    me_index: usize,
    member_names: Vec<String>,
    config: Config,
    /// Created at the first start, when node ids can be looked up; survives crashes.
    core: Option<Core<C>>,
    /// Member index that leads term 1 at the first start, if any.
    initial_leader: Option<usize>,
    /// The armed timer and its deadline (monotonic).
    armed: Option<(TimerId, Nanos)>,
    out: Outbox<C>,
    /// Whether appended entries cost a sync (`Config::fsync_ms` is not a constant 0), decided
    /// once so the message path does not compare distributions.
    syncs: bool,
    /// When the disk finishes the last sync asked of it (monotonic; 0: never asked, or since a
    /// crash).
    disk_busy_until_ns: Nanos,
}

impl<C: Clone + Debug + Send + 'static> Replica<C> {
    /// Replica number `me_index` of the group whose members are named `member_names` (the same
    /// list, in the same order, on every member).
    pub fn new(me_index: usize, member_names: Vec<String>, config: Config) -> Replica<C> {
        assert!(me_index < member_names.len(), "replica index out of the group");
        let syncs = config.fsync_ms != Dist::Const(0.0);
        Replica {
            me_index,
            member_names,
            config,
            core: None,
            initial_leader: None,
            armed: None,
            out: Vec::new(),
            syncs,
            disk_busy_until_ns: 0,
        }
    }

    /// The group starts with member `leader_index` leading term 1 (every member must be built
    /// with the same index), instead of a first election; later elections are as usual.
    pub fn with_initial_leader(mut self, leader_index: usize) -> Replica<C> {
        assert!(leader_index < self.member_names.len(), "initial leader out of the group");
        self.initial_leader = Some(leader_index);
        self
    }

    /// The node starts or restarts: a follower in its durable term, waiting an election timeout.
    pub fn on_start<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>) {
        if self.core.is_none() {
            let ids: Vec<NodeId> = self
                .member_names
                .iter()
                .map(|n| ctx.node_named(n).unwrap_or_else(|| panic!("no node named {n}")))
                .collect();
            let me = ids[self.me_index];
            let leader = self.initial_leader.map(|i| ids[i]);
            let mut core = Core::new(me, ids, self.config.clone());
            let now = ctx.now_mono_ns();
            core.start(now, ctx.rng());
            if let Some(leader) = leader {
                core.bootstrap(now, ctx.rng(), leader, &mut self.out);
            }
            self.core = Some(core);
            return self.flush(ctx);
        }
        let now = ctx.now_mono_ns();
        let core = self.core.as_mut().expect("created above");
        core.start(now, ctx.rng());
        self.flush(ctx);
    }

    /// A consensus message from another member.
    pub fn on_message<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, from: NodeId, msg: ConsensusMsg<C>) {
        let Some(core) = self.core.as_mut() else { return };
        let now = ctx.now_mono_ns();
        let appends = self.syncs && matches!(&msg, ConsensusMsg::Append { entries, .. } if !entries.is_empty());
        core.step(now, ctx.rng(), from, msg, &mut self.out);
        if appends {
            // One sync after another: this one starts when the disk is done with the last.
            let sync_ns = ms_to_ns(self.config.fsync_ms.sample_non_negative(ctx.rng()));
            self.disk_busy_until_ns = self.disk_busy_until_ns.max(now) + sync_ns;
        }
        self.flush(ctx);
    }

    /// The replica's [`ConsensusTimer`] fired.
    pub fn on_timer<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>) {
        self.armed = None;
        if let Some(core) = self.core.as_mut() {
            let now = ctx.now_mono_ns();
            core.tick(now, ctx.rng(), &mut self.out);
        }
        self.flush(ctx);
    }

    /// The node crashed, in place (for harnesses that hold a `Replica`): it becomes what
    /// [`Replica::from_disk`] builds from what [`Replica::into_disk`] keeps.
    pub fn on_crash(&mut self) {
        *self = Replica::from_disk(self.clone().into_disk());
    }

    /// What survives a crash: term, vote, log, commit index and applied mark (synced before the
    /// replica answers, so both kinds of crash keep the same), with the group and configuration.
    pub fn into_disk(self) -> ReplicaDisk<C> {
        let Replica { me_index, member_names, config, core, initial_leader, .. } = self;
        ReplicaDisk { me_index, member_names, config, core: core.map(Core::into_disk), initial_leader }
    }

    /// The replica as it restarts from `disk`: everything volatile (the timer, the outbox, the
    /// disk's queue) as [`Replica::new`] builds it.
    pub fn from_disk(disk: ReplicaDisk<C>) -> Replica<C> {
        let ReplicaDisk { me_index, member_names, config, core, initial_leader } = disk;
        Replica { core: core.map(Core::from_disk), initial_leader, ..Replica::new(me_index, member_names, config) }
    }

    /// The connection to `peer` was reset: if it is this follower's leader, stop following it
    /// and campaign after a randomised election timeout (see [`Core::leader_lost`]). Only
    /// owners that opt into ZooKeeper's failure detection call it.
    pub fn leader_lost<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, peer: NodeId) {
        if let Some(core) = self.core.as_mut() {
            let now = ctx.now_mono_ns();
            core.leader_lost(now, ctx.rng(), peer);
        }
        self.flush(ctx);
    }

    /// The connection to `peer` was reset: a follower whose leader it is campaigns soon (as
    /// [`Replica::leader_lost`]); a [`Pattern::Zab`] leader sends that follower nothing until it
    /// answers, and resends at its next round what the link may have lost.
    pub fn peer_reset<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, peer: NodeId) {
        if let Some(core) = self.core.as_mut() {
            let now = ctx.now_mono_ns();
            core.peer_reset(now, ctx.rng(), peer);
        }
        self.flush(ctx);
    }

    /// [`Pattern::Zab`] follower: the owner received the ping of `from`, leader of `term` (see
    /// [`Core::leader_ping`]).
    pub fn leader_ping<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, from: NodeId, term: Term) {
        let Some(core) = self.core.as_mut() else { return };
        let now = ctx.now_mono_ns();
        core.leader_ping(now, ctx.rng(), from, term, &mut self.out);
        self.flush(ctx);
    }

    /// [`Pattern::Zab`] leader: `from` answered the owner's ping of `term` (see
    /// [`Core::ping_answered`]).
    pub fn ping_answered<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, from: NodeId, term: Term) {
        if let Some(core) = self.core.as_mut() {
            core.ping_answered(ctx.now_mono_ns(), from, term);
        }
    }

    /// Appends a command (leader only); it commits once a majority has it.
    pub fn propose<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, cmd: C) -> Result<LogIndex, NotLeader> {
        let Some(core) = self.core.as_mut() else { return Err(NotLeader { leader_hint: None }) };
        let r = core.propose(cmd, &mut self.out);
        self.flush(ctx);
        r
    }

    /// Starts a linearizable read (leader only); see [`Core::read_index`].
    pub fn read_index<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>, id: u64) -> Result<(), NotLeader> {
        let Some(core) = self.core.as_mut() else { return Err(NotLeader { leader_hint: None }) };
        let r = core.read_index(id, &mut self.out);
        self.flush(ctx);
        r
    }

    /// Newly committed commands in log order (leaders' empty entries skipped).
    pub fn take_committed(&mut self) -> Vec<(LogIndex, C)> {
        self.take_committed_entries().into_iter().filter_map(|c| c.cmd.map(|cmd| (c.index, cmd))).collect()
    }

    /// Newly committed entries in log order, leaders' empty entries included.
    pub fn take_committed_entries(&mut self) -> Vec<Committed<C>> {
        self.core.as_mut().map(|c| c.take_committed_entries()).unwrap_or_default()
    }

    /// As [`Replica::take_committed_entries`], appending to `out`, so an owner that drains after
    /// every message can reuse one buffer instead of allocating each time.
    pub fn take_committed_entries_into(&mut self, out: &mut Vec<Committed<C>>) {
        if let Some(c) = self.core.as_mut() {
            c.take_committed_entries_into(out);
        }
    }

    /// Reads that finished, `(id, Ok(read index))` or `(id, Err(NotLeader))`, appended to `out`
    /// (a buffer the owner reuses).
    pub fn take_reads_into(&mut self, out: &mut Vec<(u64, Result<LogIndex, NotLeader>)>) {
        if let Some(c) = self.core.as_mut() {
            c.take_reads_into(out);
        }
    }

    /// Hands out every committed entry again (for an owner that rebuilds its state on restart).
    pub fn replay_from_start(&mut self) {
        if let Some(c) = self.core.as_mut() {
            c.replay_from_start();
        }
    }

    /// Whether this replica leads its current term (false before the first start).
    pub fn is_leader(&self) -> bool {
        self.core.as_ref().is_some_and(|c| c.is_leader())
    }
    /// `Some(term)` while leading (for `Process::leadership`).
    pub fn leadership(&self) -> Option<Term> {
        self.core.as_ref().filter(|c| c.is_leader()).map(|c| c.term())
    }
    /// The current term (0 before the first start).
    pub fn term(&self) -> Term {
        self.core.as_ref().map(|c| c.term()).unwrap_or(0)
    }
    /// The current role (follower before the first start).
    pub fn role(&self) -> Role {
        self.core.as_ref().map(|c| c.role()).unwrap_or(Role::Follower)
    }
    /// The leader this replica knows of in its current term (itself when leading).
    pub fn leader_hint(&self) -> Option<NodeId> {
        self.core.as_ref().and_then(|c| c.leader_hint())
    }
    /// The highest log index known to be committed (0 before the first start).
    pub fn commit_index(&self) -> LogIndex {
        self.core.as_ref().map(|c| c.commit_index()).unwrap_or(0)
    }
    /// Whether this leader has committed an entry of its term (its reads and leases are settled).
    pub fn committed_in_term(&self) -> bool {
        self.core.as_ref().is_some_and(|c| c.committed_in_term())
    }
    /// The state machine underneath (read-only), once started.
    pub fn core(&self) -> Option<&Core<C>> {
        self.core.as_ref()
    }
    /// The group's member names, in order.
    pub fn member_names(&self) -> &[String] {
        &self.member_names
    }
    /// The election timeout base this replica was configured with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Sends what the core queued and keeps one timer armed for its next deadline.
    fn flush<P: Carries<C>>(&mut self, ctx: &mut Ctx<P>) {
        // Nothing to wait for unless a sync was ever asked (no clock reading otherwise).
        let hold_ns = match self.disk_busy_until_ns {
            0 => 0,
            busy_until => busy_until.saturating_sub(ctx.now_mono_ns()),
        };
        for (to, msg) in self.out.drain(..) {
            if hold_ns > 0 {
                ctx.send_after(hold_ns, to, msg);
            } else {
                ctx.send(to, msg);
            }
        }
        let Some(core) = self.core.as_ref() else { return };
        let due = core.next_deadline();
        if due == Nanos::MAX {
            return;
        }
        match self.armed {
            // An earlier (or equal) wake-up is already armed: it will re-arm when it fires.
            Some((_, at)) if at <= due => {}
            other => {
                if let Some((id, _)) = other {
                    ctx.cancel_timer(id);
                }
                let now = ctx.now_mono_ns();
                let id = ctx.set_timer(due.saturating_sub(now), ConsensusTimer);
                self.armed = Some((id, due));
            }
        }
    }
}
