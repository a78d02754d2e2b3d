//! The wire protocol between a Redlock client and one Redis master: the two commands Redlock uses
//! (`SET key value NX PX ttl` and the compare-and-delete unlock script) and their replies.
//!
//! Every request carries an id unique per client, so a reply that arrives after its request timed
//! out (or a duplicate the network made) is recognised and ignored, as a real client ignores a
//! reply on a connection it has given up on.

use std::fmt;

use locksim_simulator::history::LockKey;
use locksim_simulator::time::Nanos;

/// What a client asks a master to do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `SET key value NX PX ttl`: create the key with a time to live unless it exists.
    SetNx { key: LockKey, value: u64, ttl_ns: Nanos },
    /// The compare-and-delete script: `if GET key == value then DEL key`.
    Unlock { key: LockKey, value: u64 },
}

impl Command {
    pub fn key(&self) -> LockKey {
        match *self {
            Command::SetNx { key, .. } | Command::Unlock { key, .. } => key,
        }
    }
}

/// A request to one master.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    pub cmd: Command,
}

/// A master's answer: for `SetNx`, whether the key was set (`OK` vs nil); for `Unlock`, whether
/// this value's key was deleted (1 vs 0).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub id: u64,
    pub ok: bool,
}

// Short Debug forms: this is what the trace prints for every message.
impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cmd {
            Command::SetNx { key, value, ttl_ns } => {
                write!(f, "SET lock{key} {:08x} NX PX {} #{}", value as u32, ttl_ns / 1_000_000, self.id)
            }
            Command::Unlock { key, value } => {
                write!(f, "UNLOCK lock{key} {:08x} #{}", value as u32, self.id)
            }
        }
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} #{}", if self.ok { "OK" } else { "NIL" }, self.id)
    }
}
