//! The single model's messages and timers: a client's two calls, the server's two answers, and
//! the client's one timer.

use locksim_simulator::history::LockKey;

/// A client's call to the server. `call` numbers the client's attempts, so that the answer to an
/// attempt it gave up on is not taken for the answer to its latest one.
#[derive(Clone, Debug)]
pub enum Request {
    /// Take `key` if it is free (or already the caller's).
    Acquire { key: LockKey, call: u64 },
    /// Give `key` back; no answer.
    Release { key: LockKey },
}

/// The server's answer to an `Acquire`.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `key` is the caller's, with this fencing token.
    Granted { key: LockKey, token: u64, call: u64 },
    /// Someone else holds `key`.
    Busy { key: LockKey, call: u64 },
}

locksim_simulator::wrapper_enum! {
    /// Every message of the single model.
    #[derive(Clone)]
    pub enum SingleMsg {
        Request(Request),
        Reply(Reply),
    }
}

/// The client's timer: the next attempt (it also covers an attempt whose answer was lost).
#[derive(Clone, Debug)]
pub enum ClientTimer {
    Retry { key: LockKey },
}

locksim_simulator::wrapper_enum! {
    /// Every timer of the single model (the server sets none).
    #[derive(Clone)]
    pub enum SingleTimer {
        Client(ClientTimer),
    }
}
