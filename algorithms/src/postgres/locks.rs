//! One server's advisory locks and its `lock_fence` generation table, as pure data.
//!
//! Advisory locks (PostgreSQL 15 docs, 13.3.5): one exclusive lock per key, held by one session,
//! counted per scope (session-level and transaction-level requests stack, and "if a session
//! already holds a given advisory lock, additional requests by it will always succeed, even if
//! other sessions are awaiting the lock"). Waiters queue in arrival order and the first is granted
//! when the lock becomes free (the lock manager's wait queue). The table lives in shared memory:
//! a crash or a promotion starts it empty.

use std::collections::{BTreeMap, VecDeque};

use locksim_simulator::history::LockKey;

mod fingerprint;

/// A connection, as the server numbers its sessions (one session per connection).
pub type ConnId = u64;

/// Which count a request adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockScope {
    /// `pg_advisory_lock`: until `pg_advisory_unlock` or the session's end.
    Session,
    /// `pg_advisory_xact_lock`: until the transaction ends.
    Xact,
}

/// One held key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// The session holding it.
    pub session: ConnId,
    /// Session-level acquisitions not yet unlocked.
    pub session_count: u32,
    /// Transaction-level acquisitions in the session's open transaction.
    pub xact_count: u32,
}

/// A blocked `pg_advisory_lock` / `pg_advisory_xact_lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// The waiting session.
    pub session: ConnId,
    /// The statement's number on its connection (the answer goes to it).
    pub id: u64,
    /// The count it adds to once granted.
    pub scope: LockScope,
}

/// The server's advisory lock table.
#[derive(Clone, Debug, Default)]
pub struct AdvisoryLocks {
    held: BTreeMap<LockKey, Held>,
    waiters: BTreeMap<LockKey, VecDeque<Waiter>>,
}

impl AdvisoryLocks {
    /// Who holds `key`.
    pub fn holder(&self, key: LockKey) -> Option<Held> {
        self.held.get(&key).copied()
    }

    /// Takes `key` for `session` if it is free or already the session's (then the request
    /// stacks); false when another session holds it.
    pub fn try_lock(&mut self, key: LockKey, session: ConnId, scope: LockScope) -> bool {
        let h = self.held.entry(key).or_insert(Held { session, session_count: 0, xact_count: 0 });
        if h.session != session {
            return false;
        }
        match scope {
            LockScope::Session => h.session_count += 1,
            LockScope::Xact => h.xact_count += 1,
        }
        true
    }

    /// Queues a blocked request behind the holder.
    pub fn enqueue(&mut self, key: LockKey, waiter: Waiter) {
        self.waiters.entry(key).or_default().push_back(waiter);
    }

    /// `pg_advisory_unlock(key)` by `session`: true when it held a session-level lock on it.
    /// Returns the waiters granted as a result.
    pub fn unlock(&mut self, key: LockKey, session: ConnId) -> (bool, Vec<(LockKey, Waiter)>) {
        let Some(h) = self.held.get_mut(&key).filter(|h| h.session == session && h.session_count > 0) else {
            return (false, Vec::new());
        };
        h.session_count -= 1;
        (true, self.grant_if_free(key))
    }

    /// Releases every lock `session` holds at the end of its transaction (`xact`), or of the
    /// session itself (everything; its waits are dropped too). Returns the keys it freed and the
    /// waiters granted.
    pub fn release_all(&mut self, session: ConnId, whole_session: bool) -> (Vec<LockKey>, Vec<(LockKey, Waiter)>) {
        if whole_session {
            for q in self.waiters.values_mut() {
                q.retain(|w| w.session != session);
            }
        }
        let keys: Vec<LockKey> = self.held.iter().filter(|(_, h)| h.session == session).map(|(&k, _)| k).collect();
        let mut freed = Vec::new();
        let mut granted = Vec::new();
        for key in keys {
            let h = self.held.get_mut(&key).expect("held");
            h.xact_count = 0;
            if whole_session {
                h.session_count = 0;
            }
            if h.session_count == 0 {
                freed.push(key);
                granted.extend(self.grant_if_free(key));
            }
        }
        (freed, granted)
    }

    /// `pg_advisory_unlock_all()` (part of `DISCARD ALL`): the session-level locks go, the
    /// transaction-level ones stay with their transaction.
    pub fn unlock_all_session(&mut self, session: ConnId) -> Vec<(LockKey, Waiter)> {
        let keys: Vec<LockKey> = self.held.iter().filter(|(_, h)| h.session == session).map(|(&k, _)| k).collect();
        let mut granted = Vec::new();
        for key in keys {
            self.held.get_mut(&key).expect("held").session_count = 0;
            granted.extend(self.grant_if_free(key));
        }
        granted
    }

    /// When `key` has no count left, its first waiter takes it.
    fn grant_if_free(&mut self, key: LockKey) -> Vec<(LockKey, Waiter)> {
        if self.held.get(&key).is_some_and(|h| h.session_count + h.xact_count > 0) {
            return Vec::new();
        }
        self.held.remove(&key);
        let Some(w) = self.waiters.get_mut(&key).and_then(|q| q.pop_front()) else { return Vec::new() };
        let taken = self.try_lock(key, w.session, w.scope);
        debug_assert!(taken);
        vec![(key, w)]
    }
}

/// The `lock_fence` table: one committed `bigint` generation per key. Durable and replicated.
#[derive(Clone, Debug, Default)]
pub struct Generations {
    committed: BTreeMap<LockKey, u64>,
}

impl Generations {
    /// The committed generation of `key` (0 before its first bump).
    pub fn get(&self, key: LockKey) -> u64 {
        self.committed.get(&key).copied().unwrap_or(0)
    }

    /// Commits `generation` for `key` (a bump on the primary, or its WAL on the standby).
    pub fn set(&mut self, key: LockKey, generation: u64) {
        self.committed.insert(key, generation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_that_holds_the_lock_gets_it_again_even_with_waiters() {
        let mut l = AdvisoryLocks::default();
        assert!(l.try_lock(7, 1, LockScope::Session));
        assert!(!l.try_lock(7, 2, LockScope::Session));
        l.enqueue(7, Waiter { session: 2, id: 5, scope: LockScope::Session });
        assert!(l.try_lock(7, 1, LockScope::Session), "the holder's second request stacks");
        assert_eq!(l.unlock(7, 1), (true, vec![]), "one level left");
        let (ok, granted) = l.unlock(7, 1);
        assert!(ok);
        assert_eq!(granted, vec![(7, Waiter { session: 2, id: 5, scope: LockScope::Session })]);
        assert_eq!(l.holder(7).map(|h| h.session), Some(2));
        assert_eq!(l.unlock(7, 1), (false, vec![]), "not the holder: false (with a warning)");
    }

    #[test]
    fn transaction_end_frees_only_xact_counts_and_session_end_frees_everything() {
        let mut l = AdvisoryLocks::default();
        assert!(l.try_lock(1, 9, LockScope::Xact));
        assert!(l.try_lock(2, 9, LockScope::Session));
        assert!(l.try_lock(2, 9, LockScope::Xact));
        let (freed, _) = l.release_all(9, false);
        assert_eq!(freed, vec![1]);
        assert_eq!(l.holder(2).map(|h| (h.session_count, h.xact_count)), Some((1, 0)));
        let (freed, _) = l.release_all(9, true);
        assert_eq!(freed, vec![2]);
        assert_eq!(l.holder(2), None);
    }
}
