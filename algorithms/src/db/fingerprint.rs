//! [`Fingerprint`] for the db model's configuration, messages and timers (`protocol`): every
//! field destructured (a new one is a compile error here), node ids through the renaming. The
//! hand-written `Debug` of the statements and results (the trace's SQL forms) is not what is
//! hashed. An owner id and a connection id hold the client's index in their high bits and a
//! random draw in their low bits (`client.rs`): values, hashed as they are, not renamed.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::library::Library;
use super::protocol::{
    BinlogEvent, ClientTimer, DbMsg, ManagerTimer, Outcome, Role, ServerTimer, ShedTime, ShedUnlockTime, Stmt,
};
use super::table::Row;
use super::{Config, Expiry, Mode, OwnerScope, Replication};

fingerprint_enum!(Library { Locksim, Spring60, Spring6, Spring7 });
fingerprint_enum!(Mode { Table, GetLock, SelectForUpdate, SpringJdbc, ShedLock });
fingerprint_enum!(Expiry { CreatedDate, ExpiredAfter });
fingerprint_enum!(Replication { None, Async, Semisync });
fingerprint_enum!(OwnerScope { Process, Acquire });

impl Fingerprint for Config {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Config {
            library,
            postgres,
            mode,
            poll_ns,
            expire_ns,
            cleanup_every_ns,
            heartbeat_ns,
            reentrant,
            replication,
            replication_lag_ns,
            semisync_timeout_ns,
            failover_after_ns,
            service_ms,
            clients,
            release_retry,
            owner_scope,
            autoinc_persistent,
            lock_wait_timeout_ns,
            get_lock_timeout_ns,
            ttl_ns,
            expiry,
            release_missing_fails,
            lock_at_most_for_ns,
            lock_at_least_for_ns,
            db_time,
            unlock_by_owner,
        } = self;
        (library, postgres, mode, poll_ns, expire_ns, cleanup_every_ns, heartbeat_ns, reentrant).fingerprint(h, ids);
        (replication, replication_lag_ns, semisync_timeout_ns, failover_after_ns).fingerprint(h, ids);
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
        (clients, release_retry, owner_scope, autoinc_persistent, lock_wait_timeout_ns).fingerprint(h, ids);
        (get_lock_timeout_ns, ttl_ns, expiry, release_missing_fails, lock_at_most_for_ns).fingerprint(h, ids);
        (lock_at_least_for_ns, db_time, unlock_by_owner).fingerprint(h, ids);
    }
}

fingerprint_struct!(Row { id, owner, count, update_time_ns });
fingerprint_enum!(ShedTime { Node { lock_until_ns, now_ns }, Db { at_most_ns } });
fingerprint_enum!(ShedUnlockTime { Node { unlock_ns }, Db { at_least_ns } });
fingerprint_enum!(Stmt {
    Insert { key, owner },
    Reenter { key, owner },
    Release { key, owner },
    Touch { key, owner },
    Claim { key, owner, stamp_ns, expired_before_ns },
    GetLock { key, wait_ns },
    ReleaseLock { key },
    SelectForUpdate { key },
    Commit { key },
    ShedLock { key, owner, insert, time },
    ShedUnlock { key, owner, by_owner, time },
});
fingerprint_enum!(Outcome {
    Inserted { id },
    Duplicate,
    Updated { rows, id, count },
    Released { left },
    GetLock { got },
    ReleaseLock { result },
    ReadOnly { @opt_node primary, epoch },
    Gone,
    RowLocked,
    LockWaitTimeout,
    Committed { released },
});
fingerprint_enum!(Role { Primary, Replica, Retired });
fingerprint_struct!(BinlogEvent { seq, epoch, change });
fingerprint_enum!(DbMsg {
    Request { conn, first, id, stmt },
    Response { conn, id, outcome },
    Close { conn },
    Closed { conn },
    Binlog { events },
    BinlogHeartbeat { epoch, shipped },
    Resync { from },
    Ack { seq },
    Ping { epoch },
    Pong { role, epoch, applied },
    Promote { epoch },
    Promoted { epoch },
    Demote { epoch, @node primary },
    WhoIsPrimary,
    NewPrimary { @node primary, epoch },
});
fingerprint_enum!(ServerTimer {
    Commit { exec },
    Ship,
    SemisyncTimeout,
    Cleanup,
    BinlogHeartbeat,
    LockWait { conn, id },
});
fingerprint_enum!(ClientTimer {
    Poll { key },
    Heartbeat { key },
    Retransmit,
    StatementTimeout,
    AskPrimary,
    CloseRetransmit { conn },
});
fingerprint_enum!(ManagerTimer { Probe });
