//! [`Fingerprint`] for ZooKeeper's messages, timers and public configuration types: every field
//! destructured (a new one is a compile error here), node ids through the renaming. The
//! hand-written `Debug` of the requests, responses, paths and transactions (the trace's short
//! forms) is not what is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::client::{ClientConfig, LossPolicy, Recipe, ReleaseMode, StateDelivery};
use super::connection::{CallError, ConnEvent, CuratorState, Tag};
use super::library::Library;
use super::protocol::{
    ChildName, ClientTimer, Command, ConnTimer, ConnectRequest, ConnectResponse, CreateSpec, Disconnect, ErrCode,
    EventType, Forward, LeaderPing, LockName, Op, Origin, Outcome, PingTouches, Request, Response, Resync, Revalidate,
    RevalidateReply, ServerTimer, Stat, Txn, WatchEvent, ZPath, ZkMsg, ZkTimer,
};
use super::recipe::{RetryKind, RetryPolicy};
use super::session::ClientTiming;
use super::tree::{Applied, Znode};

/// Fieldless enums, by variant.
macro_rules! fieldless {
    ($($ty:ty),* $(,)?) => {$(
        impl Fingerprint for $ty {
            fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
                h.write_u8(*self as u8);
            }
        }
    )*};
}

fieldless!(
    LockName,
    ErrCode,
    EventType,
    Recipe,
    LossPolicy,
    StateDelivery,
    ReleaseMode,
    RetryKind,
    CallError,
    CuratorState,
    Library
);

/// One variant's number, then its fields.
macro_rules! variant {
    ($h:ident, $ids:ident, $n:expr $(, $field:expr)*) => {{
        $h.write_u8($n);
        $($field.fingerprint($h, $ids);)*
    }};
}

fingerprint_struct!(ChildName { protection, name, seq });
fingerprint_struct!(Request { session, xid, seq, op });
fingerprint_struct!(Stat { czxid, owner });
fingerprint_struct!(Response { xid, zxid, seq, outcome });
fingerprint_struct!(WatchEvent { path, kind, seq });
fingerprint_struct!(ConnectRequest { session, timeout_ms, last_zxid, attempt });
fingerprint_struct!(Disconnect { session });
fingerprint_struct!(Revalidate { session, timeout_ms, ticket });
fingerprint_struct!(RevalidateReply { session, ticket, valid });
fingerprint_struct!(LeaderPing { term });
fingerprint_struct!(PingTouches { term, touches, stream, forwarded });
fingerprint_struct!(Resync { stream });
fingerprint_struct!(Origin { @node server, incarnation, ticket });
fingerprint_struct!(Command { txn, origin });
fingerprint_struct!(Forward { command, stream, seq });
fingerprint_struct!(RetryPolicy { base_sleep_ms, max_retries, kind });
fingerprint_struct!(ClientTiming { timeout_ns });
fingerprint_struct!(Znode { czxid, owner });

impl Fingerprint for Tag {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Tag(tag) = self;
        tag.fingerprint(h, ids);
    }
}

impl Fingerprint for ZPath {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ZPath::Child { key, child } => variant!(h, ids, 0, key, child),
            ZPath::Naive { key } => variant!(h, ids, 1, key),
        }
    }
}

impl Fingerprint for CreateSpec {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            CreateSpec::Sequential { key, protection, name } => variant!(h, ids, 0, key, protection, name),
            CreateSpec::Naive { key } => variant!(h, ids, 1, key),
        }
    }
}

impl Fingerprint for Op {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Op::Create(spec) => variant!(h, ids, 0, spec),
            Op::Delete(path) => variant!(h, ids, 1, path),
            Op::GetChildren(key) => variant!(h, ids, 2, key),
            Op::GetData { path, watch } => variant!(h, ids, 3, path, watch),
            Op::Exists { path, watch } => variant!(h, ids, 4, path, watch),
            Op::Ping => variant!(h, ids, 5),
        }
    }
}

impl Fingerprint for Outcome {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Outcome::Created { path, czxid } => variant!(h, ids, 0, path, czxid),
            Outcome::Deleted => variant!(h, ids, 1),
            Outcome::Children(children) => variant!(h, ids, 2, children),
            Outcome::Stat(stat) => variant!(h, ids, 3, stat),
            Outcome::Pong => variant!(h, ids, 4),
            Outcome::Err(code) => variant!(h, ids, 5, code),
        }
    }
}

impl Fingerprint for ConnectResponse {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ConnectResponse::Connected { session, timeout_ms, attempt } => {
                variant!(h, ids, 0, session, timeout_ms, attempt)
            }
            ConnectResponse::Expired { session, attempt } => variant!(h, ids, 1, session, attempt),
            ConnectResponse::Refused { attempt } => variant!(h, ids, 2, attempt),
        }
    }
}

impl Fingerprint for Txn {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Txn::CreateSession { timeout_ms } => variant!(h, ids, 0, timeout_ms),
            Txn::CloseSession { session } => variant!(h, ids, 1, session),
            Txn::Create { session, spec } => variant!(h, ids, 2, session, spec),
            Txn::Delete { session, path } => variant!(h, ids, 3, session, path),
        }
    }
}

impl Fingerprint for ServerTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ServerTimer::Consensus(t) => variant!(h, ids, 0, t),
            ServerTimer::SessionExpiry { leader_gen } => variant!(h, ids, 1, leader_gen),
            ServerTimer::LeaderPing { leader_gen } => variant!(h, ids, 2, leader_gen),
        }
    }
}

impl Fingerprint for ConnTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ConnTimer::Check { attempt } => variant!(h, ids, 0, attempt),
            ConnTimer::ConnectTimeout { attempt } => variant!(h, ids, 1, attempt),
            ConnTimer::Reconnect { attempt } => variant!(h, ids, 2, attempt),
            ConnTimer::Lost { suspended_gen } => variant!(h, ids, 3, suspended_gen),
            ConnTimer::QueueDeadline { serial } => variant!(h, ids, 4, serial),
        }
    }
}

impl Fingerprint for ClientTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ClientTimer::Connection(t) => variant!(h, ids, 0, t),
            ClientTimer::Backoff { key, gen } => variant!(h, ids, 1, key, gen),
            ClientTimer::StateDelivery { seq } => variant!(h, ids, 2, seq),
        }
    }
}

impl Fingerprint for ZkTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ZkTimer::Server(t) => variant!(h, ids, 0, t),
            ZkTimer::Client(t) => variant!(h, ids, 1, t),
        }
    }
}

impl Fingerprint for ZkMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ZkMsg::Consensus(m) => variant!(h, ids, 0, m),
            ZkMsg::Request(m) => variant!(h, ids, 1, m),
            ZkMsg::Response(m) => variant!(h, ids, 2, m),
            ZkMsg::WatchEvent(m) => variant!(h, ids, 3, m),
            ZkMsg::ConnectRequest(m) => variant!(h, ids, 4, m),
            ZkMsg::ConnectResponse(m) => variant!(h, ids, 5, m),
            ZkMsg::Disconnect(m) => variant!(h, ids, 6, m),
            ZkMsg::Revalidate(m) => variant!(h, ids, 7, m),
            ZkMsg::RevalidateReply(m) => variant!(h, ids, 8, m),
            ZkMsg::LeaderPing(m) => variant!(h, ids, 9, m),
            ZkMsg::PingTouches(m) => variant!(h, ids, 10, m),
            ZkMsg::Resync(m) => variant!(h, ids, 11, m),
            ZkMsg::Forward(m) => variant!(h, ids, 12, m),
        }
    }
}

impl Fingerprint for ConnEvent {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ConnEvent::Reply { tag, outcome } => variant!(h, ids, 0, tag, outcome),
            ConnEvent::Failed { tag, err } => variant!(h, ids, 1, tag, err),
            ConnEvent::Watch(event) => variant!(h, ids, 2, event),
            ConnEvent::Disconnected => variant!(h, ids, 3),
            ConnEvent::Suspended => variant!(h, ids, 4),
            ConnEvent::Connected { new_session } => variant!(h, ids, 5, new_session),
            ConnEvent::Lost => variant!(h, ids, 6),
        }
    }
}

impl Fingerprint for Applied {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Applied::SessionCreated { session, timeout_ms } => variant!(h, ids, 0, session, timeout_ms),
            Applied::SessionClosed { session, deleted } => variant!(h, ids, 1, session, deleted),
            Applied::Created { path, czxid } => variant!(h, ids, 2, path, czxid),
            Applied::Deleted { path } => variant!(h, ids, 3, path),
            Applied::Failed(code) => variant!(h, ids, 4, code),
        }
    }
}

impl Fingerprint for ClientConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ClientConfig {
            servers,
            session_timeout_ms,
            recipe,
            policy,
            retry,
            connection_timeout_ms,
            state_delivery,
            race,
            notice_path,
            cleanup_sleep_ms,
            release,
            reentrant,
        } = self;
        (servers, session_timeout_ms, recipe, policy, retry, connection_timeout_ms, state_delivery).fingerprint(h, ids);
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(race);
        (notice_path, cleanup_sleep_ms, release, reentrant).fingerprint(h, ids);
    }
}
