//! [`Fingerprint`] for the ZooKeeper client library (Curator, Kazoo, the locksim recipe): every
//! field destructured (a new one is a compile error here), timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Delivery, KeyState, Purpose, Redo, Step, Volatile, ZkClient};

impl Fingerprint for Redo {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            Redo::Create => 0,
            Redo::Recover => 1,
            Redo::List => 2,
            Redo::StatOwn => 3,
            Redo::Release => 4,
        });
    }
}

fingerprint_enum!(Step {
    Create,
    Recover,
    List,
    SetWatch { pred, fired },
    Wait { pred },
    StatOwn,
    Sleep { then },
    NaiveExists { fired },
    NaiveWait,
    Held,
    Release,
});

fingerprint_enum!(Purpose {
    Lock { key, gen },
    Delete(path),
    FindAndDelete { key, protection, name },
    CheckOwner { path, czxid },
    CheckedDelete { path, czxid },
});

fingerprint_struct!(KeyState { name, step, gen, op_retries, lock_retries, protection, ours, count, honoured });
fingerprint_struct!(Delivery { seq, state, at_ns, timer });
fingerprint_struct!(Volatile { conn, keys, purposes, doomed, next_tag, next_gen, deliveries, last_delivery_ns });
fingerprint_struct!(ZkClient { cfg, v, conn_events, next_delivery });
