//! [`Fingerprint`] for ShedLock's table: every field destructured (a new one is a compile error
//! here). Owners are values.

use locksim_simulator::fingerprint_struct;

use super::{ShedRow, ShedTable};

fingerprint_struct!(ShedRow { lock_until_ns, locked_at_ns, locked_by });
fingerprint_struct!(ShedTable { rows });
