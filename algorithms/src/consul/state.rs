//! The part of Consul's state store a lock touches, as every server applies the Raft log to it
//! (consul `agent/consul/state/session.go`: `sessionCreateTxn`, `deleteSessionTxn`;
//! `state/kvs.go`: `kvsLockTxn`, `kvsUnlockTxn`; `state/catalog.go`: `ensureCheckTxn`, which
//! invalidates the sessions bound to a check that goes critical).
//!
//! Pure: no time, no randomness. What invalidation releases is returned, so that the server can
//! start the keys' lock-delay on its own clock (Consul's `state.Delay` is kept in memory on each
//! server, outside Raft).

use std::collections::BTreeMap;

use locksim_simulator::history::LockKey;

use super::protocol::{Behavior, CmdKind, ConsulError, Index, KvEntry, Reply, SessionId, SessionSpec};

mod fingerprint;

/// What applying one command did.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Applied {
    /// The answer for the request that proposed it.
    pub result: Option<Result<Reply, ConsulError>>,
    /// Keys an invalidated session held, with that session's lock-delay (ns).
    pub delayed: Vec<(LockKey, u64)>,
    /// Sessions created (their TTL timers start on the leader).
    pub created: Option<(SessionId, SessionSpec)>,
    /// Sessions destroyed (their TTL timers stop).
    pub destroyed: Vec<SessionId>,
}

/// Sessions, KV entries and node checks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    sessions: BTreeMap<SessionId, SessionSpec>,
    kvs: BTreeMap<LockKey, KvEntry>,
    /// The kvs table's index (last index that wrote or deleted a key): a missing key's
    /// `X-Consul-Index`.
    kvs_index: Index,
    /// Nodes whose `serfHealth` is critical.
    critical: BTreeMap<u32, ()>,
}

impl State {
    /// The key's entry.
    pub fn kv(&self, key: LockKey) -> Option<KvEntry> {
        self.kvs.get(&key).copied()
    }

    /// The index a blocking query on `key` compares: the key's `ModifyIndex`, or the table's when
    /// the key is absent.
    pub fn kv_index(&self, key: LockKey) -> Index {
        self.kvs.get(&key).map(|e| e.modify_index).unwrap_or(self.kvs_index).max(1)
    }

    /// The session, if it exists.
    pub fn session(&self, session: SessionId) -> Option<&SessionSpec> {
        self.sessions.get(&session)
    }

    /// Every session with a TTL (a new leader starts their timers).
    pub fn ttl_sessions(&self) -> impl Iterator<Item = (SessionId, u64)> + '_ {
        self.sessions.iter().filter_map(|(id, s)| s.ttl_ns.map(|t| (*id, t)))
    }

    /// Whether the node's `serfHealth` check is critical.
    pub fn is_critical(&self, node: u32) -> bool {
        self.critical.contains_key(&node)
    }

    /// Applies a command committed at `index`.
    pub fn apply(&mut self, index: Index, cmd: &CmdKind) -> Applied {
        let mut out = Applied::default();
        match *cmd {
            CmdKind::SessionCreate(spec) => {
                // sessionCreateTxn: every check the session names must exist and not be critical.
                if spec.serf_check && self.is_critical(spec.node) {
                    out.result = Some(Err(ConsulError::CheckCritical));
                } else {
                    self.sessions.insert(index, spec);
                    out.created = Some((index, spec));
                    out.result = Some(Ok(Reply::Session(index)));
                }
            }
            CmdKind::SessionDestroy { session } => {
                let found = self.destroy(index, session, &mut out);
                out.result = Some(if found { Ok(Reply::Done) } else { Err(ConsulError::SessionNotFound) });
            }
            CmdKind::Acquire { key, session } => {
                out.result = Some(self.acquire(index, key, session));
            }
            CmdKind::Release { key, session } => {
                let result = match self.kvs.get_mut(&key) {
                    Some(e) if e.session == Some(session) => {
                        e.session = None;
                        e.modify_index = index;
                        self.kvs_index = index;
                        Ok(Reply::Bool(true, Some(*e)))
                    }
                    other => Ok(Reply::Bool(false, other.map(|e| *e))),
                };
                out.result = Some(result);
            }
            CmdKind::NodeHealth { node, critical } => {
                if critical {
                    self.critical.insert(node, ());
                    // ensureCheckTxn: a critical check invalidates every session bound to it.
                    let bound: Vec<SessionId> = self
                        .sessions
                        .iter()
                        .filter(|(_, s)| s.serf_check && s.node == node)
                        .map(|(id, _)| *id)
                        .collect();
                    for session in bound {
                        self.destroy(index, session, &mut out);
                    }
                } else {
                    self.critical.remove(&node);
                }
                out.result = Some(Ok(Reply::Done));
            }
        }
        out
    }

    /// `kvsLockTxn`: the session must exist; a key held by another session refuses; the same
    /// session re-acquires without a new `LockIndex`; otherwise `LockIndex` + 1.
    fn acquire(&mut self, index: Index, key: LockKey, session: SessionId) -> Result<Reply, ConsulError> {
        if !self.sessions.contains_key(&session) {
            return Err(ConsulError::SessionNotFound);
        }
        let entry = self.kvs.entry(key).or_insert(KvEntry {
            session: None,
            lock_index: 0,
            modify_index: index,
            create_index: index,
        });
        match entry.session {
            Some(s) if s != session => return Ok(Reply::Bool(false, Some(*entry))),
            Some(_) => {}
            None => entry.lock_index += 1,
        }
        entry.session = Some(session);
        entry.modify_index = index;
        self.kvs_index = index;
        Ok(Reply::Bool(true, Some(*entry)))
    }

    /// `deleteSessionTxn`: the session's keys are released or deleted per its behaviour, each
    /// getting the session's lock-delay.
    fn destroy(&mut self, index: Index, session: SessionId, out: &mut Applied) -> bool {
        let Some(spec) = self.sessions.remove(&session) else { return false };
        out.destroyed.push(session);
        let held: Vec<LockKey> = self.kvs.iter().filter(|(_, e)| e.session == Some(session)).map(|(k, _)| *k).collect();
        for key in held {
            match spec.behavior {
                Behavior::Release => {
                    let e = self.kvs.get_mut(&key).expect("listed above");
                    e.session = None;
                    e.modify_index = index;
                }
                Behavior::Delete => {
                    self.kvs.remove(&key);
                }
            }
            self.kvs_index = index;
            if spec.lock_delay_ns > 0 {
                out.delayed.push((key, spec.lock_delay_ns));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(node: u32, behavior: Behavior) -> SessionSpec {
        SessionSpec { node, serf_check: true, ttl_ns: Some(15_000_000_000), behavior, lock_delay_ns: 15_000_000_000 }
    }

    fn bool_of(a: &Applied) -> bool {
        matches!(a.result, Some(Ok(Reply::Bool(true, _))))
    }

    /// LockIndex counts acquisitions of a held-then-free key; a re-acquire by the holder does
    /// not count; another session is refused; an unknown session is an error.
    #[test]
    fn acquire_and_release_follow_kvs_lock_txn() {
        let mut st = State::default();
        st.apply(1, &CmdKind::SessionCreate(spec(0, Behavior::Release)));
        st.apply(2, &CmdKind::SessionCreate(spec(1, Behavior::Release)));
        assert!(bool_of(&st.apply(3, &CmdKind::Acquire { key: 0, session: 1 })));
        assert!(bool_of(&st.apply(4, &CmdKind::Acquire { key: 0, session: 1 })));
        assert_eq!(st.kv(0).unwrap().lock_index, 1);
        assert!(!bool_of(&st.apply(5, &CmdKind::Acquire { key: 0, session: 2 })));
        assert!(!bool_of(&st.apply(6, &CmdKind::Release { key: 0, session: 2 })));
        assert!(bool_of(&st.apply(7, &CmdKind::Release { key: 0, session: 1 })));
        assert!(bool_of(&st.apply(8, &CmdKind::Acquire { key: 0, session: 2 })));
        assert_eq!(st.kv(0).unwrap().lock_index, 2);
        assert_eq!(st.kv(0).unwrap().modify_index, 8);
        let r = st.apply(9, &CmdKind::Acquire { key: 0, session: 77 });
        assert_eq!(r.result, Some(Err(ConsulError::SessionNotFound)));
    }

    /// A critical serfHealth destroys the node's sessions: `release` clears the key and keeps its
    /// LockIndex, `delete` removes it (the next acquire starts at LockIndex 1 again); each held
    /// key is handed back for its lock-delay; a critical node cannot create a session.
    #[test]
    fn critical_check_invalidates_sessions() {
        let mut st = State::default();
        st.apply(1, &CmdKind::SessionCreate(spec(0, Behavior::Release)));
        st.apply(2, &CmdKind::SessionCreate(spec(1, Behavior::Delete)));
        st.apply(3, &CmdKind::Acquire { key: 0, session: 1 });
        st.apply(4, &CmdKind::Acquire { key: 1, session: 2 });
        let a = st.apply(5, &CmdKind::NodeHealth { node: 0, critical: true });
        assert_eq!(a.delayed, vec![(0, 15_000_000_000)]);
        assert_eq!(a.destroyed, vec![1]);
        assert_eq!(st.kv(0), Some(KvEntry { session: None, lock_index: 1, modify_index: 5, create_index: 3 }));
        let r = st.apply(6, &CmdKind::SessionCreate(spec(0, Behavior::Release)));
        assert_eq!(r.result, Some(Err(ConsulError::CheckCritical)));
        st.apply(7, &CmdKind::NodeHealth { node: 1, critical: true });
        assert_eq!(st.kv(1), None);
        assert_eq!(st.kv_index(1), 7);
        st.apply(8, &CmdKind::NodeHealth { node: 0, critical: false });
        st.apply(9, &CmdKind::SessionCreate(spec(0, Behavior::Release)));
        st.apply(10, &CmdKind::Acquire { key: 1, session: 9 });
        assert_eq!(st.kv(1).unwrap().lock_index, 1, "a deleted key starts its LockIndex again");
    }
}
