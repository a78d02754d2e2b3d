//! What travels between nodes besides a model's own protocol: the messages between the workload
//! driver and the protected resource, the driver's timers, and the two envelopes that carry either
//! a model's message or timer or the workload's own. The engine queues envelopes; a model's
//! handlers only ever see their own types.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::history::LockKey;

/// Messages between clients and the resource. Serialisable: live mode carries them as JSON lines
/// between client processes and the resource `sim live` serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ResourceMsg {
    /// Client to resource, as a critical section starts: read `key`'s counter.
    Read {
        /// The lock key whose counter to read.
        key: LockKey,
        /// The client's grant number; echoed in the reply so a late reply is not taken for
        /// another grant's.
        grant: u64,
    },
    /// Resource to client: the answer to a `Read`.
    ReadReply {
        /// The key read.
        key: LockKey,
        /// The grant number of the `Read` this answers.
        grant: u64,
        /// The key's counter (the unfenced one) when the read arrived.
        value: u64,
    },
    /// Client to resource, as an exclusive critical section ends: store `value` (the value read
    /// plus one).
    Write {
        /// The key written.
        key: LockKey,
        /// The client's grant number; with the sender it identifies the write, so a duplicate
        /// is answered but not applied again.
        grant: u64,
        /// The grant's fencing token; `None`: the model issues none (the fenced resource then
        /// accepts the write).
        token: Option<u64>,
        /// The value to store.
        value: u64,
    },
    /// Resource to client: the answer to a `Write`.
    WriteReply {
        /// The key written.
        key: LockKey,
        /// The grant number of the `Write` this answers.
        grant: u64,
        /// Whether the fenced resource accepted the write (the unfenced one accepts every write).
        fenced_accepted: bool,
    },
}

/// The workload driver's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverTimer {
    /// The think time before the next acquisition is over.
    Think,
    /// The critical section's hold time is over.
    Hold,
    /// The time between the application's check and its write (`check_to_write_ms`) is over.
    Write,
    /// The workload's `acquire_timeout_ms` ran out.
    AcquireTimeout,
    /// The resource did not answer a read or write in time.
    ResourceTimeout,
}

/// A message on the wire: the model's protocol or the workload's resource traffic.
#[derive(Clone, PartialEq)]
pub enum Wire<M> {
    /// A message of the model's protocol.
    Model(M),
    /// Traffic between a client's workload driver and the resource.
    Resource(ResourceMsg),
}

/// Prints the message itself, so a trace line reads as the protocol does.
impl<M: fmt::Debug> fmt::Debug for Wire<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wire::Model(m) => m.fmt(f),
            Wire::Resource(r) => r.fmt(f),
        }
    }
}

/// A timer's tag: the model's typed timer or the workload driver's.
#[derive(Clone, PartialEq)]
pub enum Tag<T> {
    /// A timer the model's code (server or client library) set.
    Model(T),
    /// A timer the workload driver set.
    Driver(DriverTimer),
}

impl<T: fmt::Debug> fmt::Debug for Tag<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tag::Model(t) => t.fmt(f),
            Tag::Driver(d) => write!(f, "workload {d:?}"),
        }
    }
}
