//! The wire protocol between a Redlock client and one Redis master: the commands Redlock uses
//! (`SET key value NX PX ttl`, the compare-and-delete unlock script, redsync's extend script) and
//! their replies; the
//! model's one message enum ([`RedlockMsg`]) and its timers ([`ServerTimer`] for a master,
//! [`ClientTimer`] for the client library, both wrapped in [`RedlockTimer`]).
//!
//! Every request carries an id unique per client, so a reply that arrives after its request timed
//! out (or a duplicate the network made) is recognised and ignored, as a real client ignores a
//! reply on a connection it has given up on.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::process::Protocol;

use super::Redlock;

/// What a client asks a master to do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `SET key value NX PX ttl`: create the key with a time to live unless it exists.
    SetNx {
        /// The lock.
        key: LockKey,
        /// The client's random value for this `acquire` call.
        value: u64,
        /// The time to live (`PX`), whole milliseconds (Redis parses it as an integer).
        px_ms: u64,
    },
    /// The compare-and-delete script: `if GET key == value then DEL key`.
    Unlock {
        /// The lock.
        key: LockKey,
        /// The value the client set: only a key that still has it is deleted.
        value: u64,
    },
    /// redsync's extend script (`touchScript`: `if GET key == value then PEXPIRE key ttl`), and
    /// with `set_if_missing` its `touchWithSetNXScript` (v4.12.0, PR #149: `elseif SET key value
    /// PX ttl NX`): 1 when the key now has the client's value and the new TTL.
    Touch {
        /// The lock.
        key: LockKey,
        /// The value the client set.
        value: u64,
        /// The new time to live (`PEXPIRE`, or `PX` of the SET), whole milliseconds.
        px_ms: u64,
        /// Set the key when it is absent (a master that restarted empty gets it back).
        set_if_missing: bool,
    },
}

impl Command {
    /// The lock the command is about.
    pub fn key(&self) -> LockKey {
        match *self {
            Command::SetNx { key, .. } | Command::Unlock { key, .. } | Command::Touch { key, .. } => key,
        }
    }
}

/// A request to one master.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The client's id for the request, unique per client across its restarts.
    pub id: u64,
    /// The command.
    pub cmd: Command,
}

/// A master's answer: for `SetNx`, whether the key was set (`OK` vs nil); for `Unlock`, whether
/// this value's key was deleted (1 vs 0).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// The id of the request answered.
    pub id: u64,
    /// `OK` or 1: true; nil or 0: false.
    pub ok: bool,
}

// Short Debug forms: this is what the trace prints for every message.
impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cmd {
            Command::SetNx { key, value, px_ms } => {
                write!(f, "SET lock{key} {:08x} NX PX {px_ms} #{}", value as u32, self.id)
            }
            Command::Unlock { key, value } => {
                write!(f, "UNLOCK lock{key} {:08x} #{}", value as u32, self.id)
            }
            Command::Touch { key, value, px_ms, set_if_missing } => {
                let or_set = if set_if_missing { " OR SET NX" } else { "" };
                write!(f, "EXTEND lock{key} {:08x} PX {px_ms}{or_set} #{}", value as u32, self.id)
            }
        }
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} #{}", if self.ok { "OK" } else { "NIL" }, self.id)
    }
}

locksim_simulator::wrapper_enum! {
    /// Every message of the model: requests from clients to masters and the masters' replies.
    #[derive(Clone, PartialEq, Eq)]
    pub enum RedlockMsg: Fingerprint {
        /// Client → master: a command.
        Request(Request),
        /// Master → client: the answer.
        Reply(Reply),
    }
}

/// A master's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerTimer {
    /// `appendfsync everysec`: the once-a-second fsync of the AOF.
    Fsync,
}

/// The client library's timers, each for one lock key. A timer that fires after its phase has
/// moved on (a retry wait whose lock was cancelled) is recognised by its [`TimerId`] no longer
/// being the one the lock's phase holds, and ignored.
///
/// [`TimerId`]: locksim_simulator::process::TimerId
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// `node_timeout_ms` for the master in flight (sequential) or the whole round (parallel).
    NodeTimeout {
        /// The lock.
        key: LockKey,
    },
    /// The random `retry_delay_ms` wait between a failed attempt and the next.
    RetryDelay {
        /// The lock.
        key: LockKey,
    },
    /// The holder's validity runs out.
    Validity {
        /// The lock.
        key: LockKey,
    },
    /// The application's next `Extend` call (`extend_every_ms` after the grant or the last one).
    ExtendDue {
        /// The lock.
        key: LockKey,
    },
}

impl ClientTimer {
    /// The lock the timer is for.
    pub fn key(&self) -> LockKey {
        match *self {
            ClientTimer::NodeTimeout { key }
            | ClientTimer::RetryDelay { key }
            | ClientTimer::Validity { key }
            | ClientTimer::ExtendDue { key } => key,
        }
    }
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the model, by the kind of process that sets it.
    #[derive(Clone, PartialEq, Eq)]
    pub enum RedlockTimer: Fingerprint {
        /// A master's timer.
        Server(ServerTimer),
        /// The client library's timer.
        Client(ClientTimer),
    }
}

impl Protocol for Redlock {
    type Msg = RedlockMsg;
    type Timer = RedlockTimer;
    fn msg_fingerprint(msg: &RedlockMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &RedlockTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}
