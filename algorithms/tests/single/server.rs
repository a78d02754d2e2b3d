//! The lock server: one holder per key, a fencing token that only grows.

use std::collections::BTreeMap;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::Nanos;

use super::protocol::{Reply, Request, SingleMsg, SingleTimer};
use super::Single;

/// The server.
#[derive(Clone, Debug)]
pub struct Server {
    service_ns: Nanos,
    /// Durable: the last token handed out (kept on disk, like a database sequence).
    last_token: u64,
    v: Volatile,
}

/// What a crash loses: the holders live in memory only.
#[derive(Clone, Debug, Default)]
struct Volatile {
    holders: BTreeMap<LockKey, (NodeId, u64)>,
}

impl Server {
    pub fn new(service_ns: Nanos) -> Server {
        Server::from_disk((service_ns, 0))
    }
}

impl Durable for Server {
    /// The configuration and `last_token`: a restart never reuses a token.
    type Disk = (Nanos, u64);
    fn into_disk(self, _crash: &Crash) -> (Nanos, u64) {
        (self.service_ns, self.last_token)
    }
    fn from_disk((service_ns, last_token): (Nanos, u64)) -> Server {
        Server { service_ns, last_token, v: Volatile::default() }
    }
}

impl Process<Single> for Server {
    fn on_start(&mut self, _ctx: &mut Ctx<Single>) {}

    fn on_message(&mut self, ctx: &mut Ctx<Single>, from: NodeId, msg: SingleMsg) {
        let SingleMsg::Request(request) = msg else { return };
        match request {
            Request::Acquire { key, call } => {
                let reply = match self.v.holders.get(&key) {
                    // The holder asking again (its answer was lost): the same grant.
                    Some(&(holder, token)) if holder == from => Reply::Granted { key, token, call },
                    Some(_) => Reply::Busy { key, call },
                    None => {
                        self.last_token += 1;
                        self.v.holders.insert(key, (from, self.last_token));
                        Reply::Granted { key, token: self.last_token, call }
                    }
                };
                ctx.send_after(self.service_ns, from, reply);
            }
            Request::Release { key } => {
                if self.v.holders.get(&key).is_some_and(|&(holder, _)| holder == from) {
                    self.v.holders.remove(&key);
                }
            }
        }
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<Single>, _timer: TimerId, _tag: SingleTimer) {}
}
