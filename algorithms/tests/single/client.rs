//! The client library: ask, and ask again every `retry_ms` until granted; release without
//! waiting for an answer.

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::Nanos;

use super::protocol::{ClientTimer, Reply, Request, SingleMsg, SingleTimer};
use super::Single;

/// The client library.
#[derive(Clone, Debug)]
pub struct Client {
    retry_ns: Nanos,
    v: Volatile,
}

/// A library keeps nothing across a crash.
#[derive(Clone, Debug, Default)]
struct Volatile {
    server: Option<NodeId>,
    /// The key being acquired, the current attempt's number and its retry timer.
    wanted: Option<LockKey>,
    call: u64,
    retry: Option<TimerId>,
}

impl Client {
    pub fn new(retry_ns: Nanos) -> Client {
        Client::from_disk(retry_ns)
    }

    fn attempt(&mut self, ctx: &mut Ctx<Single>, key: LockKey) {
        self.v.call += 1;
        if let Some(server) = self.v.server {
            ctx.send(server, Request::Acquire { key, call: self.v.call });
        }
        self.v.retry = Some(ctx.set_timer(self.retry_ns, ClientTimer::Retry { key }));
    }
}

impl Durable for Client {
    /// A library keeps only its configuration.
    type Disk = Nanos;
    fn into_disk(self, _crash: &Crash) -> Nanos {
        self.retry_ns
    }
    fn from_disk(retry_ns: Nanos) -> Client {
        Client { retry_ns, v: Volatile::default() }
    }
}

impl LockClient<Single> for Client {
    fn on_start(&mut self, ctx: &mut Ctx<Single>, _out: &mut LockEvents) {
        self.v.server = ctx.node_named("server-0");
    }

    fn acquire(&mut self, ctx: &mut Ctx<Single>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        self.v.wanted = Some(key);
        self.attempt(ctx, key);
    }

    fn release(&mut self, ctx: &mut Ctx<Single>, out: &mut LockEvents, key: LockKey) {
        if let Some(server) = self.v.server {
            ctx.send(server, Request::Release { key });
        }
        out.push(LockEvent::Released { key });
    }

    fn cancel(&mut self, ctx: &mut Ctx<Single>, _out: &mut LockEvents, _key: LockKey) {
        self.v.wanted = None;
        if let Some(retry) = self.v.retry.take() {
            ctx.cancel_timer(retry);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Single>, out: &mut LockEvents, _from: NodeId, msg: SingleMsg) {
        let SingleMsg::Reply(reply) = msg else { return };
        match reply {
            Reply::Granted { key, token, call } if self.v.wanted == Some(key) && call == self.v.call => {
                self.v.wanted = None;
                if let Some(retry) = self.v.retry.take() {
                    ctx.cancel_timer(retry);
                }
                out.push(LockEvent::Granted { key, token: Some(token) });
            }
            // One attempt refused (counted as polling load); the retry timer is already armed.
            Reply::Busy { key, call } if self.v.wanted == Some(key) && call == self.v.call => {
                out.push(LockEvent::Refused { key });
            }
            // An answer to an attempt given up on.
            Reply::Granted { .. } | Reply::Busy { .. } => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Single>, _out: &mut LockEvents, timer: TimerId, tag: SingleTimer) {
        let SingleTimer::Client(ClientTimer::Retry { key }) = tag;
        if self.v.retry == Some(timer) && self.v.wanted == Some(key) {
            self.attempt(ctx, key);
        }
    }
}
