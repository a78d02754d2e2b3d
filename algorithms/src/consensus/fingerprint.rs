//! [`Fingerprint`] for the replica, its timer and the Raft messages and entries: every field
//! destructured (a new one is a compile error here), peers through the renaming. The entries'
//! and messages' hand-written `Debug` (the trace's short form) is not what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{ConsensusMsg, ConsensusTimer, Entry, Replica, ReplicaDisk};

impl Fingerprint for ConsensusTimer {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {}
}

fingerprint_struct!(Entry<C> { term, cmd });
fingerprint_struct!(ReplicaDisk<C> { me_index, member_names, config, core, initial_leader });

impl<C: Fingerprint> Fingerprint for Replica<C> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Replica { me_index, member_names, config, core, initial_leader, armed, out, syncs, disk_busy_until_ns } =
            self;
        (me_index, member_names, config, core, initial_leader, armed).fingerprint(h, ids);
        h.write_usize(out.len());
        for (to, msg) in out {
            ids.node(h, *to);
            msg.fingerprint(h, ids);
        }
        (syncs, disk_busy_until_ns).fingerprint(h, ids);
    }
}

impl<C: Fingerprint> Fingerprint for ConsensusMsg<C> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ConsensusMsg::Vote { term, last_index, last_term } => {
                h.write_u8(0);
                (term, last_index, last_term).fingerprint(h, ids);
            }
            ConsensusMsg::VoteReply { term, granted } => {
                h.write_u8(1);
                (term, granted).fingerprint(h, ids);
            }
            ConsensusMsg::Append { term, prev_index, prev_term, entries, commit, read_seq } => {
                h.write_u8(2);
                (term, prev_index, prev_term, entries, commit).fingerprint(h, ids);
                read_seq.fingerprint(h, ids);
            }
            ConsensusMsg::AppendReply { term, success, index, last_index, read_seq } => {
                h.write_u8(3);
                (term, success, index, last_index, read_seq).fingerprint(h, ids);
            }
            ConsensusMsg::Commit { term, commit } => {
                h.write_u8(4);
                (term, commit).fingerprint(h, ids);
            }
        }
    }
}
