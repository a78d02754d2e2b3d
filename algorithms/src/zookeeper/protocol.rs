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
    /// `lock-`: InterProcessMutex.
    Lock,
    /// `__READ__`: InterProcessReadWriteLock's read lock.
    Read,
    /// `__WRIT__`: InterProcessReadWriteLock's write lock.
    Write,
}

impl LockName {
    /// The name as the node's path spells it.
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
    /// The lock name it carries.
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
    Child {
        /// The lock.
        key: LockKey,
        /// The child's name.
        child: ChildName,
    },
    /// `/naive/<key>`: the single node of the naive recipe.
    Naive {
        /// The lock.
        key: LockKey,
    },
}

impl ZPath {
    /// The lock the path belongs to.
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
    Sequential {
        /// The lock.
        key: LockKey,
        /// Curator's protection id for the child.
        protection: u32,
        /// The lock name.
        name: LockName,
    },
    /// EPHEMERAL `/naive/<key>`.
    Naive {
        /// The lock.
        key: LockKey,
    },
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
    /// `delete(path)`.
    Delete(ZPath),
    /// `getChildren("/locks/<key>")`, no watch (Curator's lock does not watch the parent).
    GetChildren(LockKey),
    /// `getData(path, watch)`: NoNode if absent (then no watch is left, as in ZooKeeper).
    GetData {
        /// The node.
        path: ZPath,
        /// Leave a watch that fires when the node is deleted.
        watch: bool,
    },
    /// `exists(path, watch)`: the watch is left whether or not the node exists.
    Exists {
        /// The node.
        path: ZPath,
        /// Leave a watch that fires when the node is created or deleted.
        watch: bool,
    },
    /// A ping: keeps the session alive and shows the connection works.
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
    /// The node does not exist.
    NoNode,
    /// The node already exists.
    NodeExists,
    /// The session is not open (never created, closed or expired).
    SessionExpired,
}

/// A request from a client: its session, its own request number, the operation, and its
/// position on this connection (`seq`, from 1). Links are TCP connections: a message is never
/// silently missing from one. The simulated network can drop single messages, so both ends
/// number what they send on a connection and treat a gap as the connection breaking, which is
/// what TCP turns a lost segment into when retransmission does not save it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The client's session.
    pub session: SessionId,
    /// The client's number for the request, echoed in the reply.
    pub xid: u64,
    /// The message's position on this connection, from 1.
    pub seq: u64,
    /// The operation.
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
    /// `create2`'s answer.
    Created {
        /// The node created (a sequential one with its sequence suffix).
        path: ZPath,
        /// Its creation zxid: the fencing token.
        czxid: Zxid,
    },
    /// The `delete` succeeded.
    Deleted,
    /// The children, sorted by sequence.
    Children(Vec<ChildName>),
    /// A node's stat; `None` from `exists` on an absent node.
    Stat(Option<Stat>),
    /// The answer to a ping.
    Pong,
    /// The request failed.
    Err(ErrCode),
}

/// The parts of a znode's stat the recipes read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The zxid that created the node (the fencing token).
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
    /// The `xid` of the request answered.
    pub xid: u64,
    /// The last zxid the server had applied.
    pub zxid: Zxid,
    /// The message's position on this connection, from 1.
    pub seq: u64,
    /// What the request got.
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
    /// The node was created.
    NodeCreated,
    /// The node was deleted.
    NodeDeleted,
}

/// A one-shot watch firing, sent to the watching session's client (`seq` as in [`Response`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WatchEvent {
    /// The watched node.
    pub path: ZPath,
    /// What happened to it.
    pub kind: EventType,
    /// The message's position on this connection, from 1.
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
    /// The session to resume, or 0 for a new one.
    pub session: SessionId,
    /// The session timeout the client asks for, milliseconds.
    pub timeout_ms: u64,
    /// The highest zxid the client has seen.
    pub last_zxid: Zxid,
    /// The client's connection attempt number (replies to older attempts are ignored).
    pub attempt: u64,
}

/// The server's answer to a connect: the session and the negotiated timeout, or `expired`
/// (ZooKeeper answers a reconnect on a dead session with timeout 0), or a refusal (the server
/// is behind the client or not serving).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ConnectResponse {
    /// The connection is up, on this session.
    Connected {
        /// The session (new, or the one resumed).
        session: SessionId,
        /// The negotiated session timeout, milliseconds.
        timeout_ms: u64,
        /// The connect attempt answered.
        attempt: u64,
    },
    /// The session to resume is gone.
    Expired {
        /// The session.
        session: SessionId,
        /// The connect attempt answered.
        attempt: u64,
    },
    /// The server will not take the connection.
    Refused {
        /// The connect attempt answered.
        attempt: u64,
    },
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
    /// The session whose connection is closed.
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
    /// The session to check.
    pub session: SessionId,
    /// The session timeout the client asked for, milliseconds (the leader does not use it).
    pub timeout_ms: u64,
    /// The follower's handle for the waiting connection.
    pub ticket: u64,
}

/// Leader → follower: the answer to [`Revalidate`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RevalidateReply {
    /// The session checked.
    pub session: SessionId,
    /// The follower's handle, from the [`Revalidate`].
    pub ticket: u64,
    /// Whether the session lives (the check also touched it).
    pub valid: bool,
}

/// Leader → followers every `tick_ms / 2`: ZooKeeper's learner PING.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LeaderPing {
    /// The leader's term.
    pub term: u64,
}

/// Follower → leader: the sessions its clients touched since the last ping, with their timeouts
/// (ZooKeeper's learner touch table, sent in the PING reply), and how many writes it has
/// forwarded on its current link to the leader (so a lost forward shows as a broken link).
#[derive(Clone, PartialEq, Eq)]
pub struct PingTouches {
    /// The `term` of the ping answered.
    pub term: u64,
    /// The sessions touched, each with its timeout in milliseconds.
    pub touches: Vec<(SessionId, u64)>,
    /// The follower's current link to the leader.
    pub stream: u64,
    /// How many writes it has forwarded on that link.
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
    /// The link that lost a message.
    pub stream: u64,
}

/// A server's handle on a client request it forwarded or proposed: who to answer after the
/// transaction is applied.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// The server that took the client's request and answers it.
    pub server: NodeId,
    /// The server's incarnation (drawn at each start), so a restarted server never answers for
    /// a request its earlier life accepted.
    pub incarnation: u32,
    /// That server's handle on the waiting request.
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
    /// `createSession`: the new session's id is this transaction's zxid.
    CreateSession {
        /// The negotiated session timeout, milliseconds.
        timeout_ms: u64,
    },
    /// Session close or expiry: deletes the session's ephemeral nodes.
    CloseSession {
        /// The session.
        session: SessionId,
    },
    /// `create`: an ephemeral node owned by `session`.
    Create {
        /// The session asking, which will own the node.
        session: SessionId,
        /// What to create.
        spec: CreateSpec,
    },
    /// `delete`.
    Delete {
        /// The session asking.
        session: SessionId,
        /// The node to delete.
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
    /// The transaction.
    pub txn: Txn,
    /// Where the client waits; `None` for the leader's own `closeSession` of an expired session.
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
    /// The write, with its origin.
    pub command: Command,
    /// The follower's current link to the leader (its incarnation high, a counter low).
    pub stream: u64,
    /// The write's number on the link, from 1.
    pub seq: u64,
}

impl fmt::Debug for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FORWARD {:?} @{}", self.command, self.seq)
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the model: client ↔ server, server ↔ server, and the replicated log's.
    #[derive(Clone)]
    pub enum ZkMsg: Fingerprint {
        /// The replicated log between servers (standing in for ZAB's own traffic).
        Consensus(ConsensusMsg<Command>),
        /// Client → server: an operation on the session.
        Request(Request),
        /// Server → client: the answer.
        Response(Response),
        /// Server → client: a watch fired.
        WatchEvent(WatchEvent),
        /// Client → server: connect.
        ConnectRequest(ConnectRequest),
        /// Server → client: the connect's answer.
        ConnectResponse(ConnectResponse),
        /// Server → client: the connection is closed.
        Disconnect(Disconnect),
        /// Follower → leader: does a reconnecting client's session live?
        Revalidate(Revalidate),
        /// Leader → follower: the answer.
        RevalidateReply(RevalidateReply),
        /// Leader → followers: the learner ping.
        LeaderPing(LeaderPing),
        /// Follower → leader: the ping's answer, with session touches.
        PingTouches(PingTouches),
        /// Leader → follower: your link lost a forward.
        Resync(Resync),
        /// Follower → leader: a client's write to propose.
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
    SessionExpiry {
        /// The leadership generation that set it.
        leader_gen: u64,
    },
    /// Leader: time to ping the followers (every `tick_ms / 2`).
    LeaderPing {
        /// The leadership generation that set it.
        leader_gen: u64,
    },
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
    Check {
        /// The connect attempt whose connection it watches.
        attempt: u64,
    },
    /// Connect attempt `attempt` got no answer within its share of the timeout.
    ConnectTimeout {
        /// The connect attempt.
        attempt: u64,
    },
    /// The sleep before the next connect attempt is over.
    Reconnect {
        /// The connect attempt that failed.
        attempt: u64,
    },
    /// Curator: SUSPENDED (number `suspended_gen`) has lasted a whole session timeout: LOST.
    Lost {
        /// The suspension it ends.
        suspended_gen: u64,
    },
    /// The operation queued as `serial` waited Curator's connection timeout for a connection.
    QueueDeadline {
        /// The queued operation's serial.
        serial: u64,
    },
}

/// A lock client's timers: its connection's, and the recipes' retry back-offs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// A timer of the client's connection.
    Connection(ConnTimer),
    /// The back-off before redoing lock `key`'s step (its generation `gen`) is over.
    Backoff {
        /// The lock.
        key: LockKey,
        /// The step's generation.
        gen: u64,
    },
    /// A connection state queued for the listener thread reaches it (`state_delivery =
    /// "threads"`).
    StateDelivery {
        /// The state's number.
        seq: u64,
    },
}

impl From<ConnTimer> for ClientTimer {
    fn from(t: ConnTimer) -> Self {
        ClientTimer::Connection(t)
    }
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the model, by the kind of process that sets it.
    #[derive(Clone)]
    pub enum ZkTimer: Fingerprint {
        /// An ensemble server's timer.
        Server(ServerTimer),
        /// A lock client's timer.
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
