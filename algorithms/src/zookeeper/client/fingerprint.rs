//! [`Fingerprint`] for the ZooKeeper client library (Curator, Kazoo, the locksim recipe): every
//! field destructured (a new one is a compile error here), timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

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

impl Fingerprint for Step {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Step::Create => h.write_u8(0),
            Step::Recover => h.write_u8(1),
            Step::List => h.write_u8(2),
            Step::SetWatch { pred, fired } => {
                h.write_u8(3);
                (pred, fired).fingerprint(h, ids);
            }
            Step::Wait { pred } => {
                h.write_u8(4);
                pred.fingerprint(h, ids);
            }
            Step::StatOwn => h.write_u8(5),
            Step::Sleep { then } => {
                h.write_u8(6);
                then.fingerprint(h, ids);
            }
            Step::NaiveExists { fired } => {
                h.write_u8(7);
                fired.fingerprint(h, ids);
            }
            Step::NaiveWait => h.write_u8(8),
            Step::Held => h.write_u8(9),
            Step::Release => h.write_u8(10),
        }
    }
}

impl Fingerprint for Purpose {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Purpose::Lock { key, gen } => {
                h.write_u8(0);
                (key, gen).fingerprint(h, ids);
            }
            Purpose::Delete(path) => {
                h.write_u8(1);
                path.fingerprint(h, ids);
            }
            Purpose::FindAndDelete { key, protection, name } => {
                h.write_u8(2);
                (key, protection, name).fingerprint(h, ids);
            }
            Purpose::CheckOwner { path, czxid } => {
                h.write_u8(3);
                (path, czxid).fingerprint(h, ids);
            }
            Purpose::CheckedDelete { path, czxid } => {
                h.write_u8(4);
                (path, czxid).fingerprint(h, ids);
            }
        }
    }
}

fingerprint_struct!(KeyState { name, step, gen, op_retries, lock_retries, protection, ours, count, honoured });
fingerprint_struct!(Delivery { seq, state, at_ns, timer });
fingerprint_struct!(Volatile { conn, keys, purposes, doomed, next_tag, next_gen, deliveries, last_delivery_ns });
fingerprint_struct!(ZkClient { cfg, v, conn_events, next_delivery });
