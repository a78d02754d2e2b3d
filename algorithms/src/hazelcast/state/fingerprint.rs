//! [`Fingerprint`] for the CP lock's replicated state: every field destructured (a new one is a
//! compile error here). Clients are named by index (a number), sessions by id.

use locksim_simulator::fingerprint_struct;

use super::{Caller, LockState, Session, State};

fingerprint_struct!(Session { client, version, expires_ns });
fingerprint_struct!(Caller { session, client, uid });
fingerprint_struct!(LockState { owner, count, fence, waiters });
fingerprint_struct!(State { sessions, locks });
