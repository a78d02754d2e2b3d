//! The Raft state machine itself, free of the engine: it takes the time, a random stream and an
//! outbox as arguments, so a test harness can drive it with a hand-rolled network, and
//! [`super::Replica`] drives it from a node's `Ctx`.
//!
//! What it follows (etcd `raft/raft.go`, the Raft paper, Ongaro's thesis §6.4 for read index):
//! - terms and votes, a vote granted only to a candidate whose log is at least as up to date
//!   (last term, then last index), at most one vote per term, no vote while a leader is known;
//! - randomised election timeouts in [election, 2 × election) drawn from the node's stream
//!   whenever the node becomes follower or candidate (etcd `resetRandomizedElectionTimeout`);
//! - AppendEntries with the (prev index, prev term) consistency check, truncation of a
//!   conflicting suffix (never below the commit index), and a rejection hint (the follower's last
//!   index) for the leader's next probe; entries sent are assumed delivered (etcd's replicate
//!   state), and each heartbeat resends what a follower has not acknowledged (messages may be lost)
//!   if it answered since the heartbeat before; one that did not (down, cut off) is probed with an
//!   empty append and gets its entries when it answers (etcd's probe state: `MsgAppFlowPaused`
//!   until `handleHeartbeatResponse` calls `sendAppend`), so a dead follower costs a heartbeat, not
//!   a full message of entries, every round;
//! - a new leader appends an empty entry of its term; the leader commits only entries of its own
//!   term by quorum (earlier ones commit with them) and tells followers at once (etcd
//!   `bcastAppend` after `maybeCommit`);
//! - check quorum (etcd `CheckQuorum`, on in etcd servers): a leader that has not heard from a
//!   majority within an election timeout steps down, and a follower that heard from a leader
//!   within an election timeout ignores vote requests (etcd's `inLease`), so a rejoining node with
//!   a higher term cannot depose a healthy leader;
//! - read index: a read is safe once the leader has committed an entry in its term, a heartbeat
//!   round started after the read has been acknowledged by a majority, and the state machine has
//!   applied up to the commit index seen when the read arrived.
//!
//! - optionally, a fresh group starts with a given member leading term 1 ([`Core::bootstrap`]),
//!   as a cluster that had already elected it;
//! - optionally ([`Pattern::Zab`], ZooKeeper's opt-in; etcd keeps [`Pattern::Raft`]), the normal
//!   case sends ZAB's messages instead of Raft's: see [`zab`].
//!
//! Not modelled: pre-vote (off by default in etcd 3.4), leadership transfer, membership change,
//! log compaction and snapshots (the log is kept whole), flow-control windows (in-flight limits),
//! etcd 3.4's dropping of read-index requests that reach a leader before it has committed in its
//! term (they wait here, as in etcd 3.5).

use rand::Rng;

use locksim_simulator::dist::Dist;
use locksim_simulator::process::NodeId;
use locksim_simulator::time::Nanos;

use super::msg::{ConsensusMsg, Entry, LogIndex, Term};

mod fingerprint;
mod zab;

/// Whose normal-case message pattern the log follows (elections are Raft's in both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// etcd's raft: the leader sends an AppendEntries to every follower each heartbeat, idle or
    /// not, and tells a new commit index with AppendEntries that are answered.
    Raft,
    /// ZooKeeper's ZAB broadcast phase: a proposal (an AppendEntries carrying the entry) and its
    /// ack, then a [`ConsensusMsg::Commit`] nobody answers; no heartbeat of its own (the owner's
    /// ping feeds the failure detector through [`Core::leader_ping`] and
    /// [`Core::ping_answered`]); entries resent only to a follower that has stalled. See [`zab`].
    Zab,
}

/// Timing and behaviour of a replica.
#[derive(Clone, Debug)]
pub struct Config {
    /// Leader heartbeat interval (etcd `--heartbeat-interval`, 100 ms).
    pub heartbeat_ns: Nanos,
    /// Base election timeout; each follower waits a random time in [1×, 2×) of it without hearing
    /// from a leader before campaigning (etcd `--election-timeout`, 1000 ms).
    pub election_ns: Nanos,
    /// Leader steps down without a majority's replies for an election timeout, and followers with
    /// a live leader ignore vote requests (etcd servers run with it on).
    pub check_quorum: bool,
    /// At most this many entries in one AppendEntries.
    pub max_entries_per_msg: usize,
    /// ZooKeeper's failure detector instead of Raft's (opt-in; etcd leaves it `None`): a
    /// follower that has heard from its leader suspects it only after this much silence, a fixed
    /// socket read timeout (ZooKeeper `Learner.connectToLeader`: `sock.setSoTimeout(self.tickTime
    /// * self.syncLimit)`), and a leader steps down when a quorum has not answered within it
    /// (`Leader.lead`'s `syncedAckSet.hasAllQuorums()` check, each learner synced while its last
    /// ack is under `syncLimit` ticks old); followers in contact with a leader ignore campaigns
    /// for as long. Elections themselves (after a lost leader or a failed round) still wait the
    /// randomised `election_ns`. `None`: Raft's randomised election timeout does all of it.
    pub leader_timeout_ns: Option<Nanos>,
    /// The normal-case messages: Raft's (etcd) or ZAB's (ZooKeeper's opt-in).
    pub pattern: Pattern,
    /// Milliseconds a follower's disk takes to make the entries of an AppendEntries durable; its
    /// messages wait for it (see [`super::Replica`]). `Dist::Const(0.0)`: a sync that costs
    /// nothing (draws nothing).
    pub fsync_ms: Dist,
}

impl Config {
    /// etcd's defaults shape: check quorum on, 256 entries per message.
    pub fn new(heartbeat_ns: Nanos, election_ns: Nanos) -> Config {
        Config {
            heartbeat_ns,
            election_ns,
            check_quorum: true,
            max_entries_per_msg: 256,
            leader_timeout_ns: None,
            pattern: Pattern::Raft,
            fsync_ms: Dist::Const(0.0),
        }
    }
}

/// A replica's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Follows the term's leader, or waits for one; campaigns when its election timeout passes.
    Follower,
    /// Campaigning: voted for itself and asked the others for their votes in its term.
    Candidate,
    /// Won its term's election: replicates the log, commits and serves reads.
    Leader,
}

/// A proposal or read reached a replica that does not lead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotLeader {
    /// The leader this replica last heard from in its current term, if any.
    pub leader_hint: Option<NodeId>,
}

/// A committed entry handed to the state machine, in log order.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed<C> {
    /// The entry's position in the log.
    pub index: LogIndex,
    /// The term the entry was created in.
    pub term: Term,
    /// `None` for a leader's empty entry (etcd promotes its lessor when its leader applies it).
    pub cmd: Option<C>,
}

/// The outbox a handler fills: (destination, message).
pub type Outbox<C> = Vec<(NodeId, ConsensusMsg<C>)>;

#[derive(Clone, Debug)]
struct Progress {
    next: LogIndex,
    matched: LogIndex,
    /// Heard from since the last check-quorum round.
    active: bool,
    /// Highest read-index round this peer acknowledged in the current term.
    acked_seq: u64,
    /// When this peer last answered the leader: ZooKeeper's quorum check (`leader_timeout_ns`)
    /// and, under [`Pattern::Raft`], whether a heartbeat probes it instead of resending entries.
    heard_ns: Nanos,
    /// [`Pattern::Zab`]: the link to this peer broke, so the next round resends from `matched`
    /// (with the commit index) whatever it had.
    resync: bool,
    /// Gets no entries (and, under [`Pattern::Zab`], no commits) until it answers.
    /// [`Pattern::Raft`]: probed at the last heartbeat because it had not answered since the one
    /// before (etcd's `StateProbe` with `MsgAppFlowPaused`). [`Pattern::Zab`]: its link broke,
    /// or it was silent for `leader_timeout_ns` (ZooKeeper's leader drops the follower's
    /// `LearnerHandler`).
    paused: bool,
}

#[derive(Clone, Debug)]
struct PendingRead {
    id: u64,
    /// Commit index when the read was accepted (`None` until the leader has committed in its term).
    index: Option<LogIndex>,
    seq: u64,
    confirmed: bool,
}

/// What a [`Core`] keeps across a crash (its configuration and place in the group, and etcd's
/// HardState and WAL); see [`Core::into_disk`].
#[derive(Clone, Debug)]
pub struct CoreDisk<C> {
    cfg: Config,
    me: NodeId,
    members: Vec<NodeId>,
    term: Term,
    voted_for: Option<NodeId>,
    log: Vec<Entry<C>>,
    commit: LogIndex,
    applied: LogIndex,
}

/// The Raft state machine of one replica.
#[derive(Clone, Debug)]
pub struct Core<C> {
    cfg: Config,
    me: NodeId,
    /// Every member, this one included, in a fixed order.
    members: Vec<NodeId>,

    // Durable (etcd's HardState and WAL): survive a crash.
    term: Term,
    voted_for: Option<NodeId>,
    log: Vec<Entry<C>>,
    commit: LogIndex,
    /// Entries up to here were handed to the state machine (which the owner keeps durably).
    applied: LogIndex,

    // Volatile: built by `Core::new` at the first start and again at a restart (`from_disk`).
    role: Role,
    leader: Option<NodeId>,
    randomized_election_ns: Nanos,
    election_deadline_ns: Nanos,
    /// Last time a current leader was heard from (for check quorum's vote lease).
    heard_leader_ns: Option<Nanos>,
    votes: Vec<NodeId>,
    progress: Vec<Progress>,
    heartbeat_due_ns: Nanos,
    /// Leader: when the previous heartbeat round went out; a follower not heard from since is
    /// probed instead of sent its entries again.
    last_heartbeat_ns: Nanos,
    quorum_check_due_ns: Nanos,
    read_seq: u64,
    pending_reads: Vec<PendingRead>,
    finished_reads: Vec<(u64, Result<LogIndex, NotLeader>)>,
    /// Follower: the highest index its log is known to share with its term's leader (from the
    /// appends it accepted in this term); how far a [`ConsensusMsg::Commit`] may commit.
    leader_match: LogIndex,
    /// Leader, [`Pattern::Zab`]: the last index at the previous heartbeat round; a follower that
    /// has not acknowledged up to it by the next round has stalled and gets its entries again.
    round_last: LogIndex,
    /// Scratch space for `maybe_commit` (kept to reuse its allocation).
    matched_scratch: Vec<LogIndex>,
}

impl<C: Clone> Core<C> {
    /// A replica `me` of the group `members` (which contains `me`), with an empty log.
    pub fn new(me: NodeId, members: Vec<NodeId>, cfg: Config) -> Core<C> {
        assert!(members.contains(&me), "a replica must be a member of its group");
        let n = members.len();
        Core {
            cfg,
            me,
            members,
            term: 0,
            voted_for: None,
            log: Vec::new(),
            commit: 0,
            applied: 0,
            role: Role::Follower,
            leader: None,
            randomized_election_ns: 0,
            election_deadline_ns: Nanos::MAX,
            heard_leader_ns: None,
            votes: Vec::new(),
            progress: vec![
                Progress {
                    next: 1,
                    matched: 0,
                    active: false,
                    acked_seq: 0,
                    heard_ns: 0,
                    resync: false,
                    paused: false
                };
                n
            ],
            heartbeat_due_ns: Nanos::MAX,
            last_heartbeat_ns: 0,
            quorum_check_due_ns: Nanos::MAX,
            read_seq: 0,
            pending_reads: Vec::new(),
            finished_reads: Vec::new(),
            leader_match: 0,
            round_last: 0,
            matched_scratch: Vec::new(),
        }
    }

    // ----- queries -----

    /// This replica's node.
    pub fn me(&self) -> NodeId {
        self.me
    }
    /// Every member, this one included, in the group's fixed order.
    pub fn members(&self) -> &[NodeId] {
        &self.members
    }
    /// The replica's current role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Whether this replica leads its current term.
    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }
    /// The current term (durable).
    pub fn term(&self) -> Term {
        self.term
    }
    /// The member this replica voted for in its current term, if any (durable).
    pub fn voted_for(&self) -> Option<NodeId> {
        self.voted_for
    }
    /// The leader this replica knows of in its current term (itself when leading).
    pub fn leader_hint(&self) -> Option<NodeId> {
        self.leader
    }
    /// The highest log index this replica knows to be committed.
    pub fn commit_index(&self) -> LogIndex {
        self.commit
    }
    /// Entries up to here have been handed out by `take_committed*`.
    pub fn applied_index(&self) -> LogIndex {
        self.applied
    }
    /// Index of the last entry in the log (0 when it is empty).
    pub fn last_index(&self) -> LogIndex {
        self.log.len() as LogIndex
    }
    /// The term of the entry at `index` (0 for index 0), if the log has it.
    pub fn term_at(&self, index: LogIndex) -> Option<Term> {
        if index == 0 {
            Some(0)
        } else {
            self.log.get(index as usize - 1).map(|e| e.term)
        }
    }
    /// The whole log (for invariant checks in tests).
    pub fn log(&self) -> &[Entry<C>] {
        &self.log
    }
    /// Whether this leader has committed an entry of its own term (it may then serve reads).
    pub fn committed_in_term(&self) -> bool {
        self.is_leader() && self.term_at(self.commit) == Some(self.term)
    }
    fn quorum(&self) -> usize {
        self.members.len() / 2 + 1
    }
    fn slot(&self, node: NodeId) -> Option<usize> {
        self.members.iter().position(|&m| m == node)
    }
    fn last_term(&self) -> Term {
        self.log.last().map(|e| e.term).unwrap_or(0)
    }

    /// When this replica next needs [`Core::tick`] (on its monotonic clock).
    pub fn next_deadline(&self) -> Nanos {
        match self.role {
            Role::Leader => self.heartbeat_due_ns.min(self.quorum_check_due_ns),
            _ => self.election_deadline_ns,
        }
    }

    // ----- lifecycle -----

    /// The node starts (or restarts with its durable state): a follower with no known leader.
    pub fn start<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) {
        self.become_follower(now, rng, self.term, None);
    }

    /// Starts a fresh group as if `leader` had just won the election of term 1 (every member
    /// calls it at its first start, before any message): the leader appends its empty entry and
    /// replicates it, the others follow it. Does nothing unless the replica is brand new.
    pub fn bootstrap<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, leader: NodeId, out: &mut Outbox<C>) {
        if self.term != 0 || !self.log.is_empty() || !self.members.contains(&leader) {
            return;
        }
        self.term = 1;
        self.voted_for = Some(leader);
        if leader == self.me {
            self.become_leader(now, out);
        } else {
            self.become_follower(now, rng, 1, Some(leader));
            self.heard_leader_ns = Some(now);
        }
    }

    /// The node crashed, in place (for harnesses that hold a `Core`): it becomes what
    /// [`Core::from_disk`] builds from what [`Core::into_disk`] keeps (term, vote, log, commit
    /// index, applied mark).
    pub fn crash(&mut self) {
        *self = Core::from_disk(self.clone().into_disk());
    }

    /// What survives a crash: etcd's HardState and WAL (written and synced before the replica
    /// answers, so a process crash and a machine crash keep the same), and the applied mark.
    pub fn into_disk(self) -> CoreDisk<C> {
        let Core { cfg, me, members, term, voted_for, log, commit, applied, .. } = self;
        CoreDisk { cfg, me, members, term, voted_for, log, commit, applied }
    }

    /// The replica as it restarts from `disk`: every volatile field as [`Core::new`] builds it
    /// (a follower with no leader and no deadline until [`Core::start`]).
    pub fn from_disk(disk: CoreDisk<C>) -> Core<C> {
        let CoreDisk { cfg, me, members, term, voted_for, log, commit, applied } = disk;
        Core { term, voted_for, log, commit, applied, ..Core::new(me, members, cfg) }
    }

    /// Hands out every committed entry again from the start on the next `take_committed*` (for an
    /// owner that rebuilds its state machine from the log after a crash).
    pub fn replay_from_start(&mut self) {
        self.applied = 0;
    }

    // ----- the state machine's side -----

    /// Newly committed entries in log order, empty entries included.
    pub fn take_committed_entries(&mut self) -> Vec<Committed<C>> {
        let mut out = Vec::new();
        self.take_committed_entries_into(&mut out);
        out
    }

    /// As [`Core::take_committed_entries`], appending to `out` (whose allocation the caller can
    /// reuse from one call to the next).
    pub fn take_committed_entries_into(&mut self, out: &mut Vec<Committed<C>>) {
        while self.applied < self.commit {
            self.applied += 1;
            let e = &self.log[self.applied as usize - 1];
            out.push(Committed { index: self.applied, term: e.term, cmd: e.cmd.clone() });
        }
        self.settle_reads();
    }

    /// Proposes a command (leader only). It is committed when a majority has it.
    pub fn propose(&mut self, cmd: C, out: &mut Outbox<C>) -> Result<LogIndex, NotLeader> {
        if self.role != Role::Leader {
            return Err(NotLeader { leader_hint: self.leader });
        }
        self.log.push(Entry { term: self.term, cmd: Some(cmd) });
        let last = self.last_index();
        let me = self.slot(self.me).expect("member");
        self.progress[me].matched = last;
        self.progress[me].next = last + 1;
        if self.members.len() == 1 {
            self.maybe_commit(out);
        } else {
            self.broadcast_append(out);
        }
        Ok(last)
    }

    /// Asks for a linearizable read (leader only); the answer comes from
    /// [`Core::take_reads_into`] under `id`, `Ok(index)` once the state machine has applied
    /// everything committed when the read arrived, `Err` if leadership is lost first.
    pub fn read_index(&mut self, id: u64, out: &mut Outbox<C>) -> Result<(), NotLeader> {
        if self.role != Role::Leader {
            return Err(NotLeader { leader_hint: self.leader });
        }
        self.read_seq += 1;
        let index = if self.committed_in_term() { Some(self.commit) } else { None };
        self.pending_reads.push(PendingRead { id, index, seq: self.read_seq, confirmed: false });
        if self.members.len() == 1 {
            self.confirm_reads();
        } else {
            self.broadcast_append(out);
        }
        self.settle_reads();
        Ok(())
    }

    /// Reads that finished since the last call, `Ok(read index)` or `Err(NotLeader)`, appended to
    /// `out` (a buffer the owner reuses: it drains after every message).
    pub fn take_reads_into(&mut self, out: &mut Vec<(u64, Result<LogIndex, NotLeader>)>) {
        self.settle_reads();
        out.append(&mut self.finished_reads);
    }

    fn settle_reads(&mut self) {
        let applied = self.applied;
        let mut i = 0;
        while i < self.pending_reads.len() {
            let r = &self.pending_reads[i];
            match r.index {
                Some(ix) if r.confirmed && ix <= applied => {
                    let r = self.pending_reads.remove(i);
                    self.finished_reads.push((r.id, Ok(ix)));
                }
                _ => i += 1,
            }
        }
    }

    fn confirm_reads(&mut self) {
        let me = self.slot(self.me).expect("member");
        let quorum = self.quorum();
        for r in self.pending_reads.iter_mut() {
            if r.confirmed {
                continue;
            }
            let acks = self.progress.iter().enumerate().filter(|(i, p)| *i == me || p.acked_seq >= r.seq).count();
            if acks >= quorum {
                r.confirmed = true;
            }
        }
    }

    fn fail_reads(&mut self) {
        let hint = self.leader;
        for r in self.pending_reads.drain(..) {
            self.finished_reads.push((r.id, Err(NotLeader { leader_hint: hint })));
        }
    }

    // ----- time -----

    /// Does whatever is due at `now`: campaign, heartbeat, check quorum.
    pub fn tick<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, out: &mut Outbox<C>) {
        match self.role {
            Role::Follower | Role::Candidate => {
                if now >= self.election_deadline_ns {
                    self.campaign(now, rng, out);
                }
            }
            Role::Leader => {
                if let Some(limit) = self.cfg.leader_timeout_ns {
                    // ZooKeeper's leader checks at every ping round (half a tick) that a quorum
                    // of learners acked within the limit (`Leader.lead`: "Not sufficient
                    // followers synced" shuts it down).
                    if now >= self.heartbeat_due_ns && self.cfg.check_quorum && !self.quorum_heard_within(now, limit) {
                        let term = self.term;
                        self.become_follower(now, rng, term, None);
                        return;
                    }
                } else if now >= self.quorum_check_due_ns {
                    self.quorum_check_due_ns = now + self.cfg.election_ns;
                    if self.cfg.check_quorum && !self.quorum_active() {
                        let term = self.term;
                        self.become_follower(now, rng, term, None);
                        return;
                    }
                    let me = self.slot(self.me).expect("member");
                    for (i, p) in self.progress.iter_mut().enumerate() {
                        p.active = i == me;
                    }
                }
                if now >= self.heartbeat_due_ns {
                    self.heartbeat_due_ns = now + self.cfg.heartbeat_ns;
                    match self.cfg.pattern {
                        Pattern::Raft => self.heartbeat(now, out),
                        Pattern::Zab => self.resend_stalled(now, out),
                    }
                }
            }
        }
    }

    /// How long a leader's contact counts: the check-quorum window and the followers' vote lease.
    fn lease_ns(&self) -> Nanos {
        self.cfg.leader_timeout_ns.unwrap_or(self.cfg.election_ns)
    }

    /// The connection to the leader `peer` broke (its process was killed, or it refused a
    /// message after a restart): a follower stops following it at once and campaigns after a
    /// randomised election timeout, as a ZooKeeper follower whose leader socket closed goes
    /// LOOKING (`Follower.followLeader` catches the `IOException`). Anything else ignores it.
    pub fn leader_lost<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, peer: NodeId) {
        if self.role == Role::Follower && self.leader == Some(peer) {
            let term = self.term;
            self.heard_leader_ns = None;
            self.become_follower(now, rng, term, None);
        }
    }

    fn quorum_heard_within(&self, now: Nanos, limit: Nanos) -> bool {
        let me = self.slot(self.me).expect("member");
        let n = self
            .progress
            .iter()
            .enumerate()
            .filter(|(i, p)| *i == me || now.saturating_sub(p.heard_ns) < limit)
            .count();
        n >= self.quorum()
    }

    fn quorum_active(&self) -> bool {
        let me = self.slot(self.me).expect("member");
        let n = self.progress.iter().enumerate().filter(|(i, p)| *i == me || p.active).count();
        n >= self.quorum()
    }

    fn reset_election<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R) {
        let base = self.cfg.election_ns.max(1);
        self.randomized_election_ns = base + rng.gen_range(0..base);
        self.election_deadline_ns = now + self.randomized_election_ns;
    }

    fn become_follower<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, term: Term, leader: Option<NodeId>) {
        if term != self.term {
            self.term = term;
            self.voted_for = None;
            self.leader_match = 0;
        }
        if self.role == Role::Leader {
            self.fail_reads();
        }
        self.role = Role::Follower;
        self.leader = leader;
        self.votes.clear();
        self.heartbeat_due_ns = Nanos::MAX;
        self.quorum_check_due_ns = Nanos::MAX;
        self.reset_election(now, rng);
    }

    fn campaign<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, out: &mut Outbox<C>) {
        self.term += 1;
        self.role = Role::Candidate;
        self.leader = None;
        self.voted_for = Some(self.me);
        self.votes = vec![self.me];
        self.heard_leader_ns = None;
        self.reset_election(now, rng);
        if self.votes.len() >= self.quorum() {
            self.become_leader(now, out);
            return;
        }
        let (term, last_index, last_term) = (self.term, self.last_index(), self.last_term());
        for &m in &self.members {
            if m != self.me {
                out.push((m, ConsensusMsg::Vote { term, last_index, last_term }));
            }
        }
    }

    fn become_leader(&mut self, now: Nanos, out: &mut Outbox<C>) {
        self.role = Role::Leader;
        self.leader = Some(self.me);
        self.votes.clear();
        self.election_deadline_ns = Nanos::MAX;
        self.read_seq = 0;
        let last = self.last_index();
        for p in self.progress.iter_mut() {
            *p = Progress {
                next: last + 1,
                matched: 0,
                active: false,
                acked_seq: 0,
                heard_ns: now,
                resync: false,
                paused: false,
            };
        }
        // The empty entry of the new term: committing it commits everything before it.
        self.log.push(Entry { term: self.term, cmd: None });
        let last = self.last_index();
        let me = self.slot(self.me).expect("member");
        self.progress[me].matched = last;
        self.progress[me].next = last + 1;
        self.progress[me].active = true;
        self.round_last = last;
        self.heartbeat_due_ns = now + self.cfg.heartbeat_ns;
        self.last_heartbeat_ns = now;
        // With ZooKeeper's detector the quorum is checked at each heartbeat instead.
        self.quorum_check_due_ns =
            if self.cfg.leader_timeout_ns.is_some() { Nanos::MAX } else { now + self.cfg.election_ns };
        if self.members.len() == 1 {
            self.maybe_commit(out);
        } else {
            self.broadcast_append(out);
        }
    }

    /// The next AppendEntries for a peer. Entries sent are assumed delivered (etcd's replicate
    /// state: `next` moves past them at once); a rejection or a heartbeat that finds the peer
    /// behind moves `next` back to what it acknowledged.
    fn append_for(&mut self, slot: usize) -> ConsensusMsg<C> {
        let prev_index = self.progress[slot].next - 1;
        let prev_term = self.term_at(prev_index).expect("leader has every entry before next");
        let from = prev_index as usize;
        let to = (from + self.cfg.max_entries_per_msg).min(self.log.len());
        self.progress[slot].next = to as LogIndex + 1;
        ConsensusMsg::Append {
            term: self.term,
            prev_index,
            prev_term,
            entries: self.log[from..to].to_vec(),
            commit: self.commit,
            read_seq: self.read_seq,
        }
    }

    fn broadcast_append(&mut self, out: &mut Outbox<C>) {
        for slot in 0..self.members.len() {
            let m = self.members[slot];
            if m != self.me && !self.progress[slot].paused {
                let msg = self.append_for(slot);
                out.push((m, msg));
            }
        }
    }

    /// The heartbeat: every peer gets an AppendEntries. One that has not acknowledged everything
    /// gets the unacknowledged entries again (messages may have been lost) if it answered since
    /// the previous round; one that did not is probed with no entries at what it acknowledged,
    /// and its answer brings the entries (etcd: a follower in `StateProbe` is paused until a
    /// heartbeat response, `handleHeartbeatResponse` → `sendAppend`).
    fn heartbeat(&mut self, now: Nanos, out: &mut Outbox<C>) {
        let last = self.last_index();
        let since = self.last_heartbeat_ns;
        self.last_heartbeat_ns = now;
        for slot in 0..self.members.len() {
            let m = self.members[slot];
            if m == self.me {
                continue;
            }
            let p = &mut self.progress[slot];
            if p.matched < last {
                p.next = p.matched + 1;
                if p.heard_ns < since {
                    p.paused = true;
                    let probe = self.probe_for(slot);
                    out.push((m, probe));
                    continue;
                }
            }
            let msg = self.append_for(slot);
            out.push((m, msg));
        }
    }

    /// An AppendEntries with no entries at what `slot` acknowledged, leaving `next` there.
    fn probe_for(&self, slot: usize) -> ConsensusMsg<C> {
        let prev_index = self.progress[slot].next - 1;
        let prev_term = self.term_at(prev_index).expect("leader has every entry before next");
        ConsensusMsg::Append {
            term: self.term,
            prev_index,
            prev_term,
            entries: Vec::new(),
            commit: self.commit,
            read_seq: self.read_seq,
        }
    }

    fn maybe_commit(&mut self, out: &mut Outbox<C>) {
        let mut matched = std::mem::take(&mut self.matched_scratch);
        matched.clear();
        matched.extend(self.progress.iter().map(|p| p.matched));
        matched.sort_unstable_by(|a, b| b.cmp(a));
        let n = matched[self.quorum() - 1];
        self.matched_scratch = matched;
        // Only an entry of the current term commits by counting replicas (Raft §5.4.2).
        if n > self.commit && self.term_at(n) == Some(self.term) {
            self.commit = n;
            // A read that arrived before the leader committed in its term reads from here.
            let commit = self.commit;
            for r in self.pending_reads.iter_mut() {
                if r.index.is_none() {
                    r.index = Some(commit);
                }
            }
            if self.members.len() > 1 {
                match self.cfg.pattern {
                    Pattern::Raft => self.broadcast_append(out),
                    Pattern::Zab => self.broadcast_commit(out),
                }
            }
        }
    }

    // ----- messages -----

    /// A message from another member.
    pub fn step<R: Rng + ?Sized>(
        &mut self,
        now: Nanos,
        rng: &mut R,
        from: NodeId,
        msg: ConsensusMsg<C>,
        out: &mut Outbox<C>,
    ) {
        let Some(from_slot) = self.slot(from) else { return };
        let mterm = msg.term();
        if mterm > self.term {
            if let ConsensusMsg::Vote { .. } = msg {
                // etcd's inLease: with check quorum, a replica that heard from a live leader
                // within an election timeout ignores a campaign (no term bump, no answer).
                let in_lease = self.cfg.check_quorum
                    && match self.role {
                        Role::Leader => true,
                        _ => {
                            self.leader.is_some()
                                && self.heard_leader_ns.is_some_and(|t| now.saturating_sub(t) < self.lease_ns())
                        }
                    };
                if in_lease {
                    return;
                }
            }
            let leader = if matches!(msg, ConsensusMsg::Append { .. } | ConsensusMsg::Commit { .. }) {
                Some(from)
            } else {
                None
            };
            self.become_follower(now, rng, mterm, leader);
        } else if mterm < self.term {
            // Tell a deposed leader about the newer term so it steps down (etcd answers stale
            // appends when check quorum is on, a stale commit likewise; a stale vote request is
            // ignored).
            if let ConsensusMsg::Append { .. } | ConsensusMsg::Commit { .. } = msg {
                out.push((
                    from,
                    ConsensusMsg::AppendReply {
                        term: self.term,
                        success: false,
                        index: 0,
                        last_index: self.last_index(),
                        read_seq: 0,
                    },
                ));
            }
            return;
        }

        match msg {
            ConsensusMsg::Vote { term, last_index, last_term } => {
                let can_vote = self.voted_for == Some(from) || (self.voted_for.is_none() && self.leader.is_none());
                let up_to_date =
                    last_term > self.last_term() || (last_term == self.last_term() && last_index >= self.last_index());
                let granted = can_vote && up_to_date;
                if granted {
                    self.voted_for = Some(from);
                    self.election_deadline_ns = now + self.randomized_election_ns;
                }
                out.push((from, ConsensusMsg::VoteReply { term, granted }));
            }
            ConsensusMsg::VoteReply { granted, .. } => {
                if self.role == Role::Candidate && granted && !self.votes.contains(&from) {
                    self.votes.push(from);
                    if self.votes.len() >= self.quorum() {
                        self.become_leader(now, out);
                    }
                }
            }
            ConsensusMsg::Append { term, prev_index, prev_term, entries, commit, read_seq } => {
                self.heard_from_leader(now, rng, from, term);
                let reply = self.handle_append(prev_index, prev_term, entries, commit, read_seq);
                if let ConsensusMsg::AppendReply { success: true, index, .. } = reply {
                    self.leader_match = self.leader_match.max(index);
                }
                out.push((from, reply));
            }
            ConsensusMsg::Commit { term, commit } => {
                self.heard_from_leader(now, rng, from, term);
                self.commit_to(commit);
            }
            ConsensusMsg::AppendReply { success, index, last_index, read_seq, .. } => {
                if self.role != Role::Leader {
                    return;
                }
                let p = &mut self.progress[from_slot];
                p.active = true;
                p.heard_ns = now;
                p.paused = false;
                p.acked_seq = p.acked_seq.max(read_seq);
                if success {
                    if index > p.matched {
                        p.matched = index;
                    }
                    p.next = p.next.max(p.matched + 1);
                    // The answer to a probe: what it lacks was not sent yet.
                    let unsent = p.next == p.matched + 1 && p.matched < self.last_index();
                    if unsent && self.cfg.pattern == Pattern::Raft {
                        let msg = self.append_for(from_slot);
                        out.push((from, msg));
                    }
                    self.maybe_commit(out);
                } else if index >= p.matched && index < p.next {
                    // A fresh rejection of the probe at `index`: step back (to the follower's last
                    // index + 1 when it is shorter) and probe again at once.
                    p.next = index.min(last_index + 1).max(p.matched + 1);
                    let msg = self.append_for(from_slot);
                    out.push((from, msg));
                }
                self.confirm_reads();
                self.settle_reads();
            }
        }
    }

    /// A message from `from`, the leader of `term` (this replica's term): follow it and restart
    /// the wait for its next message.
    fn heard_from_leader<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, from: NodeId, term: Term) {
        if self.role != Role::Follower {
            // A candidate (or, impossibly, a leader) meets the term's leader.
            self.become_follower(now, rng, term, Some(from));
        }
        self.leader = Some(from);
        self.heard_leader_ns = Some(now);
        self.election_deadline_ns = now + self.cfg.leader_timeout_ns.unwrap_or(self.randomized_election_ns);
    }

    fn handle_append(
        &mut self,
        prev_index: LogIndex,
        prev_term: Term,
        entries: Vec<Entry<C>>,
        leader_commit: LogIndex,
        read_seq: u64,
    ) -> ConsensusMsg<C> {
        let term = self.term;
        if prev_index < self.commit {
            // Everything up to our commit index matches the leader (log matching); etcd answers
            // with its commit index. Entries past the commit index still get appended below
            // only when they connect, so just report what we know matches.
            let skip = (self.commit - prev_index) as usize;
            if skip >= entries.len() {
                return ConsensusMsg::AppendReply {
                    term,
                    success: true,
                    index: self.commit,
                    last_index: self.last_index(),
                    read_seq,
                };
            }
            let prev = self.commit;
            let prev_t = entries[skip - 1].term;
            let rest = entries[skip..].to_vec();
            return self.handle_append(prev, prev_t, rest, leader_commit, read_seq);
        }
        if self.term_at(prev_index) != Some(prev_term) {
            return ConsensusMsg::AppendReply {
                term,
                success: false,
                index: prev_index,
                last_index: self.last_index(),
                read_seq,
            };
        }
        let n = entries.len() as LogIndex;
        for (i, e) in entries.into_iter().enumerate() {
            let idx = prev_index + 1 + i as LogIndex;
            match self.term_at(idx) {
                Some(t) if t == e.term => {}
                Some(_) => {
                    assert!(idx > self.commit, "raft: a committed entry would be truncated");
                    self.log.truncate(idx as usize - 1);
                    self.log.push(e);
                }
                None => self.log.push(e),
            }
        }
        let last_new = prev_index + n;
        let new_commit = leader_commit.min(last_new);
        if new_commit > self.commit {
            self.commit = new_commit;
        }
        ConsensusMsg::AppendReply { term, success: true, index: last_new, last_index: self.last_index(), read_seq }
    }
}
