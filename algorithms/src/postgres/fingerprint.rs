//! [`Fingerprint`] for the postgres model's configuration, messages and timers (`protocol`):
//! every field destructured (a new one is a compile error here). The hand-written `Debug` of the
//! statements, results and messages (the trace's SQL forms) is not what is hashed. A connection id
//! holds its client's index in its high bits and a random draw in its low bits (`client.rs`): a
//! value, hashed as it is, not renamed.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::protocol::{ClientTimer, Outcome, PgMsg, ServerTimer, Stmt, Termination, WalRecord};
use super::{Acquire, Config, Pooler, Scope};

fingerprint_enum!(Scope { Session, Transaction });
fingerprint_enum!(Acquire { Wait, Try });
fingerprint_enum!(Pooler { Direct, Session, Transaction });

impl Fingerprint for Config {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Config {
            scope,
            acquire,
            poll_ns,
            fence,
            pooler,
            pool_size,
            standby,
            replication_lag_ns,
            failover_after_ns,
            keepalive_idle_ns,
            keepalive_interval_ns,
            keepalive_count,
            idle_session_timeout_ns,
            idle_in_transaction_timeout_ns,
            service_ms,
        } = self;
        (scope, acquire, poll_ns, fence, pooler, pool_size, standby, replication_lag_ns).fingerprint(h, ids);
        (failover_after_ns, keepalive_idle_ns, keepalive_interval_ns, keepalive_count).fingerprint(h, ids);
        (idle_session_timeout_ns, idle_in_transaction_timeout_ns).fingerprint(h, ids);
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
    }
}

fingerprint_enum!(Stmt {
    Lock { key },
    TryLock { key },
    Unlock { key },
    XactLock { key },
    TryXactLock { key },
    Bump { key },
    Commit,
    Rollback,
    DiscardAll,
});
fingerprint_enum!(Outcome { Bool(v), Done, Generation(v), ReadOnly, Starting, Gone });
fingerprint_enum!(Termination { IdleSession, IdleInTransaction, ServerClosed });
fingerprint_struct!(WalRecord { lsn, key, generation });
fingerprint_enum!(PgMsg {
    Query { conn, first, id, stmt },
    Ready { conn },
    Reply { conn, id, outcome, in_txn },
    Close { conn },
    Terminated { conn, why },
    Probe { conn },
    ProbeAck { conn },
    Wal { records },
    WalKeepalive { timeline, lsn },
    WalResend { from },
    WhoIsPrimary,
    Role { primary, timeline },
});
fingerprint_enum!(ServerTimer { Keepalive { conn }, Idle { conn }, Ship, Beat });
fingerprint_enum!(ClientTimer { Poll { key }, Reconnect });
