//! The pre-3.12 `ILock` (Hazelcast 3.8: `HazelcastInstance.getLock`, `concurrent/lock/`), the
//! lock the CP subsystem's `FencedLock` replaced: not a consensus object but an entry of a
//! partitioned, replicated lock store, owned by whichever member the partition table names.
//!
//! - The lock lives in the partition of its name: the partition's owner member applies
//!   `LockOperation` and `UnlockOperation` and copies the result to one backup replica
//!   (`LockServiceImpl.init`: `getBackupCount()` 1, `getAsyncBackupCount()` 0). A free lock goes to
//!   the caller, the owner (client and thread) re-enters, a retried op with the same reference id
//!   is answered as before (`LockResourceImpl.lock`), anyone else parks in the lock's wait queue
//!   on the owner; an unlock by the owner at count 0 hands it to the first parked op.
//! - Membership is by heartbeats (`hazelcast.heartbeat.interval.seconds` 5 s): a member not heard
//!   from for `hazelcast.max.no.heartbeat.seconds` (300 s in 3.x's `GroupProperty`) is removed
//!   from the cluster. When the partition owner is removed, its backup is promoted and holds the
//!   lock as the backup saw it; invocations that targeted the removed member are retried on the
//!   new owner (`MemberLeftException`).
//! - A client belongs to one member (its owner connection). When a member is removed, the
//!   others run `ClientDisconnectionOperation` for its clients after
//!   `ClientEngineImpl.ENDPOINT_REMOVE_DELAY_SECONDS` (10 s in 3.8), and `LockServiceImpl
//!   .clientDisconnected` releases every lock they hold (`releaseLocksOwnedBy`).
//!
//! Under a network partition between members each side removes the other: each side has its own
//! owner for the lock's partition (the old owner, or the promoted backup, or an empty replica),
//! and each releases the locks of the other side's clients. Both sides then grant the lock: the
//! loss of exclusivity Jepsen's Hazelcast 3.8.3 analysis (2017) reports for `ILock`. Nothing here
//! decides that outcome; it follows from the membership views.
//!
//! Submodules: [`member`] (a member), [`client`] (a unisocket client).

pub mod client;
mod fingerprint;
pub mod member;

use std::collections::VecDeque;
use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::time::Nanos;

/// A client's call on the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockCall {
    /// `ILock.lock()`: waits on the owner while another holds the lock.
    Lock,
    /// `ILock.unlock()`.
    Unlock,
}

/// What an `ILock` call can fail with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IlockError {
    /// `IllegalMonitorStateException`: "Current thread is not owner of the lock!".
    NotOwner,
}

/// One lock's replica on a member: the holder (client index), its count, and the reference id
/// of the holder's last lock call (a retry with it is answered, not counted again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockReplica {
    /// The holding client.
    pub holder: Option<u32>,
    /// Reentry count.
    pub count: u32,
    /// The holder's last lock call.
    pub last_uid: u64,
}

/// A parked `LockOperation` on the owner: the client, the call, the member that invoked it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parked {
    /// The calling client.
    pub client: u32,
    /// The call's reference id.
    pub uid: u64,
    /// The member that invoked the op (the client's owner member).
    pub caller: usize,
}

/// Messages of the `ILock` mode.
#[derive(Clone, PartialEq, Eq)]
pub enum IlockMsg {
    /// Client → its member.
    Request {
        /// The call's id.
        uid: u64,
        /// The lock.
        key: LockKey,
        /// The call.
        call: LockCall,
    },
    /// Member → client: the call's answer.
    Reply {
        /// The call's id.
        uid: u64,
        /// The answer.
        result: Result<(), IlockError>,
    },
    /// Member → the partition owner: the op, for a client.
    Invoke {
        /// The client.
        client: u32,
        /// The call's id.
        uid: u64,
        /// The lock.
        key: LockKey,
        /// The call.
        call: LockCall,
    },
    /// Owner → the invoking member.
    Answer {
        /// The client.
        client: u32,
        /// The call's id.
        uid: u64,
        /// The answer.
        result: Result<(), IlockError>,
    },
    /// A member that does not own the lock in its view → the invoking member
    /// (`WrongTargetException`: it retries after the invocation retry pause).
    WrongTarget {
        /// The client.
        client: u32,
        /// The call's id.
        uid: u64,
    },
    /// Owner → backup: the lock's replica after a change (`LockBackupOperation`).
    Backup {
        /// The lock.
        key: LockKey,
        /// The replica.
        replica: LockReplica,
    },
    /// Member → member: cluster heartbeat.
    Heartbeat,
}

impl fmt::Debug for IlockMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IlockMsg::Request { uid, key, call } => write!(f, "ILock {call:?} lock-{key} #{uid:x}"),
            IlockMsg::Reply { uid, result } => write!(f, "ILock reply {result:?} #{uid:x}"),
            IlockMsg::Invoke { client, uid, key, call } => {
                write!(f, "{call:?}Operation lock-{key} for client-{client} #{uid:x}")
            }
            IlockMsg::Answer { client, uid, result } => write!(f, "answer {result:?} for client-{client} #{uid:x}"),
            IlockMsg::WrongTarget { client, uid } => write!(f, "WrongTargetException for client-{client} #{uid:x}"),
            IlockMsg::Backup { key, replica } => write!(
                f,
                "LockBackupOperation lock-{key} holder {:?} count {}",
                replica.holder.map(|c| format!("client-{c}")),
                replica.count
            ),
            IlockMsg::Heartbeat => f.write_str("heartbeat"),
        }
    }
}

/// Timers of the `ILock` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IlockTimer {
    /// A member's heartbeat round (and its check for silent members).
    Heartbeat,
    /// An invocation's retry after `WrongTargetException`.
    Retry {
        /// The client.
        client: u32,
        /// The call's id.
        uid: u64,
    },
    /// `ClientDisconnectionOperation` for the clients of a removed member.
    EndpointRemoval {
        /// The removed member.
        member: usize,
    },
}

/// The `ILock` settings.
#[derive(Clone, Debug)]
pub struct IlockConfig {
    /// Members `server-0 …`.
    pub members: usize,
    /// Clients `client-0 …` (client-i belongs to member i mod members).
    pub clients: usize,
    /// `hazelcast.heartbeat.interval.seconds`.
    pub heartbeat_ns: Nanos,
    /// `hazelcast.max.no.heartbeat.seconds`.
    pub max_no_heartbeat_ns: Nanos,
    /// `ENDPOINT_REMOVE_DELAY_SECONDS`.
    pub endpoint_remove_delay_ns: Nanos,
    /// `hazelcast.invocation.retry.pause.millis`.
    pub retry_pause_ns: Nanos,
}

/// The member a client belongs to (its owner connection).
pub fn owner_member_of(client: u32, members: usize) -> usize {
    client as usize % members
}

/// The partition's replica order for a lock: its owner first, then its backup, then the members
/// that take over as others are removed (the partition table's order for that partition).
pub fn replica_order(key: LockKey, members: usize) -> impl Iterator<Item = usize> {
    let first = key as usize % members;
    (0..members).map(move |i| (first + i) % members)
}

/// One lock on its owner: the replica and the parked ops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedLock {
    /// The replicated part.
    pub replica: LockReplica,
    /// Parked `LockOperation`s, in arrival order (not replicated).
    pub parked: VecDeque<Parked>,
}

/// What applying an op gives: answers to send (to parked or calling ops) and whether the
/// replica changed (then it goes to the backup).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// `(client, uid, caller member, result)`.
    pub answers: Vec<(u32, u64, usize, Result<(), IlockError>)>,
    /// The replica changed.
    pub changed: bool,
}

impl OwnedLock {
    /// `LockOperation` / `UnlockOperation` from `client` (call `uid`) invoked by member `caller`.
    pub fn apply(&mut self, client: u32, uid: u64, caller: usize, call: LockCall) -> Applied {
        let mut out = Applied::default();
        let r = &mut self.replica;
        match call {
            LockCall::Lock => match r.holder {
                None => {
                    *r = LockReplica { holder: Some(client), count: 1, last_uid: uid };
                    out.changed = true;
                    out.answers.push((client, uid, caller, Ok(())));
                }
                Some(h) if h == client && r.last_uid == uid => out.answers.push((client, uid, caller, Ok(()))),
                Some(h) if h == client => {
                    r.count += 1;
                    r.last_uid = uid;
                    out.changed = true;
                    out.answers.push((client, uid, caller, Ok(())));
                }
                Some(_) => {
                    if !self.parked.iter().any(|p| p.client == client && p.uid == uid) {
                        self.parked.push_back(Parked { client, uid, caller });
                    }
                }
            },
            LockCall::Unlock => {
                if r.holder == Some(client) {
                    r.count -= 1;
                    if r.count == 0 {
                        r.holder = None;
                        self.hand_over(&mut out);
                    }
                    out.changed = true;
                    out.answers.push((client, uid, caller, Ok(())));
                } else {
                    out.answers.push((client, uid, caller, Err(IlockError::NotOwner)));
                }
            }
        }
        out
    }

    /// `releaseLocksOwnedBy(client)`: its lock is force-released and its parked ops dropped.
    pub fn release_client(&mut self, client: u32) -> Applied {
        let mut out = Applied::default();
        self.parked.retain(|p| p.client != client);
        if self.replica.holder == Some(client) {
            self.replica = LockReplica::default();
            out.changed = true;
            self.hand_over(&mut out);
        }
        out
    }

    /// The first parked op takes the free lock.
    fn hand_over(&mut self, out: &mut Applied) {
        if let Some(p) = self.parked.pop_front() {
            self.replica = LockReplica { holder: Some(p.client), count: 1, last_uid: p.uid };
            out.answers.push((p.client, p.uid, p.caller, Ok(())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grant, re-entry, a retried call answered without counting, parking, hand-over at count 0,
    /// a non-owner's unlock refused, and a disconnected client's lock passed on.
    #[test]
    fn owned_lock_follows_lock_resource_impl() {
        let mut l = OwnedLock::default();
        assert_eq!(l.apply(0, 1, 0, LockCall::Lock).answers, vec![(0, 1, 0, Ok(()))]);
        assert!(!l.apply(0, 1, 0, LockCall::Lock).changed, "a retry is not counted");
        assert_eq!(l.replica.count, 1);
        l.apply(0, 2, 0, LockCall::Lock);
        assert_eq!(l.replica.count, 2);
        assert!(l.apply(1, 7, 1, LockCall::Lock).answers.is_empty(), "parked");
        assert_eq!(l.apply(1, 8, 1, LockCall::Unlock).answers, vec![(1, 8, 1, Err(IlockError::NotOwner))]);
        assert!(l.apply(0, 3, 0, LockCall::Unlock).answers.len() == 1, "count 2 → 1: no hand-over");
        assert_eq!(l.apply(0, 4, 0, LockCall::Unlock).answers, vec![(1, 7, 1, Ok(())), (0, 4, 0, Ok(()))]);
        assert_eq!(l.replica.holder, Some(1));
        l.apply(2, 9, 2, LockCall::Lock);
        let a = l.release_client(1);
        assert_eq!(a.answers, vec![(2, 9, 2, Ok(()))]);
        assert_eq!(l.replica.holder, Some(2));
    }
}
