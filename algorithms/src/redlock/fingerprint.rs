//! [`Fingerprint`] for Redlock's messages and timers (`protocol`): every field destructured (a
//! new one is a compile error here). The hand-written `Debug` of requests and replies is not what
//! is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::client::{ElapsedClock, RequestMode};
use super::library::Library;
use super::protocol::{ClientTimer, Command, RedlockMsg, RedlockTimer, Reply, Request, ServerTimer};

/// Fieldless enums, by variant.
macro_rules! fieldless {
    ($($ty:ty),* $(,)?) => {$(
        impl Fingerprint for $ty {
            fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
                h.write_u8(*self as u8);
            }
        }
    )*};
}

fieldless!(ElapsedClock, RequestMode, Library, ServerTimer);

/// One variant's number, then its fields.
macro_rules! variant {
    ($h:ident, $ids:ident, $n:expr $(, $field:expr)*) => {{
        $h.write_u8($n);
        $($field.fingerprint($h, $ids);)*
    }};
}

impl Fingerprint for Command {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Command::SetNx { key, value, px_ms } => variant!(h, ids, 0, key, value, px_ms),
            Command::Unlock { key, value } => variant!(h, ids, 1, key, value),
            Command::Touch { key, value, px_ms, set_if_missing } => {
                variant!(h, ids, 2, key, value, px_ms, set_if_missing)
            }
        }
    }
}

impl Fingerprint for ClientTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ClientTimer::NodeTimeout { key } => variant!(h, ids, 0, key),
            ClientTimer::RetryDelay { key } => variant!(h, ids, 1, key),
            ClientTimer::Validity { key } => variant!(h, ids, 2, key),
            ClientTimer::ExtendDue { key } => variant!(h, ids, 3, key),
        }
    }
}

fingerprint_struct!(Request { id, cmd });
fingerprint_struct!(Reply { id, ok });

impl Fingerprint for RedlockMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            RedlockMsg::Request(m) => variant!(h, ids, 0, m),
            RedlockMsg::Reply(m) => variant!(h, ids, 1, m),
        }
    }
}

impl Fingerprint for RedlockTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            RedlockTimer::Server(t) => variant!(h, ids, 0, t),
            RedlockTimer::Client(t) => variant!(h, ids, 1, t),
        }
    }
}
