//! The ZooKeeper wire protocol as this model speaks it: znode paths, the client's requests and
//! the server's replies and watch events, the connect handshake, and the messages servers
//! exchange besides the replicated log (write forwarding, session revalidation, the leader's
//! pings that collect followers' session touches).
//!
//! Every message is one variant of [`ZkMsg`] and every timer one of [`ZkTimer`] (a server's
//! [`ServerTimer`] or a client's [`ClientTimer`]); their `Debug` prints the inner value, so a
//! trace line reads as the protocol does.
//!
//! Paths are typed instead of strings: `/locks/<key>/_c_<protection>-lock-<seq>` for the
//! sequential and read-write recipes (Curator's protected names, `lock-`, `__READ__`,
//! `__WRIT__`), and `/naive/<key>` for the one-node recipe. Sorting by the ten-digit sequence
//! suffix, as Curator's `fixForSorting` does, is sorting by `seq`.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;

use crate::consensus::{ConsensusMsg, ConsensusTimer};

/// A session id. In this model it is the zxid of the `createSession` transaction (unique and
/// the same on every replica).
pub type SessionId = u64;

/// A ZooKeeper transaction id: epoch in the high 32 bits, counter in the low 32, as in ZAB.
pub type Zxid = u64;

/// Which lock name a sequential child carries (Curator: `lock-` for InterProcessMutex,
/// `__READ__` / `__WRIT__` for InterProcessReadWriteLock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockName {
    Lock,
    Read,
    Write,
}

impl LockName {
    pub fn as_str(self) -> &'static str {
        match self {
            LockName::Lock => "lock-",
            LockName::Read => "__READ__",
            LockName::Write => "__WRIT__",
        }
    }
}

/// A child of `/locks/<key>`: `_c_<protection>-<lock name><seq>`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChildName {
    /// Curator's protection id (a UUID in the real client; 32 random bits here).
    pub protection: u32,
    pub name: LockName,
    /// The sequence suffix: the parent's `cversion` when the child was created.
    pub seq: u32,
}

impl fmt::Debug for ChildName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "_c_{:08x}-{}{:010}", self.protection, self.name.as_str(), self.seq)
    }
}

/// A znode path the recipes use.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZPath {
    /// `/locks/<key>/<child>`.
    Child { key: LockKey, child: ChildName },
    /// `/naive/<key>`: the single node of the naive recipe.
    Naive { key: LockKey },
}

impl ZPath {
    pub fn key(&self) -> LockKey {
        match *self {
            ZPath::Child { key, .. } | ZPath::Naive { key } => key,
        }
    }
}

impl fmt::Debug for ZPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZPath::Child { key, child } => write!(f, "/locks/{key}/{child:?}"),
            ZPath::Naive { key } => write!(f, "/naive/{key}"),
        }
    }
}

/// What a create asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CreateSpec {
    /// EPHEMERAL_SEQUENTIAL `/locks/<key>/_c_<protection>-<name>`; the server appends the sequence.
    Sequential { key: LockKey, protection: u32, name: LockName },
    /// EPHEMERAL `/naive/<key>`.
    Naive { key: LockKey },
}

impl fmt::Debug for CreateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateSpec::Sequential { key, protection, name } => {
                write!(f, "/locks/{key}/_c_{protection:08x}-{} EPHEMERAL_SEQUENTIAL", name.as_str())
            }
            CreateSpec::Naive { key } => write!(f, "/naive/{key} EPHEMERAL"),
        }
    }
}

/// A client request on an open session.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    /// `create2` (the reply carries the new node's stat, so its czxid: the fencing token).
    Create(CreateSpec),
    Delete(ZPath),
    /// `getChildren("/locks/<key>")`, no watch (Curator's lock does not watch the parent).
    GetChildren(LockKey),
    /// `getData(path, watch)`: NoNode if absent (then no watch is left, as in ZooKeeper).
    GetData {
        path: ZPath,
        watch: bool,
    },
    /// `exists(path, watch)`: the watch is left whether or not the node exists.
    Exists {
        path: ZPath,
        watch: bool,
    },
    Ping,
}

impl Op {
    /// Writes go through the leader and the log; reads are served by the connected server.
    pub fn is_write(&self) -> bool {
        matches!(self, Op::Create(_) | Op::Delete(_))
    }
}

/// An error code in a reply.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrCode {
    NoNode,
    NodeExists,
    SessionExpired,
}

/// A request from a client: its session, its own request number, the operation, and its
/// position on this connection (`seq`, from 1). Links are TCP connections: a message is never
/// silently missing from one. The simulated network can drop single messages, so both ends
/// number what they send on a connection and treat a gap as the connection breaking, which is
/// what TCP turns a lost segment into when retransmission does not save it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub session: SessionId,
    pub xid: u64,
    pub seq: u64,
    pub op: Op,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} s{:x} #{} @{}", self.op, self.session, self.xid, self.seq)
    }
}

/// What a request got.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Outcome {
    Created {
        path: ZPath,
        czxid: Zxid,
    },
    Deleted,
    /// The children, sorted by sequence.
    Children(Vec<ChildName>),
    /// A node's stat; `None` from `exists` on an absent node.
    Stat(Option<Stat>),
    Pong,
    Err(ErrCode),
}

/// The parts of a znode's stat the recipes read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub czxid: Zxid,
    /// The session owning the node (its `ephemeralOwner`).
    pub owner: SessionId,
}

impl fmt::Debug for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "czxid {:x} owner s{:x}", self.czxid, self.owner)
    }
}

/// A server's reply. `zxid` is the last zxid the server had applied (the client remembers the
/// highest it saw and will not reconnect to a server that is behind it). `seq` numbers the
/// server's messages on this connection (see [`Request`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Response {
    pub xid: u64,
    pub zxid: Zxid,
    pub seq: u64,
    pub outcome: Outcome,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {:?} z{:x} @{}", self.xid, self.outcome, self.zxid, self.seq)
    }
}

/// What a watch reports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EventType {
    NodeCreated,
    NodeDeleted,
}

/// A one-shot watch firing, sent to the watching session's client (`seq` as in [`Response`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WatchEvent {
    pub path: ZPath,
    pub kind: EventType,
    pub seq: u64,
}

impl fmt::Debug for WatchEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WATCH {:?} {:?} @{}", self.kind, self.path, self.seq)
    }
}

/// The client's connect request: `session` 0 asks for a new session. `last_zxid` is the highest
/// zxid the client has seen; a server that has applied less refuses the connection (ZooKeeper's
/// guard that keeps a reconnecting client from going back in time).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ConnectRequest {
    pub session: SessionId,
    pub timeout_ms: u64,
    pub last_zxid: Zxid,
    /// The client's connection attempt number (replies to older attempts are ignored).
    pub attempt: u64,
}

/// The server's answer to a connect: the session and the negotiated timeout, or `expired`
/// (ZooKeeper answers a reconnect on a dead session with timeout 0), or a refusal (the server
/// is behind the client or not serving).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ConnectResponse {
    Connected { session: SessionId, timeout_ms: u64, attempt: u64 },
    Expired { session: SessionId, attempt: u64 },
    Refused { attempt: u64 },
}

impl fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CONNECT s{:x} {}ms lastZxid {:x} try {}",
            self.session, self.timeout_ms, self.last_zxid, self.attempt
        )
    }
}

impl fmt::Debug for ConnectResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectResponse::Connected { session, timeout_ms, attempt } => {
                write!(f, "CONNECTED s{session:x} {timeout_ms}ms try {attempt}")
            }
            ConnectResponse::Expired { session, attempt } => write!(f, "EXPIRED s{session:x} try {attempt}"),
            ConnectResponse::Refused { attempt } => write!(f, "REFUSED try {attempt}"),
        }
    }
}

/// The server closes the client's connection (it stopped serving: it lost its leader).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Disconnect {
    pub session: SessionId,
}

impl fmt::Debug for Disconnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CLOSE s{:x}", self.session)
    }
}

/// Follower → leader: is this session still alive? (ZooKeeper's REVALIDATE on a reconnect.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Revalidate {
    pub session: SessionId,
    pub timeout_ms: u64,
    /// The follower's handle for the waiting connection.
    pub ticket: u64,
}

/// Leader → follower: the answer to [`Revalidate`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RevalidateReply {
    pub session: SessionId,
    pub ticket: u64,
    pub valid: bool,
}

/// Leader → followers every `tick_ms / 2`: ZooKeeper's learner PING.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LeaderPing {
    pub term: u64,
}

/// Follower → leader: the sessions its clients touched since the last ping, with their timeouts
/// (ZooKeeper's learner touch table, sent in the PING reply), and how many writes it has
/// forwarded on its current link to the leader (so a lost forward shows as a broken link).
#[derive(Clone, PartialEq, Eq)]
pub struct PingTouches {
    pub term: u64,
    pub touches: Vec<(SessionId, u64)>,
    pub stream: u64,
    pub forwarded: u64,
}

impl fmt::Debug for PingTouches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PingTouches t{} [", self.term)?;
        for (i, (s, _)) in self.touches.iter().enumerate() {
            write!(f, "{}s{s:x}", if i > 0 { " " } else { "" })?;
        }
        write!(f, "] forwarded {}", self.forwarded)
    }
}

/// Leader → follower: your link to me lost a message; as a ZooKeeper follower whose leader
/// connection broke, drop your clients and start a new link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Resync {
    pub stream: u64,
}

/// A server's handle on a client request it forwarded or proposed: who to answer after the
/// transaction is applied.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    pub server: NodeId,
    /// The server's incarnation (drawn at each start), so a restarted server never answers for
    /// a request its earlier life accepted.
    pub incarnation: u32,
    pub ticket: u64,
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}/{:x}/{}", self.server, self.incarnation, self.ticket)
    }
}

/// A replicated transaction: what the leader proposes and every server applies in log order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Txn {
    CreateSession {
        timeout_ms: u64,
    },
    /// Session close or expiry: deletes the session's ephemeral nodes.
    CloseSession {
        session: SessionId,
    },
    Create {
        session: SessionId,
        spec: CreateSpec,
    },
    Delete {
        session: SessionId,
        path: ZPath,
    },
}

impl fmt::Debug for Txn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Txn::CreateSession { timeout_ms } => write!(f, "createSession {timeout_ms}ms"),
            Txn::CloseSession { session } => write!(f, "closeSession s{session:x}"),
            Txn::Create { session, spec } => write!(f, "create {spec:?} s{session:x}"),
            Txn::Delete { session, path } => write!(f, "delete {path:?} s{session:x}"),
        }
    }
}

/// A log entry's command: the transaction and, when a client waits for it, where it came from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Command {
    pub txn: Txn,
    pub origin: Option<Origin>,
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.origin {
            Some(o) => write!(f, "{:?} from {o:?}", self.txn),
            None => write!(f, "{:?}", self.txn),
        }
    }
}

/// Follower → leader: a write to propose (ZooKeeper's REQUEST packet), numbered on the
/// follower's current link (`stream`, `seq` from 1).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Forward {
    pub command: Command,
    pub stream: u64,
    pub seq: u64,
}

impl fmt::Debug for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FORWARD {:?} @{}", self.command, self.seq)
    }
}

/// Generates an enum with one variant per wrapped type, `From` for each (so `ctx.send(to,
/// Request { .. })` and `ctx.set_timer(after, ServerTimer::Ping { .. })` keep their plain
/// form) and a `Debug` that prints the wrapped value.
macro_rules! wrapper_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub enum $name {
            $($(#[$vmeta])* $variant($ty)),*
        }
        $(
            impl From<$ty> for $name {
                fn from(inner: $ty) -> Self {
                    $name::$variant(inner)
                }
            }
        )*
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($name::$variant(inner) => inner.fmt(f)),*
                }
            }
        }
    };
}

wrapper_enum! {
    /// Every message of the model: client ↔ server, server ↔ server, and the replicated log's.
    ZkMsg {
        /// The replicated log between servers (standing in for ZAB's own traffic).
        Consensus(ConsensusMsg<Command>),
        Request(Request),
        Response(Response),
        WatchEvent(WatchEvent),
        ConnectRequest(ConnectRequest),
        ConnectResponse(ConnectResponse),
        Disconnect(Disconnect),
        Revalidate(Revalidate),
        RevalidateReply(RevalidateReply),
        LeaderPing(LeaderPing),
        PingTouches(PingTouches),
        Resync(Resync),
        Forward(Forward),
    }
}

/// An ensemble server's timers. The leader's own timers carry the generation of the
/// leadership that set them (bumped when leadership starts or ends), so one left over from an
/// earlier leadership does nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The replicated log's election or heartbeat deadline.
    Consensus(ConsensusTimer),
    /// Leader: the session tracker's next expiry bucket is due.
    SessionExpiry { leader_gen: u64 },
    /// Leader: time to ping the followers (every `tick_ms / 2`).
    LeaderPing { leader_gen: u64 },
}

impl From<ConsensusTimer> for ServerTimer {
    fn from(t: ConsensusTimer) -> Self {
        ServerTimer::Consensus(t)
    }
}

/// The client connection's timers ([`crate::zookeeper::connection`]). Each carries the
/// generation it was set under (the connect attempt, the suspension, the queued operation's
/// serial); one from an older generation does nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnTimer {
    /// Time to ping, or to check the read timeout, on the connection made by `attempt`.
    Check { attempt: u64 },
    /// Connect attempt `attempt` got no answer within its share of the timeout.
    ConnectTimeout { attempt: u64 },
    /// The sleep before the next connect attempt is over.
    Reconnect { attempt: u64 },
    /// Curator: SUSPENDED (number `suspended_gen`) has lasted a whole session timeout: LOST.
    Lost { suspended_gen: u64 },
    /// The operation queued as `serial` waited Curator's connection timeout for a connection.
    QueueDeadline { serial: u64 },
}

/// A lock client's timers: its connection's, and the recipes' retry back-offs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    Connection(ConnTimer),
    /// The back-off before redoing lock `key`'s step (its generation `gen`) is over.
    Backoff {
        key: LockKey,
        gen: u64,
    },
}

impl From<ConnTimer> for ClientTimer {
    fn from(t: ConnTimer) -> Self {
        ClientTimer::Connection(t)
    }
}

wrapper_enum! {
    /// Every timer of the model, by the kind of process that sets it.
    ZkTimer {
        Server(ServerTimer),
        Client(ClientTimer),
    }
}

impl From<ConsensusTimer> for ZkTimer {
    fn from(t: ConsensusTimer) -> Self {
        ZkTimer::Server(t.into())
    }
}

impl From<ConnTimer> for ZkTimer {
    fn from(t: ConnTimer) -> Self {
        ZkTimer::Client(t.into())
    }
}
