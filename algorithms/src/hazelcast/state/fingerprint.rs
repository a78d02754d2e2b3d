//! [`Fingerprint`] for the CP lock's replicated state: every field destructured (a new one is a
//! compile error here). Clients are named by index, through the renaming (`Renaming::client_index`),
//! invocation uids as identity values; sessions by id.

use locksim_simulator::fingerprint_struct;

use super::{Caller, LockState, Session, State};

fingerprint_struct!(Session { @client_index client, version, expires_ns });
fingerprint_struct!(Caller { session, @client_index client, @ident_high uid });
fingerprint_struct!(LockState { owner, count, fence, waiters });
fingerprint_struct!(State { sessions, locks });
