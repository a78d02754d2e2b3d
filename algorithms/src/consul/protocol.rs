//! The messages and timers of the consul model: the HTTP calls `api.Lock` makes through the
//! node's agent (session create, renew, destroy; KV get, acquire, release), the server's answers,
//! the commands that go through Consul's Raft log, the gossip probe that keeps a node's
//! `serfHealth` check passing, and each node kind's timers. Their `Debug` text is what the trace
//! prints, so a call reads like the HTTP request (`PUT /v1/kv/lock-0?acquire=s7 #12`).

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;
use locksim_simulator::time::Nanos;

use crate::consensus::{ConsensusMsg, ConsensusTimer};

/// A session id. Consul draws a UUID; the model uses the log index of the session's creation,
/// unique and the same on every server.
pub type SessionId = u64;
/// A Raft index, which Consul's state store uses as every table's and every entry's index.
pub type Index = u64;

/// What happens to a session's locks when it is invalidated (`structs.SessionBehavior`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// `release` (the default): the key stays, its `Session` is cleared.
    Release,
    /// `delete`: the key is deleted.
    Delete,
}

/// A session as `PUT /v1/session/create` asks for it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionSpec {
    /// The node (client index) the session belongs to: its agent is `client-<node>`.
    pub node: u32,
    /// Bound to the node's `serfHealth` check (the server's default `NodeChecks`).
    pub serf_check: bool,
    /// The session's TTL, if any.
    pub ttl_ns: Option<Nanos>,
    /// What invalidation does to held keys.
    pub behavior: Behavior,
    /// The lock-delay its held keys get when it is invalidated.
    pub lock_delay_ns: Nanos,
}

impl fmt::Debug for SessionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node=client-{}", self.node)?;
        if self.serf_check {
            f.write_str(" checks=[serfHealth]")?;
        }
        if let Some(ttl) = self.ttl_ns {
            write!(f, " ttl={}ms", ttl / 1_000_000)?;
        }
        write!(f, " behavior={:?} lock-delay={}ms", self.behavior, self.lock_delay_ns / 1_000_000)
    }
}

/// How a KV read is served (`?consistent`, the default mode; `?stale` is not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// The default mode: the leader answers from its own state, without checking that it still
    /// leads (it may be stale for the moments after a new leader was elected elsewhere).
    Default,
    /// `?consistent`: the leader confirms its leadership with a quorum first.
    Consistent,
}

/// One HTTP call of the api client (through the local agent, which forwards it as an RPC).
#[derive(Clone, PartialEq, Eq)]
pub enum Op {
    /// `PUT /v1/session/create`.
    SessionCreate(SessionSpec),
    /// `PUT /v1/session/renew/<id>`.
    SessionRenew {
        /// The session.
        session: SessionId,
    },
    /// `PUT /v1/session/destroy/<id>`.
    SessionDestroy {
        /// The session.
        session: SessionId,
    },
    /// `GET /v1/kv/<key>`, blocking when `wait_index` is set (`?index=…&wait=…`).
    KvGet {
        /// The key.
        key: LockKey,
        /// Block until the key's index is above this one (or the wait ends).
        wait_index: Option<Index>,
        /// The query's wait time (the server adds up to 1/16 of it, at random).
        wait_ns: Nanos,
        /// Default or consistent.
        mode: ReadMode,
    },
    /// `PUT /v1/kv/<key>?acquire=<session>`.
    KvAcquire {
        /// The key.
        key: LockKey,
        /// The session that takes it.
        session: SessionId,
    },
    /// `PUT /v1/kv/<key>?release=<session>`.
    KvRelease {
        /// The key.
        key: LockKey,
        /// The session that gives it up.
        session: SessionId,
    },
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::SessionCreate(spec) => write!(f, "PUT /v1/session/create {spec:?}"),
            Op::SessionRenew { session } => write!(f, "PUT /v1/session/renew/s{session}"),
            Op::SessionDestroy { session } => write!(f, "PUT /v1/session/destroy/s{session}"),
            Op::KvGet { key, wait_index, wait_ns, mode } => {
                write!(f, "GET /v1/kv/lock-{key}")?;
                if let Some(ix) = wait_index {
                    write!(f, "?index={ix}&wait={}ms", wait_ns / 1_000_000)?;
                }
                if *mode == ReadMode::Consistent {
                    f.write_str(" consistent")?;
                }
                Ok(())
            }
            Op::KvAcquire { key, session } => write!(f, "PUT /v1/kv/lock-{key}?acquire=s{session}"),
            Op::KvRelease { key, session } => write!(f, "PUT /v1/kv/lock-{key}?release=s{session}"),
        }
    }
}

/// A call from a node's agent to a server.
#[derive(Clone, PartialEq, Eq)]
pub struct Rpc {
    /// The client's id for the call, echoed in the answer.
    pub id: u64,
    /// The call.
    pub op: Op,
}

impl fmt::Debug for Rpc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} #{}", self.op, self.id)
    }
}

/// A key as `GET /v1/kv/<key>` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvEntry {
    /// `Session`: the holder, if locked.
    pub session: Option<SessionId>,
    /// `LockIndex`: how many times the key was acquired (it starts again at a new key).
    pub lock_index: u64,
    /// `ModifyIndex`: the Raft index of the key's last change.
    pub modify_index: Index,
    /// `CreateIndex`: the Raft index that created the key.
    pub create_index: Index,
}

/// The server's errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsulError {
    /// This server does not lead; the agent sends the RPC on to the leader it names (Consul's
    /// servers forward it themselves), or retries while there is none ("No cluster leader").
    NotLeader {
        /// The leader this server knows of.
        hint: Option<NodeId>,
    },
    /// `invalid session` / `Session id '…' not found` (404 on renew).
    SessionNotFound,
    /// `Check 'serfHealth' is in critical state`: a session cannot be created on a failed node.
    CheckCritical,
    /// `leadership lost while committing log`: the leader stepped down before the entry applied.
    LeadershipLost,
}

/// A successful answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The new session's id.
    Session(SessionId),
    /// A renew or destroy done.
    Done,
    /// `true`/`false` of an acquire or release, with the key as it was after it (the model hands
    /// the application the key's indices with the grant: the real application reads them with a
    /// `GET`, as `monitorLock`'s first query does).
    Bool(bool, Option<KvEntry>),
    /// A KV read: the entry (or none) and `X-Consul-Index`.
    Kv(Option<KvEntry>, Index),
}

/// The answer to an [`Rpc`].
#[derive(Clone, PartialEq, Eq)]
pub struct RpcReply {
    /// The call's id.
    pub id: u64,
    /// The answer.
    pub result: Result<Reply, ConsulError>,
}

impl fmt::Debug for RpcReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(Reply::Session(s)) => write!(f, "200 {{\"ID\": s{s}}} #{}", self.id),
            Ok(Reply::Done) => write!(f, "200 #{}", self.id),
            Ok(Reply::Bool(b, e)) => match e {
                Some(e) => {
                    write!(f, "200 {b} lock_index={} modify_index={} #{}", e.lock_index, e.modify_index, self.id)
                }
                None => write!(f, "200 {b} #{}", self.id),
            },
            Ok(Reply::Kv(None, ix)) => write!(f, "404 X-Consul-Index={ix} #{}", self.id),
            Ok(Reply::Kv(Some(e), ix)) => {
                let holder = e.session.map(|s| format!("s{s}")).unwrap_or_default();
                write!(f, "200 Session=\"{holder}\" LockIndex={} X-Consul-Index={ix} #{}", e.lock_index, self.id)
            }
            Err(e) => write!(f, "500 {e:?} #{}", self.id),
        }
    }
}

/// A memberlist probe from a server to a node's agent (`ping`), answered with an [`Ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ping {
    /// The probe's sequence number.
    pub seq: u64,
}

/// The agent's answer to a [`Ping`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// The probe's sequence number.
    pub seq: u64,
}

/// A command of Consul's Raft log (`structs.MessageType`: `SessionRequestType`, `KVSRequestType`,
/// `RegisterRequestType` for a check's status).
#[derive(Clone, PartialEq, Eq)]
pub enum CmdKind {
    /// Create a session.
    SessionCreate(SessionSpec),
    /// Destroy (invalidate) a session: its TTL ran out, or its owner asked.
    SessionDestroy {
        /// The session.
        session: SessionId,
    },
    /// `KVLock`.
    Acquire {
        /// The key.
        key: LockKey,
        /// The session.
        session: SessionId,
    },
    /// `KVUnlock`.
    Release {
        /// The key.
        key: LockKey,
        /// The session.
        session: SessionId,
    },
    /// The node's `serfHealth` check goes critical (the leader's reconcile of a failed member)
    /// or back to passing.
    NodeHealth {
        /// The node (client index).
        node: u32,
        /// Critical (`true`) or passing.
        critical: bool,
    },
}

impl fmt::Debug for CmdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdKind::SessionCreate(spec) => write!(f, "session-create {spec:?}"),
            CmdKind::SessionDestroy { session } => write!(f, "session-destroy s{session}"),
            CmdKind::Acquire { key, session } => write!(f, "kvs-lock lock-{key} s{session}"),
            CmdKind::Release { key, session } => write!(f, "kvs-unlock lock-{key} s{session}"),
            CmdKind::NodeHealth { node, critical } => {
                write!(f, "serfHealth client-{node} {}", if *critical { "critical" } else { "passing" })
            }
        }
    }
}

/// A log command with the server and request it answers (none for the leader's own).
#[derive(Clone, PartialEq, Eq)]
pub struct Cmd {
    /// `(server node, server's tag)` to answer when it applies there.
    pub origin: Option<(NodeId, u64)>,
    /// What it does.
    pub kind: CmdKind,
}

impl fmt::Debug for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.kind)
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the consul model.
    #[derive(Clone)]
    pub enum ConsulMsg {
        /// Agent → server.
        Rpc(Rpc),
        /// Server → agent.
        RpcReply(RpcReply),
        /// Server → agent: a gossip probe.
        Ping(Ping),
        /// Agent → server: the probe's answer.
        Ack(Ack),
        /// Between servers: Raft.
        Consensus(ConsensusMsg<Cmd>),
    }
}

/// A server's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The leader's next gossip probe round.
    Probe,
    /// A session's TTL timer ran out (`invalidateSession`).
    SessionTtl {
        /// The session.
        session: SessionId,
    },
    /// A blocking query's wait ended.
    QueryWait {
        /// The server's id for the query.
        qid: u64,
    },
}

/// The client's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The agent's RPC timeout for a call in flight.
    CallTimeout {
        /// The call.
        id: u64,
    },
    /// The agent retries a call that found no leader.
    CallRetry {
        /// The call.
        id: u64,
    },
    /// `api.Lock`'s `DefaultLockRetryTime` after an acquire refused (lock-delay).
    LockRetry {
        /// The key.
        key: LockKey,
    },
    /// `RenewPeriodic`'s next renewal.
    Renew {
        /// The key whose session it renews.
        key: LockKey,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the consul model.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum ConsulTimer {
        /// A server's.
        Server(ServerTimer),
        /// A client's.
        Client(ClientTimer),
        /// The Raft replica's.
        Consensus(ConsensusTimer),
    }
}
