//! [`Fingerprint`] for the Redis lock client library: every field destructured (a new one is a
//! compile error here); servers and sentinels through the renaming, timer ids by the timer they
//! name. Its owner id and lock values are random per client: hashed as values (clients holding
//! different ones are not merged).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{
    Acq, AcquireMode, AfterInfo, ClientConfig, Held, KeyState, NoSync, Pending, RedisLockClient, RenewalError,
    ReplicaCount, ReqKind, ResendWritten, RetryDelay, UnlockMode, Volatile,
};

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

fieldless!(UnlockMode, AcquireMode, RenewalError, NoSync, ResendWritten, ReplicaCount);

/// One variant's number, then its fields.
macro_rules! variant {
    ($h:ident, $ids:ident, $n:expr $(, $field:expr)*) => {{
        $h.write_u8($n);
        $($field.fingerprint($h, $ids);)*
    }};
}

impl Fingerprint for RetryDelay {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            RetryDelay::Constant => variant!(h, ids, 0),
            RetryDelay::EqualJitter { base_ms, max_ms } => variant!(h, ids, 1, base_ms, max_ms),
            RetryDelay::ExpJitter { base_ms, cap_ms } => variant!(h, ids, 2, base_ms, cap_ms),
        }
    }
}

impl Fingerprint for ClientConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ClientConfig {
            ttl_ms,
            unlock,
            acquire,
            retry_ms,
            watchdog,
            replica_ack,
            fencing,
            servers,
            sentinels,
            timeout_ms,
            retry_attempts,
            retry_interval_ms,
            retry_delay,
            renewal_error,
            renewal_wait,
            resend_written,
            readonly_retry,
            replica_count,
            release_missing_fails,
            no_sync,
        } = self;
        (ttl_ms, unlock, acquire, watchdog, replica_ack, fencing, servers, sentinels).fingerprint(h, ids);
        h.debug(retry_ms);
        (timeout_ms, retry_attempts, retry_interval_ms, retry_delay, renewal_error, renewal_wait).fingerprint(h, ids);
        (resend_written, readonly_retry, replica_count, release_missing_fails, no_sync).fingerprint(h, ids);
    }
}

impl Fingerprint for AfterInfo {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            AfterInfo::Lock { nested } => variant!(h, ids, 0, nested),
            AfterInfo::Renew { seq } => variant!(h, ids, 1, seq),
        }
    }
}

impl Fingerprint for ReqKind {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ReqKind::Lock { value, nested, waited } => variant!(h, ids, 0, value, nested, waited),
            ReqKind::Unlock => variant!(h, ids, 1),
            ReqKind::Expire { value, token } => variant!(h, ids, 2, value, token),
            ReqKind::UnlockGet { value, cleanup } => variant!(h, ids, 3, value, cleanup),
            ReqKind::Cleanup => variant!(h, ids, 4),
            ReqKind::Renew { seq, waited } => variant!(h, ids, 5, seq, waited),
            ReqKind::Subscribe => variant!(h, ids, 6),
            ReqKind::Unsubscribe => variant!(h, ids, 7),
            ReqKind::Resubscribe => variant!(h, ids, 8),
            ReqKind::Info { then } => variant!(h, ids, 9, then),
        }
    }
}

impl Fingerprint for Acq {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Acq::Idle => variant!(h, ids, 0),
            Acq::Requested { req } => variant!(h, ids, 1, req),
            Acq::Expiring { req } => variant!(h, ids, 2, req),
            Acq::RetryWait { seq } => variant!(h, ids, 3, seq),
            Acq::Subscribing { req } => variant!(h, ids, 4, req),
            Acq::WaitUnlock { seq } => variant!(h, ids, 5, seq),
        }
    }
}

fingerprint_struct!(Pending { key, kind, timer, cmd, wait, @node to, attempt, in_flight, written });
fingerprint_struct!(Held { value, token, count });
fingerprint_struct!(KeyState { held, acq, subscribed, permit, renew_seq, no_sync_retries });
fingerprint_struct!(Volatile {
    @nodes servers,
    @nodes sentinels,
    @node primary,
    config_epoch,
    @node_set replicas_down,
    owner,
    seq,
    pending,
    keys,
    @node_set closed,
    cached_replicas,
});
fingerprint_struct!(RedisLockClient { cfg, next_req, v });
