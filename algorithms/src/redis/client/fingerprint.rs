//! [`Fingerprint`] for the Redis lock client library: every field destructured (a new one is a
//! compile error here); servers and sentinels through the renaming, timer ids by the timer they
//! name. Its owner id and lock values, random per client and only compared for equality (by the
//! keyspace's scripts and the GET-then-DEL unlock), are identity values: under client symmetry
//! each hashes as its client (`RedisLockClient::identity_values`).

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_fieldless, fingerprint_struct};

use super::{
    Acq, AcquireMode, AfterInfo, ClientConfig, Held, KeyState, NoSync, Pending, RedisLockClient, RenewalError,
    ReplicaCount, ReqKind, ResendWritten, RetryDelay, UnlockMode, Volatile,
};

fingerprint_fieldless!(UnlockMode, AcquireMode, RenewalError, NoSync, ResendWritten, ReplicaCount);

fingerprint_enum!(RetryDelay { Constant, EqualJitter { base_ms, max_ms }, ExpJitter { base_ms, cap_ms } });

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

fingerprint_enum!(AfterInfo { Lock { nested }, Renew { seq } });

fingerprint_enum!(ReqKind {
    Lock { @ident value, nested, waited },
    Unlock,
    Expire { @ident value, token },
    UnlockGet { @ident value, cleanup },
    Cleanup,
    Renew { seq, waited },
    Subscribe,
    Unsubscribe,
    Resubscribe,
    Info { then },
});

fingerprint_enum!(Acq {
    Idle,
    Requested { req },
    Expiring { req },
    RetryWait { seq },
    Subscribing { req },
    WaitUnlock { seq },
});

fingerprint_struct!(Pending { key, kind, timer, cmd, wait, @node to, attempt, in_flight, written });
fingerprint_struct!(Held { @ident value, token, count });
fingerprint_struct!(KeyState { held, acq, subscribed, permit, renew_seq, no_sync_retries });
fingerprint_struct!(Volatile {
    @nodes servers,
    @nodes sentinels,
    @node primary,
    config_epoch,
    @node_set replicas_down,
    @ident owner,
    seq,
    pending,
    keys,
    @node_set closed,
    cached_replicas,
});
fingerprint_struct!(RedisLockClient { cfg, next_req, v });
