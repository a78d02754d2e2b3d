//! What travels between nodes besides a model's own protocol: the messages between the workload
//! driver and the protected resource, the driver's timers, and the two envelopes that carry either
//! a model's message or timer or the workload's own. The engine queues envelopes; a model's
//! handlers only ever see their own types.

use std::fmt;

use crate::history::LockKey;

/// Messages between clients and the resource.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceMsg {
    Read { key: LockKey, grant: u64 },
    ReadReply { key: LockKey, grant: u64, value: u64 },
    Write { key: LockKey, grant: u64, token: Option<u64>, value: u64 },
    WriteReply { key: LockKey, grant: u64, fenced_accepted: bool },
}

/// The workload driver's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverTimer {
    /// The think time before the next acquisition is over.
    Think,
    /// The critical section's hold time is over.
    Hold,
    /// The workload's `acquire_timeout_ms` ran out.
    AcquireTimeout,
    /// The resource did not answer a read or write in time.
    ResourceTimeout,
}

/// A message on the wire: the model's protocol or the workload's resource traffic.
#[derive(Clone, PartialEq)]
pub enum Wire<M> {
    Model(M),
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
    Model(T),
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
