//! [`Fingerprint`] for etcd's messages and timers (`protocol`): every field destructured (a new
//! one is a compile error here), node ids through the renaming. The hand-written `Debug` of
//! `Op`, `Request`, `Response` and `Cmd` (the trace's short forms, which leave fields out) is not
//! what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::library::Library;
use super::protocol::{
    ClientTimer, Cmd, CmdKind, EtcdError, KeyInfo, Op, Origin, Peer, Ping, Pong, Reply, Request, Response, ServerTimer,
    StreamCancel, WatchAck, WatchCreated, WatchEvent,
};

fingerprint_enum!(Op {
    LeaseGrant { ttl_ns },
    KeepAlive { lease },
    MutexTxn { my_key, prefix, lease },
    Get { key },
    LastCreateBelow { prefix, max_create_rev },
    Delete { key },
    Watch { watch_id, key, start_rev },
    WatchCancel { watch_id },
});

fingerprint_enum!(Reply {
    LeaseGranted { lease, ttl_ns },
    KeepAlive { lease, ttl_ns },
    Txn { succeeded, my_create_rev, owner },
    Range { kv },
    Deleted { count },
});

fingerprint_enum!(EtcdError { NoLeader, LeaseNotFound, Timeout, ConnectionClosed });

fingerprint_enum!(CmdKind {
    LeaseGrant { ttl_ns },
    LeaseRevoke { lease },
    MutexTxn { my_key, prefix, lease },
    Delete { key },
});

fingerprint_enum!(Peer {
    Propose(cmd),
    ReadIndex { rid },
    ReadIndexReply { rid, index },
    Renew { rid, lease },
    RenewReply { rid, lease, ttl_ns },
});

fingerprint_enum!(ServerTimer { LeaseCheck, Retransmit, Dispatch, ReqTimeout { tag }, ReadTimeout { rid } });

impl Fingerprint for ClientTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let (variant, value) = match self {
            ClientTimer::KeepAliveSend { gen } => (0, *gen),
            ClientTimer::KeepAliveDeadline { gen } => (1, *gen),
            ClientTimer::CallTimeout { id } => (2, *id),
            ClientTimer::Retry { id } => (3, *id),
            ClientTimer::Ping => (4, 0),
            ClientTimer::SessionDone { gen } => (5, *gen),
            ClientTimer::WatchResend { watch_id } => (6, *watch_id),
        };
        h.write_u8(variant);
        value.fingerprint(h, ids);
    }
}

fingerprint_enum!(Library { Locksim, Clientv3_34, Clientv3_35 });

fingerprint_struct!(Request { id, op });
fingerprint_struct!(KeyInfo { key, create_rev, lease });
fingerprint_struct!(Response { id, header_rev, result });
fingerprint_struct!(WatchEvent { watch_id, seq, key, rev, deleted });
fingerprint_struct!(WatchCreated { watch_id });
fingerprint_struct!(WatchAck { watch_id, seq });
fingerprint_struct!(StreamCancel { id });
fingerprint_struct!(Ping { seq });
fingerprint_struct!(Pong { seq, incarnation });
fingerprint_struct!(Origin { @node server, tag });
fingerprint_struct!(Cmd { origin, kind });
