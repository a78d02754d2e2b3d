//! [`Fingerprint`] for the consul model's messages and timers (`protocol`): every variant and
//! field listed (a new one is a compile error here). The hand-written `Debug` of `SessionSpec`,
//! `Op`, `Rpc`, `RpcReply`, `CmdKind` and `Cmd` (the trace's short forms) is not what is hashed.
//! A session's `node` (the client's agent, by index) is hashed as a number.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::protocol::{
    Ack, Behavior, ClientTimer, Cmd, CmdKind, ConsulError, ConsulMsg, ConsulTimer, KvEntry, Op, Ping, ReadMode, Reply,
    Rpc, RpcReply, ServerTimer, SessionSpec,
};

fingerprint_enum!(Behavior { Release, Delete });
fingerprint_struct!(SessionSpec { node, serf_check, ttl_ns, behavior, lock_delay_ns });
fingerprint_enum!(ReadMode { Default, Consistent });
fingerprint_enum!(Op {
    SessionCreate(spec),
    SessionRenew { session },
    SessionDestroy { session },
    KvGet { key, wait_index, wait_ns, mode },
    KvAcquire { key, session },
    KvRelease { key, session },
});
fingerprint_struct!(Rpc { id, op });
fingerprint_struct!(KvEntry { session, lock_index, modify_index, create_index });
fingerprint_enum!(ConsulError { NotLeader { @opt_node hint }, SessionNotFound, CheckCritical, LeadershipLost });
fingerprint_enum!(Reply { Session(session), Done, Bool(ok, entry), Kv(entry, index) });
fingerprint_struct!(RpcReply { id, result });
fingerprint_struct!(Ping { seq });
fingerprint_struct!(Ack { seq });
fingerprint_enum!(CmdKind {
    SessionCreate(spec),
    SessionDestroy { session },
    Acquire { key, session },
    Release { key, session },
    NodeHealth { node, critical },
});

impl Fingerprint for Cmd {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Cmd { origin, kind } = self;
        // (proposing server, its tag): the server answers the client when the entry applies.
        match origin {
            None => h.write_u8(0),
            Some((server, tag)) => {
                h.write_u8(1);
                (AsNode(*server), tag).fingerprint(h, ids);
            }
        }
        kind.fingerprint(h, ids);
    }
}

fingerprint_enum!(ConsulMsg { Rpc(m), RpcReply(m), Ping(m), Ack(m), Consensus(m) });
fingerprint_enum!(ServerTimer { Probe, SessionTtl { session }, QueryWait { qid } });
fingerprint_enum!(ClientTimer { CallTimeout { id }, CallRetry { id }, LockRetry { key }, Renew { key } });
fingerprint_enum!(ConsulTimer { Server(t), Client(t), Consensus(t) });
