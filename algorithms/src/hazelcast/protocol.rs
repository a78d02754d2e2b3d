//! The messages and timers of the hazelcast model: the CP subsystem calls a Hazelcast client's
//! `FencedLock` proxy and its session manager make (create, heartbeat and close a CP session;
//! lock and unlock), the CP group's answers, the Raft log's commands, and the timers. Their
//! `Debug` text is what the trace prints.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;

use super::ilock::{IlockMsg, IlockTimer};
use crate::consensus::{ConsensusMsg, ConsensusTimer};

/// A CP session id (the Raft index of its creation, as Hazelcast's session ids are the group's
/// commit index of `CreateSessionOp`).
pub type SessionId = u64;
/// A fencing token: the Raft commit index of the lock's first (non-reentrant) acquisition.
pub type Fence = u64;

/// One call of the client to the CP group (a `RaftOp` it invokes on the group's leader).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `CreateSessionOp`.
    CreateSession,
    /// `HeartbeatSessionOp`.
    Heartbeat {
        /// The session.
        session: SessionId,
    },
    /// `LockOp`: `lock()` / `lockAndGetFence()`; waits in the group while another holds the lock.
    Lock {
        /// The lock (`FencedLock` name `lock-<key>`).
        key: LockKey,
        /// The caller's session.
        session: SessionId,
    },
    /// `UnlockOp`.
    Unlock {
        /// The lock.
        key: LockKey,
        /// The caller's session.
        session: SessionId,
    },
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::CreateSession => f.write_str("CreateSessionOp"),
            Op::Heartbeat { session } => write!(f, "HeartbeatSessionOp s{session}"),
            Op::Lock { key, session } => write!(f, "LockOp lock-{key} s{session}"),
            Op::Unlock { key, session } => write!(f, "UnlockOp lock-{key} s{session}"),
        }
    }
}

/// An invocation: the op and its invocation uid (the call's id, unique per client start; a
/// retried invocation keeps it, which makes `LockOp` idempotent in the group).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Invocation {
    /// The invocation uid.
    pub uid: u64,
    /// The op.
    pub op: Op,
}

impl fmt::Debug for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} #{:x}", self.op, self.uid)
    }
}

/// The CP group's errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HzError {
    /// `NotLeaderException`, with the leader this member knows (the client retries there).
    NotLeader {
        /// The leader.
        hint: Option<NodeId>,
    },
    /// `SessionExpiredException`: the session is closed or expired.
    SessionExpired,
    /// `IllegalMonitorStateException`: "Current thread is not owner of the lock!".
    NotOwner,
    /// `LockAcquireLimitReachedException`.
    LimitReached,
}

/// A successful answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The new session.
    Session(SessionId),
    /// A heartbeat committed.
    Done,
    /// The lock is held, with this fence.
    Fence(Fence),
    /// The lock was released (or its count lowered).
    Unlocked,
}

/// The answer to an [`Invocation`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The invocation uid.
    pub uid: u64,
    /// The answer.
    pub result: Result<Reply, HzError>,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(r) => write!(f, "{r:?} #{:x}", self.uid),
            Err(e) => write!(f, "{e:?} #{:x}", self.uid),
        }
    }
}

/// A command of the CP group's Raft log.
#[derive(Clone, PartialEq, Eq)]
pub enum CmdKind {
    /// A client invocation (client index, invocation uid, op).
    Invoke {
        /// The client's index.
        client: u32,
        /// The invocation uid.
        uid: u64,
        /// The op.
        op: Op,
    },
    /// `ExpireSessionsOp`: the sessions (with the version each was seen expired at).
    ExpireSessions {
        /// `(session, version)`.
        sessions: Vec<(SessionId, u64)>,
    },
}

impl fmt::Debug for CmdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdKind::Invoke { client, uid, op } => write!(f, "client-{client} {op:?} #{uid:x}"),
            CmdKind::ExpireSessions { sessions } => write!(f, "ExpireSessionsOp {sessions:?}"),
        }
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the hazelcast model.
    #[derive(Clone)]
    pub enum HazelcastMsg {
        /// Client → CP member.
        Invocation(Invocation),
        /// CP member → client.
        Response(Response),
        /// Between CP members: Raft.
        Consensus(ConsensusMsg<CmdKind>),
        /// The pre-3.12 `ILock` mode's messages (`lock = "ilock"`).
        Ilock(IlockMsg),
    }
}

/// A CP member's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The leader's expired-session check (every second).
    ExpiryCheck,
}

/// The client's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The session heartbeat task.
    Heartbeat,
    /// An invocation's timeout.
    CallTimeout {
        /// The invocation uid.
        uid: u64,
    },
    /// An invocation's retry after a failure.
    CallRetry {
        /// The invocation uid.
        uid: u64,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the hazelcast model.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum HazelcastTimer {
        /// A member's.
        Server(ServerTimer),
        /// A client's.
        Client(ClientTimer),
        /// The Raft replica's.
        Consensus(ConsensusTimer),
        /// The `ILock` mode's.
        Ilock(IlockTimer),
    }
}
