//! [`Fingerprint`] for Redis's messages and timers (`protocol`) and the keyspace's public types:
//! every field destructured (a new one is a compile error here), node ids through the renaming,
//! lock values and Redisson owner ids as identity values (`RedisLockClient::identity_values`).
//! `FullSync`'s hand-written `Debug` (its key count and part of its replication id, not its
//! keys) is not what is hashed.

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::keyspace::{Entry, Key, Reply, Value, WriteOp};
use super::protocol::{
    Answer, ClientTimer, Command, FullSync, GetMasterAddr, Hello, IsMasterDownReply, IsMasterDownReq, MasterAddr,
    PingReply, Psync, RedisTimer, ReplAck, ReplBatch, ReplicaOf, Request, Response, ResyncNeeded, Role, SentinelEvent,
    SentinelPing, SentinelTimer, ServerTimer, UnlockMessage, WaitSpec,
};

fingerprint_enum!(Key { Lock(k), Fence(k) });

fingerprint_enum!(Value { Str(@ident v), Int(v), Hash(@ident_map fields) });

fingerprint_struct!(Entry { value, expire_at_wall_ns });

fingerprint_enum!(WriteOp {
    Set { key, value, expire_at_wall_ns },
    Del { key },
    PExpireAt { key, at_wall_ns },
    HIncrBy { key, @ident field, by },
    Incr { key },
});

fingerprint_enum!(Reply { Acquired { token }, Taken { pttl_ms }, Int(v), Value(@ident v), Nil });

fingerprint_enum!(Command {
    SetNxPx { key, @ident value, px_ms, fence },
    SetNx { key, @ident value, fence },
    PExpire { key, ttl_ms },
    Get { key },
    DelIfEquals { key, @ident value },
    Del { key, publish },
    HLock { key, @ident owner, lease_ms, fence },
    HRenew { key, @ident owner, lease_ms },
    HUnlock { key, @ident owner, lease_ms },
    Subscribe { key },
    Unsubscribe { key },
    InfoReplication,
});

fingerprint_enum!(Answer { Reply(r), Subscribed, ReadOnly, NoReplicas });

fingerprint_enum!(Role { Primary, Replica { @node of } });

fingerprint_enum!(SentinelEvent {
    SwitchMaster { config_epoch, @node primary },
    ReplicaDown { @node node },
    ReplicaUp { @node node },
});

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

fingerprint_enum!(ServerTimer { Cron, Fsync, BgsaveDone, ReplFlush, ReplCron, WaitTimeout { n } });

fingerprint_enum!(SentinelTimer { Tick });

fingerprint_enum!(ClientTimer {
    RequestTimeout { id },
    Resend { id },
    Retry { key, seq },
    WaitUnlock { key, seq },
    Renew { key, seq },
});

fingerprint_enum!(RedisTimer { Server(t), Sentinel(t), Client(t), Script { step } });
