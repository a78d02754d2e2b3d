//! The messages of the redis model: client commands and replies, pub/sub, the replication stream
//! between a primary and its replicas, and Sentinel's pings, votes, hellos and client events; the
//! one enum that carries them all ([`RedisMsg`]); and every process's timers ([`ServerTimer`],
//! [`SentinelTimer`], [`ClientTimer`]) under the model's one timer enum ([`RedisTimer`]).
//! Their `Debug` text is what the trace prints, so it is kept short.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::{NodeId, Protocol};

use super::keyspace::{Keyspace, Reply, WriteOp};
use super::Redis;

/// A command from a client library to a Redis server.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `SET lock value NX PX px_ms` (+ `INCR` of the token key in the same script when `fence`).
    SetNxPx { key: LockKey, value: u64, px_ms: u64, fence: bool },
    /// The compare-and-delete unlock script.
    DelIfEquals { key: LockKey, value: u64 },
    /// `DEL lock`; `publish` adds Redisson `forceUnlock`'s unlock message.
    Del { key: LockKey, publish: bool },
    /// Redisson's lock script (fenced: RedissonFencedLock's).
    HLock { key: LockKey, owner: u64, lease_ms: u64, fence: bool },
    /// The watchdog's renewal script.
    HRenew { key: LockKey, owner: u64, lease_ms: u64 },
    /// Redisson's unlock script.
    HUnlock { key: LockKey, owner: u64, lease_ms: u64 },
    /// `SUBSCRIBE redisson_lock__channel:{lock}`.
    Subscribe { key: LockKey },
    /// `UNSUBSCRIBE …`.
    Unsubscribe { key: LockKey },
}

/// `WAIT numreplicas timeout` pipelined after the command (Redisson's `syncSlaves` batch option):
/// the reply is held until that many replicas acknowledged the command's write, or the timeout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitSpec {
    pub replicas: u32,
    pub timeout_ms: u64,
}

/// A request on the client's connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: u64,
    pub cmd: Command,
    pub wait: Option<WaitSpec>,
}

/// What a server answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Reply(Reply),
    Subscribed,
    /// `-READONLY You can't write against a read only replica.`
    ReadOnly,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub id: u64,
    pub answer: Answer,
    /// With a pipelined `WAIT`: how many replicas acknowledged.
    pub synced: Option<u32>,
}

/// A pub/sub message on the lock's unlock channel (Redisson's `UNLOCK_MESSAGE`).
#[derive(Clone, Debug, PartialEq)]
pub struct UnlockMessage {
    pub key: LockKey,
}

// ----- replication ------------------------------------------------------------------------------

/// `PSYNC`: a replica asks its primary for the stream. The model always answers with a full
/// resynchronisation (the replica's data becomes the primary's snapshot).
#[derive(Clone, Debug, PartialEq)]
pub struct Psync;

/// `+FULLRESYNC` and the RDB: the primary's whole keyspace at `offset`.
#[derive(Clone, PartialEq)]
pub struct FullSync {
    /// The primary's replication id (new at every start as primary and at every promotion).
    pub repl_id: u64,
    pub offset: u64,
    pub data: Keyspace,
}

impl fmt::Debug for FullSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FullSync {{ repl_id: {:04x}, offset: {}, keys: {} }}",
            self.repl_id & 0xffff,
            self.offset,
            self.data.len()
        )
    }
}

/// A stretch of the replication stream: `ops[i]` has offset `first_offset + i`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplBatch {
    pub repl_id: u64,
    pub first_offset: u64,
    pub ops: Vec<WriteOp>,
}

/// `REPLCONF ACK offset`: sent after applying a batch and every second.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplAck {
    /// The replication id this replica follows (a restarted primary does not know it: resync).
    pub repl_id: u64,
    pub offset: u64,
}

/// The primary does not know this replica's stream (it restarted, or the replica was never
/// synced): start over with `PSYNC`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResyncNeeded;

// ----- Sentinel ----------------------------------------------------------------------------------

/// A Sentinel's periodic `PING` (the model folds `INFO` into its reply).
#[derive(Clone, Debug, PartialEq)]
pub struct SentinelPing {
    pub seq: u64,
}

/// The server's role as `INFO replication` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Primary,
    Replica { of: NodeId },
}

/// `PONG` plus the fields of `INFO` a Sentinel uses.
#[derive(Clone, Debug, PartialEq)]
pub struct PingReply {
    pub seq: u64,
    pub role: Role,
    /// `master_repl_offset` on a primary, the processed offset on a replica.
    pub offset: u64,
    pub run_id: u64,
}

/// `REPLICAOF host port` (`Some`) or `REPLICAOF NO ONE` (`None`), with the configuration epoch
/// the Sentinel acts for, followed by `CONFIG REWRITE` (so the role survives a restart).
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaOf {
    pub primary: Option<NodeId>,
    pub epoch: u64,
}

/// `SENTINEL is-master-down-by-addr`: asks another Sentinel whether it sees the primary down,
/// and with a candidate, for its vote in `epoch`.
#[derive(Clone, Debug, PartialEq)]
pub struct IsMasterDownReq {
    pub primary: NodeId,
    pub epoch: u64,
    pub candidate: Option<NodeId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct IsMasterDownReply {
    pub primary: NodeId,
    pub down: bool,
    /// The Sentinel this one voted for, and in which epoch.
    pub leader: Option<(NodeId, u64)>,
}

/// The hello message Sentinels exchange (`__sentinel__:hello`): the primary and its config epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    pub current_epoch: u64,
    pub config_epoch: u64,
    pub primary: NodeId,
}

/// Sentinel events a client library follows (Redisson subscribes to them on every Sentinel).
#[derive(Clone, Debug, PartialEq)]
pub enum SentinelEvent {
    /// `+switch-master`.
    SwitchMaster { config_epoch: u64, primary: NodeId },
    /// `+sdown` on a replica.
    ReplicaDown { node: NodeId },
    /// `-sdown` on a replica.
    ReplicaUp { node: NodeId },
}

/// `SENTINEL get-master-addr-by-name`.
#[derive(Clone, Debug, PartialEq)]
pub struct GetMasterAddr;

#[derive(Clone, Debug, PartialEq)]
pub struct MasterAddr {
    pub config_epoch: u64,
    pub primary: NodeId,
}

// ----- the model's protocol ----------------------------------------------------------------------

/// Defines the model's one message enum: a variant per message struct, named after it, a `From`
/// impl for each (so `ctx.send(to, Psync)` works), and a `Debug` that prints the message itself
/// (the trace reads as the protocol does, without the enum's wrapping).
macro_rules! messages {
    ($(#[$meta:meta])* $name:ident { $($variant:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq)]
        pub enum $name {
            $($variant($variant),)*
        }

        $(
            impl From<$variant> for $name {
                fn from(m: $variant) -> Self {
                    $name::$variant(m)
                }
            }
        )*

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($name::$variant(m) => m.fmt(f),)*
                }
            }
        }
    };
}

messages! {
    /// Every message of the redis model, whoever sends it.
    RedisMsg {
        // Client ↔ server.
        Request,
        Response,
        UnlockMessage,
        // Replication.
        Psync,
        FullSync,
        ReplBatch,
        ReplAck,
        ResyncNeeded,
        // Sentinel ↔ server.
        SentinelPing,
        PingReply,
        ReplicaOf,
        // Sentinel ↔ Sentinel.
        IsMasterDownReq,
        IsMasterDownReply,
        Hello,
        // Sentinel ↔ client.
        SentinelEvent,
        GetMasterAddr,
        MasterAddr,
    }
}

/// A Redis server's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The 100 ms cron (`hz 10`): active expiry on a primary.
    Cron,
    /// `appendfsync everysec`: the AOF catches up with the keyspace.
    Fsync,
    /// The head of the replication stream's output buffer is due to leave.
    ReplFlush,
    /// `replicationCron`: a replica acknowledges its offset, or asks for `PSYNC` again.
    ReplCron,
    /// The timeout of the pending `WAIT` number `n`.
    WaitTimeout { n: u64 },
}

/// A Sentinel's timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SentinelTimer {
    /// `sentinelTimer`, at a random 10–19 Hz.
    Tick,
}

/// The lock library's timers. `seq` is the generation of the wait or watchdog that set the
/// timer: one that fires after its wait was replaced or ended finds another generation and does
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// Request `id` got no answer within the command timeout.
    RequestTimeout { id: u64 },
    /// Plain pattern: the `retry_ms` sleep after a refused `SET NX` is over.
    Retry { key: LockKey, seq: u32 },
    /// Redisson: the lock's TTL ran out with no unlock message.
    WaitUnlock { key: LockKey, seq: u32 },
    /// Redisson's watchdog: time to renew the lease.
    Renew { key: LockKey, seq: u32 },
}

/// Every timer of the redis model: the process kind's own enum.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RedisTimer {
    Server(ServerTimer),
    Sentinel(SentinelTimer),
    Client(ClientTimer),
    /// Set only by a hand-built harness that drives the lock library at scripted times (the
    /// engine hands a service node its model's timers only, so a scripted client node needs a
    /// timer of this type): `step` is the script's step. No process of the model sets one, and
    /// each ignores it.
    Script {
        step: usize,
    },
}

impl From<ServerTimer> for RedisTimer {
    fn from(t: ServerTimer) -> Self {
        RedisTimer::Server(t)
    }
}

impl From<SentinelTimer> for RedisTimer {
    fn from(t: SentinelTimer) -> Self {
        RedisTimer::Sentinel(t)
    }
}

impl From<ClientTimer> for RedisTimer {
    fn from(t: ClientTimer) -> Self {
        RedisTimer::Client(t)
    }
}

impl fmt::Debug for RedisTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisTimer::Server(t) => t.fmt(f),
            RedisTimer::Sentinel(t) => t.fmt(f),
            RedisTimer::Client(t) => t.fmt(f),
            RedisTimer::Script { step } => write!(f, "script step {step}"),
        }
    }
}

impl Protocol for Redis {
    type Msg = RedisMsg;
    type Timer = RedisTimer;
}
