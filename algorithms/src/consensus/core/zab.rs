//! ZAB's broadcast-phase messages on the shared log ([`Pattern::Zab`], ZooKeeper's opt-in; etcd
//! keeps Raft's): what the leader sends for a write, when idle, and to a follower it lost.
//!
//! What it follows (apache/zookeeper 3.8, `org.apache.zookeeper.server.quorum`):
//! - a write is `Leader.propose`: one PROPOSAL to each follower (`sendPacket` to every
//!   forwarding follower), here the AppendEntries carrying the entry; each follower logs it and
//!   ACKs (`Follower.processPacket`, `PROPOSAL` → `fzk.logRequest` → `SendAckRequestProcessor`),
//!   here the AppendEntries reply; on a quorum of acks `Leader.processAck` → `tryToCommit` →
//!   `commit` sends one COMMIT to each follower, here [`ConsensusMsg::Commit`], which nobody
//!   answers (`Follower.processPacket`, `COMMIT` → `fzk.commit`). With 3 servers: 6 messages.
//! - the leader sends nothing of the log's own when idle: liveness is the owner's ping
//!   (`Leader.lead` calls `LearnerHandler.ping` for every learner each `tickTime / 2`, and
//!   `Learner.ping` answers it), which the owner reports through [`Core::leader_ping`] (follower)
//!   and [`Core::ping_answered`] (leader); any packet from the leader (proposal, commit, ping)
//!   restarts the follower's wait, any packet from a follower (ack, ping answer) counts as heard
//!   (`LearnerHandler.run` moves `tickOfNextAckDeadline` on every packet it reads).
//! - a follower whose connection broke ([`Core::peer_reset`]: its process died, or restarted
//!   and refused the old connection), or that was silent for `syncLimit` ticks (the
//!   `LearnerHandler` reads with that socket timeout), gets no PROPOSAL and no COMMIT until it
//!   answers again: its `LearnerHandler` ends on the socket error or the timeout
//!   (`LearnerHandler.shutdown` → `Leader.removeLearnerHandler` takes it out of
//!   `forwardingFollowers`).
//!
//! Not ZAB's, kept from the log: catch-up. A follower that has not acknowledged what the leader
//! had a whole heartbeat round ago, or whose link broke, gets the missing entries again, with
//! the commit index, at the next round (ZooKeeper would drop the learner's connection and
//! resynchronise it with DIFF / TRUNC / SNAP in `LearnerHandler.syncFollower`). For a follower
//! whose link broke or that was dropped, that round's resend stands for its reconnecting: the
//! leader tries it once a round (a dead process refuses it, a lost host loses it) where in
//! ZooKeeper the follower connects to the leader again (`Learner.connectToLeader`).
//! The new leader's empty entry stands for NEWLEADER and costs a proposal round; one COMMIT may
//! cover several entries when one ack completes them (ZooKeeper sends one per zxid).

use rand::Rng;

use locksim_simulator::process::NodeId;
use locksim_simulator::time::Nanos;

use super::{Core, Outbox, Pattern, Role};
use crate::consensus::msg::{ConsensusMsg, LogIndex, Term};

impl<C: Clone> Core<C> {
    /// Leader: the commit index advanced; tell every follower (ZooKeeper `Leader.commit`).
    pub(super) fn broadcast_commit(&mut self, out: &mut Outbox<C>) {
        let (term, commit) = (self.term, self.commit);
        for (m, p) in self.members.iter().zip(&self.progress) {
            if *m != self.me && !p.paused {
                out.push((*m, ConsensusMsg::Commit { term, commit }));
            }
        }
    }

    /// Follower: the leader's commit index, applied as far as this log is known to match the
    /// leader's (a follower that missed a proposal commits the rest after the catch-up).
    pub(super) fn commit_to(&mut self, leader_commit: LogIndex) {
        let upto = leader_commit.min(self.leader_match);
        if upto > self.commit {
            self.commit = upto;
        }
    }

    /// Leader, each heartbeat round: resend to the followers that stalled (nothing acknowledged
    /// of what was there a round ago) or whose link broke; nothing to the others. A follower
    /// silent for `leader_timeout_ns` (ZooKeeper's `syncLimit` ticks) is dropped first, as one
    /// whose link broke.
    pub(super) fn resend_stalled(&mut self, now: Nanos, out: &mut Outbox<C>) {
        let stalled_below = self.round_last;
        let silence_limit_ns = self.cfg.leader_timeout_ns;
        for slot in 0..self.members.len() {
            let m = self.members[slot];
            if m == self.me {
                continue;
            }
            // ZooKeeper's `LearnerHandler` reads its follower's socket with a timeout of
            // `syncLimit` ticks (`sock.setSoTimeout(learnerMaster.syncTimeout())` once synced);
            // the timeout ends it (`shutdown` → `Leader.removeLearnerHandler`), so a follower
            // that went silent (a lost host, a partition, a long pause) gets nothing more.
            let heard_ns = self.progress[slot].heard_ns;
            if silence_limit_ns.is_some_and(|limit| now.saturating_sub(heard_ns) >= limit) {
                self.drop_follower(slot);
            }
            let p = &mut self.progress[slot];
            if !(p.resync || p.matched < stalled_below) {
                continue;
            }
            p.resync = false;
            p.next = p.matched + 1;
            let msg = self.append_for(slot);
            out.push((m, msg));
        }
        self.round_last = self.last_index();
    }

    /// Leader: the follower at `slot` is dropped, as ZooKeeper's `Leader.removeLearnerHandler`
    /// takes its handler out of `forwardingFollowers`: no PROPOSAL or COMMIT goes to it until it
    /// answers, and the next round resends what it may lack (standing for its reconnecting).
    fn drop_follower(&mut self, slot: usize) {
        let p = &mut self.progress[slot];
        p.paused = true;
        p.resync = true;
    }

    /// Follower: its owner received the ping of `from`, leader of `term` (ZooKeeper
    /// `Learner.ping`). The current leader's ping restarts the wait for it, as every packet does;
    /// a ping of a later term makes this replica follow that leader, as its AppendEntries would;
    /// a ping of an earlier term is answered as a stale AppendEntries is, with this term, so a
    /// deposed leader learns of it.
    pub fn leader_ping<R: Rng + ?Sized>(
        &mut self,
        now: Nanos,
        rng: &mut R,
        from: NodeId,
        term: Term,
        out: &mut Outbox<C>,
    ) {
        if self.slot(from).is_none() || from == self.me {
            return;
        }
        if term < self.term {
            let msg = ConsensusMsg::AppendReply {
                term: self.term,
                success: false,
                index: 0,
                last_index: self.last_index(),
                read_seq: 0,
            };
            out.push((from, msg));
            return;
        }
        if term > self.term {
            self.become_follower(now, rng, term, Some(from));
        }
        self.heard_from_leader(now, rng, from, term);
    }

    /// Leader: `from` answered this leader's ping of `term` (ZooKeeper's leader reads the
    /// learner's PING reply): it counts as heard for the quorum check.
    pub fn ping_answered(&mut self, now: Nanos, from: NodeId, term: Term) {
        if self.role != Role::Leader || term != self.term {
            return;
        }
        if let Some(slot) = self.slot(from) {
            let p = &mut self.progress[slot];
            p.heard_ns = now;
            p.active = true;
        }
    }

    /// The connection to `peer` was reset. A follower whose leader it is goes looking for
    /// another ([`Core::leader_lost`]); a [`Pattern::Zab`] leader sends that follower nothing
    /// more until it answers, and resends at the next round whatever it may have lost (with Raft
    /// every heartbeat does). Anything else ignores it.
    pub fn peer_reset<R: Rng + ?Sized>(&mut self, now: Nanos, rng: &mut R, peer: NodeId) {
        match self.role {
            Role::Follower => self.leader_lost(now, rng, peer),
            Role::Leader if self.cfg.pattern == Pattern::Zab && peer != self.me => {
                if let Some(slot) = self.slot(peer) {
                    // ZooKeeper's `LearnerHandler` for that follower ends on the socket error.
                    self.drop_follower(slot);
                }
            }
            _ => {}
        }
    }
}
