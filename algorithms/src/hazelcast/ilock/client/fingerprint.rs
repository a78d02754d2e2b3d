//! [`Fingerprint`] for an ILock client: every field destructured (a new one is a compile error
//! here); its member through the renaming. Its index names it in the protocol: a number.

use locksim_simulator::fingerprint_struct;

use super::{IlockClient, Volatile};

fingerprint_struct!(Volatile { @node member, epoch, next, calls, held });
fingerprint_struct!(IlockClient { index, members, v });
