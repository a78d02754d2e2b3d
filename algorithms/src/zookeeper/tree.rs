//! The replicated state every ZooKeeper server applies in log order: the znodes the recipes use
//! (with sequence numbers from the parent's `cversion`, `czxid`, ephemeral owners) and the open
//! sessions with their timeouts and ephemeral nodes. Applying the same transactions in the same
//! order gives the same tree on every replica (ZooKeeper's DataTree + the session table).
//!
//! Watches are not here: they live on the server a client is connected to, so the tree only
//! says which paths a transaction created or deleted and the server fires its local watches.
//! Parent nodes `/locks/<key>` spring into being with their first child (Curator creates them
//! with `creatingParentsIfNeeded`; the extra round trip on first use is not modelled).

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::history::LockKey;

use super::protocol::{ChildName, CreateSpec, ErrCode, EventType, SessionId, Txn, ZPath, Zxid};

mod fingerprint;

/// One znode: when it was created and which session owns it (every recipe node is ephemeral).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Znode {
    /// The zxid of the transaction that created it (the fencing token).
    pub czxid: Zxid,
    /// The session that owns it (`ephemeralOwner`).
    pub owner: SessionId,
}

/// `/locks/<key>`: its children by sequence and the counter that numbers them.
#[derive(Clone, Debug, Default)]
struct Parent {
    /// ZooKeeper's `cversion`: the number of changes to the children (creations and deletions);
    /// a sequential child's suffix is its value at creation.
    cversion: u32,
    children: BTreeMap<u32, (ChildName, Znode)>,
}

#[derive(Clone, Debug)]
struct SessionEntry {
    timeout_ms: u64,
    ephemerals: BTreeSet<ZPath>,
}

/// What applying a transaction did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// `createSession` opened a session.
    SessionCreated {
        /// The new session (the transaction's zxid).
        session: SessionId,
        /// Its timeout, milliseconds.
        timeout_ms: u64,
    },
    /// `closeSession` closed a session and deleted its ephemeral nodes.
    SessionClosed {
        /// The session.
        session: SessionId,
        /// The nodes deleted.
        deleted: Vec<ZPath>,
    },
    /// `create` made a node.
    Created {
        /// The node.
        path: ZPath,
        /// Its creation zxid.
        czxid: Zxid,
    },
    /// `delete` removed a node.
    Deleted {
        /// The node.
        path: ZPath,
    },
    /// The transaction failed and changed nothing.
    Failed(ErrCode),
}

impl Applied {
    /// The watch triggers this change fires: (path, event).
    /// (An iterator, not a list: it runs at every applied transaction, and nearly every one fires
    /// one trigger or none.)
    pub fn triggers(&self) -> impl Iterator<Item = (ZPath, EventType)> + '_ {
        let (one, deleted): (Option<(ZPath, EventType)>, &[ZPath]) = match self {
            Applied::Created { path, .. } => (Some((*path, EventType::NodeCreated)), &[]),
            Applied::Deleted { path } => (Some((*path, EventType::NodeDeleted)), &[]),
            Applied::SessionClosed { deleted, .. } => (None, deleted),
            _ => (None, &[]),
        };
        one.into_iter().chain(deleted.iter().map(|p| (*p, EventType::NodeDeleted)))
    }
}

/// The replicated tree and session table.
#[derive(Clone, Debug, Default)]
pub struct DataTree {
    parents: BTreeMap<LockKey, Parent>,
    naive: BTreeMap<LockKey, Znode>,
    sessions: BTreeMap<SessionId, SessionEntry>,
    /// The zxid of the last transaction applied.
    last_zxid: Zxid,
}

impl DataTree {
    /// An empty tree with no sessions.
    pub fn new() -> Self {
        Self::default()
    }

    /// The zxid of the last transaction applied.
    pub fn last_zxid(&self) -> Zxid {
        self.last_zxid
    }

    /// Applies one committed transaction with its zxid.
    pub fn apply(&mut self, zxid: Zxid, txn: &Txn) -> Applied {
        self.last_zxid = self.last_zxid.max(zxid);
        match *txn {
            Txn::CreateSession { timeout_ms } => {
                // The session id is the transaction's zxid: unique, and the same on every replica.
                self.sessions.insert(zxid, SessionEntry { timeout_ms, ephemerals: BTreeSet::new() });
                Applied::SessionCreated { session: zxid, timeout_ms }
            }
            Txn::CloseSession { session } => {
                let Some(entry) = self.sessions.remove(&session) else {
                    return Applied::Failed(ErrCode::SessionExpired);
                };
                let mut deleted = Vec::new();
                for path in entry.ephemerals {
                    if self.remove_node(&path).is_some() {
                        deleted.push(path);
                    }
                }
                Applied::SessionClosed { session, deleted }
            }
            Txn::Create { session, spec } => {
                // ZooKeeper refuses writes from a session that is not (or no longer) open, so no
                // ephemeral node can outlive its session.
                if !self.sessions.contains_key(&session) {
                    return Applied::Failed(ErrCode::SessionExpired);
                }
                let node = Znode { czxid: zxid, owner: session };
                let path = match spec {
                    CreateSpec::Sequential { key, protection, name } => {
                        let parent = self.parents.entry(key).or_default();
                        let seq = parent.cversion;
                        parent.cversion += 1;
                        let child = ChildName { protection, name, seq };
                        parent.children.insert(seq, (child, node));
                        ZPath::Child { key, child }
                    }
                    CreateSpec::Naive { key } => {
                        if self.naive.contains_key(&key) {
                            return Applied::Failed(ErrCode::NodeExists);
                        }
                        self.naive.insert(key, node);
                        ZPath::Naive { key }
                    }
                };
                if let Some(entry) = self.sessions.get_mut(&session) {
                    entry.ephemerals.insert(path);
                }
                Applied::Created { path, czxid: zxid }
            }
            // `PrepRequestProcessor.pRequest` checks the session first
            // (`sessionTracker.checkSession`): a delete from a session that is closed or closing
            // fails with SESSIONEXPIRED and deletes nothing.
            Txn::Delete { session, .. } if !self.sessions.contains_key(&session) => {
                Applied::Failed(ErrCode::SessionExpired)
            }
            Txn::Delete { session: _, path } => match self.remove_node(&path) {
                // Any session may delete any node (the recipes use no ACLs).
                Some(node) => {
                    if let Some(entry) = self.sessions.get_mut(&node.owner) {
                        entry.ephemerals.remove(&path);
                    }
                    Applied::Deleted { path }
                }
                None => Applied::Failed(ErrCode::NoNode),
            },
        }
    }

    fn remove_node(&mut self, path: &ZPath) -> Option<Znode> {
        match *path {
            ZPath::Child { key, child } => {
                let parent = self.parents.get_mut(&key)?;
                match parent.children.get(&child.seq) {
                    Some((name, _)) if *name == child => {}
                    _ => return None,
                }
                let (_, node) = parent.children.remove(&child.seq)?;
                parent.cversion += 1;
                Some(node)
            }
            ZPath::Naive { key } => self.naive.remove(&key),
        }
    }

    /// `getChildren("/locks/<key>")`, sorted by sequence.
    pub fn children(&self, key: LockKey) -> Vec<ChildName> {
        self.parents.get(&key).map(|p| p.children.values().map(|(name, _)| *name).collect()).unwrap_or_default()
    }

    /// The node at `path`, if it exists.
    pub fn node(&self, path: &ZPath) -> Option<Znode> {
        match *path {
            ZPath::Child { key, child } => {
                self.parents.get(&key)?.children.get(&child.seq).filter(|(name, _)| *name == child).map(|(_, n)| *n)
            }
            ZPath::Naive { key } => self.naive.get(&key).copied(),
        }
    }

    /// Whether the session is open (created and not closed or expired) in the applied state.
    pub fn session_open(&self, session: SessionId) -> bool {
        self.sessions.contains_key(&session)
    }

    /// Every open session with its timeout (a new leader starts tracking them all afresh).
    pub fn sessions(&self) -> Vec<(SessionId, u64)> {
        self.sessions.iter().map(|(s, e)| (*s, e.timeout_ms)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::protocol::LockName;
    use super::*;

    fn seq_create(session: SessionId, protection: u32) -> Txn {
        Txn::Create { session, spec: CreateSpec::Sequential { key: 0, protection, name: LockName::Lock } }
    }

    #[test]
    fn sequence_numbers_follow_the_parents_cversion_across_creates_and_deletes() {
        let mut t = DataTree::new();
        let Applied::SessionCreated { session: s, .. } = t.apply(1, &Txn::CreateSession { timeout_ms: 4000 }) else {
            panic!()
        };
        let a = t.apply(2, &seq_create(s, 0xa));
        let b = t.apply(3, &seq_create(s, 0xb));
        let (Applied::Created { path: pa, czxid: za }, Applied::Created { path: pb, czxid: zb }) = (a, b) else {
            panic!()
        };
        assert_eq!((za, zb), (2, 3));
        let ZPath::Child { child: ca, .. } = pa else { panic!() };
        let ZPath::Child { child: cb, .. } = pb else { panic!() };
        assert_eq!((ca.seq, cb.seq), (0, 1));
        assert_eq!(t.apply(4, &Txn::Delete { session: s, path: pa }), Applied::Deleted { path: pa });
        // The deletion counted as a change to the children: the next suffix skips 2.
        let Applied::Created { path: pc, .. } = t.apply(5, &seq_create(s, 0xc)) else { panic!() };
        let ZPath::Child { child: cc, .. } = pc else { panic!() };
        assert_eq!(cc.seq, 3);
        assert_eq!(t.children(0), vec![cb, cc]);
        assert_eq!(t.apply(6, &Txn::Delete { session: s, path: pa }), Applied::Failed(ErrCode::NoNode));
    }

    #[test]
    fn closing_a_session_deletes_exactly_its_ephemerals() {
        let mut t = DataTree::new();
        t.apply(1, &Txn::CreateSession { timeout_ms: 4000 });
        t.apply(2, &Txn::CreateSession { timeout_ms: 4000 });
        let Applied::Created { path: p1, .. } = t.apply(3, &seq_create(1, 1)) else { panic!() };
        let Applied::Created { path: p2, .. } = t.apply(4, &seq_create(2, 2)) else { panic!() };
        let Applied::Created { path: n1, .. } =
            t.apply(5, &Txn::Create { session: 1, spec: CreateSpec::Naive { key: 0 } })
        else {
            panic!()
        };
        let closed = t.apply(6, &Txn::CloseSession { session: 1 });
        assert_eq!(closed, Applied::SessionClosed { session: 1, deleted: vec![p1, n1] });
        assert_eq!(
            closed.triggers().collect::<Vec<_>>(),
            vec![(p1, EventType::NodeDeleted), (n1, EventType::NodeDeleted)]
        );
        assert!(t.node(&p2).is_some() && t.node(&p1).is_none());
        // A write from the closed session is refused: no ephemeral outlives its session.
        assert_eq!(t.apply(7, &seq_create(1, 9)), Applied::Failed(ErrCode::SessionExpired));
        assert_eq!(t.sessions(), vec![(2, 4000)]);
    }

    #[test]
    fn the_naive_node_exists_once() {
        let mut t = DataTree::new();
        t.apply(1, &Txn::CreateSession { timeout_ms: 4000 });
        let spec = CreateSpec::Naive { key: 3 };
        assert!(matches!(t.apply(2, &Txn::Create { session: 1, spec }), Applied::Created { czxid: 2, .. }));
        assert_eq!(t.apply(3, &Txn::Create { session: 1, spec }), Applied::Failed(ErrCode::NodeExists));
        assert_eq!(t.node(&ZPath::Naive { key: 3 }), Some(Znode { czxid: 2, owner: 1 }));
    }
}
