//! What a trace line is about, as typed values: the message a `send`, `deliver`, `drop` or
//! `queued` line carries and the node at its other end, a timer's tag, a history event, a
//! fault's kind and targets. A test matches these (`matches!(m, Msg::Renew { .. })`) instead
//! of searching the line's text, which is the message's `Debug` and changes with any field's
//! formatting. Only traced runs carry them; they are not rendered, hashed nor serialised, so
//! the trace's text, its hash and the golden hashes are the same with or without them.

use std::any::Any;
use std::fmt;

use crate::history::HistoryEvent;
use crate::setup::FaultKind;
use crate::time::Nanos;
use crate::wire::{DriverTimer, ResourceMsg, Tag, Wire};

/// A value of any of a model's types (its message or timer envelope), kept as it was.
pub struct Value(Box<dyn Payload>);

trait Payload: Any + Send + fmt::Debug {
    fn clone_box(&self) -> Box<dyn Payload>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Send + fmt::Debug + Clone> Payload for T {
    fn clone_box(&self) -> Box<dyn Payload> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Value {
    /// Keeps `value` (a clone of what the engine handled).
    pub fn new<T: Any + Send + fmt::Debug + Clone>(value: T) -> Value {
        Value(Box::new(value))
    }

    /// The value as a `T`, if it is one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl Clone for Value {
    fn clone(&self) -> Value {
        Value(self.0.clone_box())
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Two values are equal when they print the same: the model's types need not be `PartialEq`,
/// and the trace's own equality is its text's.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

/// Where a fault occurrence is in its life, as a `fault` line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPhase {
    /// It is applied now to its targets.
    Starts,
    /// It is lifted now.
    Ends,
    /// Its selector names a role nobody holds yet: it tries again later.
    Waits,
}

/// A `fault` line's fault.
#[derive(Clone, Debug, PartialEq)]
pub struct TracedFault {
    /// Its kind, with the scenario's keys of that kind.
    pub kind: FaultKind,
    /// Start, end or wait.
    pub phase: FaultPhase,
    /// The nodes it applies to, by name (empty for an end or a wait; for a partition, every
    /// group's members in group order).
    pub targets: Vec<String>,
    /// A partition's groups, by node name (empty for every other kind).
    pub groups: Vec<Vec<String>>,
}

/// What a trace line is about.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Subject {
    /// Only the line's text says (a note, a start, a reset, a violation, …).
    #[default]
    None,
    /// A message: for `send` and a `drop` at the sender, `peer` is its destination; for
    /// `deliver`, `queued` and a `drop` at the receiver, its sender. `msg` holds the model's
    /// message (its own type) or the workload's `ResourceMsg`.
    Message {
        /// The node at the other end, by name.
        peer: String,
        /// The message.
        msg: Value,
        /// For a `send`: when it arrives (the engine draws that as it is sent).
        arrives_ns: Option<Nanos>,
    },
    /// A timer that fired: the model's timer (its own type) or the workload's `DriverTimer`.
    Timer(Value),
    /// A history event.
    History(HistoryEvent),
    /// A fault.
    Fault(TracedFault),
}

impl Subject {
    /// A message line's subject: `wire`'s content (the model's message, or the workload's
    /// resource message) and the node at the other end.
    pub fn message_of<M: Any + Send + fmt::Debug + Clone>(peer: &str, wire: &Wire<M>) -> Subject {
        let msg = match wire {
            Wire::Model(m) => Value::new(m.clone()),
            Wire::Resource(r) => Value::new(r.clone()),
        };
        Subject::Message { peer: peer.to_string(), msg, arrives_ns: None }
    }

    /// A `send` line's subject: [`Subject::message_of`] and when the message arrives.
    pub fn sent_of<M: Any + Send + fmt::Debug + Clone>(peer: &str, wire: &Wire<M>, arrives_ns: Nanos) -> Subject {
        match Subject::message_of(peer, wire) {
            Subject::Message { peer, msg, .. } => Subject::Message { peer, msg, arrives_ns: Some(arrives_ns) },
            _ => unreachable!("message_of gives a message"),
        }
    }

    /// When a sent message arrives, if the line is a `send`.
    pub fn arrives_ns(&self) -> Option<Nanos> {
        match self {
            Subject::Message { arrives_ns, .. } => *arrives_ns,
            _ => None,
        }
    }

    /// A timer line's subject: the model's timer, or the workload driver's.
    pub fn timer_of<T: Any + Send + fmt::Debug + Clone>(tag: &Tag<T>) -> Subject {
        Subject::Timer(match tag {
            Tag::Model(t) => Value::new(t.clone()),
            Tag::Driver(d) => Value::new(*d),
        })
    }

    /// The model's message, as `M` (the model's message type), if the line carries one of
    /// that type.
    pub fn message<M: Any>(&self) -> Option<&M> {
        match self {
            Subject::Message { msg, .. } => msg.get(),
            _ => None,
        }
    }

    /// The workload's resource message, if the line carries one.
    pub fn resource_message(&self) -> Option<&ResourceMsg> {
        self.message()
    }

    /// The node at the message's other end, if the line carries a message.
    pub fn peer(&self) -> Option<&str> {
        match self {
            Subject::Message { peer, .. } => Some(peer),
            _ => None,
        }
    }

    /// The model's timer, as `T`, if the line is a timer of that type.
    pub fn timer<T: Any>(&self) -> Option<&T> {
        match self {
            Subject::Timer(v) => v.get(),
            _ => None,
        }
    }

    /// The workload driver's timer, if the line is one.
    pub fn driver_timer(&self) -> Option<&DriverTimer> {
        self.timer()
    }

    /// The history event, if the line records one.
    pub fn history(&self) -> Option<&HistoryEvent> {
        match self {
            Subject::History(e) => Some(e),
            _ => None,
        }
    }

    /// The fault, if the line is about one.
    pub fn fault(&self) -> Option<&TracedFault> {
        match self {
            Subject::Fault(f) => Some(f),
            _ => None,
        }
    }
}
