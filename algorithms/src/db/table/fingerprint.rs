//! [`Fingerprint`] for the lock table and MySQL's user-level locks: every field destructured (a
//! new one is a compile error here). Owners and connection ids are values.

use locksim_simulator::fingerprint_struct;

use super::{LockTable, UserLocks};

fingerprint_struct!(LockTable { rows, next_id });
fingerprint_struct!(UserLocks { locks });
