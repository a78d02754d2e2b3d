//! A Redis keyspace with PX expiry, and the commands and Lua scripts the lock libraries run: the
//! one key store of every Redis server the crate models (the `redis` model's primary and
//! replicas, and Redlock's independent masters).
//!
//! Expiry times are absolute readings of the server's WALL clock (Redis stores `expire` as Unix
//! milliseconds and compares it with `mstime()`), so a forward step of the server's clock expires
//! keys early. A key past its time is gone for every command (Redis's lazy `expireIfNeeded`);
//! [`Keyspace::active_expire`] is the periodic cycle that deletes them unasked.
//!
//! Every command returns its reply and the write operations it performed ([`WriteOp`]), with
//! absolute expiry times. That list is what the primary appends to its replication stream and what
//! a replica applies: Redis propagates scripts by their effects (Redis 5+, the default since 7.0)
//! and `SET … PX` / `PEXPIRE` as absolute `PXAT` / `PEXPIREAT` (Redis 7.0), so a replica replays
//! exactly the primary's state changes, including the `DEL` an expiry on the primary generates.
//!
//! Scripts (sources: redis.io "Distributed Locks with Redis"; Redisson `RedissonLock`,
//! `RedissonFencedLock`, `RedissonBaseLock`, `renewal/LockTask`; go-redsync/redsync `mutex.go`):
//! - [`Keyspace::set_nx_px`]: `SET key value NX PX ttl`, and with a fencing counter the script
//!   `if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) end`.
//! - [`Keyspace::set_nx`] and [`Keyspace::pexpire`]: `SETNX key value` and, as a separate
//!   command, `PEXPIRE key ttl` (the pre-2.6.12 two-command lock; with a fencing counter the
//!   `SETNX` and the `INCR` run in one script, the `PEXPIRE` stays separate).
//! - [`Keyspace::del_if_equals`]: the compare-and-delete unlock script of redis.io.
//! - [`Keyspace::pexpire_if_equals`]: redsync's extend scripts (`touchScript`, and
//!   `touchWithSetNXScript`, which sets the key when it is missing).
//! - [`Keyspace::get`]: plain `GET` (the first half of the GET-then-DEL unlock).
//! - [`Keyspace::del`]: plain `DEL` (the unsafe unlock; Redisson `forceUnlock` also publishes).
//! - [`Keyspace::hlock`]: Redisson's lock script: if the key is absent or the hash has our
//!   owner field, `HINCRBY` it and `PEXPIRE` the lease (RedissonFencedLock also `INCR`s the token
//!   key, on re-entry too) and return nil; else return `PTTL`.
//! - [`Keyspace::hrenew`]: the watchdog's script: if our field exists, `PEXPIRE` and return 1, else 0.
//! - [`Keyspace::hunlock`]: Redisson's unlock script: nil when not ours, decrement, re-arm the
//!   lease while the count is above 0, else `DEL` and `PUBLISH` the unlock message.

use std::collections::BTreeMap;

use locksim_simulator::history::LockKey;

mod fingerprint;

const NS_PER_MS: i64 = 1_000_000;

/// A key of the lock keyspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// The lock itself (`lock:{n}`).
    Lock(LockKey),
    /// The fencing-token counter of a lock (`token:{n}`), never expiring.
    Fence(LockKey),
}

/// A value: a string (the random lock value), an integer (a counter) or a hash (Redisson's
/// owner → hold count).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string: the lock's random value.
    Str(u64),
    /// An integer: a fencing-token counter.
    Int(i64),
    /// A hash: Redisson's lock, owner id → hold count.
    Hash(BTreeMap<u64, i64>),
}

/// One stored key: its value and expiry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The value.
    pub value: Value,
    /// Absolute wall-clock time (ns since the run's epoch) at which the key expires.
    pub expire_at_wall_ns: Option<i64>,
}

/// A state change, as replicated and as persisted.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteOp {
    /// `SET key value PXAT at` (or without expiry).
    Set {
        /// The key.
        key: Key,
        /// Its new value.
        value: Value,
        /// Absolute wall-clock expiry (ns since the run's epoch); `None`: never.
        expire_at_wall_ns: Option<i64>,
    },
    /// `DEL key`.
    Del {
        /// The key.
        key: Key,
    },
    /// `PEXPIREAT key at`.
    PExpireAt {
        /// The key.
        key: Key,
        /// Its new absolute wall-clock expiry (ns since the run's epoch).
        at_wall_ns: i64,
    },
    /// `HINCRBY key field by` (the field is removed when it reaches 0 only through `Del`).
    HIncrBy {
        /// The hash.
        key: Key,
        /// The owner id.
        field: u64,
        /// The increment: +1 on lock, −1 on unlock.
        by: i64,
    },
    /// `INCR key`.
    Incr {
        /// The counter.
        key: Key,
    },
}

/// What a script or command answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The lock was taken by this call; the fencing token when the script `INCR`ed one.
    Acquired {
        /// The incremented token, or `None` without fencing.
        token: Option<u64>,
    },
    /// The lock is held by another owner; `pttl_ms` is its remaining time when the command
    /// reports it (Redisson's script returns `PTTL`; `SET NX` only says nil).
    Taken {
        /// The holder's remaining time to live, milliseconds (Redisson's script only).
        pttl_ms: Option<i64>,
    },
    /// An integer: 1 or 0 from the unlock, delete, expire and renewal scripts.
    Int(i64),
    /// A bulk string: `GET`'s answer when the key holds a lock value.
    Value(u64),
    /// Nil: Redisson's unlock script when the lock is not ours; `GET` of a missing key.
    Nil,
}

/// The keyspace of one Redis server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Keyspace {
    entries: BTreeMap<Key, Entry>,
}

impl Keyspace {
    /// The number of keys stored, expired ones included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry as stored, expired or not (for tests and traces).
    pub fn raw(&self, key: &Key) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Applies one replicated (or locally produced) operation.
    pub fn apply(&mut self, op: &WriteOp) {
        match op {
            WriteOp::Set { key, value, expire_at_wall_ns } => {
                self.entries.insert(*key, Entry { value: value.clone(), expire_at_wall_ns: *expire_at_wall_ns });
            }
            WriteOp::Del { key } => {
                self.entries.remove(key);
            }
            WriteOp::PExpireAt { key, at_wall_ns } => {
                if let Some(e) = self.entries.get_mut(key) {
                    e.expire_at_wall_ns = Some(*at_wall_ns);
                }
            }
            WriteOp::HIncrBy { key, field, by } => {
                let e = self
                    .entries
                    .entry(*key)
                    .or_insert(Entry { value: Value::Hash(BTreeMap::new()), expire_at_wall_ns: None });
                if let Value::Hash(h) = &mut e.value {
                    *h.entry(*field).or_insert(0) += by;
                }
            }
            WriteOp::Incr { key } => {
                let e = self.entries.entry(*key).or_insert(Entry { value: Value::Int(0), expire_at_wall_ns: None });
                if let Value::Int(n) = &mut e.value {
                    *n += 1;
                }
            }
        }
    }

    /// Runs ops produced by a command on this keyspace and returns them for replication.
    fn commit(&mut self, ops: Vec<WriteOp>) -> Vec<WriteOp> {
        for op in &ops {
            self.apply(op);
        }
        ops
    }

    /// Redis's `expireIfNeeded` on a primary: a key past its time is deleted (and the `DEL`
    /// replicated) before the command sees it.
    fn expire_if_needed(&mut self, key: Key, now_wall_ns: i64, ops: &mut Vec<WriteOp>) {
        if let Some(e) = self.entries.get(&key) {
            if e.expire_at_wall_ns.is_some_and(|at| at < now_wall_ns) {
                self.entries.remove(&key);
                ops.push(WriteOp::Del { key });
            }
        }
    }

    /// Whether a live (unexpired) key exists, without touching it (a replica's read view).
    pub fn exists_live(&self, key: &Key, now_wall_ns: i64) -> bool {
        self.entries.get(key).is_some_and(|e| e.expire_at_wall_ns.is_none_or(|at| at >= now_wall_ns))
    }

    /// The live value of a key, if any (no side effect).
    pub fn get_live(&self, key: &Key, now_wall_ns: i64) -> Option<&Entry> {
        self.entries.get(key).filter(|e| e.expire_at_wall_ns.is_none_or(|at| at >= now_wall_ns))
    }

    fn pttl_ms(&self, key: &Key, now_wall_ns: i64) -> i64 {
        match self.entries.get(key).and_then(|e| e.expire_at_wall_ns) {
            Some(at) => ((at - now_wall_ns) / NS_PER_MS).max(0),
            None if self.entries.contains_key(key) => -1,
            None => -2,
        }
    }

    fn incr_fence(&mut self, lock: LockKey, ops: &mut Vec<WriteOp>) -> u64 {
        let key = Key::Fence(lock);
        let next = match self.entries.get(&key).map(|e| &e.value) {
            Some(Value::Int(n)) => n + 1,
            _ => 1,
        };
        let op = WriteOp::Incr { key };
        self.apply(&op);
        ops.push(op);
        next as u64
    }

    /// `SET lock value NX PX px_ms`, then `INCR` of the token key when `fence` (one script).
    pub fn set_nx_px(
        &mut self,
        lock: LockKey,
        value: u64,
        px_ms: u64,
        fence: bool,
        now_wall_ns: i64,
    ) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        if self.entries.contains_key(&key) {
            return (Reply::Taken { pttl_ms: None }, ops);
        }
        let at = now_wall_ns + px_ms as i64 * NS_PER_MS;
        let set = WriteOp::Set { key, value: Value::Str(value), expire_at_wall_ns: Some(at) };
        self.apply(&set);
        ops.push(set);
        let token = fence.then(|| self.incr_fence(lock, &mut ops));
        (Reply::Acquired { token }, ops)
    }

    /// `SETNX lock value` (no expiry), then `INCR` of the token key when `fence` (one script).
    /// The key lives until something deletes it or a later `PEXPIRE` gives it a time to live.
    pub fn set_nx(&mut self, lock: LockKey, value: u64, fence: bool, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        if self.entries.contains_key(&key) {
            return (Reply::Taken { pttl_ms: None }, ops);
        }
        ops.extend(self.commit(vec![WriteOp::Set { key, value: Value::Str(value), expire_at_wall_ns: None }]));
        let token = fence.then(|| self.incr_fence(lock, &mut ops));
        (Reply::Acquired { token }, ops)
    }

    /// `PEXPIRE lock ttl_ms`: 1 and a new absolute expiry if the key exists (whoever's it is), else 0.
    pub fn pexpire(&mut self, lock: LockKey, ttl_ms: u64, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        if !self.entries.contains_key(&key) {
            return (Reply::Int(0), ops);
        }
        let at = now_wall_ns + ttl_ms as i64 * NS_PER_MS;
        ops.extend(self.commit(vec![WriteOp::PExpireAt { key, at_wall_ns: at }]));
        (Reply::Int(1), ops)
    }

    /// redsync's extend scripts (go-redsync/redsync `mutex.go` @v4.12.1): `touchScript`, `if
    /// GET key == value then return PEXPIRE key ttl else return 0`, and with `set_if_missing`
    /// `touchWithSetNXScript`, which adds `elseif SET key value PX ttl NX then return 1`. Either
    /// answers 1 when the key now holds `value` with `px_ms` to live, else 0.
    pub fn pexpire_if_equals(
        &mut self,
        lock: LockKey,
        value: u64,
        px_ms: u64,
        set_if_missing: bool,
        now_wall_ns: i64,
    ) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let at = now_wall_ns + px_ms as i64 * NS_PER_MS;
        let op = match self.entries.get(&key) {
            Some(Entry { value: Value::Str(v), .. }) if *v == value => WriteOp::PExpireAt { key, at_wall_ns: at },
            None if set_if_missing => WriteOp::Set { key, value: Value::Str(value), expire_at_wall_ns: Some(at) },
            _ => return (Reply::Int(0), ops),
        };
        ops.extend(self.commit(vec![op]));
        (Reply::Int(1), ops)
    }

    /// `GET lock`: the lock's value, or nil. On a primary a read of an expired key deletes it
    /// first (`expireIfNeeded`), and that `DEL` is replicated.
    pub fn get(&mut self, lock: LockKey, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let reply = match self.entries.get(&key) {
            Some(Entry { value: Value::Str(v), .. }) => Reply::Value(*v),
            _ => Reply::Nil,
        };
        (reply, ops)
    }

    /// The redis.io unlock script: `if get(key) == value then return del(key) else return 0`.
    pub fn del_if_equals(&mut self, lock: LockKey, value: u64, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let ours = matches!(self.entries.get(&key), Some(Entry { value: Value::Str(v), .. }) if *v == value);
        if !ours {
            return (Reply::Int(0), ops);
        }
        ops.extend(self.commit(vec![WriteOp::Del { key }]));
        (Reply::Int(1), ops)
    }

    /// `DEL key`: whoever holds it.
    pub fn del(&mut self, lock: LockKey, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        if !self.entries.contains_key(&key) {
            return (Reply::Int(0), ops);
        }
        ops.extend(self.commit(vec![WriteOp::Del { key }]));
        (Reply::Int(1), ops)
    }

    /// Redisson's lock script (with `fence`, RedissonFencedLock's, which `INCR`s the token key on
    /// every acquisition, re-entry included).
    pub fn hlock(
        &mut self,
        lock: LockKey,
        owner: u64,
        lease_ms: u64,
        fence: bool,
        now_wall_ns: i64,
    ) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let free = !self.entries.contains_key(&key);
        let ours =
            matches!(self.entries.get(&key), Some(Entry { value: Value::Hash(h), .. }) if h.contains_key(&owner));
        if !(free || ours) {
            return (Reply::Taken { pttl_ms: Some(self.pttl_ms(&key, now_wall_ns)) }, ops);
        }
        let token = fence.then(|| self.incr_fence(lock, &mut ops));
        let at = now_wall_ns + lease_ms as i64 * NS_PER_MS;
        ops.extend(
            self.commit(vec![
                WriteOp::HIncrBy { key, field: owner, by: 1 },
                WriteOp::PExpireAt { key, at_wall_ns: at },
            ]),
        );
        (Reply::Acquired { token }, ops)
    }

    /// The watchdog's renewal script: 1 and a new lease if our field is there, else 0.
    pub fn hrenew(&mut self, lock: LockKey, owner: u64, lease_ms: u64, now_wall_ns: i64) -> (Reply, Vec<WriteOp>) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let ours =
            matches!(self.entries.get(&key), Some(Entry { value: Value::Hash(h), .. }) if h.contains_key(&owner));
        if !ours {
            return (Reply::Int(0), ops);
        }
        let at = now_wall_ns + lease_ms as i64 * NS_PER_MS;
        ops.extend(self.commit(vec![WriteOp::PExpireAt { key, at_wall_ns: at }]));
        (Reply::Int(1), ops)
    }

    /// Redisson's unlock script. Returns the reply and ops, and whether the unlock message is to
    /// be published (the lock was freed).
    pub fn hunlock(
        &mut self,
        lock: LockKey,
        owner: u64,
        lease_ms: u64,
        now_wall_ns: i64,
    ) -> (Reply, Vec<WriteOp>, bool) {
        let key = Key::Lock(lock);
        let mut ops = Vec::new();
        self.expire_if_needed(key, now_wall_ns, &mut ops);
        let count = match self.entries.get(&key) {
            Some(Entry { value: Value::Hash(h), .. }) => h.get(&owner).copied(),
            _ => None,
        };
        let Some(count) = count else { return (Reply::Nil, ops, false) };
        ops.extend(self.commit(vec![WriteOp::HIncrBy { key, field: owner, by: -1 }]));
        if count - 1 > 0 {
            let at = now_wall_ns + lease_ms as i64 * NS_PER_MS;
            ops.extend(self.commit(vec![WriteOp::PExpireAt { key, at_wall_ns: at }]));
            return (Reply::Int(0), ops, false);
        }
        ops.extend(self.commit(vec![WriteOp::Del { key }]));
        (Reply::Int(1), ops, true)
    }

    /// The hold count of `owner` in a Redisson lock hash (0 when absent or expired).
    pub fn hold_count(&self, lock: LockKey, owner: u64, now_wall_ns: i64) -> i64 {
        match self.get_live(&Key::Lock(lock), now_wall_ns) {
            Some(Entry { value: Value::Hash(h), .. }) => h.get(&owner).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// The active expire cycle (Redis `activeExpireCycle`, run from the 100 ms cron on a primary):
    /// deletes every key past its time and returns the `DEL`s to replicate. Redis samples 20 keys
    /// with a TTL per loop and repeats while more than a quarter were expired; with the handful of
    /// keys a lock scenario has, that is every expired key.
    pub fn active_expire(&mut self, now_wall_ns: i64) -> Vec<WriteOp> {
        let expired: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, e)| e.expire_at_wall_ns.is_some_and(|at| at < now_wall_ns))
            .map(|(k, _)| *k)
            .collect();
        self.commit(expired.into_iter().map(|key| WriteOp::Del { key }).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = NS_PER_MS;

    #[test]
    fn set_nx_refuses_a_live_key_and_takes_an_expired_one() {
        let mut ks = Keyspace::default();
        let (r, ops) = ks.set_nx_px(0, 7, 10_000, true, 0);
        assert_eq!(r, Reply::Acquired { token: Some(1) });
        assert_eq!(ops.len(), 2, "SET and INCR are replicated");
        assert_eq!(ks.set_nx_px(0, 8, 10_000, true, 9_999 * MS).0, Reply::Taken { pttl_ms: None });
        // Redis's `keyIsExpired` is `now > when`: at the instant itself the key still stands.
        assert_eq!(ks.set_nx_px(0, 8, 10_000, true, 10_000 * MS).0, Reply::Taken { pttl_ms: None });
        let (r, ops) = ks.set_nx_px(0, 8, 10_000, true, 10_000 * MS + 1);
        assert_eq!(r, Reply::Acquired { token: Some(2) });
        assert_eq!(ops[0], WriteOp::Del { key: Key::Lock(0) }, "lazy expiry replicates a DEL first");
    }

    #[test]
    fn compare_and_delete_only_deletes_its_own_value() {
        let mut ks = Keyspace::default();
        ks.set_nx_px(0, 7, 10_000, false, 0);
        assert_eq!(ks.del_if_equals(0, 8, MS).0, Reply::Int(0));
        assert!(ks.exists_live(&Key::Lock(0), MS));
        assert_eq!(ks.del_if_equals(0, 7, MS).0, Reply::Int(1));
        assert!(!ks.exists_live(&Key::Lock(0), MS));
        // DEL deletes whatever is there.
        ks.set_nx_px(0, 9, 10_000, false, 2 * MS);
        assert_eq!(ks.del(0, 3 * MS).0, Reply::Int(1));
    }

    #[test]
    fn setnx_sets_no_expiry_until_a_separate_pexpire() {
        let mut ks = Keyspace::default();
        let (r, ops) = ks.set_nx(0, 7, true, 0);
        assert_eq!(r, Reply::Acquired { token: Some(1) });
        assert_eq!(ks.raw(&Key::Lock(0)).unwrap().expire_at_wall_ns, None);
        assert_eq!(ops.len(), 2, "SET and INCR are replicated");
        // Without the PEXPIRE the key is there for ever.
        assert_eq!(ks.set_nx(0, 8, true, i64::MAX / 2).0, Reply::Taken { pttl_ms: None });
        assert_eq!(ks.pexpire(0, 10_000, MS).0, Reply::Int(1));
        assert_eq!(ks.raw(&Key::Lock(0)).unwrap().expire_at_wall_ns, Some(10_001 * MS));
        assert_eq!(ks.pexpire(1, 10_000, MS).0, Reply::Int(0), "no key, no expiry");
    }

    #[test]
    fn a_wall_clock_jump_expires_a_key_early() {
        let mut ks = Keyspace::default();
        ks.set_nx_px(0, 7, 10_000, false, 0);
        // 1 s of true time later, but the server's wall clock jumped 9.5 s ahead.
        assert!(!ks.exists_live(&Key::Lock(0), 10_500 * MS));
        assert_eq!(ks.set_nx_px(0, 9, 10_000, false, 10_500 * MS).0, Reply::Acquired { token: None });
    }

    #[test]
    fn redsync_extend_renews_its_own_key_and_sets_a_missing_one_only_when_asked() {
        let mut ks = Keyspace::default();
        ks.set_nx_px(0, 7, 1_000, false, 0);
        assert_eq!(ks.pexpire_if_equals(0, 7, 1_000, false, 900 * MS).0, Reply::Int(1), "its own key: PEXPIRE");
        assert_eq!(ks.raw(&Key::Lock(0)).unwrap().expire_at_wall_ns, Some(1_900 * MS), "renewed from 900 ms");
        let (r, ops) = ks.pexpire_if_equals(0, 8, 1_000, true, 1_000 * MS);
        assert_eq!((r, ops), (Reply::Int(0), vec![]), "another value: 0, even with SET NX");
        // A master that restarted empty: touchScript answers 0, touchWithSetNXScript sets the key.
        let mut empty = Keyspace::default();
        assert_eq!(empty.pexpire_if_equals(0, 7, 1_000, false, 0).0, Reply::Int(0));
        assert!(empty.is_empty());
        assert_eq!(empty.pexpire_if_equals(0, 7, 1_000, true, 0).0, Reply::Int(1));
        assert_eq!(empty.get(0, 1_000 * MS).0, Reply::Value(7), "PX 1000 from 0: still there at 1000 ms");
        assert_eq!(empty.get(0, 1_000 * MS + 1).0, Reply::Nil);
    }

    #[test]
    fn get_answers_the_value_and_expires_lazily() {
        let mut ks = Keyspace::default();
        ks.set_nx_px(0, 7, 10, false, 0);
        assert_eq!(ks.get(0, MS).0, Reply::Value(7));
        let (r, ops) = ks.get(0, 11 * MS);
        assert_eq!(r, Reply::Nil);
        assert_eq!(ops, vec![WriteOp::Del { key: Key::Lock(0) }]);
    }

    #[test]
    fn redisson_hash_counts_reentry_and_unlocks_at_zero() {
        let mut ks = Keyspace::default();
        let me = 11;
        for _ in 0..3 {
            assert!(matches!(ks.hlock(0, me, 30_000, false, 0).0, Reply::Acquired { .. }));
        }
        assert_eq!(ks.hold_count(0, me, 0), 3);
        // Another owner is refused with the remaining lease.
        assert_eq!(ks.hlock(0, 12, 30_000, false, 1_000 * MS).0, Reply::Taken { pttl_ms: Some(29_000) });
        assert_eq!(ks.hunlock(0, me, 30_000, MS).0, Reply::Int(0));
        assert_eq!(ks.hunlock(0, me, 30_000, MS).0, Reply::Int(0));
        assert_eq!(ks.hold_count(0, me, MS), 1, "locked 3 times, unlocked twice: still held");
        let (r, _, publish) = ks.hunlock(0, me, 30_000, MS);
        assert_eq!((r, publish), (Reply::Int(1), true));
        assert_eq!(ks.hunlock(0, me, 30_000, MS).0, Reply::Nil, "not held any more");
    }

    #[test]
    fn renewal_extends_only_an_existing_own_lock() {
        let mut ks = Keyspace::default();
        ks.hlock(0, 1, 30_000, false, 0);
        assert_eq!(ks.hrenew(0, 1, 30_000, 10_000 * MS).0, Reply::Int(1));
        assert_eq!(ks.raw(&Key::Lock(0)).unwrap().expire_at_wall_ns, Some(40_000 * MS));
        assert_eq!(ks.hrenew(0, 2, 30_000, 10_000 * MS).0, Reply::Int(0));
        // Past its lease the key is gone: the renewal finds nothing.
        assert_eq!(ks.hrenew(0, 1, 30_000, 40_000 * MS + 1).0, Reply::Int(0));
    }

    #[test]
    fn fenced_hlock_increments_the_token_on_reentry_too() {
        let mut ks = Keyspace::default();
        assert_eq!(ks.hlock(0, 1, 30_000, true, 0).0, Reply::Acquired { token: Some(1) });
        assert_eq!(ks.hlock(0, 1, 30_000, true, 0).0, Reply::Acquired { token: Some(2) });
    }

    #[test]
    fn active_expire_deletes_only_expired_keys_and_replicas_replay_the_ops() {
        let mut primary = Keyspace::default();
        let mut replica = Keyspace::default();
        for op in primary.set_nx_px(0, 1, 100, true, 0).1 {
            replica.apply(&op);
        }
        for op in primary.set_nx_px(1, 2, 300, true, 0).1 {
            replica.apply(&op);
        }
        let dels = primary.active_expire(200 * MS);
        assert_eq!(dels, vec![WriteOp::Del { key: Key::Lock(0) }]);
        for op in &dels {
            replica.apply(op);
        }
        assert_eq!(primary, replica);
        assert_eq!(primary.len(), 3, "lock:1 and both token counters remain");
    }
}
