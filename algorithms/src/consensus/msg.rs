//! The messages replicas exchange (Raft's RequestVote and AppendEntries and their replies, and
//! ZAB's COMMIT when the log follows ZooKeeper's pattern) and the log entry they carry. Their
//! `Debug` text is what the trace prints, so it is short.

use std::fmt;

/// Position of an entry in the replicated log (the first entry is 1; 0 means "before the log").
pub type LogIndex = u64;
/// A Raft term (an election epoch).
pub type Term = u64;

/// One log entry: the term it was created in and what it carries.
#[derive(Clone, PartialEq)]
pub struct Entry<C> {
    /// The term of the leader that appended the entry.
    pub term: Term,
    /// `None` is the empty entry a new leader appends to commit its predecessors' entries (etcd's
    /// empty `EntryNormal`, ZAB's NEWLEADER); `Some` is a proposed command.
    pub cmd: Option<C>,
}

impl<C: fmt::Debug> fmt::Debug for Entry<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cmd {
            None => write!(f, "t{}:noop", self.term),
            Some(c) => write!(f, "t{}:{:?}", self.term, c),
        }
    }
}

/// A message between replicas of one group.
#[derive(Clone, PartialEq)]
pub enum ConsensusMsg<C> {
    /// RequestVote: a candidate asks for a vote in `term`.
    Vote {
        /// The candidate's term (its previous one plus one).
        term: Term,
        /// Index of the candidate's last log entry.
        last_index: LogIndex,
        /// Term of the candidate's last log entry; with `last_index`, how up to date its log is.
        last_term: Term,
    },
    /// The answer to [`ConsensusMsg::Vote`].
    VoteReply {
        /// The term of the vote request being answered.
        term: Term,
        /// Whether the voter gave the candidate its vote.
        granted: bool,
    },
    /// AppendEntries, also the heartbeat (with no entries). `read_seq` is the leader's read-index
    /// round, echoed in the reply so the leader can confirm it still leads.
    Append {
        /// The leader's term.
        term: Term,
        /// Index of the entry just before `entries` (0 when they start the log).
        prev_index: LogIndex,
        /// Term of the entry at `prev_index`; the follower rejects if its own entry there differs.
        prev_term: Term,
        /// Entries to append after `prev_index`; empty for a plain heartbeat.
        entries: Vec<Entry<C>>,
        /// The leader's commit index.
        commit: LogIndex,
        /// The leader's current read-index round.
        read_seq: u64,
    },
    /// The answer to [`ConsensusMsg::Append`]: on success `index` is the follower's last index
    /// known to match the leader; on rejection `index` is the `prev_index` that did not match and
    /// `last_index` the follower's last index (a hint for the leader's next probe).
    AppendReply {
        /// The follower's current term.
        term: Term,
        /// Whether the entries connected at `prev_index` (and were appended).
        success: bool,
        /// On success the last index known to match the leader; on rejection the unmatched
        /// `prev_index` (0 in the answer to a stale leader's append).
        index: LogIndex,
        /// The follower's last log index.
        last_index: LogIndex,
        /// The `read_seq` of the append being answered (0 in the answer to a stale leader).
        read_seq: u64,
    },
    /// ZAB's COMMIT (only under [`Pattern::Zab`](super::Pattern)): the leader's commit index,
    /// sent to every follower when it advances (ZooKeeper `Leader.commit`); not answered.
    Commit {
        /// The leader's term.
        term: Term,
        /// The leader's commit index; a follower commits up to it as far as its log is known
        /// to match the leader's.
        commit: LogIndex,
    },
}

impl<C: fmt::Debug> fmt::Debug for ConsensusMsg<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsensusMsg::Vote { term, last_index, last_term } => {
                write!(f, "Vote t{term} last={last_index}/t{last_term}")
            }
            ConsensusMsg::VoteReply { term, granted } => {
                write!(f, "VoteReply t{term} {}", if *granted { "yes" } else { "no" })
            }
            ConsensusMsg::Append { term, prev_index, prev_term, entries, commit, read_seq } => {
                write!(f, "Append t{term} prev={prev_index}/t{prev_term} commit={commit} rs={read_seq}")?;
                // Only the index range: the commands were traced when they were proposed, and a
                // catch-up message can carry hundreds of entries.
                match entries.len() {
                    0 => Ok(()),
                    1 => write!(f, " entry {}", prev_index + 1),
                    n => write!(f, " entries {}..={}", prev_index + 1, prev_index + n as u64),
                }
            }
            ConsensusMsg::AppendReply { term, success, index, last_index, read_seq } => {
                if *success {
                    write!(f, "AppendOk t{term} match={index} rs={read_seq}")
                } else {
                    write!(f, "AppendReject t{term} prev={index} last={last_index} rs={read_seq}")
                }
            }
            ConsensusMsg::Commit { term, commit } => write!(f, "Commit t{term} commit={commit}"),
        }
    }
}

impl<C> ConsensusMsg<C> {
    /// The sender's term.
    pub fn term(&self) -> Term {
        match self {
            ConsensusMsg::Vote { term, .. }
            | ConsensusMsg::VoteReply { term, .. }
            | ConsensusMsg::Append { term, .. }
            | ConsensusMsg::AppendReply { term, .. }
            | ConsensusMsg::Commit { term, .. } => *term,
        }
    }
}
