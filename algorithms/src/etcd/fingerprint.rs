//! [`Fingerprint`] for etcd's messages and timers (`protocol`): every field destructured (a new
//! one is a compile error here), node ids through the renaming. The hand-written `Debug` of
//! `Op`, `Request`, `Response` and `Cmd` (the trace's short forms, which leave fields out) is not
//! what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::library::Library;
use super::protocol::{
    ClientTimer, Cmd, CmdKind, EtcdError, EtcdMsg, EtcdTimer, KeyInfo, Op, Origin, Peer, Ping, Pong, Reply, Request,
    Response, ServerTimer, StreamCancel, WatchAck, WatchCreated, WatchEvent,
};

impl Fingerprint for Op {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Op::LeaseGrant { ttl_ns } => {
                h.write_u8(0);
                ttl_ns.fingerprint(h, ids);
            }
            Op::KeepAlive { lease } => {
                h.write_u8(1);
                lease.fingerprint(h, ids);
            }
            Op::MutexTxn { my_key, prefix, lease } => {
                h.write_u8(2);
                (my_key, prefix, lease).fingerprint(h, ids);
            }
            Op::Get { key } => {
                h.write_u8(3);
                key.fingerprint(h, ids);
            }
            Op::LastCreateBelow { prefix, max_create_rev } => {
                h.write_u8(4);
                (prefix, max_create_rev).fingerprint(h, ids);
            }
            Op::Delete { key } => {
                h.write_u8(5);
                key.fingerprint(h, ids);
            }
            Op::Watch { watch_id, key, start_rev } => {
                h.write_u8(6);
                (watch_id, key, start_rev).fingerprint(h, ids);
            }
            Op::WatchCancel { watch_id } => {
                h.write_u8(7);
                watch_id.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for Reply {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Reply::LeaseGranted { lease, ttl_ns } => {
                h.write_u8(0);
                (lease, ttl_ns).fingerprint(h, ids);
            }
            Reply::KeepAlive { lease, ttl_ns } => {
                h.write_u8(1);
                (lease, ttl_ns).fingerprint(h, ids);
            }
            Reply::Txn { succeeded, my_create_rev, owner } => {
                h.write_u8(2);
                (succeeded, my_create_rev, owner).fingerprint(h, ids);
            }
            Reply::Range { kv } => {
                h.write_u8(3);
                kv.fingerprint(h, ids);
            }
            Reply::Deleted { count } => {
                h.write_u8(4);
                count.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for EtcdError {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            EtcdError::NoLeader => 0,
            EtcdError::LeaseNotFound => 1,
            EtcdError::Timeout => 2,
            EtcdError::ConnectionClosed => 3,
        });
    }
}

impl Fingerprint for CmdKind {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            CmdKind::LeaseGrant { ttl_ns } => {
                h.write_u8(0);
                ttl_ns.fingerprint(h, ids);
            }
            CmdKind::LeaseRevoke { lease } => {
                h.write_u8(1);
                lease.fingerprint(h, ids);
            }
            CmdKind::MutexTxn { my_key, prefix, lease } => {
                h.write_u8(2);
                (my_key, prefix, lease).fingerprint(h, ids);
            }
            CmdKind::Delete { key } => {
                h.write_u8(3);
                key.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for Peer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Peer::Propose(cmd) => {
                h.write_u8(0);
                cmd.fingerprint(h, ids);
            }
            Peer::ReadIndex { rid } => {
                h.write_u8(1);
                rid.fingerprint(h, ids);
            }
            Peer::ReadIndexReply { rid, index } => {
                h.write_u8(2);
                (rid, index).fingerprint(h, ids);
            }
            Peer::Renew { rid, lease } => {
                h.write_u8(3);
                (rid, lease).fingerprint(h, ids);
            }
            Peer::RenewReply { rid, lease, ttl_ns } => {
                h.write_u8(4);
                (rid, lease, ttl_ns).fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for ServerTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ServerTimer::LeaseCheck => h.write_u8(0),
            ServerTimer::Retransmit => h.write_u8(1),
            ServerTimer::Dispatch => h.write_u8(2),
            ServerTimer::ReqTimeout { tag } => {
                h.write_u8(3);
                tag.fingerprint(h, ids);
            }
            ServerTimer::ReadTimeout { rid } => {
                h.write_u8(4);
                rid.fingerprint(h, ids);
            }
        }
    }
}

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

impl Fingerprint for Library {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            Library::Locksim => 0,
            Library::Clientv3_34 => 1,
            Library::Clientv3_35 => 2,
        });
    }
}

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

impl Fingerprint for EtcdMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            EtcdMsg::Consensus(m) => {
                h.write_u8(0);
                m.fingerprint(h, ids);
            }
            EtcdMsg::Peer(m) => {
                h.write_u8(1);
                m.fingerprint(h, ids);
            }
            EtcdMsg::Request(m) => {
                h.write_u8(2);
                m.fingerprint(h, ids);
            }
            EtcdMsg::WatchAck(m) => {
                h.write_u8(3);
                m.fingerprint(h, ids);
            }
            EtcdMsg::StreamCancel(m) => {
                h.write_u8(4);
                m.fingerprint(h, ids);
            }
            EtcdMsg::Ping(m) => {
                h.write_u8(5);
                m.fingerprint(h, ids);
            }
            EtcdMsg::Response(m) => {
                h.write_u8(6);
                m.fingerprint(h, ids);
            }
            EtcdMsg::WatchEvent(m) => {
                h.write_u8(7);
                m.fingerprint(h, ids);
            }
            EtcdMsg::WatchCreated(m) => {
                h.write_u8(8);
                m.fingerprint(h, ids);
            }
            EtcdMsg::Pong(m) => {
                h.write_u8(9);
                m.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for EtcdTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            EtcdTimer::Consensus(t) => {
                h.write_u8(0);
                t.fingerprint(h, ids);
            }
            EtcdTimer::Server(t) => {
                h.write_u8(1);
                t.fingerprint(h, ids);
            }
            EtcdTimer::Client(t) => {
                h.write_u8(2);
                t.fingerprint(h, ids);
            }
        }
    }
}
