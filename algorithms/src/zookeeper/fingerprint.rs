//! [`Fingerprint`] for ZooKeeper's messages, timers and public configuration types: every field
//! destructured (a new one is a compile error here), node ids through the renaming. The
//! hand-written `Debug` of the requests, responses, paths and transactions (the trace's short
//! forms) is not what is hashed.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_fieldless, fingerprint_struct};

use super::client::{ClientConfig, LossPolicy, Recipe, ReleaseMode, StateDelivery};
use super::connection::{CallError, ConnEvent, CuratorState, Tag};
use super::library::Library;
use super::protocol::{
    ChildName, ClientTimer, Command, ConnTimer, ConnectRequest, ConnectResponse, CreateSpec, Disconnect, ErrCode,
    EventType, Forward, LeaderPing, LockName, Op, Origin, Outcome, PingTouches, Request, Response, Resync, Revalidate,
    RevalidateReply, ServerTimer, Stat, Txn, WatchEvent, ZPath,
};
use super::recipe::{RetryKind, RetryPolicy};
use super::session::ClientTiming;
use super::tree::{Applied, Znode};

fingerprint_fieldless!(
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

fingerprint_enum!(ZPath { Child { key, child }, Naive { key } });

fingerprint_enum!(CreateSpec { Sequential { key, protection, name }, Naive { key } });

fingerprint_enum!(Op {
    Create(spec),
    Delete(path),
    GetChildren(key),
    GetData { path, watch },
    Exists { path, watch },
    Ping,
});

fingerprint_enum!(Outcome { Created { path, czxid }, Deleted, Children(children), Stat(stat), Pong, Err(code) });

fingerprint_enum!(ConnectResponse {
    Connected { session, timeout_ms, attempt },
    Expired { session, attempt },
    Refused { attempt },
});

fingerprint_enum!(Txn {
    CreateSession { timeout_ms },
    CloseSession { session },
    Create { session, spec },
    Delete { session, path },
});

fingerprint_enum!(ServerTimer { Consensus(t), SessionExpiry { leader_gen }, LeaderPing { leader_gen } });

fingerprint_enum!(ConnTimer {
    Check { attempt },
    ConnectTimeout { attempt },
    Reconnect { attempt },
    Lost { suspended_gen },
    QueueDeadline { serial },
});

fingerprint_enum!(ClientTimer { Connection(t), Backoff { key, gen }, StateDelivery { seq } });

fingerprint_enum!(ConnEvent {
    Reply { tag, outcome },
    Failed { tag, err },
    Watch(event),
    Disconnected,
    Suspended,
    Connected { new_session },
    Lost,
});

fingerprint_enum!(Applied {
    SessionCreated { session, timeout_ms },
    SessionClosed { session, deleted },
    Created { path, czxid },
    Deleted { path },
    Failed(code),
});

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
