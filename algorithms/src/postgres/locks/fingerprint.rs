//! [`Fingerprint`] for a server's advisory lock table and generation table: every field
//! destructured (a new one is a compile error here). Sessions are connection ids (values).

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{AdvisoryLocks, Generations, Held, LockScope, Waiter};

fingerprint_enum!(LockScope { Session, Xact });
fingerprint_struct!(Held { session, session_count, xact_count });
fingerprint_struct!(Waiter { session, id, scope });
fingerprint_struct!(AdvisoryLocks { held, waiters });
fingerprint_struct!(Generations { committed });
