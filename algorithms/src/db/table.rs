//! The lock table and MySQL's user-level lock registry, as pure data structures (no clocks, no
//! messages), so the statement semantics are unit-tested on their own.
//!
//! The table is
//! `CREATE TABLE locks (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR UNIQUE, owner …,
//! count INT, update_time TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)`:
//! every update refreshes `update_time` (the `ON UPDATE` clause), and the auto-increment counter
//! only grows. An INSERT that fails on the unique name still consumes an id: InnoDB allocates the
//! value before the duplicate-key check and a rolled-back statement's value is lost ("gaps", MySQL
//! reference manual, AUTO_INCREMENT handling in InnoDB). The counter is durable in MySQL 8.0
//! (written to the redo log on each change) and recomputed as `MAX(id) + 1` at restart in 5.7
//! ([`LockTable::restart_counter_from_max`]); a replica's counter follows the ids of the rows it applied, so after losing the
//! tail of the log it hands out ids the old primary already used.

use std::collections::BTreeMap;

use locksim_simulator::history::LockKey;

mod fingerprint;

/// The `owner` column: the client library's id for itself (client index and a random part drawn
/// at each start, as a UUID per process is, so a restarted client is a new owner).
pub type Owner = u64;

/// A connection (session) id, chosen by the client when it connects.
pub type ConnId = u64;

/// One lock row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The auto-increment id: the fencing token.
    pub id: u64,
    /// The library that holds the lock.
    pub owner: Owner,
    /// Reentrant nesting depth.
    pub count: u32,
    /// The server's wall clock (`NOW()`) at the last write of the row. In a Spring Integration
    /// `INT_LOCK` row ([`LockTable::claim`]), the time the acquiring client wrote instead:
    /// `CREATED_DATE` (6.x) or `EXPIRED_AFTER` (7.0), from its own clock.
    pub update_time_ns: i64,
}

/// One row change, as row-based replication ships it: the after image (`None`: deleted).
pub type Change = (LockKey, Option<Row>);

/// Error 1062: the name is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duplicate;

/// What a release statement did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseOutcome {
    /// No row of this owner (it expired, was never written, or was lost in a failover).
    NotOwner,
    /// Nested: the count went down and the row stays.
    Decremented {
        /// The count left (at least 1).
        count: u32,
    },
    /// The row was deleted.
    Deleted,
}

/// The lock table with its auto-increment counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockTable {
    rows: BTreeMap<LockKey, Row>,
    /// The next id the counter hands out.
    next_id: u64,
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable { rows: BTreeMap::new(), next_id: 1 }
    }
}

impl LockTable {
    /// The row of lock `key`, if there is one.
    pub fn row(&self, key: LockKey) -> Option<&Row> {
        self.rows.get(&key)
    }

    /// The id the next INSERT draws.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// `INSERT INTO locks (name, owner, count) VALUES (?, ?, 1)`: the new row, or [`Duplicate`]
    /// (the id it drew is consumed either way).
    pub fn insert(&mut self, key: LockKey, owner: Owner, now_wall_ns: i64) -> Result<Change, Duplicate> {
        let id = self.next_id;
        self.next_id += 1;
        if self.rows.contains_key(&key) {
            return Err(Duplicate);
        }
        let row = Row { id, owner, count: 1, update_time_ns: now_wall_ns };
        self.rows.insert(key, row);
        Ok((key, Some(row)))
    }

    /// Spring Integration's `DefaultLockRepository.acquire`, one transaction:
    /// `UPDATE INT_LOCK SET CLIENT_ID = ?, CREATED_DATE = ? WHERE LOCK_KEY = ? AND (CLIENT_ID = ?
    /// OR CREATED_DATE < ?)`, then, when that matched nothing, `INSERT`; a duplicate key means
    /// taken. Both times are the acquirer's parameters, from its own clock: `stamp_ns` is what
    /// it writes (6.x `CREATED_DATE` = now, 7.0 `EXPIRED_AFTER` = now + ttl) and a row whose time
    /// column is below `expired_before_ns` (6.x now − ttl, 7.0 now) is taken over. No count
    /// column: the row's count stays 1. Returns the row, or [`Duplicate`] when another owner's
    /// row has not expired on the acquirer's clock.
    pub fn claim(
        &mut self,
        key: LockKey,
        owner: Owner,
        stamp_ns: i64,
        expired_before_ns: i64,
    ) -> Result<Change, Duplicate> {
        match self.rows.get_mut(&key) {
            Some(row) if row.owner == owner || row.update_time_ns < expired_before_ns => {
                row.owner = owner;
                row.update_time_ns = stamp_ns;
                row.count = 1;
                Ok((key, Some(*row)))
            }
            Some(_) => Err(Duplicate),
            None => self.insert(key, owner, stamp_ns),
        }
    }

    /// `UPDATE locks SET count = count + 1 WHERE name = ? AND owner = ?` (reentry).
    pub fn increment_if_owner(&mut self, key: LockKey, owner: Owner, now_wall_ns: i64) -> Option<Change> {
        let row = self.rows.get_mut(&key).filter(|r| r.owner == owner)?;
        row.count += 1;
        row.update_time_ns = now_wall_ns;
        Some((key, Some(*row)))
    }

    /// The holder's heartbeat: `UPDATE locks SET update_time = NOW() WHERE name = ? AND owner = ?`.
    pub fn touch(&mut self, key: LockKey, owner: Owner, now_wall_ns: i64) -> Option<Change> {
        let row = self.rows.get_mut(&key).filter(|r| r.owner == owner)?;
        row.update_time_ns = now_wall_ns;
        Some((key, Some(*row)))
    }

    /// Release. Reentrant: in one transaction, `SELECT count … FOR UPDATE`, then
    /// `UPDATE … SET count = count - 1` while above 1, else `DELETE … WHERE name = ? AND owner = ?`.
    /// Not reentrant: the DELETE alone.
    pub fn release(
        &mut self,
        key: LockKey,
        owner: Owner,
        reentrant: bool,
        now_wall_ns: i64,
    ) -> (ReleaseOutcome, Option<Change>) {
        let Some(row) = self.rows.get_mut(&key).filter(|r| r.owner == owner) else {
            return (ReleaseOutcome::NotOwner, None);
        };
        if reentrant && row.count > 1 {
            row.count -= 1;
            row.update_time_ns = now_wall_ns;
            let count = row.count;
            return (ReleaseOutcome::Decremented { count }, Some((key, Some(*row))));
        }
        self.rows.remove(&key);
        (ReleaseOutcome::Deleted, Some((key, None)))
    }

    /// The cleanup job: `DELETE FROM locks WHERE update_time < NOW() - INTERVAL expire`. Returns
    /// the deleted rows.
    pub fn expire(&mut self, now_wall_ns: i64, expire_ns: u64) -> Vec<(LockKey, Row)> {
        let limit = now_wall_ns.saturating_sub(expire_ns as i64);
        let gone: Vec<(LockKey, Row)> =
            self.rows.iter().filter(|(_, r)| r.update_time_ns < limit).map(|(k, r)| (*k, *r)).collect();
        for (k, _) in &gone {
            self.rows.remove(k);
        }
        gone
    }

    /// MySQL 5.7's counter after a restart: `SELECT MAX(id) + 1` over the rows left (1 when the
    /// table is empty), forgetting every id handed out above it (MySQL 5.7 reference manual,
    /// "AUTO_INCREMENT Handling in InnoDB", InnoDB AUTO_INCREMENT counter initialization).
    pub fn restart_counter_from_max(&mut self) {
        self.next_id = self.rows.values().map(|r| r.id).max().unwrap_or(0) + 1;
    }

    /// A replica applies a replicated row change; its counter follows the ids it has seen.
    pub fn apply(&mut self, change: &Change) {
        let (key, row) = change;
        match row {
            Some(r) => {
                self.next_id = self.next_id.max(r.id + 1);
                self.rows.insert(*key, *r);
            }
            None => {
                self.rows.remove(key);
            }
        }
    }
}

/// MySQL's user-level locks (`GET_LOCK`): in server memory, owned by a session, reentrant since
/// 5.7 (a session may take the same name n times and must release it n times). Never replicated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserLocks {
    locks: BTreeMap<LockKey, (ConnId, u32)>,
}

impl UserLocks {
    /// `GET_LOCK(name, 0)`: 1 (taken, or taken again by the same session) or 0 (another session
    /// holds it). Returns the session's count when it got it.
    pub fn get(&mut self, key: LockKey, conn: ConnId) -> Option<u32> {
        match self.locks.get_mut(&key) {
            None => {
                self.locks.insert(key, (conn, 1));
                Some(1)
            }
            Some((c, n)) if *c == conn => {
                *n += 1;
                Some(*n)
            }
            Some(_) => None,
        }
    }

    /// `RELEASE_LOCK(name)`: `Some(true)` (1) released one level, `Some(false)` (0) another
    /// session holds it, `None` (NULL) nobody holds it.
    pub fn release(&mut self, key: LockKey, conn: ConnId) -> Option<bool> {
        match self.locks.get_mut(&key) {
            None => None,
            Some((c, _)) if *c != conn => Some(false),
            Some((_, n)) => {
                *n -= 1;
                if *n == 0 {
                    self.locks.remove(&key);
                }
                Some(true)
            }
        }
    }

    /// The session ended: every lock it held is released. Returns the keys.
    pub fn close(&mut self, conn: ConnId) -> Vec<LockKey> {
        let keys: Vec<LockKey> = self.locks.iter().filter(|(_, (c, _))| *c == conn).map(|(k, _)| *k).collect();
        for k in &keys {
            self.locks.remove(k);
        }
        keys
    }

    /// The session holding `key` and its count, if any.
    pub fn holder(&self, key: LockKey) -> Option<(ConnId, u32)> {
        self.locks.get(&key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_insert_is_refused_and_still_consumes_an_id() {
        let mut t = LockTable::default();
        assert_eq!(t.insert(0, 7, 100).unwrap().1.unwrap().id, 1);
        assert!(t.insert(0, 8, 200).is_err());
        t.release(0, 7, true, 300);
        assert_eq!(t.insert(0, 8, 400).unwrap().1.unwrap().id, 3, "id 2 went to the failed INSERT");
    }

    #[test]
    fn reentrant_count_goes_up_and_down_and_the_row_goes_at_zero() {
        let mut t = LockTable::default();
        t.insert(0, 7, 0).unwrap();
        assert!(t.increment_if_owner(0, 8, 1).is_none(), "another owner cannot re-enter");
        t.increment_if_owner(0, 7, 1).unwrap();
        t.increment_if_owner(0, 7, 2).unwrap();
        assert_eq!(t.row(0).unwrap().count, 3);
        assert_eq!(t.release(0, 7, true, 3).0, ReleaseOutcome::Decremented { count: 2 });
        assert_eq!(t.release(0, 8, true, 3).0, ReleaseOutcome::NotOwner);
        assert_eq!(t.release(0, 7, true, 4).0, ReleaseOutcome::Decremented { count: 1 });
        assert_eq!(t.release(0, 7, true, 5).0, ReleaseOutcome::Deleted);
        assert!(t.row(0).is_none());
    }

    #[test]
    fn non_reentrant_release_deletes_at_once() {
        let mut t = LockTable::default();
        t.insert(0, 7, 0).unwrap();
        t.increment_if_owner(0, 7, 0).unwrap();
        assert_eq!(t.release(0, 7, false, 1).0, ReleaseOutcome::Deleted);
    }

    #[test]
    fn cleanup_deletes_only_rows_older_than_expiry() {
        let mut t = LockTable::default();
        t.insert(0, 7, 1_000).unwrap();
        t.insert(1, 8, 5_000).unwrap();
        assert!(t.expire(31_000, 30_000).is_empty(), "exactly expire old: kept (strictly older goes)");
        let gone = t.expire(31_001, 30_000);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].0, 0);
        t.touch(1, 8, 40_000).unwrap();
        assert!(t.expire(60_000, 30_000).is_empty(), "the heartbeat refreshed update_time");
    }

    #[test]
    fn replica_counter_follows_applied_rows_so_a_lost_tail_repeats_ids() {
        let mut primary = LockTable::default();
        let mut replica = LockTable::default();
        let c1 = primary.insert(0, 7, 0).unwrap();
        replica.apply(&c1);
        let (_, del) = primary.release(0, 7, true, 1);
        replica.apply(&del.unwrap());
        let lost = primary.insert(0, 8, 2).unwrap(); // never reaches the replica
        assert_eq!(lost.1.unwrap().id, 2);
        assert_eq!(replica.insert(0, 9, 3).unwrap().1.unwrap().id, 2, "the promoted replica reissues id 2");
    }

    #[test]
    fn a_counter_recomputed_from_max_reissues_ids_of_deleted_rows() {
        let mut t = LockTable::default();
        t.insert(0, 7, 0).unwrap();
        t.insert(1, 7, 0).unwrap();
        t.release(1, 7, true, 1);
        t.restart_counter_from_max();
        assert_eq!(t.next_id(), 2, "id 2 belonged to a deleted row: handed out again");
        t.release(0, 7, true, 2);
        t.restart_counter_from_max();
        assert_eq!(t.next_id(), 1, "an empty table starts over");
    }

    #[test]
    fn claim_updates_its_own_row_takes_an_expired_one_and_refuses_a_live_one() {
        let mut t = LockTable::default();
        // 6.x: CREATED_DATE = now, taken over when CREATED_DATE < now - ttl (ttl 10).
        assert_eq!(t.claim(0, 7, 100, 90).unwrap().1.unwrap().owner, 7, "no row: INSERT");
        assert_eq!(t.claim(0, 8, 105, 95), Err(Duplicate), "another owner's live row");
        assert_eq!(t.claim(0, 7, 106, 96).unwrap().1.unwrap().update_time_ns, 106, "own row: refreshed");
        assert_eq!(t.claim(0, 8, 116, 106), Err(Duplicate), "exactly ttl old: not below");
        let taken = t.claim(0, 8, 117, 107).unwrap().1.unwrap();
        assert_eq!((taken.owner, taken.count, taken.update_time_ns), (8, 1, 117), "expired: taken over");
        assert_eq!(t.release(0, 7, true, 118).0, ReleaseOutcome::NotOwner, "the old holder's DELETE finds nothing");
    }

    #[test]
    fn user_locks_are_reentrant_per_session_and_die_with_it() {
        let mut u = UserLocks::default();
        assert_eq!(u.get(0, 1), Some(1));
        assert_eq!(u.get(0, 1), Some(2));
        assert_eq!(u.get(0, 2), None);
        assert_eq!(u.release(0, 2), Some(false));
        assert_eq!(u.release(0, 1), Some(true));
        assert_eq!(u.holder(0), Some((1, 1)));
        assert_eq!(u.close(1), vec![0]);
        assert_eq!(u.release(0, 1), None);
        assert_eq!(u.get(0, 2), Some(1));
    }
}
