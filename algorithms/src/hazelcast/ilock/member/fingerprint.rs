//! [`Fingerprint`] for an ILock member: every field destructured (a new one is a compile error
//! here); members and clients by node id through the renaming, timer ids by the timer they name.

use locksim_simulator::fingerprint_struct;

use super::{IlockMember, Invoked, Volatile};

fingerprint_struct!(Invoked { key, call, target });
fingerprint_struct!(Volatile { @nodes members, @nodes clients, view, last_heard_ns, locks, invoked, heartbeat });
fingerprint_struct!(IlockMember { index, cfg, v });
