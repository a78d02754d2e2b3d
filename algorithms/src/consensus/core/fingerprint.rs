//! [`Fingerprint`] for the Raft core: every field destructured (a new one is a compile error
//! here); members, votes, the leader and outbox peers through the renaming (servers, never
//! renamed, but named as node ids all the same).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{Committed, Config, Core, CoreDisk, NotLeader, Pattern, PendingRead, Progress, Role};

impl Fingerprint for Pattern {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(*self as u8);
    }
}

impl Fingerprint for Role {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(*self as u8);
    }
}

impl Fingerprint for Config {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Config {
            heartbeat_ns,
            election_ns,
            check_quorum,
            max_entries_per_msg,
            leader_timeout_ns,
            pattern,
            fsync_ms,
        } = self;
        (heartbeat_ns, election_ns, check_quorum, max_entries_per_msg, leader_timeout_ns).fingerprint(h, ids);
        pattern.fingerprint(h, ids);
        h.debug(fsync_ms);
    }
}

fingerprint_struct!(NotLeader { @opt_node leader_hint });
fingerprint_struct!(Committed<C> { index, term, cmd });
fingerprint_struct!(Progress { next, matched, active, acked_seq, heard_ns, resync, paused });
fingerprint_struct!(PendingRead { id, index, seq, confirmed });
fingerprint_struct!(CoreDisk<C> { cfg, @node me, @nodes members, term, @opt_node voted_for, log, commit, applied });

impl<C: Fingerprint> Fingerprint for Core<C> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Core {
            cfg,
            me,
            members,
            term,
            voted_for,
            log,
            commit,
            applied,
            role,
            leader,
            randomized_election_ns,
            election_deadline_ns,
            heard_leader_ns,
            votes,
            progress,
            heartbeat_due_ns,
            last_heartbeat_ns,
            quorum_check_due_ns,
            read_seq,
            pending_reads,
            finished_reads,
            leader_match,
            round_last,
            matched_scratch,
        } = self;
        cfg.fingerprint(h, ids);
        ids.node(h, *me);
        ids.nodes(h, members);
        term.fingerprint(h, ids);
        ids.opt_node(h, *voted_for);
        log.fingerprint(h, ids);
        (commit, applied, role).fingerprint(h, ids);
        ids.opt_node(h, *leader);
        (randomized_election_ns, election_deadline_ns, heard_leader_ns).fingerprint(h, ids);
        ids.node_set(h, votes);
        // By member index (`members` order), as the core reads it.
        progress.fingerprint(h, ids);
        (heartbeat_due_ns, last_heartbeat_ns, quorum_check_due_ns, read_seq).fingerprint(h, ids);
        pending_reads.fingerprint(h, ids);
        h.write_usize(finished_reads.len());
        for (id, result) in finished_reads {
            id.fingerprint(h, ids);
            match result {
                Ok(index) => {
                    h.write_u8(0);
                    index.fingerprint(h, ids);
                }
                Err(not_leader) => {
                    h.write_u8(1);
                    not_leader.fingerprint(h, ids);
                }
            }
        }
        (leader_match, round_last).fingerprint(h, ids);
        // Scratch for one commit computation: cleared before each use.
        let _ = matched_scratch;
    }
}
