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
    SetNxPx {
        /// The lock.
        key: LockKey,
        /// This attempt's random value.
        value: u64,
        /// The TTL, milliseconds.
        px_ms: u64,
        /// Also `INCR` the lock's token key, in the same script.
        fence: bool,
    },
    /// `SETNX lock value` (+ `INCR` of the token key in the same script when `fence`): no expiry.
    SetNx {
        /// The lock.
        key: LockKey,
        /// This attempt's random value.
        value: u64,
        /// Also `INCR` the lock's token key, in the same script.
        fence: bool,
    },
    /// `PEXPIRE lock ttl_ms`, sent after a `SETNX` that succeeded.
    PExpire {
        /// The lock.
        key: LockKey,
        /// The TTL, milliseconds.
        ttl_ms: u64,
    },
    /// `GET lock`: the first half of the GET-then-DEL unlock.
    Get {
        /// The lock.
        key: LockKey,
    },
    /// The compare-and-delete unlock script.
    DelIfEquals {
        /// The lock.
        key: LockKey,
        /// The value the holder set: the key is deleted only if it still has it.
        value: u64,
    },
    /// `DEL lock`; `publish` adds Redisson `forceUnlock`'s unlock message.
    Del {
        /// The lock.
        key: LockKey,
        /// Publish the unlock message if a key was deleted.
        publish: bool,
    },
    /// Redisson's lock script (fenced: RedissonFencedLock's).
    HLock {
        /// The lock.
        key: LockKey,
        /// The Redisson owner id: the hash field (drawn at each client start).
        owner: u64,
        /// The lease to set, milliseconds.
        lease_ms: u64,
        /// RedissonFencedLock: also `INCR` the lock's token key.
        fence: bool,
    },
    /// The watchdog's renewal script.
    HRenew {
        /// The lock.
        key: LockKey,
        /// The Redisson owner id.
        owner: u64,
        /// The new lease, milliseconds.
        lease_ms: u64,
    },
    /// Redisson's unlock script.
    HUnlock {
        /// The lock.
        key: LockKey,
        /// The Redisson owner id.
        owner: u64,
        /// The lease re-armed while the hold count stays above 0, milliseconds.
        lease_ms: u64,
    },
    /// `SUBSCRIBE redisson_lock__channel:{lock}`.
    Subscribe {
        /// The lock whose channel to join.
        key: LockKey,
    },
    /// `UNSUBSCRIBE …`.
    Unsubscribe {
        /// The lock whose channel to leave.
        key: LockKey,
    },
    /// `INFO REPLICATION`, read for `connected_slaves` (Redisson 3.18.1+ counts the replicas to
    /// `WAIT` for this way: `replica_count = "info_…"`); answered `Int(n)` by any server.
    InfoReplication,
}

/// `WAIT numreplicas timeout` pipelined after the command (Redisson's `syncSlaves` batch option):
/// the reply is held until that many replicas acknowledged the command's write, or the timeout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitSpec {
    /// `numreplicas`: how many replicas must acknowledge.
    pub replicas: u32,
    /// `timeout`, milliseconds.
    pub timeout_ms: u64,
}

/// A request on the client's connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The client's id for the request, echoed in the response.
    pub id: u64,
    /// The command.
    pub cmd: Command,
    /// The `WAIT` pipelined after the command, if any.
    pub wait: Option<WaitSpec>,
}

/// What a server answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The command's reply.
    Reply(Reply),
    /// `SUBSCRIBE` or `UNSUBSCRIBE` done.
    Subscribed,
    /// `-READONLY You can't write against a read only replica.`
    ReadOnly,
    /// `-NOREPLICAS Not enough good replicas to write.` (`min-replicas-to-write`).
    NoReplicas,
}

/// A server's answer to a [`Request`].
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id of the request answered.
    pub id: u64,
    /// What the server answered.
    pub answer: Answer,
    /// With a pipelined `WAIT`: how many replicas acknowledged.
    pub synced: Option<u32>,
}

/// A pub/sub message on the lock's unlock channel (Redisson's `UNLOCK_MESSAGE`).
#[derive(Clone, Debug, PartialEq)]
pub struct UnlockMessage {
    /// The lock that was freed.
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
    /// The primary's replication offset the snapshot is at.
    pub offset: u64,
    /// The primary's keyspace.
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
    /// The primary's replication id.
    pub repl_id: u64,
    /// The offset of `ops[0]`.
    pub first_offset: u64,
    /// The writes, in stream order.
    pub ops: Vec<WriteOp>,
}

/// `REPLCONF ACK offset`: sent after applying a batch and every second.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplAck {
    /// The replication id this replica follows (a restarted primary does not know it: resync).
    pub repl_id: u64,
    /// The last offset the replica has applied.
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
    /// The ping's number (the Sentinel's counter, never reused, even across its restarts).
    pub seq: u64,
}

/// The server's role as `INFO replication` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `role:master`.
    Primary,
    /// `role:slave`.
    Replica {
        /// The primary it replicates.
        of: NodeId,
    },
}

/// `PONG` plus the fields of `INFO` a Sentinel uses.
#[derive(Clone, Debug, PartialEq)]
pub struct PingReply {
    /// The `seq` of the ping answered.
    pub seq: u64,
    /// The server's role.
    pub role: Role,
    /// `master_repl_offset` on a primary, the processed offset on a replica.
    pub offset: u64,
    /// The server's run id, random per process start (the smaller wins a tie between replicas).
    pub run_id: u64,
}

/// `REPLICAOF host port` (`Some`) or `REPLICAOF NO ONE` (`None`), with the configuration epoch
/// the Sentinel acts for, followed by `CONFIG REWRITE` (so the role survives a restart).
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaOf {
    /// `Some(primary)`: replicate it; `None`: become a primary.
    pub primary: Option<NodeId>,
    /// The configuration epoch the Sentinel acts for (the server keeps the highest it has seen).
    pub epoch: u64,
}

/// `SENTINEL is-master-down-by-addr`: asks another Sentinel whether it sees the primary down,
/// and with a candidate, for its vote in `epoch`.
#[derive(Clone, Debug, PartialEq)]
pub struct IsMasterDownReq {
    /// The primary the asker watches.
    pub primary: NodeId,
    /// The asker's current epoch.
    pub epoch: u64,
    /// The asker itself when it asks for a vote (it has a failover under way).
    pub candidate: Option<NodeId>,
}

/// The answer to an [`IsMasterDownReq`].
#[derive(Clone, Debug, PartialEq)]
pub struct IsMasterDownReply {
    /// The primary asked about.
    pub primary: NodeId,
    /// Whether that primary is this Sentinel's too and it sees it subjectively down.
    pub down: bool,
    /// The Sentinel this one voted for, and in which epoch.
    pub leader: Option<(NodeId, u64)>,
}

/// The hello message Sentinels exchange (`__sentinel__:hello`): the primary and its config epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    /// The sender's current epoch.
    pub current_epoch: u64,
    /// The configuration epoch of `primary`.
    pub config_epoch: u64,
    /// The primary the sender follows.
    pub primary: NodeId,
}

/// Sentinel events a client library follows (Redisson subscribes to them on every Sentinel).
#[derive(Clone, Debug, PartialEq)]
pub enum SentinelEvent {
    /// `+switch-master`.
    SwitchMaster {
        /// The new configuration's epoch.
        config_epoch: u64,
        /// The new primary.
        primary: NodeId,
    },
    /// `+sdown` on a replica.
    ReplicaDown {
        /// The replica.
        node: NodeId,
    },
    /// `-sdown` on a replica.
    ReplicaUp {
        /// The replica.
        node: NodeId,
    },
}

/// `SENTINEL get-master-addr-by-name`.
#[derive(Clone, Debug, PartialEq)]
pub struct GetMasterAddr;

/// The answer to [`GetMasterAddr`].
#[derive(Clone, Debug, PartialEq)]
pub struct MasterAddr {
    /// The Sentinel's configuration epoch.
    pub config_epoch: u64,
    /// The primary it follows.
    pub primary: NodeId,
}

// ----- the model's protocol ----------------------------------------------------------------------

locksim_simulator::wrapper_enum! {
    /// Every message of the redis model, whoever sends it.
    #[derive(Clone, PartialEq)]
    pub enum RedisMsg: Fingerprint {
        // Client ↔ server.
        /// Client → server: a command.
        Request(Request),
        /// Server → client: the answer.
        Response(Response),
        /// Server → subscribed clients: a lock was freed.
        UnlockMessage(UnlockMessage),
        // Replication.
        /// Replica → primary: send me the stream.
        Psync(Psync),
        /// Primary → replica: the snapshot.
        FullSync(FullSync),
        /// Primary → replica: the next writes.
        ReplBatch(ReplBatch),
        /// Replica → primary: the offset applied.
        ReplAck(ReplAck),
        /// Primary → replica: start over with `PSYNC`.
        ResyncNeeded(ResyncNeeded),
        // Sentinel ↔ server.
        /// Sentinel → server: `PING`.
        SentinelPing(SentinelPing),
        /// Server → Sentinel: `PONG` with `INFO`.
        PingReply(PingReply),
        /// Sentinel → server: change role.
        ReplicaOf(ReplicaOf),
        // Sentinel ↔ Sentinel.
        /// Is the primary down (and a vote request)?
        IsMasterDownReq(IsMasterDownReq),
        /// The answer (and the vote).
        IsMasterDownReply(IsMasterDownReply),
        /// The configuration the sender knows.
        Hello(Hello),
        // Sentinel ↔ client.
        /// Sentinel → client: a failover or a replica's state.
        SentinelEvent(SentinelEvent),
        /// Client → Sentinel: where is the primary?
        GetMasterAddr(GetMasterAddr),
        /// Sentinel → client: the primary.
        MasterAddr(MasterAddr),
    }
}

/// A Redis server's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// The 100 ms cron (`hz 10`): active expiry on a primary.
    Cron,
    /// `appendfsync everysec`: the AOF catches up with the keyspace.
    Fsync,
    /// The running `BGSAVE` has written and renamed its snapshot.
    BgsaveDone,
    /// The head of the replication stream's output buffer is due to leave.
    ReplFlush,
    /// `replicationCron`: a replica acknowledges its offset, or asks for `PSYNC` again.
    ReplCron,
    /// The timeout of the pending `WAIT` number `n`.
    WaitTimeout {
        /// The `WAIT`'s number.
        n: u64,
    },
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
    RequestTimeout {
        /// The request's id.
        id: u64,
    },
    /// Request `id`'s retry interval is over: send it again.
    Resend {
        /// The request's id.
        id: u64,
    },
    /// Plain pattern: the `retry_ms` sleep after a refused `SET NX` is over.
    Retry {
        /// The lock.
        key: LockKey,
        /// The generation of the wait that set it.
        seq: u32,
    },
    /// Redisson: the lock's TTL ran out with no unlock message.
    WaitUnlock {
        /// The lock.
        key: LockKey,
        /// The generation of the wait that set it.
        seq: u32,
    },
    /// Redisson's watchdog: time to renew the lease.
    Renew {
        /// The lock.
        key: LockKey,
        /// The generation of the watchdog that set it.
        seq: u32,
    },
}

/// Every timer of the redis model: the process kind's own enum.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RedisTimer {
    /// A Redis server's timer.
    Server(ServerTimer),
    /// A Sentinel's timer.
    Sentinel(SentinelTimer),
    /// The lock library's timer.
    Client(ClientTimer),
    /// Set only by a hand-built harness that drives the lock library at scripted times (the
    /// engine hands a service node its model's timers only, so a scripted client node needs a
    /// timer of this type): `step` is the script's step. No process of the model sets one, and
    /// each ignores it.
    Script {
        /// The script's step.
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
    fn msg_fingerprint(msg: &RedisMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &RedisTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}
