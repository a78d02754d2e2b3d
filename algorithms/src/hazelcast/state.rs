//! The CP group's replicated state for sessions and `FencedLock`s, as every member applies the
//! log (Hazelcast 5.x `cp/internal/session/RaftSessionService`, `CPSessionInfo`;
//! `cp/internal/datastructures/lock/Lock.java`, `LockRegistry`, `LockService`).
//!
//! - A session's expiration time is `now + session TTL` at its creation and at every committed
//!   heartbeat, each member reading its own clock when it applies; each heartbeat raises its
//!   version, and an `ExpireSessionsOp` closes a session only at the version it was seen expired
//!   at (`RaftSessionRegistry.expireSessions`).
//! - `Lock.acquire`: a free lock goes to the caller with the op's commit index as its fence; the
//!   owner (same session and thread) re-acquires up to the acquire limit (0: no limit) and gets
//!   the same fence; a retried invocation (same uid) gets the answer it would have had; anyone
//!   else waits in the lock's queue. `Lock.release`: only the owner; at count 0 the first waiter
//!   whose session is alive gets the lock at this commit index. A closed session releases its
//!   locks (`onSessionClose`) and its waiters are answered `SessionExpiredException`.
//!
//! Pure: the time is an argument.

use std::collections::{BTreeMap, VecDeque};

use locksim_simulator::history::LockKey;
use locksim_simulator::time::Nanos;

use super::protocol::{CmdKind, Fence, HzError, Op, Reply, SessionId};

mod fingerprint;

/// One CP session.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Session {
    /// The client that created it.
    client: u32,
    version: u64,
    /// This member's expiration time (its monotonic clock).
    expires_ns: Nanos,
}

/// The caller of a lock op: `LockInvocationKey` (session, thread, invocation uid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Caller {
    session: SessionId,
    client: u32,
    uid: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct LockState {
    owner: Option<Caller>,
    count: u32,
    fence: Fence,
    waiters: VecDeque<Caller>,
}

/// Answers to invocations produced by one command: `(client, uid, result)`.
pub type Answers = Vec<(u32, u64, Result<Reply, HzError>)>;

/// Sessions and locks of the CP group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    sessions: BTreeMap<SessionId, Session>,
    locks: BTreeMap<LockKey, LockState>,
}

impl State {
    /// Sessions whose expiration time has passed at `now`, with their versions.
    pub fn expired(&self, now: Nanos) -> Vec<(SessionId, u64)> {
        self.sessions.iter().filter(|(_, s)| s.expires_ns <= now).map(|(id, s)| (*id, s.version)).collect()
    }

    /// Whether the session is open.
    pub fn has_session(&self, session: SessionId) -> bool {
        self.sessions.contains_key(&session)
    }

    /// Moves every session's expiration to at least `until` (a new leader's grace: see
    /// `RaftSessionService.onTermChange`, `shiftExpirationTimes`).
    pub fn shift_expirations(&mut self, until: Nanos) {
        for s in self.sessions.values_mut() {
            s.expires_ns = s.expires_ns.max(until);
        }
    }

    /// The lock's holder session and fence (for tests).
    pub fn holder(&self, key: LockKey) -> Option<(SessionId, Fence)> {
        self.locks.get(&key).and_then(|l| l.owner.map(|o| (o.session, l.fence)))
    }

    /// Applies the command committed at `index`, at this member's time `now`.
    pub fn apply(&mut self, index: u64, cmd: &CmdKind, now: Nanos, ttl_ns: Nanos, acquire_limit: u32) -> Answers {
        let mut out = Answers::new();
        match cmd {
            CmdKind::Invoke { client, uid, op } => {
                let (client, uid) = (*client, *uid);
                match *op {
                    Op::CreateSession => {
                        self.sessions.insert(index, Session { client, version: 0, expires_ns: now + ttl_ns });
                        out.push((client, uid, Ok(Reply::Session(index))));
                    }
                    Op::Heartbeat { session } => {
                        let r = match self.sessions.get_mut(&session) {
                            Some(s) => {
                                s.version += 1;
                                s.expires_ns = now + ttl_ns;
                                Ok(Reply::Done)
                            }
                            None => Err(HzError::SessionExpired),
                        };
                        out.push((client, uid, r));
                    }
                    Op::Lock { key, session } => {
                        let caller = Caller { session, client, uid };
                        if let Some(r) = self.lock(index, key, caller, acquire_limit) {
                            out.push((client, uid, r));
                        }
                    }
                    Op::Unlock { key, session } => {
                        let r = self.unlock(index, key, session, client, &mut out);
                        out.push((client, uid, r));
                    }
                }
            }
            CmdKind::ExpireSessions { sessions } => {
                for (id, version) in sessions {
                    if self.sessions.get(id).is_some_and(|s| s.version == *version) {
                        self.sessions.remove(id);
                        self.close(index, *id, &mut out);
                    }
                }
            }
        }
        out
    }

    /// `None`: the caller waits.
    fn lock(&mut self, index: u64, key: LockKey, caller: Caller, limit: u32) -> Option<Result<Reply, HzError>> {
        if !self.sessions.contains_key(&caller.session) {
            return Some(Err(HzError::SessionExpired));
        }
        let lock = self.locks.entry(key).or_default();
        match lock.owner {
            None => {
                lock.owner = Some(caller);
                lock.count = 1;
                lock.fence = index;
                Some(Ok(Reply::Fence(index)))
            }
            Some(o) if o.uid == caller.uid => Some(Ok(Reply::Fence(lock.fence))),
            Some(o) if o.session == caller.session && o.client == caller.client => {
                if limit != 0 && lock.count >= limit {
                    return Some(Err(HzError::LimitReached));
                }
                lock.count += 1;
                lock.owner = Some(caller);
                Some(Ok(Reply::Fence(lock.fence)))
            }
            Some(_) => {
                if !lock.waiters.iter().any(|w| w.uid == caller.uid) {
                    lock.waiters.push_back(caller);
                }
                None
            }
        }
    }

    fn unlock(
        &mut self,
        index: u64,
        key: LockKey,
        session: SessionId,
        client: u32,
        out: &mut Answers,
    ) -> Result<Reply, HzError> {
        if !self.sessions.contains_key(&session) {
            return Err(HzError::SessionExpired);
        }
        let Some(lock) = self.locks.get_mut(&key) else { return Err(HzError::NotOwner) };
        match lock.owner {
            Some(o) if o.session == session && o.client == client => {
                lock.count -= 1;
                if lock.count == 0 {
                    lock.owner = None;
                    self.promote(index, key, out);
                }
                Ok(Reply::Unlocked)
            }
            _ => Err(HzError::NotOwner),
        }
    }

    /// The first waiter with a live session takes the lock at `index`.
    fn promote(&mut self, index: u64, key: LockKey, out: &mut Answers) {
        let Some(lock) = self.locks.get_mut(&key) else { return };
        while let Some(w) = lock.waiters.pop_front() {
            if self.sessions.contains_key(&w.session) {
                lock.owner = Some(w);
                lock.count = 1;
                lock.fence = index;
                out.push((w.client, w.uid, Ok(Reply::Fence(index))));
                return;
            }
        }
    }

    /// `onSessionClose`: the session's locks are released, its waiters answered.
    fn close(&mut self, index: u64, session: SessionId, out: &mut Answers) {
        let keys: Vec<LockKey> = self.locks.keys().copied().collect();
        for key in keys {
            let lock = self.locks.get_mut(&key).expect("listed");
            let (gone, kept): (Vec<Caller>, Vec<Caller>) = lock.waiters.drain(..).partition(|w| w.session == session);
            lock.waiters = kept.into();
            for w in gone {
                out.push((w.client, w.uid, Err(HzError::SessionExpired)));
            }
            if lock.owner.is_some_and(|o| o.session == session) {
                lock.owner = None;
                lock.count = 0;
                self.promote(index, key, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Nanos = 300_000_000_000;

    fn invoke(client: u32, uid: u64, op: Op) -> CmdKind {
        CmdKind::Invoke { client, uid, op }
    }

    /// Fences are commit indices of first acquisitions; reentry keeps the fence up to the limit;
    /// a retried invocation gets the same answer; waiters are served in order at the unlock's
    /// index; an expired session's lock passes on with a higher fence and its late unlock fails.
    #[test]
    fn fenced_lock_follows_lock_java() {
        let mut st = State::default();
        st.apply(1, &invoke(0, 10, Op::CreateSession), 0, TTL, 0);
        st.apply(2, &invoke(1, 20, Op::CreateSession), 0, TTL, 2);
        let a = st.apply(3, &invoke(0, 11, Op::Lock { key: 0, session: 1 }), 0, TTL, 2);
        assert_eq!(a, vec![(0, 11, Ok(Reply::Fence(3)))]);
        assert_eq!(
            st.apply(4, &invoke(0, 11, Op::Lock { key: 0, session: 1 }), 0, TTL, 2),
            vec![(0, 11, Ok(Reply::Fence(3)))]
        );
        assert_eq!(
            st.apply(5, &invoke(0, 12, Op::Lock { key: 0, session: 1 }), 0, TTL, 2),
            vec![(0, 12, Ok(Reply::Fence(3)))]
        );
        assert_eq!(
            st.apply(6, &invoke(0, 13, Op::Lock { key: 0, session: 1 }), 0, TTL, 2),
            vec![(0, 13, Err(HzError::LimitReached))]
        );
        assert!(st.apply(7, &invoke(1, 21, Op::Lock { key: 0, session: 2 }), 0, TTL, 2).is_empty(), "waits");
        assert_eq!(st.expired(TTL), vec![(1, 0), (2, 0)]);
        st.apply(8, &invoke(1, 22, Op::Heartbeat { session: 2 }), 1_000, TTL, 2);
        let a = st.apply(9, &CmdKind::ExpireSessions { sessions: vec![(1, 0), (2, 0)] }, TTL, TTL, 2);
        assert_eq!(a, vec![(1, 21, Ok(Reply::Fence(9)))], "session 2 was heartbeaten since: kept");
        assert_eq!(st.holder(0), Some((2, 9)));
        let a = st.apply(10, &invoke(0, 14, Op::Unlock { key: 0, session: 1 }), TTL, TTL, 2);
        assert_eq!(a, vec![(0, 14, Err(HzError::SessionExpired))]);
    }
}
