//! [`Fingerprint`] for persistence: every field destructured (a new one is a compile error here).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{Disk, Persistence, SaveState};

impl Fingerprint for Persistence {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(*self as u8);
    }
}

fingerprint_struct!(SaveState { dirty, lastsave_wall_ns, in_progress });
fingerprint_struct!(Disk { persistence, rdb, aof_fsynced, to_load });
