//! [`Fingerprint`] for Redis's messages and timers (`protocol`) and the keyspace's public types:
//! every field destructured (a new one is a compile error here), node ids through the renaming.
//! `FullSync`'s hand-written `Debug` (its key count and part of its replication id, not its
//! keys) is not what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::keyspace::{Entry, Key, Reply, Value, WriteOp};
use super::protocol::{
    Answer, ClientTimer, Command, FullSync, GetMasterAddr, Hello, IsMasterDownReply, IsMasterDownReq, MasterAddr,
    PingReply, Psync, RedisMsg, RedisTimer, ReplAck, ReplBatch, ReplicaOf, Request, Response, ResyncNeeded, Role,
    SentinelEvent, SentinelPing, SentinelTimer, ServerTimer, UnlockMessage, WaitSpec,
};

/// One variant's number, then its fields.
macro_rules! variant {
    ($h:ident, $ids:ident, $n:expr $(, $field:expr)*) => {{
        $h.write_u8($n);
        $($field.fingerprint($h, $ids);)*
    }};
}

impl Fingerprint for Key {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Key::Lock(k) => variant!(h, ids, 0, k),
            Key::Fence(k) => variant!(h, ids, 1, k),
        }
    }
}

impl Fingerprint for Value {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Value::Str(v) => variant!(h, ids, 0, v),
            Value::Int(v) => variant!(h, ids, 1, v),
            Value::Hash(fields) => variant!(h, ids, 2, fields),
        }
    }
}

fingerprint_struct!(Entry { value, expire_at_wall_ns });

impl Fingerprint for WriteOp {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            WriteOp::Set { key, value, expire_at_wall_ns } => variant!(h, ids, 0, key, value, expire_at_wall_ns),
            WriteOp::Del { key } => variant!(h, ids, 1, key),
            WriteOp::PExpireAt { key, at_wall_ns } => variant!(h, ids, 2, key, at_wall_ns),
            WriteOp::HIncrBy { key, field, by } => variant!(h, ids, 3, key, field, by),
            WriteOp::Incr { key } => variant!(h, ids, 4, key),
        }
    }
}

impl Fingerprint for Reply {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Reply::Acquired { token } => variant!(h, ids, 0, token),
            Reply::Taken { pttl_ms } => variant!(h, ids, 1, pttl_ms),
            Reply::Int(v) => variant!(h, ids, 2, v),
            Reply::Value(v) => variant!(h, ids, 3, v),
            Reply::Nil => variant!(h, ids, 4),
        }
    }
}

impl Fingerprint for Command {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Command::SetNxPx { key, value, px_ms, fence } => variant!(h, ids, 0, key, value, px_ms, fence),
            Command::SetNx { key, value, fence } => variant!(h, ids, 1, key, value, fence),
            Command::PExpire { key, ttl_ms } => variant!(h, ids, 2, key, ttl_ms),
            Command::Get { key } => variant!(h, ids, 3, key),
            Command::DelIfEquals { key, value } => variant!(h, ids, 4, key, value),
            Command::Del { key, publish } => variant!(h, ids, 5, key, publish),
            Command::HLock { key, owner, lease_ms, fence } => variant!(h, ids, 6, key, owner, lease_ms, fence),
            Command::HRenew { key, owner, lease_ms } => variant!(h, ids, 7, key, owner, lease_ms),
            Command::HUnlock { key, owner, lease_ms } => variant!(h, ids, 8, key, owner, lease_ms),
            Command::Subscribe { key } => variant!(h, ids, 9, key),
            Command::Unsubscribe { key } => variant!(h, ids, 10, key),
            Command::InfoReplication => variant!(h, ids, 11),
        }
    }
}

impl Fingerprint for Answer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Answer::Reply(r) => variant!(h, ids, 0, r),
            Answer::Subscribed => variant!(h, ids, 1),
            Answer::ReadOnly => variant!(h, ids, 2),
            Answer::NoReplicas => variant!(h, ids, 3),
        }
    }
}

impl Fingerprint for Role {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Role::Primary => variant!(h, ids, 0),
            Role::Replica { of } => variant!(h, ids, 1, AsNode(*of)),
        }
    }
}

impl Fingerprint for SentinelEvent {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            SentinelEvent::SwitchMaster { config_epoch, primary } => {
                variant!(h, ids, 0, config_epoch, AsNode(*primary))
            }
            SentinelEvent::ReplicaDown { node } => variant!(h, ids, 1, AsNode(*node)),
            SentinelEvent::ReplicaUp { node } => variant!(h, ids, 2, AsNode(*node)),
        }
    }
}

impl Fingerprint for IsMasterDownReply {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let IsMasterDownReply { primary, down, leader } = self;
        (AsNode(*primary), down, leader.map(|(node, epoch)| (AsNode(node), epoch))).fingerprint(h, ids);
    }
}

impl Fingerprint for Psync {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {}
}

impl Fingerprint for ResyncNeeded {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {}
}

impl Fingerprint for GetMasterAddr {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {}
}

fingerprint_struct!(WaitSpec { replicas, timeout_ms });
fingerprint_struct!(Request { id, cmd, wait });
fingerprint_struct!(Response { id, answer, synced });
fingerprint_struct!(UnlockMessage { key });
fingerprint_struct!(FullSync { repl_id, offset, data });
fingerprint_struct!(ReplBatch { repl_id, first_offset, ops });
fingerprint_struct!(ReplAck { repl_id, offset });
fingerprint_struct!(SentinelPing { seq });
fingerprint_struct!(PingReply { seq, role, offset, run_id });
fingerprint_struct!(ReplicaOf { @opt_node primary, epoch });
fingerprint_struct!(IsMasterDownReq { @node primary, epoch, @opt_node candidate });
fingerprint_struct!(Hello { current_epoch, config_epoch, @node primary });
fingerprint_struct!(MasterAddr { config_epoch, @node primary });

impl Fingerprint for ServerTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ServerTimer::Cron => variant!(h, ids, 0),
            ServerTimer::Fsync => variant!(h, ids, 1),
            ServerTimer::BgsaveDone => variant!(h, ids, 2),
            ServerTimer::ReplFlush => variant!(h, ids, 3),
            ServerTimer::ReplCron => variant!(h, ids, 4),
            ServerTimer::WaitTimeout { n } => variant!(h, ids, 5, n),
        }
    }
}

impl Fingerprint for SentinelTimer {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        match self {
            SentinelTimer::Tick => h.write_u8(0),
        }
    }
}

impl Fingerprint for ClientTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ClientTimer::RequestTimeout { id } => variant!(h, ids, 0, id),
            ClientTimer::Resend { id } => variant!(h, ids, 1, id),
            ClientTimer::Retry { key, seq } => variant!(h, ids, 2, key, seq),
            ClientTimer::WaitUnlock { key, seq } => variant!(h, ids, 3, key, seq),
            ClientTimer::Renew { key, seq } => variant!(h, ids, 4, key, seq),
        }
    }
}

impl Fingerprint for RedisTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            RedisTimer::Server(t) => variant!(h, ids, 0, t),
            RedisTimer::Sentinel(t) => variant!(h, ids, 1, t),
            RedisTimer::Client(t) => variant!(h, ids, 2, t),
            RedisTimer::Script { step } => variant!(h, ids, 3, step),
        }
    }
}

impl Fingerprint for RedisMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            RedisMsg::Request(m) => variant!(h, ids, 0, m),
            RedisMsg::Response(m) => variant!(h, ids, 1, m),
            RedisMsg::UnlockMessage(m) => variant!(h, ids, 2, m),
            RedisMsg::Psync(m) => variant!(h, ids, 3, m),
            RedisMsg::FullSync(m) => variant!(h, ids, 4, m),
            RedisMsg::ReplBatch(m) => variant!(h, ids, 5, m),
            RedisMsg::ReplAck(m) => variant!(h, ids, 6, m),
            RedisMsg::ResyncNeeded(m) => variant!(h, ids, 7, m),
            RedisMsg::SentinelPing(m) => variant!(h, ids, 8, m),
            RedisMsg::PingReply(m) => variant!(h, ids, 9, m),
            RedisMsg::ReplicaOf(m) => variant!(h, ids, 10, m),
            RedisMsg::IsMasterDownReq(m) => variant!(h, ids, 11, m),
            RedisMsg::IsMasterDownReply(m) => variant!(h, ids, 12, m),
            RedisMsg::Hello(m) => variant!(h, ids, 13, m),
            RedisMsg::SentinelEvent(m) => variant!(h, ids, 14, m),
            RedisMsg::GetMasterAddr(m) => variant!(h, ids, 15, m),
            RedisMsg::MasterAddr(m) => variant!(h, ids, 16, m),
        }
    }
}
