//! [`Fingerprint`] for the replica, its timer and the Raft messages and entries: every field
//! destructured (a new one is a compile error here), peers through the renaming. The entries'
//! and messages' hand-written `Debug` (the trace's short form) is not what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

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

fingerprint_enum!(ConsensusMsg<C> {
    Vote { term, last_index, last_term },
    VoteReply { term, granted },
    Append { term, prev_index, prev_term, entries, commit, read_seq },
    AppendReply { term, success, index, last_index, read_seq },
    Commit { term, commit },
});
