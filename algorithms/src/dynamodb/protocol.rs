//! The messages and timers of the dynamodb model: the DynamoDB calls the AWS lock client makes
//! on the lock table (`GetItem` with a consistent read; `PutItem`, `UpdateItem`, `DeleteItem`
//! with a condition on the record version number), the answers, and the client's timers.

use std::fmt;

use locksim_simulator::history::LockKey;

/// A record version number: the random UUID the owner writes at every acquire and heartbeat.
pub type Rvn = u64;

/// The lock item as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// `ownerName` (the client's index).
    pub owner: u32,
    /// `recordVersionNumber`.
    pub rvn: Rvn,
    /// `leaseDuration` (ms), as the owner wrote it.
    pub lease_ms: u64,
    /// `isReleased` (only with `deleteLockOnRelease = false`).
    pub released: bool,
}

/// One DynamoDB call on the lock table.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `GetItem(key, ConsistentRead = true)`.
    Get {
        /// The lock key.
        key: LockKey,
    },
    /// `PutItem` with `attribute_not_exists(key)` (`expected: None`) or with
    /// `recordVersionNumber = :expected` (taking over a released or expired lock).
    Put {
        /// The lock key.
        key: LockKey,
        /// The condition's RVN.
        expected: Option<Rvn>,
        /// The item to write.
        item: Item,
    },
    /// The heartbeat's `UpdateItem`: `SET recordVersionNumber = :new` if the RVN and owner are
    /// still the caller's.
    Heartbeat {
        /// The lock key.
        key: LockKey,
        /// The RVN the caller last wrote.
        expected: Rvn,
        /// The new RVN.
        rvn: Rvn,
        /// The caller.
        owner: u32,
    },
    /// `releaseLock`'s `DeleteItem` if the RVN and owner are still the caller's.
    Delete {
        /// The lock key.
        key: LockKey,
        /// The RVN the caller last wrote.
        expected: Rvn,
        /// The caller.
        owner: u32,
    },
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Get { key } => write!(f, "GetItem lock-{key} consistent"),
            Call::Put { key, expected: None, item } => {
                write!(f, "PutItem lock-{key} rvn={:x} if not exists", item.rvn)
            }
            Call::Put { key, expected: Some(e), item } => {
                write!(f, "PutItem lock-{key} rvn={:x} if rvn={e:x}", item.rvn)
            }
            Call::Heartbeat { key, expected, rvn, .. } => {
                write!(f, "UpdateItem lock-{key} rvn={rvn:x} if rvn={expected:x}")
            }
            Call::Delete { key, expected, .. } => write!(f, "DeleteItem lock-{key} if rvn={expected:x}"),
        }
    }
}

/// A request: the call and the client's id for it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The call's id.
    pub id: u64,
    /// The call.
    pub call: Call,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} #{}", self.call, self.id)
    }
}

/// DynamoDB's `ConditionalCheckFailedException`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConditionFailed;

/// The table's answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The call's id.
    pub id: u64,
    /// `Ok(item after the call)` (a get of a missing item or a delete: `None`), or
    /// `ConditionalCheckFailedException`.
    pub result: Result<Option<Item>, ConditionFailed>,
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            Ok(Some(i)) => {
                write!(f, "200 owner=client-{} rvn={:x} released={} #{}", i.owner, i.rvn, i.released, self.id)
            }
            Ok(None) => write!(f, "200 (no item) #{}", self.id),
            Err(ConditionFailed) => write!(f, "400 ConditionalCheckFailedException #{}", self.id),
        }
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the dynamodb model.
    #[derive(Clone)]
    pub enum DynamoMsg {
        /// Client → table.
        Request(Request),
        /// Table → client.
        Answer(Answer),
    }
}

/// The client's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// `acquireLock`'s sleep of `refreshPeriod` before looking again.
    Refresh {
        /// The key.
        key: LockKey,
    },
    /// The heartbeat thread's next round.
    Heartbeat,
    /// A call's request timeout.
    CallTimeout {
        /// The call.
        id: u64,
    },
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the dynamodb model (the table sets none).
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum DynamoTimer {
        /// The client's.
        Client(ClientTimer),
    }
}
