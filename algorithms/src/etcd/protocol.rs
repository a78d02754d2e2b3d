//! What etcd's nodes say to each other: the client's gRPC calls (KV, Lease, Watch) reduced to
//! the operations clientv3/concurrency's Session and Mutex use, the server's answers, the
//! commands that go through the Raft log, and the server-to-server forwarding (a follower hands
//! proposals, read-index requests and lease renewals to the leader, as etcd's raft `MsgProp`,
//! `MsgReadIndex` and the `/leases` peer handler do). Also the model's wire and timer types:
//! [`EtcdMsg`] (every message above, and Raft's), [`ServerTimer`], [`ClientTimer`] and their
//! wrapper [`EtcdTimer`].

use std::fmt;
use std::sync::Arc;

use locksim_simulator::process::{NodeId, Protocol};
use locksim_simulator::time::Nanos;

use super::Etcd;
use crate::consensus::{ConsensusMsg, ConsensusTimer};

/// A lease id (the log index of the entry that granted it: unique and the same on every member).
/// Traces print it in decimal; the mutex key carries it in hex, as `mutex.go` does.
pub type LeaseId = u64;
/// An MVCC revision (etcd's main revision; the store starts at 1).
pub type Revision = u64;

/// One client call. Keys are shared strings: the client keeps each call to resend it, and the
/// server turns a write into a log entry, so a call is cloned often and its keys never change.
#[derive(Clone, PartialEq)]
pub enum Op {
    /// `Lease.Grant(ttl)` (Session start).
    LeaseGrant {
        /// The TTL asked for (`lease_ttl_ms`).
        ttl_ns: Nanos,
    },
    /// One request on the `LeaseKeepAlive` stream.
    KeepAlive {
        /// The lease to renew.
        lease: LeaseId,
    },
    /// Mutex.Lock's transaction: `If(CreateRevision(my_key) = 0) Then(Put(my_key, lease),
    /// Get(prefix, first create)) Else(Get(my_key), Get(prefix, first create))`.
    MutexTxn {
        /// The session's own key, `<prefix><lease hex>`.
        my_key: Arc<str>,
        /// The mutex's prefix, `/lock/<key>/`.
        prefix: Arc<str>,
        /// The session's lease, attached to `my_key` by the put.
        lease: LeaseId,
    },
    /// `Get(key)` (the recheck after waiting).
    Get {
        /// The key to read.
        key: Arc<str>,
    },
    /// waitDeletes' `Get(prefix, WithLastCreate, WithMaxCreateRev(max))`: the key under `prefix`
    /// with the highest create revision not above `max_create_rev`.
    LastCreateBelow {
        /// The mutex's prefix.
        prefix: Arc<str>,
        /// The highest create revision to consider (the waiter's own, minus one).
        max_create_rev: Revision,
    },
    /// `Delete(key)` (Unlock).
    Delete {
        /// The key to delete.
        key: Arc<str>,
    },
    /// `Watch(key, WithRev(start_rev))` on this member.
    Watch {
        /// The client's id for the watch (its events carry it).
        watch_id: u64,
        /// The key to watch.
        key: Arc<str>,
        /// The first revision whose changes are reported (past ones from the history).
        start_rev: Revision,
    },
    /// Cancels a watch.
    WatchCancel {
        /// The watch to cancel.
        watch_id: u64,
    },
}

impl Op {
    /// Whether clientv3 may resend it elsewhere after a failure (reads and keep-alives are
    /// repeatable; a mutation whose request may have reached a server is not retried).
    pub fn repeatable(&self) -> bool {
        matches!(self, Op::Get { .. } | Op::LastCreateBelow { .. } | Op::KeepAlive { .. })
    }
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::LeaseGrant { ttl_ns } => write!(f, "LeaseGrant ttl={}ms", ttl_ns / 1_000_000),
            Op::KeepAlive { lease } => write!(f, "KeepAlive {lease}"),
            Op::MutexTxn { my_key, .. } => write!(f, "Txn put-if-absent {my_key} + first-create"),
            Op::Get { key } => write!(f, "Get {key}"),
            Op::LastCreateBelow { prefix, max_create_rev } => {
                write!(f, "Get {prefix} last-create max-create-rev={max_create_rev}")
            }
            Op::Delete { key } => write!(f, "Delete {key}"),
            Op::Watch { watch_id, key, start_rev } => write!(f, "Watch#{watch_id} {key} from rev {start_rev}"),
            Op::WatchCancel { watch_id } => write!(f, "WatchCancel#{watch_id}"),
        }
    }
}

/// A client request to a member.
#[derive(Clone, PartialEq)]
pub struct Request {
    /// The client's id for the call, fresh for each call (a resent watch request repeats its own);
    /// the answer carries it.
    pub id: u64,
    /// The call.
    pub op: Op,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "req#{} {:?}", self.id, self.op)
    }
}

/// A key as a range response shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyInfo {
    /// The key.
    pub key: String,
    /// The revision that created it.
    pub create_rev: Revision,
    /// The lease it is attached to.
    pub lease: LeaseId,
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `Lease.Grant`'s answer: the new lease.
    LeaseGranted {
        /// The lease's id (the log index of its grant).
        lease: LeaseId,
        /// Its TTL: the one asked for, raised to the member's minimum.
        ttl_ns: Nanos,
    },
    /// `ttl_ns` 0: the lease is gone (clientv3 closes the keep-alive).
    KeepAlive {
        /// The lease renewed.
        lease: LeaseId,
        /// The TTL it was renewed for, or 0.
        ttl_ns: Nanos,
    },
    /// `my_create_rev`: the create revision of the own key (the put's revision when it
    /// succeeded); `owner`: the key with the lowest create revision under the prefix.
    Txn {
        /// Whether the put happened (the own key did not exist yet).
        succeeded: bool,
        /// The create revision of the own key.
        my_create_rev: Revision,
        /// The key with the lowest create revision under the prefix, if any.
        owner: Option<KeyInfo>,
    },
    /// A read's answer (`Get`, or waitDeletes' `Get` of the last key created below).
    Range {
        /// The key found, if any.
        kv: Option<KeyInfo>,
    },
    /// A delete's answer (`Delete`, or a lease revocation's).
    Deleted {
        /// How many keys were deleted.
        count: u64,
    },
}

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdError {
    /// The member knows no leader (raft dropped the proposal, read index impossible).
    NoLeader,
    /// `etcdserver: requested lease not found` (a put under a revoked lease).
    LeaseNotFound,
    /// `etcdserver: request timed out`: the member's `ReqTimeout` (5 s + 2 × election timeout)
    /// passed before the proposal or read completed (only with `call_deadline = "none"`).
    Timeout,
    /// Client side only: the connection closed under the call (gRPC `Unavailable`, "transport is
    /// closing"): the member's process died.
    ConnectionClosed,
}

/// A member's answer to a [`Request`]; `header_rev` is the member's store revision when it
/// answered (etcd's response header).
#[derive(Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered.
    pub id: u64,
    /// The member's store revision when it answered.
    pub header_rev: Revision,
    /// The answer, or why the call failed.
    pub result: Result<Reply, EtcdError>,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(r) => write!(f, "resp#{} rev={} {:?}", self.id, self.header_rev, r),
            Err(e) => write!(f, "resp#{} rev={} error {:?}", self.id, self.header_rev, e),
        }
    }
}

/// A watch event pushed to the client on its watch stream. `seq` numbers the watch's events:
/// the stream is a TCP connection in etcd, which never loses a message silently, so the model
/// stands in for TCP's retransmission: the member resends an event until the client acknowledges
/// it ([`WatchAck`]), and the client ignores a repeated `seq`.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    /// The client's id for the watch.
    pub watch_id: u64,
    /// The event's number within the watch, from 1.
    pub seq: u64,
    /// The watched key.
    pub key: String,
    /// The revision of the change.
    pub rev: Revision,
    /// Whether the change deleted the key (else it put it).
    pub deleted: bool,
}

/// The member registered a watch (etcd's `created` watch response); the client resends its
/// watch request until it gets this.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchCreated {
    /// The client's id for the watch.
    pub watch_id: u64,
}

/// The client's acknowledgement of a watch's events up to `seq` (TCP's ack, not an etcd message).
#[derive(Clone, Debug, PartialEq)]
pub struct WatchAck {
    /// The client's id for the watch.
    pub watch_id: u64,
    /// The `seq` of the event received; the member drops every event up to it from its resends.
    pub seq: u64,
}

/// The client gave up on call `id` (its deadline passed, or it moved to another member): gRPC
/// cancels the stream with an HTTP/2 `RST_STREAM` (`CANCEL`) on the same connection (grpc-go
/// `internal/transport/http2_client.go`, `closeStream` → `cleanupStream` with `rst: true`). It
/// travels behind the request on the ordered connection; the member drops the request if its
/// handler has not started it yet (a proposal already handed to Raft cannot be taken back).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamCancel {
    /// The id of the request given up.
    pub id: u64,
}

/// A gRPC (HTTP/2) keepalive ping on the client's connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Ping {
    /// The ping's number (the client's counter, never reused).
    pub seq: u64,
}

/// The transport's answer to a [`Ping`]; `incarnation` changes when the member restarted (a new
/// process: the old connection is gone, and with it the watches on it).
#[derive(Clone, Debug, PartialEq)]
pub struct Pong {
    /// The `seq` of the ping answered.
    pub seq: u64,
    /// The member's incarnation (bumped at each crash).
    pub incarnation: u64,
}

/// Who is waiting for a log entry's result: (member that proposed it, its request tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// The member that proposed the entry (the one that answers the client).
    pub server: NodeId,
    /// The proposer's tag for the request (its incarnation in the high bits).
    pub tag: u64,
}

/// What goes through the Raft log.
#[derive(Clone, PartialEq)]
pub struct Cmd {
    /// Who waits for the result; `None` for the leader's own lease revocations.
    pub origin: Option<Origin>,
    /// What the entry does.
    pub kind: CmdKind,
}

/// The keys are shared strings: a log entry is cloned into every AppendEntries that carries it
/// (and a leader resends unacknowledged entries with every heartbeat), so a clone must not copy
/// them.
#[derive(Clone, Debug, PartialEq)]
pub enum CmdKind {
    /// `Lease.Grant`: the entry's log index becomes the lease's id.
    LeaseGrant {
        /// The TTL asked for (raised to the member's minimum when applied).
        ttl_ns: Nanos,
    },
    /// Revokes a lease and deletes its keys (the leader proposes it when the lease expires).
    LeaseRevoke {
        /// The lease to revoke.
        lease: LeaseId,
    },
    /// Mutex.Lock's transaction (see [`Op::MutexTxn`]).
    MutexTxn {
        /// The session's own key, `<prefix><lease hex>`.
        my_key: Arc<str>,
        /// The mutex's prefix.
        prefix: Arc<str>,
        /// The session's lease, attached to `my_key` by the put.
        lease: LeaseId,
    },
    /// `Delete(key)` (Unlock).
    Delete {
        /// The key to delete.
        key: Arc<str>,
    },
}

impl fmt::Debug for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CmdKind::LeaseGrant { ttl_ns } => write!(f, "LeaseGrant({}ms)", ttl_ns / 1_000_000),
            CmdKind::LeaseRevoke { lease } => write!(f, "LeaseRevoke({lease})"),
            CmdKind::MutexTxn { my_key, .. } => write!(f, "Txn({my_key})"),
            CmdKind::Delete { key } => write!(f, "Delete({key})"),
        }
    }
}

/// Member-to-member traffic besides Raft itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Peer {
    /// A follower's proposal handed to the leader (raft `MsgProp`).
    Propose(Cmd),
    /// A follower asks the leader for a read index (raft `MsgReadIndex`).
    ReadIndex {
        /// The follower's id for the read (echoed in the reply).
        rid: u64,
    },
    /// The leader's answer: `None` when it could not confirm its leadership.
    ReadIndexReply {
        /// The `rid` of the request answered.
        rid: u64,
        /// The read index: the follower serves the read once it has applied this far.
        index: Option<u64>,
    },
    /// A follower forwards a keep-alive to the leader (etcd's `/leases` peer handler).
    Renew {
        /// The follower's id for the renewal (echoed in the reply).
        rid: u64,
        /// The lease to renew.
        lease: LeaseId,
    },
    /// The leader's answer to a [`Peer::Renew`].
    RenewReply {
        /// The `rid` of the renewal answered.
        rid: u64,
        /// The lease.
        lease: LeaseId,
        /// The TTL it was renewed for, or 0 when it is gone.
        ttl_ns: Nanos,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every message between etcd's nodes.
    #[derive(Clone)]
    pub enum EtcdMsg: Fingerprint {
        /// Raft between members ([`crate::consensus`]).
        Consensus(ConsensusMsg<Cmd>),
        /// Member-to-member forwarding besides Raft.
        Peer(Peer),
        /// Client to member.
        Request(Request),
        /// Client to member: a watch event arrived.
        WatchAck(WatchAck),
        /// Client to member: the client gave up on a call (HTTP/2 `RST_STREAM`).
        StreamCancel(StreamCancel),
        /// Client to member's transport: a gRPC keepalive ping.
        Ping(Ping),
        /// Member to client.
        Response(Response),
        /// Member to client: a change on a watched key.
        WatchEvent(WatchEvent),
        /// Member to client: a watch is registered.
        WatchCreated(WatchCreated),
        /// Member's transport to client: the answer to a ping.
        Pong(Pong),
    }
}

/// A member's own timers (its Raft replica's is [`ConsensusTimer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The primary lessor looks for expired leases (every `lease_check_ms`).
    LeaseCheck,
    /// The watch streams resend unacknowledged events.
    Retransmit,
    /// The gRPC server's handlers start the requests read from the connections (see
    /// [`StreamCancel`]).
    Dispatch,
    /// A proposal this member made for a client has waited `ReqTimeout` (only with
    /// `call_deadline = "none"`): it answers `etcdserver: request timed out`.
    ReqTimeout {
        /// The proposal's tag.
        tag: u64,
    },
    /// The same for a linearizable read still waiting for its read index.
    ReadTimeout {
        /// The read's id.
        rid: u64,
    },
}

/// The client library's timers. The data says which loop, call or watch set it: a timer that
/// outlived its session, call or watch is ignored when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The keep-alive send loop of session generation `gen` (every 500 ms).
    KeepAliveSend {
        /// The session generation that set it.
        gen: u64,
    },
    /// The keep-alive deadline loop of session generation `gen` (every second).
    KeepAliveDeadline {
        /// The session generation that set it.
        gen: u64,
    },
    /// Call `id` went unanswered for the request timeout.
    CallTimeout {
        /// The call's request id.
        id: u64,
    },
    /// Call `id`'s backoff before it is resent is over.
    Retry {
        /// The call's request id.
        id: u64,
    },
    /// The gRPC keepalive ping (every `keepalive_time_ms`, when set).
    Ping,
    /// `session_done = "goroutines"`: session generation `gen`'s end reaches the application
    /// (`Session.Done()` closes, `session_done_ms` after the lessor closed the keep-alive).
    SessionDone {
        /// The session generation that ended.
        gen: u64,
    },
    /// Watch `watch_id` was not confirmed yet: resend its request.
    WatchResend {
        /// The client's id for the watch.
        watch_id: u64,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every timer etcd's nodes set.
    #[derive(Clone)]
    pub enum EtcdTimer: Fingerprint {
        /// A member's Raft replica.
        Consensus(ConsensusTimer),
        /// A member's own timer.
        Server(ServerTimer),
        /// The client library's timer.
        Client(ClientTimer),
    }
}

impl Protocol for Etcd {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    fn msg_fingerprint(msg: &EtcdMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &EtcdTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}
