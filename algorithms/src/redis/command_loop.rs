//! A Redis server's single-threaded command loop, shared by every Redis server the crate models
//! (the `redis` model's primary and replicas, Redlock's masters): commands are served one after
//! another, each taking `service_ms`, and a reply leaves when its command's turn is over.
//!
//! Source (Redis 7.2): one thread runs the event loop (`ae.c`, `aeProcessEvents`) and executes
//! each client's commands in turn (`networking.c`, `processInputBuffer` → `server.c`,
//! `processCommand` → `call`); state changes therefore apply in arrival order, and a command
//! waits for the ones before it. `service_ms` (default 0.05 ms) is the model's cost of one
//! command, not a Redis constant.

use locksim_simulator::dist::Dist;
use locksim_simulator::process::{Ctx, Protocol};
use locksim_simulator::time::{ms_to_ns, Nanos};

mod fingerprint;

/// When the server is next free: in memory, lost at a crash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLoop {
    /// The monotonic time at which the command being served (and those queued) are done.
    busy_until_mono_ns: Nanos,
}

impl CommandLoop {
    /// Serves one command now, drawing its cost from `service_ms` on the node's stream: the
    /// time from now until its reply leaves (after every command queued before it).
    pub fn turn<P: Protocol>(&mut self, ctx: &mut Ctx<P>, service_ms: &Dist) -> Nanos {
        let service = ms_to_ns(service_ms.sample_non_negative(ctx.rng()));
        let now = ctx.now_mono_ns();
        self.busy_until_mono_ns = self.busy_until_mono_ns.max(now) + service;
        self.busy_until_mono_ns - now
    }
}
