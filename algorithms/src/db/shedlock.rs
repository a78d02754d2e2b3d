//! ShedLock's `shedlock` table (`mode = "shedlock"`) as a pure data structure, so the statements'
//! semantics are unit-tested on their own.
//!
//! `CREATE TABLE shedlock (name VARCHAR(64) PRIMARY KEY, lock_until TIMESTAMP(3), locked_at
//! TIMESTAMP(3), locked_by VARCHAR(255))` (ShedLock README, "Configure LockProvider"). The
//! statements are `SqlStatementsSource`'s (lukas-krecan/ShedLock `shedlock-parent-7.9.0`,
//! `providers/sql/shedlock-sql-support/src/main/java/net/javacrumbs/shedlock/provider/sql/`):
//!
//! - lock, first try of a process (`StorageBasedLockProvider.doLock`,
//!   `shedlock-core/…/support/StorageBasedLockProvider.java:66-100`): `INSERT INTO shedlock(name,
//!   lock_until, locked_at, locked_by) VALUES(:name, :lockUntil, :now, :lockedBy)`
//!   (`SqlStatementsSource.java:86-89`); a duplicate key means the row exists, and the name goes
//!   into the process's `LockRecordRegistry` so later tries skip the INSERT;
//! - lock: `UPDATE shedlock SET lock_until = :lockUntil, locked_at = :now, locked_by = :lockedBy
//!   WHERE name = :name AND lock_until <= :now` (`:91-94`); 1 row: locked, 0: taken;
//! - unlock: `UPDATE shedlock SET lock_until = :unlockTime WHERE name = :name AND locked_by =
//!   :lockedBy` (`:101-104`; before 7.0 without the `locked_by` condition, `shedlock-parent-6.10.0`
//!   `providers/jdbc/shedlock-provider-jdbc-template/…/SqlStatementsSource.java:112-114`);
//!   `:unlockTime` is `max(now, lockedAt + lockAtLeastFor)` (`LockConfiguration.getUnlockTime`,
//!   `shedlock-core/…/core/LockConfiguration.java:82-86`).
//!
//! Every `:now`, `:lockUntil` and `:unlockTime` is the node's wall clock (`ClockProvider.now()`,
//! `Clock.systemUTC()` truncated to ms; `:lockUntil` = the `LockConfiguration`'s `createdAt` +
//! `lockAtMostFor`, `createdAt` taken when the scheduled method was entered). With `usingDbTime()`
//! the database's clock stands in for every one of them (`MySqlServerTimeStatementsSource`:
//! `UTC_TIMESTAMP(3)`, `TIMESTAMPADD(MICROSECOND, :lockAtMostForMicros, UTC_TIMESTAMP(3))`, and
//! for unlock `IF(locked_at + lockAtLeastFor > now, locked_at + lockAtLeastFor, now)`; its INSERT
//! is `INSERT IGNORE`, 0 rows instead of a duplicate-key error, the same answer to the library).

use std::collections::BTreeMap;

use locksim_simulator::history::LockKey;

use super::table::Owner;

mod fingerprint;

/// One `shedlock` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShedRow {
    /// `lock_until`: until when the lock is held, on the clock of whoever wrote it.
    pub lock_until_ns: i64,
    /// `locked_at`: when it was taken, same clock.
    pub locked_at_ns: i64,
    /// `locked_by`: the holder's host name (the library's `getHostname()`).
    pub locked_by: Owner,
}

/// The `shedlock` table. Durable (InnoDB), like the lock table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShedTable {
    rows: BTreeMap<LockKey, ShedRow>,
}

impl ShedTable {
    /// The row of `key`, if any.
    pub fn row(&self, key: LockKey) -> Option<&ShedRow> {
        self.rows.get(&key)
    }

    /// The INSERT: true when the row was created (the lock is taken), false on a duplicate key.
    pub fn insert(&mut self, key: LockKey, row: ShedRow) -> bool {
        if self.rows.contains_key(&key) {
            return false;
        }
        self.rows.insert(key, row);
        true
    }

    /// The lock UPDATE: `… WHERE name = ? AND lock_until <= :now`; true when it matched.
    pub fn update(&mut self, key: LockKey, now_ns: i64, row: ShedRow) -> bool {
        match self.rows.get_mut(&key) {
            Some(r) if r.lock_until_ns <= now_ns => {
                *r = row;
                true
            }
            _ => false,
        }
    }

    /// The unlock UPDATE: sets `lock_until` to what `until` computes from the row (its
    /// `locked_at`), on `key`'s row if `by` holds it or `by_owner` is false (ShedLock before 7.0);
    /// true when it matched.
    pub fn unlock(&mut self, key: LockKey, by: Owner, by_owner: bool, until: impl FnOnce(&ShedRow) -> i64) -> bool {
        match self.rows.get_mut(&key) {
            Some(r) if !by_owner || r.locked_by == by => {
                r.lock_until_ns = until(r);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn row(until: i64, at: i64, by: Owner) -> ShedRow {
        ShedRow { lock_until_ns: until * S, locked_at_ns: at * S, locked_by: by }
    }

    #[test]
    fn a_row_is_taken_only_when_its_lock_until_has_passed_on_the_callers_clock() {
        let mut t = ShedTable::default();
        assert!(t.insert(0, row(70, 60, 1)));
        assert!(!t.insert(0, row(71, 61, 2)), "the second INSERT is a duplicate");
        assert!(!t.update(0, 69 * S, row(79, 69, 2)), "69 s < lock_until 70 s: taken");
        assert!(t.update(0, 70 * S, row(80, 70, 2)), "lock_until <= now: free (the comparison is <=)");
        assert_eq!(t.row(0), Some(&row(80, 70, 2)));
        // A node whose clock is 15 s ahead takes a lock that is still held on the writer's clock.
        assert!(t.update(0, 85 * S, row(95, 85, 3)));
    }

    #[test]
    fn unlock_checks_the_owner_only_from_7_0() {
        let mut t = ShedTable::default();
        t.insert(0, row(70, 60, 1));
        assert!(!t.unlock(0, 2, true, |_| 0), "7.x: another host's unlock matches nothing");
        assert_eq!(t.row(0).unwrap().lock_until_ns, 70 * S);
        assert!(t.unlock(0, 2, false, |r| r.locked_at_ns + 5 * S), "6.x: any host's unlock matches");
        assert_eq!(t.row(0).unwrap().lock_until_ns, 65 * S);
        assert!(!t.unlock(1, 1, false, |_| 0), "no row, nothing to unlock");
    }
}
